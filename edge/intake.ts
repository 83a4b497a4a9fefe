// The send route's body handling: read the request body under a hard limit (gzip allowed), then split
// the JSON array into NDJSON lines that keep each element's original bytes (DESIGN.md "Lossless JSON",
// "Data layout in the bucket"). Runtime-neutral: web streams and Uint8Array only, so it runs in workerd.
import { ApiError } from './errors.ts'

/** The spec's body limit: 16 MiB, applied to the decompressed bytes. */
export const MAX_BODY_BYTES = 16 * 1024 * 1024
/** Deepest nesting accepted, counting the outer array. Keeps the scanner's stack and the roller's parser bounded. */
const MAX_DEPTH = 512

/** How many more bytes of a refused upload are read and dropped before it is cancelled instead. */
const DRAIN_LIMIT = 100 * 1024 * 1024

const tooLarge = (limit: number) => new ApiError(413, 'payload_too_large', `the body exceeds ${limit} bytes`, { limit })

/**
 * Reads a request body, refusing it as soon as more than `limit` bytes have arrived: nothing past the
 * limit is buffered; the rest is read and dropped (up to `drainLimit` more bytes, then cancelled). `Content-Encoding: gzip` is decompressed on the fly
 * and the limit applies to the decompressed bytes.
 */
export async function readBody(
  body: ReadableStream<Uint8Array> | null,
  opts: { contentEncoding?: string | null; limit?: number; drainLimit?: number; allowEmpty?: boolean } = {},
): Promise<Uint8Array> {
  const limit = opts.limit ?? MAX_BODY_BYTES
  // `Content-Encoding` is a list; identity is a no-op. One gzip layer is all we undo (x-gzip is its
  // old alias, RFC 9110 §8.4.1.3).
  const codings = (opts.contentEncoding ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '' && s !== 'identity')
  const gzip = codings.length === 1 && (codings[0] === 'gzip' || codings[0] === 'x-gzip')
  if (codings.length > 0 && !gzip) {
    throw new ApiError(415, 'unsupported_encoding', `Content-Encoding ${opts.contentEncoding} is not supported; send identity or gzip`)
  }
  const empty = () => {
    if (opts.allowEmpty) return new Uint8Array(0)
    throw new ApiError(400, 'malformed_json', 'the body is empty', { offset: 0 })
  }
  if (body === null) return empty()

  let source = body
  // With gzip, the compressed side is read through a wrapper that
  // - remembers errors of the client's stream (a dropped connection), so they are not reported as a
  //   corrupt gzip;
  // - caps the compressed bytes too: a stream of empty deflate blocks inflates to nothing and would
  //   otherwise never end. The slack covers deflate's worst case on incompressible input (5 bytes per
  //   64 KiB stored block) plus the header;
  // - leaves the upload to `refuse`, which drains it: a cancel of the pipe would cancel the client's
  //   stream, and that breaks the runtime's connection (below).
  let sourceError: { error: unknown } | undefined
  let upload: ReadableStreamDefaultReader<Uint8Array> | undefined
  if (gzip) {
    const compressedLimit = limit + Math.ceil(limit / 1024) + 1024
    const upstream = body.getReader()
    upload = upstream
    let compressed = 0
    const tapped = new ReadableStream<Uint8Array>({
      async pull(controller) {
        let r: ReadableStreamReadResult<Uint8Array>
        try {
          r = await upstream.read()
        } catch (error) {
          sourceError = { error }
          throw error
        }
        if (r.done) return controller.close()
        compressed += r.value.byteLength
        if (compressed > compressedLimit) {
          const error = tooLarge(limit)
          sourceError = { error }
          throw error
        }
        controller.enqueue(r.value)
      },
    })
    source = tapped.pipeThrough(new DecompressionStream('gzip'))
  }

  const reader = source.getReader()
  upload ??= reader
  // A refused body is drained, not cancelled: workerd (and wrangler dev's proxy in front of it) loses
  // the connection when a request body is cancelled unread, and the next request on it answers 503
  // "Your worker restarted mid-request". Past the drain limit the upload is cancelled after all:
  // a client sending that much is not owed a reusable connection.
  const refuse = async (error: ApiError): Promise<never> => {
    await drain(upload, opts.drainLimit ?? DRAIN_LIMIT)
    if (upload !== reader) await reader.cancel().catch(() => {})
    throw error
  }
  const chunks: Uint8Array[] = []
  let total = 0
  for (;;) {
    let r: ReadableStreamReadResult<Uint8Array>
    try {
      r = await reader.read()
    } catch (error) {
      if (error instanceof ApiError) return refuse(error)
      if (!gzip) throw error
      if (sourceError) throw sourceError.error
      return refuse(new ApiError(400, 'malformed_gzip', 'the body is not a valid gzip stream'))
    }
    if (r.done) break
    total += r.value.byteLength
    if (total > limit) {
      // The chunk that crossed the limit is dropped, and the rest read and dropped.
      return refuse(tooLarge(limit))
    }
    chunks.push(r.value)
  }
  if (total === 0) return empty()
  if (chunks.length === 1) return chunks[0]
  const out = new Uint8Array(total)
  let at = 0
  for (const c of chunks) {
    out.set(c, at)
    at += c.byteLength
  }
  return out
}

/** Reads and drops the rest of a stream, up to `limit` bytes; past that, or on an error, cancels it. */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, limit: number): Promise<void> {
  let dropped = 0
  try {
    for (;;) {
      const r = await reader.read()
      if (r.done) return
      dropped += r.value.byteLength
      if (dropped > limit) break
    }
  } catch {
    // The stream already failed (a cancel below is then a no-op).
  }
  await reader.cancel('refused').catch(() => {})
}

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
 * Splits a JSON array into NDJSON in one pass over the bytes, without parsing values: each element is
 * copied as sent (whitespace CR/LF folded to spaces so it stays on one line), one a line, in order;
 * the elements that are not objects are also listed in `reasons`. The whole body is validated as
 * RFC 8259 JSON first-error-wins, with the byte offset of the first bad byte. A leading UTF-8 BOM is
 * skipped (RFC 8259 §8.1 allows parsers to ignore one; some Windows tools still write it).
 */
export function splitBatch(bytes: Uint8Array): Batch {
  const n = bytes.length
  let i = n >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0
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

  // The output is never longer than the input (each element's '\n' is paid for by a ',' or ']'), so
  // it is built in a copy of the input: newlines are folded in place as the scan passes them, and each
  // element is then moved down to the write position `w` (always <= its start).
  const out = bytes.slice()
  let w = 0
  const reasons: Batch['reasons'] = []
  let accepted = 0
  let acceptedBytes = 0
  let index = 0 // the index of the current top-level element
  let start = 0 // where the current top-level element began

  // stack[d] is 1 for an object, 0 for an array; depth 1 is the outer array.
  const stack = new Uint8Array(MAX_DEPTH + 1)
  let depth = 1
  let state = VALUE_OR_CLOSE
  i++

  for (;;) {
    let c = bytes[i]
    while (c === SPACE || c === LF || c === CR || c === TAB) {
      if (c !== SPACE && c !== TAB) out[i] = SPACE
      c = bytes[++i]
    }
    if (i >= n) throw malformed(bytes, n)

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

    // A value is complete; at depth 1 it was a whole element of the outer array.
    state = AFTER
    if (depth === 1) {
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
  while (i < n && (bytes[i] === SPACE || bytes[i] === TAB || bytes[i] === LF || bytes[i] === CR)) i++
  if (i < n) throw malformed(bytes, i, 'data after the array')
  return { ndjson: out.subarray(0, w), accepted, acceptedBytes, rejected: reasons.length, reasons }
}
