// Column chunk statistics of a flat column, straight from its buffers, in the in-memory form
// hyparquet-writer keeps them (so metrics.ts and the footer serializer treat both writers' chunks
// alike): min/max as the Value of types.ts (bigint for INT64 and every decimal, string for string,
// Uint8Array for other bytes), null_count, nan_count for float/double. Orders are Parquet's: signed
// for ints and decimals, unsigned bytes for strings and binary; NaN is never a min or max, and a
// zero min is -0 and a zero max +0 (the spec's rule, as hyparquet-writer applies it).

import type { Statistics } from 'hyparquet'
import type { Primitive, Value } from '../spec/types.ts'
import type { ColumnValues } from './columns.ts'

export interface ChunkStatistics extends Statistics {
  nan_count?: bigint
}

const utf8 = new TextDecoder()

/** Statistics of `data` (its `count` values) in a chunk of `rows` rows. */
export function flatStatistics(type: Primitive, data: ColumnValues, count: number, rows: number): ChunkStatistics {
  const stats: ChunkStatistics = { null_count: BigInt(rows - count) }
  let range: [Value, Value] | undefined
  switch (data.physical) {
    case 'BOOLEAN':
      range = booleanRange(data.values, count)
      break
    case 'INT32':
      range = int32Range(data.values, count)
      if (range && type.kind === 'decimal') range = [BigInt(range[0] as number), BigInt(range[1] as number)]
      break
    case 'INT64':
      range = int64Range(data.values, count)
      break
    case 'FLOAT':
    case 'DOUBLE': {
      const r = floatRange(data.values, count)
      stats.nan_count = BigInt(r.nans)
      range = r.range
      break
    }
    case 'BYTE_ARRAY': {
      const r = byteArrayRange(data.offsets, data.bytes, count)
      if (r) {
        const [min, max] = r.map((i) => data.bytes.slice(data.offsets[i], data.offsets[i + 1]))
        range = type.kind === 'string' ? [utf8.decode(min), utf8.decode(max)] : [min, max]
      }
      break
    }
    case 'FIXED_LEN_BYTE_ARRAY': {
      const signed = type.kind === 'decimal'
      const r = fixedRange(data.bytes, data.width, count, signed)
      if (r) {
        const [min, max] = r.map((i) => data.bytes.slice(i * data.width, (i + 1) * data.width))
        range = signed ? [twosComplement(min), twosComplement(max)] : [min, max]
      }
      break
    }
  }
  if (range) {
    stats.min_value = range[0] as Statistics['min_value']
    stats.max_value = range[1] as Statistics['max_value']
  }
  return stats
}

function booleanRange(values: Uint8Array, count: number): [Value, Value] | undefined {
  if (count === 0) return undefined
  let ones = 0
  for (let i = 0; i < count; i++) ones += values[i]
  return [ones === count, ones > 0]
}

function int32Range(values: Int32Array, count: number): [Value, Value] | undefined {
  if (count === 0) return undefined
  let min = values[0]
  let max = min
  for (let i = 1; i < count; i++) {
    const v = values[i]
    if (v < min) min = v
    else if (v > max) max = v
  }
  return [min, max]
}

// Compared as (signed high word, low word): reading a BigInt64Array element allocates a BigInt. The
// low word's sign bit is flipped so that signed int32 comparison gives its unsigned order.
function int64Range(values: BigInt64Array, count: number): [Value, Value] | undefined {
  if (count === 0) return undefined
  const w = new Int32Array(values.buffer, values.byteOffset, count * 2)
  let minHi = w[1]
  let minLo = w[0] ^ 0x80000000
  let maxHi = minHi
  let maxLo = minLo
  for (let i = 1; i < count; i++) {
    const hi = w[2 * i + 1]
    const lo = w[2 * i] ^ 0x80000000
    if (hi < minHi || (hi === minHi && lo < minLo)) {
      minHi = hi
      minLo = lo
    }
    if (hi > maxHi || (hi === maxHi && lo > maxLo)) {
      maxHi = hi
      maxLo = lo
    }
  }
  const big = (hi: number, lo: number) => (BigInt(hi) << 32n) | BigInt((lo ^ 0x80000000) >>> 0)
  return [big(minHi, minLo), big(maxHi, maxLo)]
}

function floatRange(values: Float32Array | Float64Array, count: number): { range?: [Value, Value]; nans: number } {
  let min = Infinity
  let max = -Infinity
  let nans = 0
  let any = false
  for (let i = 0; i < count; i++) {
    const v = values[i]
    if (Number.isNaN(v)) {
      nans++
      continue
    }
    any = true
    if (v < min) min = v
    if (v > max) max = v
  }
  if (!any) return { nans }
  return { range: [min === 0 ? -0 : min, max === 0 ? 0 : max], nans }
}

/**
 * Indexes of the smallest and largest value in unsigned byte order. Each value's first 8 bytes (as
 * two big-endian words, zero-padded) settle most values without a byte comparison: one strictly
 * between the current min's and max's prefixes is neither.
 */
function byteArrayRange(offsets: Int32Array, bytes: Uint8Array, count: number): [number, number] | undefined {
  if (count === 0) return undefined
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let min = 0
  let max = 0
  let min0 = word(bytes, view, offsets[0], offsets[1])
  let min1 = word(bytes, view, offsets[0] + 4, offsets[1])
  let max0 = min0
  let max1 = min1
  for (let i = 1; i < count; i++) {
    const s = offsets[i]
    const e = offsets[i + 1]
    const w0 = word(bytes, view, s, e)
    const w1 = word(bytes, view, s + 4, e)
    if ((w0 > min0 || (w0 === min0 && w1 > min1)) && (w0 < max0 || (w0 === max0 && w1 < max1))) continue
    if (compare(bytes, view, s, e, offsets[min], offsets[min + 1]) < 0) {
      min = i
      min0 = w0
      min1 = w1
    } else if (compare(bytes, view, s, e, offsets[max], offsets[max + 1]) > 0) {
      max = i
      max0 = w0
      max1 = w1
    }
  }
  return [min, max]
}

// Bytes [at, at + 4) of a value ending at `end` as a big-endian word, zeros past the end.
function word(bytes: Uint8Array, view: DataView, at: number, end: number): number {
  if (at + 4 <= end) return view.getUint32(at)
  let w = 0
  for (let k = 0; k < 4; k++) w = w * 256 + (at + k < end ? bytes[at + k] : 0)
  return w
}

// Unsigned byte order, four bytes at a time (a big-endian word orders as its bytes do).
function compare(bytes: Uint8Array, view: DataView, as: number, ae: number, bs: number, be: number): number {
  const n = Math.min(ae - as, be - bs)
  let k = 0
  for (; k + 4 <= n; k += 4) {
    const x = view.getUint32(as + k)
    const y = view.getUint32(bs + k)
    if (x !== y) return x < y ? -1 : 1
  }
  for (; k < n; k++) {
    const d = bytes[as + k] - bytes[bs + k]
    if (d !== 0) return d
  }
  return ae - as - (be - bs)
}

/** Indexes of the smallest and largest fixed-width value; `signed`: big-endian two's complement. */
function fixedRange(bytes: Uint8Array, width: number, count: number, signed: boolean): [number, number] | undefined {
  if (count === 0 || width === 0) return count === 0 ? undefined : [0, 0]
  const flip = signed ? 0x80 : 0
  let min = 0
  let max = 0
  for (let i = 1; i < count; i++) {
    if (compareFixed(bytes, i * width, min * width, width, flip) < 0) min = i
    else if (compareFixed(bytes, i * width, max * width, width, flip) > 0) max = i
  }
  return [min, max]
}

function compareFixed(bytes: Uint8Array, a: number, b: number, width: number, flip: number): number {
  const d = (bytes[a] ^ flip) - (bytes[b] ^ flip)
  if (d !== 0) return d
  for (let k = 1; k < width; k++) {
    const x = bytes[a + k] - bytes[b + k]
    if (x !== 0) return x
  }
  return 0
}

function twosComplement(b: Uint8Array): bigint {
  let v = 0n
  for (let i = 0; i < b.length; i++) v = (v << 8n) | BigInt(b[i])
  return b.length && b[0] & 0x80 ? v - (1n << BigInt(b.length * 8)) : v
}
