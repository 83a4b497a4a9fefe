// The send route's body: split the JSON array (or the NDJSON lines) into NDJSON lines that keep each
// element's original bytes (DESIGN.md "Lossless JSON", "Data layout in the bucket"), in one scanner
// for both framings. Reading the body under its limit is body.ts. Runtime-neutral: Uint8Array only.
import { ApiError } from './errors.ts'

/** Deepest nesting accepted, counting the outer array. Keeps the scanner's stack and the roller's parser bounded. */
const MAX_DEPTH = 512

export interface Batch {
  /**
   * One line per element, in order (line i is element i), original bytes, each line ending with '\n'.
   * Elements that are not objects are lines too: the roller rejects them into the rejects file with
   * their bytes (spec "Rejects": one object per rejected row, with the original row).
   */
  ndjson: Uint8Array
  /** The object elements (the rows the answer calls accepted). */
  accepted: number
  /** The bytes of the object elements' lines: what the answer and ingest_bytes count as accepted. */
  acceptedBytes: number
  rejected: number
  reasons: Array<{ index: number; reason: 'not_an_object' }>
}

// Byte values the scanner dispatches on.
const SPACE = 0x20,
  TAB = 0x09,
  LF = 0x0a,
  CR = 0x0d
const QUOTE = 0x22,
  BACKSLASH = 0x5c,
  COMMA = 0x2c,
  COLON = 0x3a
const LBRACKET = 0x5b,
  RBRACKET = 0x5d,
  LBRACE = 0x7b,
  RBRACE = 0x7d
const MINUS = 0x2d,
  PLUS = 0x2b,
  DOT = 0x2e,
  ZERO = 0x30,
  NINE = 0x39

// Scanner states: what may come next (after whitespace).
const VALUE = 0 // a value (after '[' of a non-empty array, ',' in an array, or ':')
const VALUE_OR_CLOSE = 1 // a value or ']' (just after '[')
const KEY = 2 // a member name (after ',' in an object)
const KEY_OR_CLOSE = 3 // a member name or '}' (just after '{')
const COLON_NEXT = 4 // ':' after a member name
const AFTER = 5 // ',' or the closing bracket of the current container
// NDJSON framing only: the top level is a sequence of lines, not an array.
const LINE_START = 6 // an element, or a blank line
const LINE_END = 7 // the line break (or the end of the body) after an element

const isDigit = (c: number) => c >= ZERO && c <= NINE
const isHex = (c: number) => (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66)
// The escapes RFC 8259 §7 allows after a backslash: " \ / b f n r t (u is handled apart).
const SIMPLE_ESCAPE = new Uint8Array(128)
for (const ch of '"\\/bfnrt') SIMPLE_ESCAPE[ch.charCodeAt(0)] = 1

function malformed(bytes: Uint8Array, offset: number, what?: string): ApiError {
  const message =
    offset >= bytes.length ? `unexpected end of input${what ? ` (${what})` : ''}` : (what ?? `unexpected byte 0x${bytes[offset].toString(16).padStart(2, '0')}`)
  return new ApiError(400, 'malformed_json', `malformed JSON: ${message} at byte ${offset}`, { offset })
}

/** Scans a string whose opening quote is at `i`; returns the offset just past the closing quote. */
export function scanString(bytes: Uint8Array, i: number): number {
  const n = bytes.length
  let j = i + 1
  for (;;) {
    if (j >= n) throw malformed(bytes, j, 'unterminated string')
    const c = bytes[j]
    if (c === QUOTE) return j + 1
    if (c >= SPACE && c < 0x80 && c !== BACKSLASH) {
      j++ // the common case: printable ASCII
    } else if (c === BACKSLASH) {
      const e = bytes[j + 1]
      if (e === 0x75 /* u */) {
        for (let k = j + 2; k < j + 6; k++) if (!isHex(bytes[k])) throw malformed(bytes, k, 'bad \\u escape')
        j += 6
      } else if (e < 128 && SIMPLE_ESCAPE[e]) {
        j += 2
      } else {
        throw malformed(bytes, j + 1, 'bad escape')
      }
    } else if (c < SPACE) {
      throw malformed(bytes, j, 'control character in string')
    } else {
      j = scanUtf8(bytes, j)
    }
  }
}

/** Validates one multi-byte UTF-8 sequence at `j` (RFC 3629: no overlongs, surrogates or > U+10FFFF). */
function scanUtf8(bytes: Uint8Array, j: number): number {
  const c = bytes[j]
  let len: number,
    lo = 0x80,
    hi = 0xbf // the allowed range of the second byte
  if (c >= 0xc2 && c <= 0xdf) len = 2
  else if (c >= 0xe0 && c <= 0xef) {
    len = 3
    if (c === 0xe0) lo = 0xa0
    else if (c === 0xed) hi = 0x9f
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4
    if (c === 0xf0) lo = 0x90
    else if (c === 0xf4) hi = 0x8f
  } else throw malformed(bytes, j, 'invalid UTF-8')
  const b1 = bytes[j + 1]
  if (!(b1 >= lo && b1 <= hi)) throw malformed(bytes, j + 1, 'invalid UTF-8')
  for (let k = j + 2; k < j + len; k++) {
    const b = bytes[k]
    if (!(b >= 0x80 && b <= 0xbf)) throw malformed(bytes, k, 'invalid UTF-8')
  }
  return j + len
}

/** Scans a number per RFC 8259 §6 starting at `i`; returns the offset just past it. */
export function scanNumber(bytes: Uint8Array, i: number): number {
  let j = i
  if (bytes[j] === MINUS) j++
  if (bytes[j] === ZERO)
    j++ // a leading 0 stands alone; a digit after it is caught by the caller
  else if (isDigit(bytes[j])) while (isDigit(bytes[++j]));
  else throw malformed(bytes, j)
  if (bytes[j] === DOT) {
    if (!isDigit(bytes[++j])) throw malformed(bytes, j)
    while (isDigit(bytes[++j]));
  }
  if ((bytes[j] | 0x20) === 0x65 /* e or E */) {
    j++
    if (bytes[j] === PLUS || bytes[j] === MINUS) j++
    if (!isDigit(bytes[j])) throw malformed(bytes, j)
    while (isDigit(bytes[++j]));
  }
  return j
}

const LITERALS: Record<number, Uint8Array> = {
  116: new TextEncoder().encode('true'),
  102: new TextEncoder().encode('false'),
  110: new TextEncoder().encode('null'),
}

/**
 * How the body frames its elements: `array`, one JSON array (application/json); `lines`, one element
 * a line (application/x-ndjson, application/jsonl: blank lines ignored, the final newline optional,
 * CRLF taken; a line break inside an element is malformed, as NDJSON has it).
 */
export type Framing = 'array' | 'lines'

/**
 * Splits a JSON array (or NDJSON lines) into NDJSON in one pass over the bytes, without parsing
 * values: each element is copied as sent (whitespace CR/LF folded to spaces so it stays on one line),
 * one a line, in order; the elements that are not objects are also listed in `reasons` (an index
 * counts elements, blank lines not). The whole body is validated as RFC 8259 JSON first-error-wins,
 * with the byte offset of the first bad byte. A leading UTF-8 BOM is skipped (RFC 8259 §8.1 allows
 * parsers to ignore one; some Windows tools still write it).
 */
export function splitBatch(bytes: Uint8Array, framing: Framing = 'array'): Batch {
  const bom = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0
  // NDJSON has no bracket: the top level is the sequence of lines.
  return framing === 'lines' ? scan(bytes, bom, true) : scan(bytes, arrayStart(bytes, bom), false)
}

/** Where the array's first element may start: past the whitespace and the '['. */
function arrayStart(bytes: Uint8Array, from: number): number {
  const n = bytes.length
  let i = from
  while (i < n && (bytes[i] === SPACE || bytes[i] === TAB || bytes[i] === LF || bytes[i] === CR)) i++
  if (i >= n) throw new ApiError(400, 'not_an_array', 'the body must be a JSON array of objects; it is empty')
  if (bytes[i] !== LBRACKET) {
    // A body that starts like some other JSON value is "not an array"; anything else is plain garbage.
    const c = bytes[i]
    if (c === LBRACE || c === QUOTE || c === MINUS || isDigit(c) || c in LITERALS) {
      throw new ApiError(400, 'not_an_array', 'the body must be a JSON array of objects')
    }
    throw malformed(bytes, i)
  }
  return i + 1
}

/** The one scanner of both framings: `i` is where the first element may start. */
function scan(bytes: Uint8Array, from: number, lines: boolean): Batch {
  const n = bytes.length
  let i = from
  // The output is never longer than the input (each element's '\n' is paid for by a ',' or ']', or by
  // the line break after it; an NDJSON body's last line may have none: one byte more), so it is built
  // in a copy of the input: newlines are folded in place as the scan passes them, and each element is
  // then moved down to the write position `w` (always <= its start).
  let out: Uint8Array
  if (lines) {
    out = new Uint8Array(n + 1)
    out.set(bytes)
  } else out = bytes.slice()
  let w = 0
  const reasons: Batch['reasons'] = []
  let accepted = 0
  let acceptedBytes = 0
  let index = 0 // the index of the current top-level element
  let start = 0 // where the current top-level element began

  // stack[d] is 1 for an object, 0 for an array; depth 1 is the outer array (or the lines).
  const stack = new Uint8Array(MAX_DEPTH + 1)
  let depth = 1
  let state = lines ? LINE_START : VALUE_OR_CLOSE

  for (;;) {
    let c = bytes[i]
    while (c === SPACE || c === LF || c === CR || c === TAB) {
      if (c !== SPACE && c !== TAB) {
        if (!lines || depth > 1) {
          // A line break inside an element breaks NDJSON's framing.
          if (lines && c === LF) throw malformed(bytes, i, 'a line break inside an element; NDJSON has one element a line')
          out[i] = SPACE
        } else if (c === LF) state = LINE_START // between lines nothing is folded: the last line's '\n' may sit here
      }
      c = bytes[++i]
    }
    if (i >= n) {
      if (lines && depth === 1) break // the last line may end without a newline
      throw malformed(bytes, n)
    }

    let closed = false // a container closed: its value is complete
    if (state === AFTER) {
      if (c === COMMA) {
        state = stack[depth] ? KEY : VALUE
        i++
        continue
      }
      if (c !== (stack[depth] ? RBRACE : RBRACKET)) throw malformed(bytes, i)
      closed = true
    } else if (state === COLON_NEXT) {
      if (c !== COLON) throw malformed(bytes, i)
      state = VALUE
      i++
      continue
    } else if (state === KEY || state === KEY_OR_CLOSE) {
      if (c === QUOTE) {
        i = scanString(bytes, i)
        state = COLON_NEXT
        continue
      }
      if (state === KEY || c !== RBRACE) throw malformed(bytes, i)
      closed = true
    } else if (state === LINE_END) {
      throw malformed(bytes, i, 'one element a line: a line break must follow each element')
    } else if (state === VALUE_OR_CLOSE && c === RBRACKET) {
      closed = true
    }

    if (closed) {
      i++
      if (--depth === 0) break // the outer array closed
    } else {
      // A value starts here.
      if (depth === 1) start = i
      if (c === LBRACE || c === LBRACKET) {
        if (depth === MAX_DEPTH) throw malformed(bytes, i, `nesting deeper than ${MAX_DEPTH} levels`)
        stack[++depth] = c === LBRACE ? 1 : 0
        state = c === LBRACE ? KEY_OR_CLOSE : VALUE_OR_CLOSE
        i++
        continue
      } else if (c === QUOTE) {
        i = scanString(bytes, i)
      } else if (c === MINUS || isDigit(c)) {
        i = scanNumber(bytes, i)
      } else if (c in LITERALS) {
        const lit = LITERALS[c]
        for (let k = 1; k < lit.length; k++) if (bytes[i + k] !== lit[k]) throw malformed(bytes, i + k)
        i += lit.length
      } else {
        throw malformed(bytes, i)
      }
    }

    // A value is complete; at depth 1 it was a whole element of the outer array (or a line).
    state = AFTER
    if (depth === 1) {
      if (lines) state = LINE_END
      out.copyWithin(w, start, i)
      w += i - start
      out[w++] = LF
      if (bytes[start] === LBRACE) {
        accepted++
        acceptedBytes += i - start + 1
      } else {
        reasons.push({ index, reason: 'not_an_object' })
      }
      index++
    }
  }

  // Only whitespace may follow the array.
  if (!lines) while (i < n && (bytes[i] === SPACE || bytes[i] === TAB || bytes[i] === LF || bytes[i] === CR)) i++
  if (i < n) throw malformed(bytes, i, 'data after the array')
  return { ndjson: out.subarray(0, w), accepted, acceptedBytes, rejected: reasons.length, reasons }
}
