// POST /v1/sinks/{sink_id}: the send route. The send key only; a JSON array or NDJSON lines; one
// ledger statement; one PUT of the batch, unchanged, to _sink/<sink_id>/<batch_id>.ndjson; 202 only
// after the PUT succeeded.
import { Hono } from 'hono'
import { bearer } from '../auth.ts'
import type { AppEnv } from '../env.ts'
import { ApiError } from '../errors.ts'
import { readBody } from '../body.ts'
import { splitBatch, type Framing } from '../intake.ts'
import { API_KEY, SEND_KEY, sha256Hex, timingSafeEqual } from '../keys.ts'
import { recordBatch, type BatchInput } from '../ledger.ts'
import { batchAnswer, sha256HexBytes, storeBatch } from '../store-batch.ts'
import { requireSinksOn } from '../sinks-switch.ts'
import { BATCH_ID } from '../../contract/bucket.ts'

const SINK_ID = /^snk_[0-9a-f]+$/

// application/jsonl is the JSON Lines site's name; application/x-ndjson what log shippers send
// (Vector's http sink with a json codec and newline_delimited framing, among others).
const FRAMINGS: Record<string, Framing> = { 'application/json': 'array', 'application/x-ndjson': 'lines', 'application/jsonl': 'lines' }

/** The body's framing from its Content-Type (parameters such as charset aside); 415 for any other type. */
function framingOf(contentType: string | undefined): Framing {
  const framing = FRAMINGS[(contentType ?? '').split(';')[0].trim().toLowerCase()]
  if (!framing) {
    throw new ApiError(
      415,
      'unsupported_media_type',
      'send the batch as Content-Type: application/json (a JSON array of objects) or application/x-ndjson (one object a line)',
    )
  }
  return framing
}

const wrongKey = () => new ApiError(401, 'unauthorized', 'send this sink’s send key as Authorization: Bearer al_send_…')

// Every POST /v1/sinks/{x} is the send route: x that is no sink id (a name, say) is an unknown sink.
export const send = new Hono<AppEnv>().post('/v1/sinks/:sinkId', requireSinksOn, async (c) => {
  const token = bearer(c.req.header('authorization'))
  if (token && API_KEY.test(token)) throw new ApiError(403, 'send_only', 'this route takes a send key only (al_send_…), not an API key')
  if (!token || !SEND_KEY.test(token)) throw wrongKey()
  const batchId = c.req.header('idempotency-key') ?? ''
  if (!BATCH_ID.test(batchId)) {
    throw new ApiError(400, 'invalid_idempotency_key', 'send Idempotency-Key: 1–128 characters of A-Z a-z 0-9 . _ : -')
  }
  const framing = framingOf(c.req.header('content-type'))
  const body = await readBody(c.req.raw.body, { contentEncoding: c.req.header('content-encoding') })
  const batch = splitBatch(body, framing)
  const input: BatchInput = {
    sinkId: c.req.param('sinkId'),
    batchId,
    bodySha256: await sha256HexBytes(body),
    // The accepted rows' bytes: the not_an_object lines are stored for the rejects file, not metered.
    bytes: batch.acceptedBytes,
    rows: batch.accepted,
    rejected: batch.rejected,
    reasons: batch.reasons,
    sendKeySha256: await sha256Hex(token),
  }

  if (!SINK_ID.test(input.sinkId)) throw wrongKey()
  const db = await c.var.db()
  const ledger = await recordBatch(db, input)
  // An unknown sink, a deleted one and a wrong key answer alike: no way to probe which sinks exist.
  if (!ledger.sink || !ledger.batch || !timingSafeEqual(input.sendKeySha256, ledger.sink.sendKeySha256)) throw wrongKey()
  const row = ledger.batch
  if (row.bodySha256 !== input.bodySha256) {
    throw new ApiError(409, 'idempotency_key_reused', `batch ${batchId} was already sent with a different body; use a new Idempotency-Key`)
  }
  const answer = batchAnswer(row, batchId)
  // A row already stored (not `receiving`) is a plain duplicate; otherwise this request stores it.
  const stored = await storeBatch(c, db, input, { sink: ledger.sink, batch: row }, () => batch.ndjson)
  return stored ? c.json(answer, 202) : c.json({ ...answer, duplicate: true }, 200)
})
