// A batch's way in after the caller is known: split the body (one scanner for both framings), the
// one ledger statement that authenticates the send key's hash and records the batch, the one PUT.
// The send route and the MCP tool send_rows both come through here; what it answers is the send
// route's answer.
import type { Context } from 'hono'
import type { AppEnv } from './env.ts'
import { ApiError } from './errors.ts'
import { splitBatch, type Framing } from './intake.ts'
import { timingSafeEqual } from './keys.ts'
import { recordBatch, type BatchInput } from './ledger.ts'
import { batchAnswer, sha256HexBytes, storeBatch } from './store-batch.ts'

const SINK_ID = /^snk_[0-9a-f]+$/

export const wrongSendKey = () => new ApiError(401, 'unauthorized', 'send this sink’s send key as Authorization: Bearer al_send_…')

export interface SendInput {
  sinkId: string
  batchId: string
  body: Uint8Array
  framing: Framing
  /** The SHA-256 of the key the batch came with: it must be the sink's (current, or previous in its overlap). */
  sendKeySha256: string
}

/** 202 with the answer when this request stored the batch; 200 with `duplicate: true` when it was already stored. */
export async function sendBatch(
  c: Context<AppEnv>,
  s: SendInput,
): Promise<{ status: 200 | 202; answer: ReturnType<typeof batchAnswer> & { duplicate?: true } }> {
  const batch = splitBatch(s.body, s.framing)
  const input: BatchInput = {
    sinkId: s.sinkId,
    batchId: s.batchId,
    bodySha256: await sha256HexBytes(s.body),
    // The accepted rows' bytes: the not_an_object lines are stored for the rejects file, not metered.
    bytes: batch.acceptedBytes,
    rows: batch.accepted,
    rejected: batch.rejected,
    reasons: batch.reasons,
    sendKeySha256: s.sendKeySha256,
  }
  if (!SINK_ID.test(input.sinkId)) throw wrongSendKey()
  // The rate limits first (a 429 opens no connection), then the ledger statement.
  const ledger = await recordBatch(c, input)
  const db = await c.var.db()
  // An unknown sink, a deleted one and a wrong key answer alike: no way to probe which sinks exist.
  if (!ledger.sink || !ledger.batch || !timingSafeEqual(input.sendKeySha256, ledger.sink.sendKeySha256)) throw wrongSendKey()
  const row = ledger.batch
  if (row.bodySha256 !== input.bodySha256) {
    throw new ApiError(409, 'idempotency_key_reused', `batch ${s.batchId} was already sent with a different body; use a new Idempotency-Key`)
  }
  const answer = batchAnswer(row, s.batchId)
  // A row already stored (not `receiving`) is a plain duplicate; otherwise this request stores it.
  const stored = await storeBatch(c, db, input, { sink: ledger.sink, batch: row }, () => batch.ndjson)
  return stored ? { status: 202, answer } : { status: 200, answer: { ...answer, duplicate: true } }
}
