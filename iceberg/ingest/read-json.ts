// A nested value (struct, list, map, geometry) read from the line's bytes into the form parseLossless
// gives (objects, arrays, strings, LosslessNumber, booleans, null), for the column's reference
// converter: the same converter, without lossless-json's character-by-character parse, which cost
// three times the conversion. Anything it is not sure of — a key with an escape, a key twice (whose
// values lossless-json compares), `__proto__`, broken JSON — answers NOT_SURE, and the caller parses
// that value the reference way.

import { LosslessNumber } from '../spec/json.ts'
import type { Cursor } from './cursor.ts'
import { isUtf8 } from './utf8.ts'

export const NOT_SURE = Symbol('not sure')

const latin1 = new TextDecoder('latin1')
const utf8Span = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
const MAX_DEPTH = 64

/** The JSON value at the cursor (the cursor moved past it), or NOT_SURE (the cursor anywhere). */
export function readJson(c: Cursor, depth = 0): unknown {
  if (depth > MAX_DEPTH) return NOT_SURE
  c.ws()
  const b = c.peek()
  if (b === 0x7b) return readObject(c, depth)
  if (b === 0x5b) return readArray(c, depth)
  if (b === 0x22) return readString(c)
  if (b === 0x74 || b === 0x66) {
    const v = c.bool()
    return v < 0 ? NOT_SURE : v === 1
  }
  if (b === 0x6e) {
    if (!c.isNull()) return NOT_SURE
    c.pos += 4
    return null
  }
  if (!c.number()) return NOT_SURE
  // An integer of up to 15 digits as a number: every converter reads it as it would its digits
  // (numberText gives them back), and no LosslessNumber is made or matched by a regex later.
  // Not -0: a double would keep its sign, String(-0) would not.
  if (!c.fraction && !c.exponent && c.digitsEnd - c.digitsStart <= 15 && !(c.negative && c.buf[c.digitsStart] === 0x30)) return c.smallInteger()
  return new LosslessNumber(latin1.decode(c.buf.subarray(c.tokenStart, c.pos)))
}

function readObject(c: Cursor, depth: number): unknown {
  c.pos++
  const out: Record<string, unknown> = {}
  c.ws()
  if (c.peek() === 0x7d) {
    c.pos++
    return out
  }
  for (;;) {
    c.ws()
    if (c.peek() !== 0x22) return NOT_SURE
    const start = c.pos + 1
    const end = c.plainStringEnd(start)
    if (end < 0) return NOT_SURE
    const key = text(c.buf, start, end)
    if (key === undefined || key === '__proto__' || Object.hasOwn(out, key)) return NOT_SURE
    c.pos = end + 1
    c.ws()
    if (c.peek() !== 0x3a) return NOT_SURE
    c.pos++
    const v = readJson(c, depth + 1)
    if (v === NOT_SURE) return NOT_SURE
    out[key] = v
    c.ws()
    const next = c.peek()
    c.pos++
    if (next === 0x7d) return out
    if (next !== 0x2c) return NOT_SURE
  }
}

function readArray(c: Cursor, depth: number): unknown {
  c.pos++
  const out: unknown[] = []
  c.ws()
  if (c.peek() === 0x5d) {
    c.pos++
    return out
  }
  for (;;) {
    const v = readJson(c, depth + 1)
    if (v === NOT_SURE) return NOT_SURE
    out.push(v)
    c.ws()
    const next = c.peek()
    c.pos++
    if (next === 0x5d) return out
    if (next !== 0x2c) return NOT_SURE
  }
}

function readString(c: Cursor): unknown {
  const start = c.pos + 1
  const end = c.plainStringEnd(start)
  if (end >= 0) {
    const s = text(c.buf, start, end)
    if (s === undefined) return NOT_SURE
    c.pos = end + 1
    return s
  }
  // escapes: JSON.parse reads a string token exactly as the lossless parser does
  const close = c.stringEnd(start)
  if (close < 0) return NOT_SURE
  try {
    const s = JSON.parse(utf8Span.decode(c.buf.subarray(start - 1, close + 1))) as string
    c.pos = close + 1
    return s
  } catch {
    return NOT_SURE
  }
}

/** buf[start, end) as a string: ASCII directly, other bytes only as valid UTF-8. */
export function text(buf: Uint8Array, start: number, end: number): string | undefined {
  let high = 0
  for (let k = start; k < end; k++) high |= buf[k]
  if (high < 0x80) {
    // A short one by char codes: a TextDecoder call costs more than the string below ~24 bytes.
    if (end - start > 24) return latin1.decode(buf.subarray(start, end))
    let s = ''
    for (let k = start; k < end; k++) s += String.fromCharCode(buf[k])
    return s
  }
  return isUtf8(buf, start, end) ? utf8Span.decode(buf.subarray(start, end)) : undefined
}
