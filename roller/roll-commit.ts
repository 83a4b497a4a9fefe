// Step 6's commits, one per call: an append of the roll's data files, a keyed roll's overwrite, or an
// empty roll's marker; each followed by its committed marker, at the crash points the tests kill at.
import { markerKey } from '../contract/bucket.ts'
import { SUMMARY } from '../contract/summary.ts'
import { CommitConflict, CommitStateUnknown, type Catalog, type LoadedTable } from '../iceberg/catalog/index.ts'
import type { Bucket } from '../iceberg/io/s3.ts'
import { appendFiles } from '../iceberg/transaction/merge-append.ts'
import { CommitAbandoned, type RetryPolicy, type TransactOptions } from '../iceberg/transaction/transact.ts'
import { uploadDataFiles, type EncodedFile, type WriterCodecs } from '../iceberg/writer/partitioned.ts'
import type { SinkView } from './api.ts'
import { EndTick, markerBody } from './intake.ts'
import type { Logger } from './log.ts'
import { recheckFor } from './recovery.ts'
import { commitUpsert, type KeyedRows } from './upsert.ts'

/** What a commit needs of the roll (roll.ts's RollContext holds it all). */
export interface CommitContext {
  rollId: string
  catalog: Catalog
  bucket: Bucket
  compression: WriterCodecs
  retry?: RetryPolicy
  onRetry?: TransactOptions['onRetry']
  log: Logger
  checkpoint: (name: string) => void | Promise<void>
  maxRewriteBytes?: number
}

/** A batch after step 5: counts only; its rows are in the writer. */
export interface BatchOutcome {
  batchId: string
  key: string
  rows: number
  rejected: number
}

export interface Committed {
  batchIds: string[]
  snapshotId: bigint | null
  marker: string | null
  /** The table as the commit answered it (none for an empty roll): a catch-up's next roll starts from it. */
  table?: LoadedTable
}

/**
 * An empty roll (every row rejected) commits no snapshot, so no snapshot names its batches. Its marker
 * (snapshot_id null) is the record that they are consumed: a roller that dies between the batch deletes
 * and the report finds it in step 2 and reports them, instead of leaving them pending in the ledger.
 */
export async function recordEmptyRoll(sink: SinkView, batchIds: string[], ctx: CommitContext): Promise<Committed> {
  const marker = markerKey(sink.id, `${ctx.rollId}-empty-${crypto.randomUUID()}`)
  await ctx.bucket.put(marker, markerBody(batchIds, null, new Date().toISOString()), { contentType: 'application/json' })
  await ctx.checkpoint('marker')
  return { batchIds, snapshotId: null, marker }
}

export async function commitFiles(
  sink: SinkView,
  table: LoadedTable,
  files: EncodedFile[],
  batches: BatchOutcome[],
  seen: Set<bigint>,
  ctx: CommitContext,
): Promise<Committed> {
  const batchIds = batches.map((b) => b.batchId)
  // The data files upload while the manifests are written; the commit waits for them (and the step boundary).
  const uploaded = uploadDataFiles(table, files).then(() => ctx.checkpoint('data-file'))
  uploaded.catch(() => undefined) // awaited by the commit; a manifest write that fails first leaves it unheard
  const properties = sinkSummary(
    sink,
    batches,
    batches.reduce((n, b) => n + b.rows, 0),
  )
  let snapshotId: bigint
  let committed: LoadedTable
  try {
    const done = await appendFiles(
      ctx.catalog,
      table,
      files.map((f) => f.dataFile),
      { properties, retry: ctx.retry, onRetry: ctx.onRetry, recheck: recheckFor(sink, batchIds, seen), ready: uploaded },
    )
    if (done.unknownOutcome) logFoundAfterUnknown(ctx, done.snapshotId, done.unknownOutcome)
    snapshotId = done.snapshotId
    committed = done.table
  } catch (err) {
    throw endTickFor(err)
  }
  await ctx.checkpoint('commit')
  const marker = markerKey(sink.id, files[0].name)
  await ctx.bucket.put(marker, markerBody(batchIds, snapshotId, properties[SUMMARY.rolledAt]), { contentType: 'application/json' })
  await ctx.checkpoint('marker')
  return { batchIds, snapshotId, marker, table: committed }
}

/** A keyed roll: one overwrite (iceberg rewrite) with the same summary keys, marker and crash points. */
export async function commitKeyed(
  sink: SinkView,
  table: LoadedTable,
  keyed: KeyedRows,
  batches: BatchOutcome[],
  seen: Set<bigint>,
  ctx: CommitContext,
): Promise<Committed> {
  const batchIds = batches.map((b) => b.batchId)
  const properties = sinkSummary(sink, batches, keyed.size)
  let snapshotId: bigint
  let committed: LoadedTable
  try {
    const done = await commitUpsert(table, sink.key!, keyed, properties, {
      catalog: ctx.catalog,
      rollId: ctx.rollId,
      compression: ctx.compression,
      checkpoint: ctx.checkpoint,
      recheck: recheckFor(sink, batchIds, seen),
      maxRewriteBytes: ctx.maxRewriteBytes,
      retry: ctx.retry,
      onRetry: ctx.onRetry,
    })
    if (done.unknownOutcome) logFoundAfterUnknown(ctx, done.snapshotId, done.unknownOutcome)
    snapshotId = done.snapshotId
    committed = done.table
  } catch (err) {
    throw endTickFor(err)
  }
  await ctx.checkpoint('commit')
  const marker = markerKey(sink.id, `${ctx.rollId}-keyed`)
  await ctx.bucket.put(marker, markerBody(batchIds, snapshotId, properties[SUMMARY.rolledAt]), { contentType: 'application/json' })
  await ctx.checkpoint('marker')
  return { batchIds, snapshotId, marker, table: committed }
}

function sinkSummary(sink: SinkView, batches: BatchOutcome[], rows: number): Record<string, string> {
  return {
    [SUMMARY.id]: sink.id,
    [SUMMARY.batches]: batches.map((b) => b.batchId).join(','),
    [SUMMARY.rows]: String(rows),
    [SUMMARY.rejectedRows]: String(batches.reduce((n, b) => n + b.rejected, 0)),
    [SUMMARY.rolledAt]: new Date().toISOString(),
  }
}

/**
 * A commit this roll cannot make now ends the tick, never blindly retried: abandoned (another roller
 * committed these batches), out of retries, or an outcome unknown and not found in the table (step 2
 * of the next tick finds it if it did land).
 */
function endTickFor(err: unknown): unknown {
  if (err instanceof CommitAbandoned || err instanceof CommitConflict) return new EndTick(err.message, err)
  if (err instanceof CommitStateUnknown) return new EndTick(`commit outcome unknown: ${err.message}; the next tick rolls again`, err)
  return err
}

function logFoundAfterUnknown(ctx: CommitContext, snapshotId: bigint, cause: Error): void {
  ctx.log.warn('commit outcome was unknown; found it in the table', { snapshot_id: snapshotId.toString(), error: cause.message })
}
