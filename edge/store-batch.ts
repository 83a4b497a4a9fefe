// After the ledger statement: the one PUT of a batch to _sink/<sink_id>/<batch_id>.ndjson, shared by
// the send route and the device route. 2xx only after the PUT succeeded.
import type { Context } from 'hono'
import { BATCH_META, batchKey, NDJSON } from '../contract/bucket.ts'
import type { EdgeDb } from '../db/edge.ts'
import type { AppEnv } from './env.ts'
import { bucketFailure, unavailable } from './errors.ts'
import { forgetBatch, markStored, type BatchInput, type LedgerAnswer } from './ledger.ts'
import { bucketClient } from './s3.ts'

/** A ledger answer whose sink the key matched and whose batch row is there. */
type Stored = { sink: NonNullable<LedgerAnswer['sink']>; batch: NonNullable<LedgerAnswer['batch']> }

export async function sha256HexBytes(bytes: Uint8Array): Promise<string> {
  return [...new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))].map((b) => b.toString(16).padStart(2, '0')).join('')
}

/**
 * The x-amz-meta-* headers of the batch: its received time, the elements stored (every element is a
 * line, the not_an_object ones too, so line i is element i and no skipped list is needed) and the sink.
 */
function batchMetadata(sinkId: string, row: { receivedAt: string; rows: number; rejected: number }): Record<string, string> {
  return {
    [BATCH_META.received]: row.receivedAt,
    [BATCH_META.rows]: String(row.rows + row.rejected),
    [BATCH_META.sink]: sinkId,
  }
}

/** The answer the send route gives for a batch the ledger holds (the device route too, without a preset's own). */
export function batchAnswer(row: Stored['batch'], batchId: string) {
  return {
    accepted: row.rows,
    rejected: row.rejected,
    reasons: row.reasons,
    batch_id: batchId,
    bytes: row.bytes,
    received_at: row.receivedAt,
    state: 'pending',
  }
}

/**
 * Stores the batch unless it is already stored: a row still `receiving` may have no object (its PUT
 * failed, or the Worker died), so it is stored again, byte-identical with the same received time.
 * Answers whether this request stored it (false: a plain duplicate).
 */
export async function storeBatch(
  c: Context<AppEnv>,
  db: EdgeDb,
  input: BatchInput,
  ledger: Stored,
  ndjson: (receivedAt: string) => Uint8Array,
): Promise<boolean> {
  const row = ledger.batch
  if (!row.inserted && row.state !== 'receiving') return false
  const s3 = bucketClient(c.env, ledger.sink)
  try {
    await s3.put(batchKey(ledger.sink.id, input.batchId), ndjson(row.receivedAt), { contentType: NDJSON, metadata: batchMetadata(ledger.sink.id, row) })
  } catch (err) {
    // If even this fails, the row stays `receiving`: a retry stores the batch again, never trusts it.
    if (row.inserted)
      await forgetBatch(db, input).catch((e) =>
        console.error(JSON.stringify({ level: 'error', msg: 'forgetBatch failed', batch_id: input.batchId, error: String(e) })),
      )
    throw bucketFailure(err) ?? unavailable('bucket', 'the bucket is unavailable; retry with the same Idempotency-Key')
  }
  // receiving → pending after the answer, off the hot path; until then a retry stores it again.
  c.var.defer(markStored(db, ledger.sink.id, input.batchId))
  return row.inserted
}
