// One member's value read straight from the line's bytes into its column: the common types without
// a JavaScript value, the rest through the column's reference converter. Anything this reader is not
// sure of answers false, and the scanner checks the row the reference way instead.

import { LosslessNumber, parseLossless } from '../spec/json.ts'
import type { ColumnBuilder } from '../parquet/builders.ts'
import { withinInt64, type Cursor } from './cursor.ts'
import { Kind, type Column } from './plan.ts'
import { dateAt, timestampAt, type Instant } from './temporal-bytes.ts'
import { isUtf8 } from './utf8.ts'

const utf8 = new TextEncoder()
const latin1 = new TextDecoder('latin1')
// A span of a line: a BOM of its own is kept.
const utf8Span = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
const MAX_SAFE_SECONDS = 9_000_000_000 // × 10^6 + a fraction stays below 2^53

/** A non-null value for `col` at the cursor, appended; false when not sure. */
export function readValue(c: Cursor, col: Column, b: ColumnBuilder, t: Instant): boolean {
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
      return decimal(c, col, b)
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
      if (s < 0) return textual(c, col, b, s)
      // a microsecond column refuses a finer fraction unless it is zeros: the reference says why
      if (!timestampAt(c.buf, s, c.pos - 1, col.zoned, t) || (col.kind === Kind.Timestamp && t.nanos % 1000 !== 0)) return textual(c, col, b, s)
      if (col.kind === Kind.Timestamp && Math.abs(t.seconds) < MAX_SAFE_SECONDS) {
        b.appendSafeInt64(t.seconds * 1_000_000 + Math.floor(t.nanos / 1000))
      } else if (col.kind === Kind.Timestamp) {
        b.appendBigInt64(BigInt(t.seconds) * 1_000_000n + BigInt(Math.floor(t.nanos / 1000)))
      } else {
        const nanos = BigInt(t.seconds) * 1_000_000_000n + BigInt(t.nanos)
        // Past 64 bits (before 1677 or after 2262): the reference path refuses it, with its reason.
        if (nanos !== BigInt.asIntN(64, nanos)) return textual(c, col, b, s)
        b.appendBigInt64(nanos)
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
        s = JSON.parse(utf8Span.decode(c.buf.subarray(start - 1, tokenEnd + 1))) as string
      } catch {
        return false
      }
      if (LONE_SURROGATE.test(s)) return false
      b.appendBytes(utf8.encode(s))
      c.pos = tokenEnd + 1
      return true
    }
    case Kind.Text:
      return textual(c, col, b, c.asciiString())
    case Kind.Values: {
      const start = c.pos
      if (!c.skipValue()) return false
      let parsed: unknown
      try {
        parsed = parseLossless(utf8Span.decode(c.buf.subarray(start, c.pos)))
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
function textual(c: Cursor, col: Column, b: ColumnBuilder, s: number): boolean {
  if (s < 0) return false
  const v = col.convert(latin1.decode(c.buf.subarray(s, c.pos - 1)))
  if (v === undefined) return false
  b.appendValue(v)
  return true
}

/** decimal(P, S) sent as a plain number with at most S fraction digits; other forms go to the converter. */
function decimal(c: Cursor, col: Column, b: ColumnBuilder): boolean {
  if (c.peek() === 0x22) return textual(c, col, b, c.asciiString())
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
    // the unscaled value is within ±10^15: written as it is, no BigInt made (INT32 or INT64 by precision)
    if (col.precision > 18) b.appendValue(BigInt(n))
    else if (col.precision > 9) b.appendSafeInt64(n)
    else {
      b.i32[b.slot()] = n
      b.commitValue()
    }
    return true
  }
  const text = latin1.decode(buf.subarray(i, c.digitsEnd)) + latin1.decode(buf.subarray(c.fractionStart, c.fractionEnd)) + '0'.repeat(col.scale - fracDigits)
  const v = BigInt(text)
  b.appendValue(c.negative ? -v : v)
  return true
}
