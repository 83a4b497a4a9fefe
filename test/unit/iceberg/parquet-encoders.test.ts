// The page encoders of iceberg/parquet/ against hyparquet's decoders: DELTA_BINARY_PACKED at every
// bit width and block shape, the definition-level hybrid on every run shape, PLAIN booleans and byte arrays.
import { deltaBinaryUnpack } from 'hyparquet/src/delta.js'
import { readRleBitPackedHybrid } from 'hyparquet/src/encoding.js'
import { readPlain } from 'hyparquet/src/plain.js'
import { describe, expect, it } from 'vitest'
import { Bytes } from '../../../iceberg/parquet/bytes.ts'
import { writeDeltaInt32, writeDeltaInt64 } from '../../../iceberg/parquet/delta.ts'
import { writePlain } from '../../../iceberg/parquet/plain.ts'
import { writeDefinitionLevels } from '../../../iceberg/parquet/rle.ts'

const reader = (b: Uint8Array) => ({ view: new DataView(b.buffer, b.byteOffset, b.byteLength), offset: 0 })

function seeded(seed: number): () => number {
  return () => {
    seed = (Math.imul(seed, 1103515245) + 12345) | 0
    return (seed >>> 8) / 16777216
  }
}

describe('DELTA_BINARY_PACKED', () => {
  const rnd = seeded(7)
  // a delta spread of 2^w - 1 around a base step, for every width 0..32
  const withSpread = (n: number, width: number, step: number) => {
    const out: number[] = [1000]
    for (let i = 1; i < n; i++) out.push(out[i - 1] + step + Math.floor(rnd() * 2 ** width))
    return out
  }

  it('INT64: every bit width, partial blocks and miniblocks, negative steps, decoded exactly', () => {
    for (const n of [1, 2, 31, 32, 33, 127, 128, 129, 300, 1000]) {
      for (let width = 0; width <= 32; width += n > 200 ? 1 : 8) {
        const values = BigInt64Array.from(withSpread(n, width, -(2 ** 20)), (v) => BigInt(v) - 9007199254740000n * 1000n)
        const out = new Bytes(16)
        out.u8(0xaa) // something before, to see the encoder keeps it
        const words = new Int32Array(values.buffer)
        expect(writeDeltaInt64(out, words, 0, n)).toBe(true)
        const r = reader(out.bytes())
        r.offset = 1
        const back = new BigInt64Array(n)
        deltaBinaryUnpack(r, n, back)
        expect(back).toEqual(values)
        expect(r.offset).toBe(out.pos)
      }
    }
  })

  it('INT64: a sub-range of the buffer; extremes refuse (the caller writes PLAIN) and leave the output as it was', () => {
    const values = BigInt64Array.of(5n, 10n, 20n, 40n, -9223372036854775808n, 9223372036854775807n)
    const words = new Int32Array(values.buffer)
    const out = new Bytes(16)
    expect(writeDeltaInt64(out, words, 1, 4)).toBe(true)
    const back = new BigInt64Array(3)
    deltaBinaryUnpack(reader(out.bytes()), 3, back)
    expect(back).toEqual(values.subarray(1, 4))
    out.pos = 3
    expect(writeDeltaInt64(out, words, 3, 6)).toBe(false)
    expect(out.pos).toBe(3)
    // deltas just below the bound: a hi step of 2^20 - 1 words
    const near = BigInt64Array.of(0n, ((1n << 20n) - 1n) << 32n, 0n)
    const ok = new Bytes(4)
    expect(writeDeltaInt64(ok, new Int32Array(near.buffer), 0, 3)).toBe(false) // a width over 32 bits
    const steady = BigInt64Array.from({ length: 500 }, (_, i) => 1_772_323_200_000_000n + BigInt(i) * 86_400_001n)
    const s = new Bytes(4)
    expect(writeDeltaInt64(s, new Int32Array(steady.buffer), 0, 500)).toBe(true)
    expect(s.pos).toBeLessThan(60) // a steady clock packs to 0 bits
  })

  it('INT32: every width, extremes', () => {
    for (const n of [1, 5, 128, 129, 700]) {
      for (let width = 0; width <= 31; width++) {
        const values = Int32Array.from(withSpread(n, Math.min(width, 20), -(2 ** 19)))
        const out = new Bytes(8)
        expect(writeDeltaInt32(out, values, 0, n)).toBe(true)
        const back = new Int32Array(n)
        deltaBinaryUnpack(reader(out.bytes()), n, back)
        expect(back).toEqual(values)
      }
    }
    const extremes = Int32Array.of(-2147483648, 2147483647, -2147483648, 0, 2147483647)
    expect(writeDeltaInt32(new Bytes(4), extremes, 0, 5)).toBe(false) // deltas of 2^32 - 1 need 33 bits
    const wide = Int32Array.of(0, 2147483647, 0, 2147483647, -1)
    const out = new Bytes(4)
    if (writeDeltaInt32(out, wide, 0, 5)) {
      const back = new Int32Array(5)
      deltaBinaryUnpack(reader(out.bytes()), 5, back)
      expect(back).toEqual(wide)
    }
  })
})

describe('definition levels (RLE/bit-packed hybrid, width 1)', () => {
  const rnd = seeded(3)
  const shapes: Record<string, (n: number) => number> = {
    'all present': () => 1,
    'all null': () => 0,
    random: () => (rnd() < 0.3 ? 0 : 1),
    'long runs': (i) => Math.floor(i / 37) % 2,
    'runs of 8': (i) => Math.floor(i / 8) % 2,
    'runs of 7': (i) => Math.floor(i / 7) % 2,
    'a run starting mid-group': (i) => (i < 3 ? i % 2 : 1),
  }
  it.each(Object.keys(shapes))('%s', (shape) => {
    for (const n of [1, 7, 8, 9, 64, 1001]) {
      const present = Uint8Array.from({ length: n + 10 }, (_, i) => shapes[shape](i))
      for (const from of [0, 5]) {
        const out = new Bytes(4)
        writeDefinitionLevels(out, present, from, from + n)
        const back = new Uint8Array(n)
        readRleBitPackedHybrid(reader(out.bytes()), 1, back, out.pos)
        expect(back).toEqual(present.subarray(from, from + n))
      }
    }
  })
})

describe('PLAIN', () => {
  it('booleans bit-packed; byte arrays with lengths, short and long, from a sub-range', () => {
    const bools = Uint8Array.from({ length: 21 }, (_, i) => ((i * 7) % 3 === 0 ? 1 : 0))
    const out = new Bytes(2)
    writePlain(out, { physical: 'BOOLEAN', values: bools }, 2, 19)
    expect(Array.from(readPlain(reader(out.bytes()), 'BOOLEAN', 17, undefined) as boolean[], Number)).toEqual(Array.from(bools.subarray(2, 19)))

    const strings = ['', 'a', 'abc', 'abcd', 'abcde', 'x'.repeat(64), 'y'.repeat(65), 'z'.repeat(1000), 'ü😀']
    const parts = strings.map((s) => new TextEncoder().encode(s))
    const offsets = new Int32Array(parts.length + 1)
    offsets[0] = 1
    parts.forEach((p, i) => (offsets[i + 1] = offsets[i] + p.length))
    const bytes = new Uint8Array(offsets[parts.length] + 3)
    parts.forEach((p, i) => bytes.set(p, offsets[i]))
    const b = new Bytes(2)
    writePlain(b, { physical: 'BYTE_ARRAY', offsets, bytes: bytes.subarray(0) }, 1, parts.length)
    const back = readPlain(reader(b.bytes()), 'BYTE_ARRAY', parts.length - 1, undefined) as Uint8Array[]
    expect(back.map((x) => new TextDecoder().decode(x))).toEqual(strings.slice(1))
  })
})
