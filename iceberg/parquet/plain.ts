// PLAIN values (Parquet Encodings.md, PLAIN = 0) of one page, straight from the column buffers.
// Fixed-width numbers are the typed arrays' own bytes (little-endian: checked once in write.ts), so
// they need no encoding at all; see `fixedView`.

import type { ColumnValues } from './columns.ts'
import type { Bytes } from './bytes.ts'

/** Bytes per value of a fixed-width physical type (0 for BYTE_ARRAY; BOOLEAN counts as 1). */
export function valueWidth(data: ColumnValues): number {
  switch (data.physical) {
    case 'BOOLEAN':
      return 1
    case 'INT32':
    case 'FLOAT':
      return 4
    case 'INT64':
    case 'DOUBLE':
      return 8
    case 'FIXED_LEN_BYTE_ARRAY':
      return data.width
    case 'BYTE_ARRAY':
      return 0
  }
}

/** The PLAIN bytes of values [from, to) of a fixed-width numeric or fixed-length column, without copying. */
export function fixedView(data: ColumnValues, from: number, to: number): Uint8Array | undefined {
  switch (data.physical) {
    case 'INT32':
    case 'FLOAT':
    case 'INT64':
    case 'DOUBLE': {
      const v = data.values
      const w = v.BYTES_PER_ELEMENT
      return new Uint8Array(v.buffer, v.byteOffset + from * w, (to - from) * w)
    }
    case 'FIXED_LEN_BYTE_ARRAY':
      return data.bytes.subarray(from * data.width, to * data.width)
    default:
      return undefined
  }
}

/** Appends the PLAIN encoding of values [from, to). */
export function writePlain(out: Bytes, data: ColumnValues, from: number, to: number): void {
  if (data.physical === 'BOOLEAN') return writeBooleans(out, data.values, from, to)
  if (data.physical === 'BYTE_ARRAY') return writeByteArrays(out, data.offsets, data.bytes, from, to)
  out.append(fixedView(data, from, to)!)
}

// Bit-packed, LSB first, padded to a whole byte.
function writeBooleans(out: Bytes, values: Uint8Array, from: number, to: number): void {
  const n = to - from
  out.ensure((n + 7) >> 3)
  const buf = out.buf
  let p = out.pos
  let k = from
  for (; k + 8 <= to; k += 8) {
    buf[p++] =
      values[k] |
      (values[k + 1] << 1) |
      (values[k + 2] << 2) |
      (values[k + 3] << 3) |
      (values[k + 4] << 4) |
      (values[k + 5] << 5) |
      (values[k + 6] << 6) |
      (values[k + 7] << 7)
  }
  if (k < to) {
    let b = 0
    for (let x = k; x < to; x++) b |= values[x] << (x - k)
    buf[p++] = b
  }
  out.pos = p
}

// Each value as a 4-byte little-endian length and its bytes, copied a 32-bit word at a time: a
// subarray + set per value costs more than copying a short value itself. The last word of a value
// may run past it (the next length overwrites the extra bytes) while the source has bytes to read.
function writeByteArrays(out: Bytes, offsets: Int32Array, bytes: Uint8Array, from: number, to: number): void {
  out.ensure(4 * (to - from) + (offsets[to] - offsets[from]) + 4)
  const buf = out.buf
  const dst = out.view
  const src = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const safe = bytes.length - 4 // words may be read from below here
  let p = out.pos
  for (let i = from; i < to; i++) {
    const s = offsets[i]
    const e = offsets[i + 1]
    dst.setInt32(p, e - s, true)
    p += 4
    if (e - s > 64) {
      buf.set(bytes.subarray(s, e), p)
    } else if (e <= safe) {
      for (let k = s; k < e; k += 4) dst.setInt32(p + k - s, src.getInt32(k, true), true)
    } else {
      for (let k = s; k < e; k++) buf[p + k - s] = bytes[k]
    }
    p += e - s
  }
  out.pos = p
}
