// Growable column buffers, one per top-level column, filled value by value and handed over as a
// ColumnBatch (parquet/columns.ts). The scanner writes the common types without making a JavaScript
// value; `appendValue` takes the Value form of types.ts (write-defaults, rows checked the slow way).
// A row is appended column by column and can be taken back (`truncate`) until the next one starts,
// so a row that turns out to be rejected leaves nothing behind.

import { decimalRequiredBytes } from '../spec/decimal.ts'
import type { ColumnBatch, ColumnData } from './columns.ts'
import { decimalDigitsToFixed, decimalDigitsToInt64 } from './decimal-digits.ts'
import { isPrimitive, parsePrimitive, type IcebergType, type Primitive, type Value } from '../spec/types.ts'

const utf8 = new TextEncoder()

/** The buffer layout of each primitive (Appendix A's physical types). */
export type Layout = 'BOOLEAN' | 'INT32' | 'INT64' | 'FLOAT' | 'DOUBLE' | 'BYTE_ARRAY' | 'FIXED_LEN_BYTE_ARRAY' | 'values'

export function layoutOf(type: IcebergType): { layout: Layout; width: number; primitive: Primitive | null } {
  if (!isPrimitive(type)) return { layout: 'values', width: 0, primitive: null }
  const p = parsePrimitive(type)
  switch (p.kind) {
    case 'boolean':
      return { layout: 'BOOLEAN', width: 1, primitive: p }
    case 'int':
    case 'date':
      return { layout: 'INT32', width: 4, primitive: p }
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return { layout: 'INT64', width: 8, primitive: p }
    case 'float':
      return { layout: 'FLOAT', width: 4, primitive: p }
    case 'double':
      return { layout: 'DOUBLE', width: 8, primitive: p }
    case 'decimal':
      if (p.precision <= 9) return { layout: 'INT32', width: 4, primitive: p }
      if (p.precision <= 18) return { layout: 'INT64', width: 8, primitive: p }
      return { layout: 'FIXED_LEN_BYTE_ARRAY', width: decimalRequiredBytes(p.precision), primitive: p }
    case 'string':
    case 'binary':
      return { layout: 'BYTE_ARRAY', width: 0, primitive: p }
    case 'uuid':
      return { layout: 'FIXED_LEN_BYTE_ARRAY', width: 16, primitive: p }
    case 'fixed':
      return { layout: 'FIXED_LEN_BYTE_ARRAY', width: p.length, primitive: p }
    // geometry is WKB bytes but keeps its logical type and statistics rules in the general writer;
    // unknown, geography and variant hold only nulls here.
    default:
      return { layout: 'values', width: 0, primitive: p }
  }
}

const INITIAL = 1024

/** One top-level column being filled. `rows` counts rows (nulls included); `count` counts values. */
export class ColumnBuilder {
  rows = 0
  count = 0
  /** 1 per row with a value; only materialised once a null arrives. */
  private present: Uint8Array | null = null
  /** fixed-width values (all layouts but BYTE_ARRAY and values), `width` bytes each */
  bytes: Uint8Array
  /** the same memory, for the scanner's writes */
  i32: Int32Array
  f32: Float32Array
  f64: Float64Array
  /** BYTE_ARRAY: value i is data[offsets[i], offsets[i + 1]) */
  offsets: Int32Array
  data: Uint8Array
  dataLength = 0
  private values: Value[] = []

  /** `capacity`: the rows expected (a batch's line count), so the buffers rarely grow. */
  constructor(
    readonly layout: Layout,
    readonly width: number,
    readonly primitive: Primitive | null,
    capacity = INITIAL,
  ) {
    const w = layout === 'BYTE_ARRAY' || layout === 'values' ? 0 : width
    // At least 8 bytes a value, and a whole number of 8-byte elements in all: the typed views over
    // `bytes` need them (an 11-byte decimal(24, s) in a one-row batch would be 11 bytes otherwise).
    this.bytes = new Uint8Array(Math.ceil((Math.max(capacity, 1) * Math.max(w, 8)) / 8) * 8)
    this.i32 = new Int32Array(this.bytes.buffer)
    this.f32 = new Float32Array(this.bytes.buffer)
    this.f64 = new Float64Array(this.bytes.buffer)
    this.offsets = new Int32Array(layout === 'BYTE_ARRAY' ? capacity + 1 : 1)
    this.data = new Uint8Array(layout === 'BYTE_ARRAY' ? Math.max(capacity, 64) * 16 : 0)
  }

  /** Room for one more fixed-width value; returns its index. */
  slot(): number {
    const i = this.count
    if ((i + 1) * this.width > this.bytes.length) this.grow()
    return i
  }

  private grow(): void {
    const bytes = new Uint8Array(this.bytes.length * 2)
    bytes.set(this.bytes)
    this.bytes = bytes
    this.i32 = new Int32Array(bytes.buffer)
    this.f32 = new Float32Array(bytes.buffer)
    this.f64 = new Float64Array(bytes.buffer)
  }

  /** Marks the current row as having a value (after the value is written at index `count`). */
  commitValue(): void {
    if (this.present) this.markPresent(1)
    this.count++
    this.rows++
  }

  appendNull(): void {
    if (this.layout === 'values') {
      this.values.push(null)
      this.rows++
      return
    }
    if (!this.present) {
      this.present = new Uint8Array(Math.max(INITIAL, this.rows * 2))
      this.present.fill(1, 0, this.rows)
    }
    this.markPresent(0)
    this.rows++
  }

  private markPresent(bit: number): void {
    if (this.rows >= this.present!.length) {
      const p = new Uint8Array(this.present!.length * 2)
      p.set(this.present!)
      this.present = p
    }
    this.present![this.rows] = bit
  }

  /** Room for `n` more bytes of BYTE_ARRAY data; returns where they start. */
  reserveData(n: number): number {
    const at = this.dataLength
    if (at + n > this.data.length) {
      const data = new Uint8Array(Math.max(this.data.length * 2, at + n))
      data.set(this.data.subarray(0, at))
      this.data = data
    }
    if (this.count + 2 > this.offsets.length) {
      const offsets = new Int32Array(this.offsets.length * 2)
      offsets.set(this.offsets)
      this.offsets = offsets
    }
    return at
  }

  /** Ends a BYTE_ARRAY value of `n` bytes written at reserveData's offset. */
  commitData(n: number): void {
    this.dataLength += n
    this.offsets[this.count + 1] = this.dataLength
    this.commitValue()
  }

  appendBytes(b: Uint8Array): void {
    const at = this.reserveData(b.length)
    this.data.set(b, at)
    this.commitData(b.length)
  }

  /** INT64 from a JavaScript integer within ±2^53: written as two 32-bit halves, no BigInt made. */
  appendSafeInt64(n: number): void {
    const i = this.slot()
    this.i32[2 * i] = n >>> 0
    this.i32[2 * i + 1] = Math.floor(n / 4294967296)
    this.commitValue()
  }

  /**
   * INT64 of magnitude high × 10^9 + low (high < 10^10, low < 10^9; the caller has checked the
   * range), negated when `negative`: 16-bit limbs keep every product exact in a double.
   */
  appendInt64Parts(high: number, low: number, negative: boolean): void {
    const highLimb = Math.floor(high / 65536)
    const t1 = (high % 65536) * 1e9 + low
    const t2 = highLimb * 1e9 // × 2^16 below, split so nothing passes 2^53
    const sum = t1 + (t2 % 65536) * 65536
    let lo = sum % 4294967296
    let hi = Math.floor(t2 / 65536) + Math.floor(sum / 4294967296)
    if (negative) {
      lo = (~lo + 1) >>> 0
      hi = (~hi + (lo === 0 ? 1 : 0)) >>> 0
    }
    const i = this.slot()
    this.i32[2 * i] = lo
    this.i32[2 * i + 1] = hi
    this.commitValue()
  }

  /** FIXED_LEN_BYTE_ARRAY (a wide decimal's unscaled value) from an integer within ±2^53: big-endian two's complement, no BigInt made. */
  appendFixedSafeInt(n: number): void {
    const w = this.width
    const at = this.slot() * w
    const bytes = this.bytes
    // A negative n is ~(|n| - 1): its magnitude less one, each byte inverted.
    let m = n < 0 ? -n - 1 : n
    const flip = n < 0 ? 0xff : 0
    for (let j = w - 1; j >= 0; j--) {
      bytes[at + j] = (m % 256) ^ flip
      m = Math.floor(m / 256)
    }
    this.commitValue()
  }

  /**
   * A decimal's unscaled value from its digit bytes (decimal-digits.ts): the integer digits
   * buf[intStart, intEnd), the fraction's buf[fracStart, fracEnd), `zeros` more zeros to the scale;
   * INT64 or FIXED_LEN_BYTE_ARRAY by the layout, at most 38 digits (the caller checked the precision).
   */
  appendDecimalDigits(buf: Uint8Array, intStart: number, intEnd: number, fracStart: number, fracEnd: number, zeros: number, negative: boolean): void {
    const i = this.slot()
    if (this.layout === 'INT64') decimalDigitsToInt64(this.i32, 2 * i, buf, intStart, intEnd, fracStart, fracEnd, zeros, negative)
    else decimalDigitsToFixed(this.bytes, i * this.width, this.width, buf, intStart, intEnd, fracStart, fracEnd, zeros, negative)
    this.commitValue()
  }

  appendBigInt64(v: bigint): void {
    const i = this.slot()
    const lo = Number(BigInt.asUintN(32, v))
    const hi = Number(BigInt.asIntN(32, v >> 32n))
    this.i32[2 * i] = lo
    this.i32[2 * i + 1] = hi
    this.commitValue()
  }

  /** A value in the Value form of types.ts (already checked against the column's type); null for a null. */
  appendValue(v: Value): void {
    if (v === null || v === undefined) return this.appendNull()
    switch (this.layout) {
      case 'values':
        this.values.push(v)
        this.rows++
        return
      case 'BOOLEAN': {
        const i = this.slot()
        this.bytes[i] = v ? 1 : 0
        return this.commitValue()
      }
      case 'INT32': {
        const i = this.slot()
        this.i32[i] = Number(v as number | bigint)
        return this.commitValue()
      }
      case 'INT64':
        return this.appendBigInt64(BigInt(v as number | bigint))
      case 'FLOAT': {
        const i = this.slot()
        this.f32[i] = v as number
        return this.commitValue()
      }
      case 'DOUBLE': {
        const i = this.slot()
        this.f64[i] = v as number
        return this.commitValue()
      }
      case 'BYTE_ARRAY':
        return this.appendBytes(typeof v === 'string' ? utf8.encode(v) : (v as Uint8Array))
      case 'FIXED_LEN_BYTE_ARRAY': {
        const bytes = typeof v === 'bigint' ? twosComplement(v, this.width) : (v as Uint8Array)
        const i = this.slot()
        this.bytes.set(bytes, i * this.width)
        return this.commitValue()
      }
    }
  }

  /** `n` rows of the same value (a batch's constant column): encoded once, then copied. */
  fill(v: Value, n: number): void {
    if (n === 0) return
    if (v === null || this.layout === 'values' || this.layout === 'BYTE_ARRAY') {
      for (let k = 0; k < n; k++) this.appendValue(v)
      return
    }
    this.appendValue(v)
    const w = this.width
    const first = (this.count - 1) * w
    for (let k = 1; k < n; k++) {
      const at = this.slot() * w
      for (let j = 0; j < w; j++) this.bytes[at + j] = this.bytes[first + j]
      this.commitValue()
    }
  }

  /** Takes back the rows after `rows` (those of a row being rejected); `count` and `dataLength` as they were then. */
  truncate(rows: number, count: number): void {
    if (this.layout === 'values') this.values.length = rows
    this.rows = rows
    this.count = count
    if (this.layout === 'BYTE_ARRAY') this.dataLength = this.offsets[count]
  }

  /** The filled column; the builder must not be used afterwards. */
  finish(): ColumnData {
    if (this.layout === 'values') return { kind: 'values', values: this.values }
    const present = this.present ? this.present.subarray(0, this.rows) : null
    const n = this.count
    const bytes = this.bytes.buffer
    switch (this.layout) {
      case 'BOOLEAN':
        return { kind: 'flat', present, count: n, data: { physical: 'BOOLEAN', values: this.bytes.subarray(0, n) } }
      case 'INT32':
        return { kind: 'flat', present, count: n, data: { physical: 'INT32', values: new Int32Array(bytes, 0, n) } }
      case 'INT64':
        return { kind: 'flat', present, count: n, data: { physical: 'INT64', values: new BigInt64Array(bytes, 0, n) } }
      case 'FLOAT':
        return { kind: 'flat', present, count: n, data: { physical: 'FLOAT', values: new Float32Array(bytes, 0, n) } }
      case 'DOUBLE':
        return { kind: 'flat', present, count: n, data: { physical: 'DOUBLE', values: new Float64Array(bytes, 0, n) } }
      case 'BYTE_ARRAY':
        return {
          kind: 'flat',
          present,
          count: n,
          data: { physical: 'BYTE_ARRAY', offsets: this.offsets.subarray(0, n + 1), bytes: this.data.subarray(0, this.dataLength) },
        }
      case 'FIXED_LEN_BYTE_ARRAY':
        return { kind: 'flat', present, count: n, data: { physical: 'FIXED_LEN_BYTE_ARRAY', width: this.width, bytes: this.bytes.subarray(0, n * this.width) } }
    }
  }
}

/** Big-endian two's complement in exactly `width` bytes (Appendix A: decimals as fixed). */
export function twosComplement(v: bigint, width: number): Uint8Array {
  const out = new Uint8Array(width)
  let x = BigInt.asUintN(width * 8, v)
  for (let i = width - 1; i >= 0; i--) {
    out[i] = Number(x & 0xffn)
    x >>= 8n
  }
  return out
}

/** Column builders for the top-level fields of a schema, in field order. */
export function buildersFor(fields: ReadonlyArray<{ id: number; type: IcebergType }>, capacity?: number): ColumnBuilder[] {
  return fields.map((f) => {
    const { layout, width, primitive } = layoutOf(f.type)
    return new ColumnBuilder(layout, width, primitive, capacity)
  })
}

export function finishBatch(fields: ReadonlyArray<{ id: number }>, builders: ColumnBuilder[], rows: number): ColumnBatch {
  const columns = new Map<number, ColumnData>()
  fields.forEach((f, i) => columns.set(f.id, builders[i].finish()))
  return { rows, columns }
}
