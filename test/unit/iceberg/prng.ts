// Deterministic random values for the Parquet tests (mulberry32): the same data on every run.

export function prng(seed: number): { rnd: () => number; int32: () => number; int64: () => bigint } {
  const rnd = () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int32 = () => (rnd() * 4294967296) | 0
  const int64 = () => BigInt.asIntN(64, (BigInt(int32() >>> 0) << 32n) | BigInt(int32() >>> 0))
  return { rnd, int32, int64 }
}
