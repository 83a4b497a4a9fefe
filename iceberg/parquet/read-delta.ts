// DELTA_BINARY_PACKED (Parquet Encodings.md) for INT64 without BigInt: each value kept as two 32-bit
// halves and added with a carry, wrapping modulo 2^64 as the encoding does. hyparquet's INT64 decoder
// makes several BigInts per value; our own writer delta-encodes every long and timestamp column, so
// a rewrite reads these a million at a time. INT32 is hyparquet's (it has no BigInt in its loop).

import { deltaBinaryUnpack } from 'hyparquet/src/delta.js'
import { ParquetReadError } from './values.ts'

interface Reader {
  view: DataView
  offset: number
}

export function deltaInt32(reader: Reader, count: number, out: Int32Array): void {
  deltaBinaryUnpack(reader, count, out)
}

let lo = 0
let hi = 0

/** An unsigned LEB128 varint of up to 64 bits into (lo, hi). */
function varint64(r: Reader): void {
  let l = 0
  let h = 0
  for (let shift = 0; ; shift += 7) {
    if (shift > 63) throw new ParquetReadError('a DELTA_BINARY_PACKED varint longer than 64 bits')
    const b = r.view.getUint8(r.offset++)
    const bits = b & 0x7f
    if (shift < 28) l |= bits << shift
    else if (shift === 28) {
      l |= (bits & 0x0f) << 28
      h |= bits >>> 4
    } else h |= bits << (shift - 32)
    if (!(b & 0x80)) break
  }
  lo = l
  hi = h
}

/** A zigzag varint of up to 64 bits into (lo, hi), as two's complement halves. */
function zigzag64(r: Reader): void {
  varint64(r)
  const m = -(lo & 1)
  const l = ((lo >>> 1) | (hi << 31)) ^ m
  hi = (hi >>> 1) ^ m
  lo = l
}

/** `count` INT64 values into `out` (2 × count 32-bit words: low, high). */
export function deltaInt64(reader: Reader, count: number, out: Int32Array): void {
  varint64(reader)
  const blockSize = lo
  varint64(reader)
  const miniblocks = lo
  varint64(reader) // the total count: the page's own count is the one used
  if (!miniblocks || blockSize % miniblocks || (blockSize / miniblocks) % 32) {
    throw new ParquetReadError(`DELTA_BINARY_PACKED block of ${blockSize} values in ${miniblocks} miniblocks`)
  }
  const perMiniblock = blockSize / miniblocks
  zigzag64(reader)
  let vlo = lo
  let vhi = hi
  if (count === 0) return
  out[0] = vlo
  out[1] = vhi
  let n = 1
  const view = reader.view
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength)
  while (n < count) {
    zigzag64(reader)
    const mlo = lo >>> 0
    const mhi = hi
    const widths = reader.offset
    let at = widths + miniblocks
    for (let m = 0; m < miniblocks && n < count; m++) {
      const width = bytes[widths + m]
      if (width > 64) throw new ParquetReadError(`DELTA_BINARY_PACKED bit width ${width}`)
      const next = at + (perMiniblock * width) / 8
      if (next > bytes.length) throw new ParquetReadError('DELTA_BINARY_PACKED miniblock past the end of its page')
      let bit = at * 8
      for (let j = 0; j < perMiniblock && n < count; j++) {
        // the residual: `width` bits, least significant first
        let rlo = 0
        let rhi = 0
        for (let got = 0; got < width; ) {
          const sh = bit & 7
          const take = Math.min(8 - sh, width - got)
          const v = (bytes[bit >>> 3] >>> sh) & ((1 << take) - 1)
          if (got < 32) {
            rlo |= v << got
            if (got + take > 32) rhi |= v >>> (32 - got)
          } else rhi |= v << (got - 32)
          got += take
          bit += take
        }
        // value += minDelta + residual, modulo 2^64
        let s = mlo + (rlo >>> 0)
        const dlo = s >>> 0
        const dhi = (mhi + rhi + (s > 0xffffffff ? 1 : 0)) | 0
        s = (vlo >>> 0) + dlo
        vlo = s >>> 0
        vhi = (vhi + dhi + (s > 0xffffffff ? 1 : 0)) | 0
        out[2 * n] = vlo
        out[2 * n + 1] = vhi
        n++
      }
      at = next
    }
    reader.offset = at
  }
}
