// POST /v1/sinks/{sink_id}/otlp/v1/logs: OpenTelemetry logs (OTLP/HTTP, JSON or protobuf, gzip
// allowed) into the sink's table, one row per log record (the otlp_logs preset). The send path
// beneath is the send route's: the key as the device route takes it, body.ts's limits, one ledger
// statement, one PUT. The batch id is Idempotency-Key when sent, else a digest of the body: an
// exporter's retry of the same export is stored once. Answers as the OTLP spec has them (answer.ts).
import { Hono, type Context } from 'hono'
import { BATCH_ID } from '../../contract/bucket.ts'
import { readBody } from '../body.ts'
import { sendKey } from '../devices/route.ts'
import type { AppEnv } from '../env.ts'
import { ApiError, bucketFailure, catalogFailure, databaseFailure } from '../errors.ts'
import { API_KEY, SEND_KEY, sha256Hex, timingSafeEqual } from '../keys.ts'
import { recordBatch, type BatchInput } from '../ledger.ts'
import { requireSinksOn } from '../sinks-switch.ts'
import { sha256HexBytes, storeBatch } from '../store-batch.ts'
import { exported, failed, type Encoding } from './answer.ts'
import { decodeJson } from './decode-json.ts'
import { decodeProto } from './decode-proto.ts'
import { rowsOf } from './row.ts'
import { knownShape, loadShape } from './sink-table.ts'

const SINK_ID = /^snk_[0-9a-f]+$/

const wrongKey = () => new ApiError(401, 'unauthorized', 'give this sink’s send key as Authorization: Bearer al_send_… (or as HTTP Basic’s password, or ?key=)')

/** The request's encoding; a failure before it is known is answered in JSON. */
function encodingOf(contentType: string | undefined): Encoding | null {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase()
  return type === 'application/json' ? 'json' : type === 'application/x-protobuf' || type === 'application/protobuf' ? 'protobuf' : null
}

async function logs(c: Context<AppEnv>) {
  const sinkId = c.req.param('sinkId') ?? ''
  const key = sendKey(c)
  if (key && API_KEY.test(key)) throw new ApiError(403, 'send_only', 'this route takes a send key only (al_send_…), not an API key')
  if (!key || !SEND_KEY.test(key) || !SINK_ID.test(sinkId)) throw wrongKey()
  const encoding = encodingOf(c.req.header('content-type'))
  if (!encoding)
    throw new ApiError(415, 'unsupported_media_type', 'send OTLP logs as Content-Type: application/x-protobuf or application/json', {
      accepted: ['application/x-protobuf', 'application/json'],
    })
  const header = c.req.header('idempotency-key')
  if (header !== undefined && !BATCH_ID.test(header))
    throw new ApiError(
      400,
      'invalid_idempotency_key',
      'send Idempotency-Key: 1–128 characters of A-Z a-z 0-9 . _ : - (or none: the body’s digest is the batch id)',
    )
  const body = await readBody(c.req.raw.body, { contentEncoding: c.req.header('content-encoding'), allowEmpty: true })
  const records = encoding === 'json' ? decodeJson(body) : decodeProto(body)
  const digest = await sha256HexBytes(body)
  const input: BatchInput = {
    sinkId,
    batchId: header ?? `otlp:${digest}`,
    bodySha256: digest,
    bytes: 0,
    rows: 0,
    rejected: 0,
    reasons: [],
    sendKeySha256: await sha256Hex(key),
  }
  // The key checked without storing anything (the device route's auth-only statement).
  const authenticate = async () => {
    const ledger = await recordBatch(c, input, { version: '', authOnly: true })
    if (!ledger.sink || !timingSafeEqual(input.sendKeySha256, ledger.sink.sendKeySha256)) throw wrongKey()
  }
  let shape = knownShape(sinkId)
  if (!shape) {
    await authenticate()
    shape = await loadShape(c, await c.var.db(), sinkId)
  }
  const rows = rowsOf(records, shape)
  const why =
    rows.rejected > 0
      ? 'log records with a trace_id or span_id of the wrong length, a time past 2262 for a nanosecond column, or an unpaired surrogate; each is kept in the sink’s rejects once rolled'
      : ''
  if (records.length === 0) {
    // Nothing to store (an empty export): the key still decides.
    await authenticate()
    return exported(c, encoding, 0, why)
  }
  // The rejected records are stored too (their lines the roller refuses into the rejects file), as the
  // send route stores the elements that are not objects; only the rows' bytes are metered.
  input.bytes = rows.rowBytes
  input.rows = rows.rows
  input.rejected = rows.rejected
  const ledger = await recordBatch(c, input)
  if (!ledger.sink || !ledger.batch || !timingSafeEqual(input.sendKeySha256, ledger.sink.sendKeySha256)) throw wrongKey()
  if (ledger.batch.bodySha256 !== digest)
    throw new ApiError(409, 'idempotency_key_reused', `batch ${input.batchId} was already sent with a different body; use a new Idempotency-Key`)
  await storeBatch(c, await c.var.db(), input, { sink: ledger.sink, batch: ledger.batch }, () => rows.ndjson)
  return exported(c, encoding, rows.rejected, why)
}

export const otlpRoutes = new Hono<AppEnv>()
  .post('/v1/sinks/:sinkId/otlp/v1/logs', requireSinksOn, logs)
  // Every failure as a Status in the request's encoding, with the status the shared path chose.
  .onError((err, c) => {
    const api = err instanceof ApiError ? err : (catalogFailure(err) ?? bucketFailure(err) ?? databaseFailure(err))
    if (!api) throw err
    if (api.status === 503) console.error(JSON.stringify({ level: 'warn', path: c.req.path, error: String(err) }))
    return failed(c, encodingOf(c.req.header('content-type')) ?? 'json', api)
  })
