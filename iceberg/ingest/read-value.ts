// One member's value read straight from the line's bytes into its column: the common types without
// a JavaScript value, the rest through the column's reference converter. Anything this reader is not
// sure of answers false, and the scanner checks the row the reference way instead.

import { LosslessNumber, parseLossless } from '../spec/json.ts'
import type { ColumnBuilder } from '../parquet/builders.ts'
import { withinInt64, type Cursor } from './cursor.ts'
import { Kind, type Column } from './plan.ts'
import { NOT_SURE, readJson } from './read-json.ts'
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
      const x = shortDecimal(c) ?? Number(latin1.decode(c.buf.subarray(c.tokenStart, c.pos)))
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
    case Kind.Time: {
      const s = c.asciiString()
      const micros = s < 0 ? -1 : timeAt(c.buf, s, c.pos - 1)
      if (micros < 0) return textual(c, col, b, s)
      b.appendSafeInt64(micros)
      return true
    }
    case Kind.Uuid: {
      const s = c.asciiString()
      if (s < 0 || c.pos - 1 - s !== 36 || !uuidAt(c.buf, s, b.bytes, b.slot() * 16)) return textual(c, col, b, s)
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
      if (col.nested) {
        const v = col.nested(c)
        if (v !== NOT_SURE) {
          b.appendValue(v)
          return true
        }
        c.pos = start
      }
      let parsed = readJson(c)
      if (parsed === NOT_SURE) {
        c.pos = start
        if (!c.skipValue()) return false
        try {
          parsed = parseLossless(utf8Span.decode(c.buf.subarray(start, c.pos)))
        } catch {
          return false
        }
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

/**
 * decimal(P, S) sent as a plain number with at most S fraction digits, or as a string holding one
 * (the converter reads both with one parser); other forms go to the converter.
 */
function decimal(c: Cursor, col: Column, b: ColumnBuilder): boolean {
  if (c.peek() === 0x22) {
    const s = c.asciiString()
    if (s < 0) return false
    const close = c.pos - 1
    c.pos = s
    const plain = c.number() && c.pos === close && !c.exponent && c.fractionEnd - c.fractionStart <= col.scale
    c.pos = close + 1
    if (!plain) return textual(c, col, b, s)
  } else if (!c.number()) return false
  else if (c.exponent || c.fractionEnd - c.fractionStart > col.scale) {
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
    // the unscaled value is within ±10^15: written as it is, no BigInt made (INT32, INT64 or fixed bytes by precision)
    if (col.precision > 18) b.appendFixedSafeInt(n)
    else if (col.precision > 9) b.appendSafeInt64(n)
    else {
      b.i32[b.slot()] = n
      b.commitValue()
    }
    return true
  }
  // 16 to 38 digits: two's complement from the digits themselves (INT64 or fixed bytes by precision)
  b.appendDecimalDigits(buf, i, c.digitsEnd, c.fractionStart, c.fractionEnd, col.scale - fracDigits, c.negative)
  return true
}

const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k)

/**
 * The last number as a double when it has at most 15 digits and no exponent: its digits as an integer
 * over a power of ten, both exact, so the one rounding of the division is Number()'s (Clinger's fast
 * path). Undefined otherwise.
 */
function shortDecimal(c: Cursor): number | undefined {
  if (c.exponent || c.digitsEnd - c.digitsStart + c.fractionEnd - c.fractionStart > 15) return undefined
  const buf = c.buf
  let n = 0
  for (let k = c.digitsStart; k < c.digitsEnd; k++) n = n * 10 + (buf[k] - 0x30)
  for (let k = c.fractionStart; k < c.fractionEnd; k++) n = n * 10 + (buf[k] - 0x30)
  const x = n / POW10[c.fractionEnd - c.fractionStart]
  return c.negative ? -x : x
}

/** Microseconds since midnight of `HH:MM:SS[.f…]` at buf[s, e), as parseTime reads it; -1 for anything else (the converter says why). */
function timeAt(buf: Uint8Array, s: number, e: number): number {
  if (e - s < 8 || buf[s + 2] !== 0x3a || buf[s + 5] !== 0x3a) return -1
  const h = two(buf, s)
  const m = two(buf, s + 3)
  const sec = two(buf, s + 6)
  if (h < 0 || h > 23 || m < 0 || m > 59 || sec < 0 || sec > 59) return -1
  let micros = 0
  let i = s + 8
  if (i < e) {
    if (buf[i] !== 0x2e || ++i === e) return -1
    for (let k = 0; i < e; i++, k++) {
      const d = buf[i] - 0x30
      if (d < 0 || d > 9 || (k >= 6 && d !== 0)) return -1
      if (k < 6) micros += d * POW10[5 - k]
    }
  }
  return (h * 3600 + m * 60 + sec) * 1_000_000 + micros
}

function two(buf: Uint8Array, at: number): number {
  const a = buf[at] - 0x30
  const b = buf[at + 1] - 0x30
  return a < 0 || a > 9 || b < 0 || b > 9 ? -1 : a * 10 + b
}

/** A canonical UUID (8-4-4-4-12 hex digits, either case) at buf[s, s + 36) into out[at, at + 16); false otherwise. */
function uuidAt(buf: Uint8Array, s: number, out: Uint8Array, at: number): boolean {
  if (buf[s + 8] !== 0x2d || buf[s + 13] !== 0x2d || buf[s + 18] !== 0x2d || buf[s + 23] !== 0x2d) return false
  let o = at
  for (let i = s; i < s + 36; i += 2) {
    if (i === s + 8 || i === s + 13 || i === s + 18 || i === s + 23) i++
    const hi = hex(buf[i])
    const lo = hex(buf[i + 1])
    if (hi < 0 || lo < 0) return false
    out[o++] = (hi << 4) | lo
  }
  return true
}

function hex(b: number): number {
  if (b >= 0x30 && b <= 0x39) return b - 0x30
  const l = b | 0x20
  return l >= 0x61 && l <= 0x66 ? l - 0x57 : -1
}
