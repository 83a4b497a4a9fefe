// DELTA_BINARY_PACKED (Parquet Encodings.md, = 5) for INT32 and INT64 pages: blocks of 128 deltas,
// 4 miniblocks of 32, each delta minus the block's smallest one bit-packed at the miniblock's width.
// Sorted or clustered ids and timestamps shrink to a few bits per value (a steady clock to 0 bits)
// before zstd ever sees them.
//
// The arithmetic stays in JS numbers, never BigInt (far too slow per value): an INT64 is read as two
// int32 halves, and a page whose deltas do not fit 2^52, or whose packed width would exceed 32 bits,
// is refused (`false`) so the caller writes it PLAIN instead; that is also where delta stops paying.

import type { Bytes } from './bytes.ts'

const BLOCK = 128
const MINI = 32
const MINIS = BLOCK / MINI
const TWO32 = 4294967296
// |hi difference| below 2^20 keeps a delta below 2^52, exact in a double
const MAX_HI_STEP = 1 << 20

// per-block scratch: the deltas, then the deltas minus the block minimum
const deltas = new Float64Array(BLOCK)

/**
 * Appends values [from, to) of an INT64 column (`words`: its BigInt64Array as int32 pairs, low word
 * first) delta-encoded. Returns false, with `out` restored, when the page is not worth it.
 */
export function writeDeltaInt64(out: Bytes, words: Int32Array, from: number, to: number): boolean {
  const start = out.pos
  const n = to - from
  header(out, n)
  out.zigzag64((BigInt(words[2 * from + 1]) << 32n) | BigInt(words[2 * from] >>> 0))
  let prevHi = words[2 * from + 1]
  let prevLo = words[2 * from] >>> 0
  for (let b = from + 1; b < to; b += BLOCK) {
    const m = Math.min(BLOCK, to - b)
    for (let i = 0; i < m; i++) {
      const hi = words[2 * (b + i) + 1]
      const lo = words[2 * (b + i)] >>> 0
      const dh = hi - prevHi
      if (dh >= MAX_HI_STEP || dh <= -MAX_HI_STEP) {
        out.pos = start
        return false
      }
      deltas[i] = dh * TWO32 + (lo - prevLo)
      prevHi = hi
      prevLo = lo
    }
    if (!writeBlock(out, m)) {
      out.pos = start
      return false
    }
  }
  return true
}

/** As writeDeltaInt64, for an INT32 column. */
export function writeDeltaInt32(out: Bytes, values: Int32Array, from: number, to: number): boolean {
  const start = out.pos
  header(out, to - from)
  out.zigzag(values[from])
  let prev = values[from]
  for (let b = from + 1; b < to; b += BLOCK) {
    const m = Math.min(BLOCK, to - b)
    for (let i = 0; i < m; i++) {
      const v = values[b + i]
      deltas[i] = v - prev
      prev = v
    }
    if (!writeBlock(out, m)) {
      out.pos = start
      return false
    }
  }
  return true
}

function header(out: Bytes, count: number): void {
  out.varint(BLOCK)
  out.varint(MINIS)
  out.varint(count)
}

// One block of `m` deltas (m ≤ 128): min delta, 4 bit widths, then the needed miniblocks.
function writeBlock(out: Bytes, m: number): boolean {
  let min = deltas[0]
  for (let i = 1; i < m; i++) if (deltas[i] < min) min = deltas[i]
  out.zigzag(min)
  const minis = Math.ceil(m / MINI)
  out.ensure(MINIS + minis * MINI * 4)
  const buf = out.buf
  const widthsAt = out.pos
  let p = widthsAt + MINIS
  for (let mb = 0; mb < MINIS; mb++) {
    if (mb >= minis) {
      buf[widthsAt + mb] = 0 // unneeded miniblocks: width 0 and no body
      continue
    }
    const s = mb * MINI
    const e = Math.min(m, s + MINI)
    let max = 0
    for (let i = s; i < e; i++) {
      const u = deltas[i] - min
      deltas[i] = u
      if (u > max) max = u
    }
    if (max >= TWO32) return false
    const width = max === 0 ? 0 : 32 - Math.clz32(max)
    buf[widthsAt + mb] = width
    if (width === 0) continue
    // LSB-first bit packing of 32 values (zeros past the last one); wide values go in two halves
    // so the accumulator stays within 32 bits
    let acc = 0
    let bits = 0
    for (let i = s; i < s + MINI; i++) {
      const u = i < e ? deltas[i] : 0
      if (width <= 24) {
        acc |= u << bits
        bits += width
      } else {
        const low = u % 65536
        acc |= low << bits
        bits += 16
        while (bits >= 8) {
          buf[p++] = acc & 0xff
          acc >>>= 8
          bits -= 8
        }
        acc |= ((u - low) / 65536) << bits
        bits += width - 16
      }
      while (bits >= 8) {
        buf[p++] = acc & 0xff
        acc >>>= 8
        bits -= 8
      }
    }
  }
  out.pos = p
  return true
}
