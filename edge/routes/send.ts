// POST /v1/sinks/{sink_id}: the send route. The send key only; a JSON array or NDJSON lines; one
// ledger statement; one PUT of the batch, unchanged, to _sink/<sink_id>/<batch_id>.ndjson; 202 only
// after the PUT succeeded.
import { Hono } from 'hono'
import { bearer } from '../auth.ts'
import type { AppEnv } from '../env.ts'
import { ApiError } from '../errors.ts'
import { readBody } from '../body.ts'
import type { Framing } from '../intake.ts'
import { API_KEY, SEND_KEY, sha256Hex } from '../keys.ts'
import { sendBatch, wrongSendKey } from '../send-batch.ts'
import { sha256HexBytes } from '../store-batch.ts'
import { requireSinksOn } from '../sinks-switch.ts'
import { BATCH_ID } from '../../contract/bucket.ts'

// application/jsonl is the JSON Lines site's name; application/x-ndjson what log shippers send
// (Vector's http sink with a json codec and newline_delimited framing, among others).
const FRAMINGS: Record<string, Framing> = { 'application/json': 'array', 'application/x-ndjson': 'lines', 'application/jsonl': 'lines' }

/** A Content-Type without its parameters (charset and the like), lower-cased. */
const mediaType = (contentType: string | undefined) => (contentType ?? '').split(';')[0].trim().toLowerCase()

/** The body's framing from its Content-Type (parameters such as charset aside); 415 for any other type. */
function framingOf(contentType: string | undefined): Framing {
  const framing = FRAMINGS[mediaType(contentType)]
  if (!framing) {
    throw new ApiError(
      415,
      'unsupported_media_type',
      'send the batch as Content-Type: application/json (a JSON array of objects) or application/x-ndjson (one object a line)',
    )
  }
  return framing
}

// Every POST /v1/sinks/{x} is the send route: x that is no sink id (a name, say) is an unknown sink.
export const send = new Hono<AppEnv>().post('/v1/sinks/:sinkId', requireSinksOn, async (c) => {
  const token = bearer(c.req.header('authorization'))
  if (token && API_KEY.test(token)) throw new ApiError(403, 'send_only', 'this route takes a send key only (al_send_…), not an API key')
  if (!token || !SEND_KEY.test(token)) throw wrongSendKey()
  const key = c.req.header('idempotency-key')
  // NDJSON may come without one: log shippers (Vector's http sink) cannot set a header per batch.
  const keyless = key === undefined && FRAMINGS[mediaType(c.req.header('content-type'))] === 'lines'
  if (!keyless && !BATCH_ID.test(key ?? '')) {
    throw new ApiError(400, 'invalid_idempotency_key', 'send Idempotency-Key: 1–128 characters of A-Z a-z 0-9 . _ : -')
  }
  const framing = framingOf(c.req.header('content-type'))
  const body = await readBody(c.req.raw.body, { contentEncoding: c.req.header('content-encoding') })
  // Its batch id is then the body's: a retried batch is the same bytes, stored once; other bytes are another batch.
  const batchId = key ?? `ndjson:${await sha256HexBytes(body)}`
  const sent = await sendBatch(c, {
    sinkId: c.req.param('sinkId'),
    batchId,
    body,
    framing,
    sendKeySha256: await sha256Hex(token),
  })
  return c.json(sent.answer, sent.status)
})
