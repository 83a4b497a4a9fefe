// Opaque page cursors, shared by the routes that page (a sink's rejects, the sinks list): base64url of
// a small JSON value. A client gives a page's next_cursor back unchanged; anything else is a 400.
import { decodeBase64Url, encodeBase64Url } from 'hono/utils/encode'
import * as v from 'valibot'
import { ApiError } from './errors.ts'

/** base64url (no padding) of the value's JSON, UTF-8. */
export const encodeCursor = (value: unknown): string => encodeBase64Url(new TextEncoder().encode(JSON.stringify(value)).buffer).replace(/=+$/, '')

/** The value a page's cursor carries, checked against its schema; 400 invalid_request for anything else. */
export function decodeCursor<S extends v.GenericSchema>(schema: S, text: string): v.InferOutput<S> {
  try {
    const parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(decodeBase64Url(text)))
    const result = v.safeParse(schema, parsed)
    if (result.success) return result.output
  } catch {
    // not base64, or not JSON: answered below
  }
  throw new ApiError(400, 'invalid_request', 'cursor: give the next_cursor of a previous page, unchanged')
}
