// Producer NDJSON → column buffers, without a JavaScript object per row.
//
// A scanner is compiled once per schema. It reads each stored line (one array element, exactly as
// the producer sent it), checks each member in place against its column and appends the value to
// that column's buffer. It only ever says "accepted, with these values" or "not sure": any row it is
// not sure of — a reject, a duplicate or unknown member, an escape or number form it does not read
// itself, invalid JSON — is taken back from the columns and checked the reference way (parseLossless
// + toRow, values.ts). So the rejects, their reasons, fields and order are toRow's by construction,
// and a rejected row leaves nothing in the columns; test/unit/iceberg/scan.test.ts checks on
// generated rows that an accepted row's values are exactly toRow's.

import { LosslessNumber, parseLossless } from '../json.ts'
import type { ColumnBatch } from '../parquet/columns.ts'
import type { NestedField, Schema, Value } from '../types.ts'
import { toRow, valueConverter, writeDefaultOf, type Reject } from '../values.ts'
import { buildersFor, finishBatch, type ColumnBuilder } from './builders.ts'
import { Cursor, isBlank } from './cursor.ts'
import { dateAt, timestampAt, type Instant } from './temporal-bytes.ts'
import { isUtf8 } from './utf8.ts'

export interface ScanOptions {
  formatVersion: 2 | 3
  /**
   * Columns whose value is the same for every row of a batch and is the caller's to give (an arrival
   * time; the values come with each `scan`): a producer member of that name is ignored, as toRow's
   * caller deletes it before checking.
   */
  constants?: string[]
}

export interface RejectedLine {
  /** the line's index among the batch's non-blank lines */
  line: number
  /** the line as stored */
  text: string
  rejects: Reject[]
}

export interface ScannedBatch {
  /** the accepted rows, column by column */
  columns: ColumnBatch
  /** non-blank lines: every element stored */
  lines: number
  rejected: RejectedLine[]
  /** lines the fast path was not sure of and the reference checked (rejects among them) */
  slowLines: number
}

/** The batch cannot be read at all: not UTF-8, or a line that is not JSON (the reason is the parser's). */
export class BatchUnreadable extends Error {
  /** `lines`: the batch's non-blank lines; null when it is not text at all */
  constructor(message: string, readonly lines: number | null) {
    super(message)
    this.name = 'BatchUnreadable'
  }
}

// What the scanner does with a member, by column.
const enum Kind { Boolean, Int, Long, Float, Double, Decimal, Date, Timestamp, TimestampNs, String, Text, Values, NullOnly, Constant }

interface Column {
  field: NestedField
  name: Uint8Array
  kind: Kind
  required: boolean
  /** Timestamp: an offset is required (timestamptz) or refused (timestamp) */
  zoned: boolean
  /** Decimal */
  precision: number
  scale: number
  /** Text, Values and Decimal's other forms: the reference converter (undefined = toRow rejects) */
  convert: (v: unknown) => Value | undefined
  writeDefault: Value | undefined
  constant: Value | undefined
}

const utf8 = new TextEncoder()
const latin1 = new TextDecoder('latin1')
const utf8Fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })
// Lines and spans of a line: a BOM of their own is kept (only the body's leading one is dropped).
const utf8Line = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
const MAX_SAFE_SECONDS = 9_000_000_000 // × 10^6 + a fraction stays below 2^53

/** Not sure: take the row back and check it the reference way. */
const DEFER = -1

export class Scanner {
  private readonly columns: Column[]
  private readonly fields: NestedField[]
  private readonly formatVersion: 2 | 3
  private builders: ColumnBuilder[] = []
  /** per column: the row stamp it was last seen in (duplicate members) */
  private readonly seen: Int32Array
  private readonly countsAtRowStart: Int32Array
  private stamp = 0
  private readonly c = new Cursor()
  private readonly instant: Instant = { seconds: 0, nanos: 0 }

  constructor(private readonly schema: Schema, opts: ScanOptions) {
    this.formatVersion = opts.formatVersion
    const constants = new Set(opts.constants ?? [])
    this.fields = schema.fields
    this.columns = schema.fields.map((f) => compileColumn(f, opts.formatVersion, constants))
    this.seen = new Int32Array(this.columns.length)
    this.countsAtRowStart = new Int32Array(this.columns.length)
  }

  /**
   * Scans one stored batch (NDJSON bytes), with this batch's values of the constant columns.
   * Throws BatchUnreadable when it cannot be read at all.
   */
  scan(body: Uint8Array, constants: Record<string, Value> = {}): ScannedBatch {
    this.columns.forEach((col) => {
      if (col.kind === Kind.Constant) col.constant = constants[col.field.name] ?? null
    })
    // UTF-8 is checked as the bytes are read: string contents on the fast path, whole lines on the
    // reference path; everything else the fast path accepts is ASCII.
    let from = 0
    if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) from = 3 // the decoder drops a leading BOM
    let lines = 0
    for (let at = body.indexOf(0x0a); at >= 0; at = body.indexOf(0x0a, at + 1)) lines++
    this.builders = buildersFor(this.fields, lines + 1)
    const rejected: RejectedLine[] = []
    let rows = 0
    lines = 0
    let slowLines = 0
    const c = this.c
    c.buf = body
    while (from <= body.length) {
      let end = body.indexOf(0x0a, from)
      if (end < 0) end = body.length
      if (!isBlank(body, from, end)) {
        c.end = end
        if (this.fastRow(from)) {
          rows++
          lines++
        } else {
          this.truncate(rows)
          slowLines++
          const outcome = this.slowRow(body.subarray(from, end), lines, body)
          if (outcome === 'accepted') rows++
          if (outcome !== 'blank') lines++
          if (typeof outcome === 'object') rejected.push(outcome)
        }
      }
      from = end + 1
    }
    // a constant is the same in every row: written once all rows are known
    this.columns.forEach((col, i) => col.kind === Kind.Constant && this.builders[i].fill(col.constant!, rows))
    return { columns: finishBatch(this.fields, this.builders, rows), lines, rejected, slowLines }
  }

  private truncate(rows: number): void {
    for (let i = 0; i < this.builders.length; i++) if (this.columns[i].kind !== Kind.Constant) this.builders[i].truncate(rows, this.countsAtRowStart[i])
  }

  /** The reference path for one line: lossless parse, the constants' members dropped, toRow. */
  private slowRow(bytes: Uint8Array, line: number, body: Uint8Array): 'accepted' | 'blank' | RejectedLine {
    let text: string
    try {
      text = utf8Line.decode(bytes)
    } catch {
      throw new BatchUnreadable('the batch is not UTF-8 text', null)
    }
    if (text.trim() === '') return 'blank'
    let value: unknown
    try {
      value = parseLossless(text)
    } catch (err) {
      // A batch that is not UTF-8 further on is refused as such, as a whole-body decode would.
      throw new BatchUnreadable((err as Error).message, this.countLines(body))
    }
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      for (const col of this.columns) if (col.kind === Kind.Constant) delete (value as Record<string, unknown>)[col.field.name]
    }
    const result = toRow(this.schema, value, { formatVersion: this.formatVersion })
    if (!result.ok) return { line, text, rejects: result.rejects }
    this.columns.forEach((col, i) => col.kind !== Kind.Constant && this.builders[i].appendValue(result.row[col.field.name]))
    return 'accepted'
  }

  /** Non-blank lines, as the reference counts them (for a batch rejected whole). */
  private countLines(body: Uint8Array): number {
    let text: string
    try {
      text = utf8Fatal.decode(body)
    } catch {
      throw new BatchUnreadable('the batch is not UTF-8 text', null)
    }
    return text.split('\n').filter((l) => l.trim() !== '').length
  }

  /** One line, the fast way: true when the row is accepted and in the columns. */
  private fastRow(start: number): boolean {
    const c = this.c
    const cols = this.columns
    const builders = this.builders
    for (let i = 0; i < builders.length; i++) this.countsAtRowStart[i] = builders[i].count
    const stamp = ++this.stamp
    c.pos = start
    c.ws()
    if (c.peek() !== 0x7b /* { */) return false
    c.pos++
    c.ws()
    let guess = 0
    if (c.peek() === 0x7d /* } */) c.pos++
    else {
      for (;;) {
        const i = this.member(guess)
        if (i < 0) return false
        if (this.seen[i] === stamp) return false // a duplicate member: the reference decides
        this.seen[i] = stamp
        guess = i + 1
        c.ws()
        const b = c.peek()
        c.pos++
        if (b === 0x2c /* , */) {
          c.ws()
          continue
        }
        if (b === 0x7d /* } */) break
        return false
      }
    }
    c.ws()
    if (c.pos !== c.end) return false
    // members not sent: a write-default, a constant, or null where null is allowed
    for (let i = 0; i < cols.length; i++) {
      const col = cols[i]
      if (this.seen[i] === stamp || col.kind === Kind.Constant) continue
      if (col.writeDefault !== undefined) builders[i].appendValue(col.writeDefault)
      else if (col.required) return false
      else builders[i].appendNull()
    }
    return true
  }

  /** One `"name": value` member at the cursor; the column's index, or DEFER. */
  private member(guess: number): number {
    const c = this.c
    if (c.peek() !== 0x22) return DEFER
    const keyStart = c.pos + 1
    const keyEnd = c.plainStringEnd(keyStart)
    if (keyEnd < 0) return DEFER
    const i = this.lookup(keyStart, keyEnd, guess)
    if (i < 0) return DEFER // an unknown member is a reject
    c.pos = keyEnd + 1
    c.ws()
    if (c.peek() !== 0x3a /* : */) return DEFER
    c.pos++
    c.ws()
    const col = this.columns[i]
    if (col.kind === Kind.Constant) return this.skipChecked() ? i : DEFER
    if (c.isNull()) {
      c.pos += 4
      if (col.required) return DEFER
      this.builders[i].appendNull()
      return i
    }
    return this.value(col, this.builders[i]) ? i : DEFER
  }

  private lookup(start: number, end: number, guess: number): number {
    const cols = this.columns
    if (guess < cols.length && this.c.equals(start, end, cols[guess].name)) return guess
    for (let i = 0; i < cols.length; i++) if (i !== guess && this.c.equals(start, end, cols[i].name)) return i
    return DEFER
  }

  /** A member the caller's constant replaces: skipped, but it must still be JSON. */
  private skipChecked(): boolean {
    const c = this.c
    const start = c.pos
    if (!c.skipValue()) return false
    try {
      parseLossless(utf8Line.decode(c.buf.subarray(start, c.pos)))
      return true
    } catch {
      return false
    }
  }

  /** A non-null value for `col` at the cursor, appended; false when not sure. */
  private value(col: Column, b: ColumnBuilder): boolean {
    const c = this.c
    switch (col.kind) {
      case Kind.Boolean: {
        const v = c.bool()
        if (v < 0) return false
        b.bytes[b.slot()] = v
        b.commitValue()
        return true
      }
      case Kind.Int: {
        if (!c.number() || c.fraction || c.exponent || c.digitsEnd - c.digitsStart > 10) return false
        const n = c.smallInteger()
        if (n < -2147483648 || n > 2147483647) return false
        b.i32[b.slot()] = n
        b.commitValue()
        return true
      }
      case Kind.Long: {
        if (!c.number() || c.fraction || c.exponent) return false
        const digits = c.digitsEnd - c.digitsStart
        if (digits <= 15) {
          b.appendSafeInt64(c.smallInteger())
          return true
        }
        if (digits > 19 || (digits === 19 && !withinInt64(c.buf, c.digitsStart, c.negative))) return false
        // value = high × 10^9 + low, each part exact in a double
        const buf = c.buf
        const split = c.digitsEnd - 9
        let high = 0
        let low = 0
        for (let k = c.digitsStart; k < split; k++) high = high * 10 + (buf[k] - 0x30)
        for (let k = split; k < c.digitsEnd; k++) low = low * 10 + (buf[k] - 0x30)
        b.appendInt64Parts(high, low, c.negative)
        return true
      }
      case Kind.Float:
      case Kind.Double: {
        if (!c.number()) return false
        const x = Number(latin1.decode(c.buf.subarray(c.tokenStart, c.pos)))
        if (col.kind === Kind.Float) {
          const f = Math.fround(x)
          if (!Number.isFinite(f)) return false
          b.f32[b.slot()] = f
        } else {
          if (!Number.isFinite(x)) return false
          b.f64[b.slot()] = x
        }
        b.commitValue()
        return true
      }
      case Kind.Decimal:
        return this.decimal(col, b)
      case Kind.Date: {
        const s = c.asciiString()
        if (s < 0 || c.pos - s !== 11) return false
        const d = dateAt(c.buf, s)
        if (d === undefined) return false
        b.i32[b.slot()] = d
        b.commitValue()
        return true
      }
      case Kind.Timestamp:
      case Kind.TimestampNs: {
        const s = c.asciiString()
        if (s < 0) return this.textual(col, b, s)
        const t = this.instant
        // a microsecond column refuses a finer fraction unless it is zeros: the reference says why
        if (!timestampAt(c.buf, s, c.pos - 1, col.zoned, t) || (col.kind === Kind.Timestamp && t.nanos % 1000 !== 0)) return this.textual(col, b, s)
        if (col.kind === Kind.Timestamp && Math.abs(t.seconds) < MAX_SAFE_SECONDS) {
          b.appendSafeInt64(t.seconds * 1_000_000 + Math.floor(t.nanos / 1000))
        } else if (col.kind === Kind.Timestamp) {
          b.appendBigInt64(BigInt(t.seconds) * 1_000_000n + BigInt(Math.floor(t.nanos / 1000)))
        } else {
          b.appendBigInt64(BigInt(t.seconds) * 1_000_000_000n + BigInt(t.nanos))
        }
        return true
      }
      case Kind.String: {
        if (c.peek() !== 0x22) return false
        const start = c.pos + 1
        const end = c.plainStringEnd(start)
        if (end >= 0) {
          const n = end - start
          const at = b.reserveData(n)
          const data = b.data
          const buf = c.buf
          let high = 0
          for (let k = 0; k < n; k++) high |= data[at + k] = buf[start + k]
          if (high >= 0x80 && !isUtf8(buf, start, end)) return false
          b.commitData(n)
          c.pos = end + 1
          return true
        }
        // escapes: JSON.parse reads a string token exactly as the lossless parser does
        const tokenEnd = c.stringEnd(start)
        if (tokenEnd < 0) return false
        let s: string
        try {
          s = JSON.parse(utf8Line.decode(c.buf.subarray(start - 1, tokenEnd + 1))) as string
        } catch {
          return false
        }
        if (LONE_SURROGATE.test(s)) return false
        b.appendBytes(utf8.encode(s))
        c.pos = tokenEnd + 1
        return true
      }
      case Kind.Text:
        return this.textual(col, b, c.asciiString())
      case Kind.Values: {
        const start = c.pos
        if (!c.skipValue()) return false
        let parsed: unknown
        try {
          parsed = parseLossless(utf8Line.decode(c.buf.subarray(start, c.pos)))
        } catch {
          return false
        }
        const v = col.convert(parsed)
        if (v === undefined) return false
        b.appendValue(v)
        return true
      }
      case Kind.NullOnly:
      case Kind.Constant:
        return false
    }
  }

  /** A type sent as a plain ASCII string, checked by the reference converter; `s` from asciiString. */
  private textual(col: Column, b: ColumnBuilder, s: number): boolean {
    if (s < 0) return false
    const v = col.convert(latin1.decode(this.c.buf.subarray(s, this.c.pos - 1)))
    if (v === undefined) return false
    b.appendValue(v)
    return true
  }

  /** decimal(P, S) sent as a plain number with at most S fraction digits; other forms go to the converter. */
  private decimal(col: Column, b: ColumnBuilder): boolean {
    const c = this.c
    if (c.peek() === 0x22) return this.textual(col, b, c.asciiString())
    if (!c.number()) return false
    if (c.exponent || c.fractionEnd - c.fractionStart > col.scale) {
      const v = col.convert(new LosslessNumber(latin1.decode(c.buf.subarray(c.tokenStart, c.pos))))
      if (v === undefined) return false
      b.appendValue(v)
      return true
    }
    const buf = c.buf
    let i = c.digitsStart
    while (i < c.digitsEnd - 1 && buf[i] === 0x30) i++ // leading zeros are not significant (only "0" has one)
    const intDigits = buf[i] === 0x30 ? 0 : c.digitsEnd - i
    if (intDigits + col.scale > col.precision) return false
    const fracDigits = c.fractionEnd - c.fractionStart
    let n = 0
    if (intDigits + col.scale <= 15) {
      for (let k = i; k < c.digitsEnd; k++) n = n * 10 + (buf[k] - 0x30)
      for (let k = c.fractionStart; k < c.fractionEnd; k++) n = n * 10 + (buf[k] - 0x30)
      for (let k = fracDigits; k < col.scale; k++) n *= 10
      if (c.negative && n !== 0) n = -n
      b.appendValue(col.precision <= 9 ? n : BigInt(n))
      return true
    }
    const text = latin1.decode(buf.subarray(i, c.digitsEnd)) + latin1.decode(buf.subarray(c.fractionStart, c.fractionEnd)) + '0'.repeat(col.scale - fracDigits)
    const v = BigInt(text)
    b.appendValue(c.negative ? -v : v)
    return true
  }
}

function compileColumn(field: NestedField, formatVersion: 2 | 3, constants: Set<string>): Column {
  const convert = valueConverter(field.type, formatVersion)
  const col: Column = {
    field, name: utf8.encode(field.name), kind: Kind.Values, required: field.required, zoned: false, precision: 0, scale: 0,
    convert, writeDefault: writeDefaultOf(field, formatVersion), constant: undefined,
  }
  if (constants.has(field.name)) return { ...col, kind: Kind.Constant }
  if (typeof field.type !== 'string') return col
  // A type the reference refuses for every non-null value holds only nulls.
  if (refusesEverything(convert)) return { ...col, kind: Kind.NullOnly }
  const t = field.type.trim()
  const decimal = /^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(t)
  if (decimal) return { ...col, kind: Kind.Decimal, precision: Number(decimal[1]), scale: Number(decimal[2]) }
  switch (t) {
    case 'boolean': return { ...col, kind: Kind.Boolean }
    case 'int': return { ...col, kind: Kind.Int }
    case 'long': return { ...col, kind: Kind.Long }
    case 'float': return { ...col, kind: Kind.Float }
    case 'double': return { ...col, kind: Kind.Double }
    case 'date': return { ...col, kind: Kind.Date }
    case 'timestamp': case 'timestamptz': return { ...col, kind: Kind.Timestamp, zoned: t === 'timestamptz' }
    case 'timestamp_ns': case 'timestamptz_ns':
      return formatVersion === 3 ? { ...col, kind: Kind.TimestampNs, zoned: t === 'timestamptz_ns' } : { ...col, kind: Kind.NullOnly }
    case 'string': return { ...col, kind: Kind.String }
    case 'time': case 'uuid': case 'binary': return { ...col, kind: Kind.Text }
    default:
      return t.startsWith('fixed[') ? { ...col, kind: Kind.Text } : col // geometry and the rest: the converter, on parsed JSON
  }
}

/** unknown, geography, variant, v3 types on v2: every probe is refused. */
function refusesEverything(convert: (v: unknown) => Value | undefined): boolean {
  const probes: unknown[] = [true, 'x', new LosslessNumber('1'), {}, [], '2026-01-01', '00:00:00', '2026-01-01T00:00:00Z', 'AAAA', { type: 'Point', coordinates: [0, 0] }]
  return probes.every((p) => convert(p) === undefined)
}

const INT64_LIMIT = new TextEncoder().encode('9223372036854775808') // 2^63

/** Whether 19 digits at `at` fit a long: below 2^63, or equal to it when negative. */
function withinInt64(buf: Uint8Array, at: number, negative: boolean): boolean {
  for (let k = 0; k < 19; k++) {
    const d = buf[at + k]
    if (d !== INT64_LIMIT[k]) return d < INT64_LIMIT[k]
  }
  return negative
}
