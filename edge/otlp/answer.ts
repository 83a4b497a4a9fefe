// What the OTLP/HTTP spec has a server answer, in the request's own encoding: 200 with an
// ExportLogsServiceResponse (partialSuccess when records were rejected), and for a failure a
// google.rpc.Status body. The JSON Status also carries the service's error envelope under `error`
// (OTLP clients ignore unknown fields), so the codes of DESIGN.md hold here too.
import type { Context } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { envelope, type ApiError } from '../errors.ts'
import { message } from './wire.ts'

export type Encoding = 'json' | 'protobuf'

const CONTENT_TYPES: Record<Encoding, string> = { json: 'application/json', protobuf: 'application/x-protobuf' }

/** google.rpc.Code for an HTTP status, as gRPC–HTTP mappings pair them. */
const GRPC_CODES: Record<number, number> = { 400: 3, 401: 16, 403: 7, 404: 5, 405: 12, 409: 9, 413: 8, 415: 3, 429: 8, 503: 14 }

/** 200 ExportLogsServiceResponse: partial_success 1 → rejected_log_records 1, error_message 2. */
export function exported(c: Context, encoding: Encoding, rejected: number, why: string) {
  if (encoding === 'protobuf') {
    const partial =
      rejected > 0
        ? message([
            [
              1,
              message([
                [1, BigInt(rejected)],
                [2, why],
              ]),
            ],
          ])
        : new Uint8Array(new ArrayBuffer(0))
    return c.body(partial, 200, { 'Content-Type': CONTENT_TYPES.protobuf })
  }
  return c.json(rejected > 0 ? { partialSuccess: { rejectedLogRecords: rejected, errorMessage: why } } : {}, 200)
}

/** A failure as a Status (code 1, message 2), with the error's own headers (Retry-After on 429 and 503). */
export function failed(c: Context, encoding: Encoding, err: ApiError) {
  for (const [k, v] of Object.entries(err.headers)) c.header(k, v)
  const code = GRPC_CODES[err.status] ?? 2
  const status = err.status as ContentfulStatusCode
  if (encoding === 'protobuf')
    return c.body(
      message([
        [1, BigInt(code)],
        [2, `${err.code}: ${err.message}`],
      ]),
      status,
      { 'Content-Type': CONTENT_TYPES.protobuf },
    )
  return c.json({ code, message: err.message, ...envelope(err.code, err.message, err.details) }, status)
}
