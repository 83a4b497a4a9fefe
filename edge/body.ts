// Reading a producer's request body: a hard limit on the decompressed bytes, gzip undone on the fly,
// a refused upload drained so the connection survives. Shared by the send and device routes.
// Runtime-neutral: web streams and Uint8Array only, so it runs in workerd.
import { ApiError } from './errors.ts'

/** The spec's body limit: 16 MiB, applied to the decompressed bytes. */
export const MAX_BODY_BYTES = 16 * 1024 * 1024

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
