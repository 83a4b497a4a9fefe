// A feed's run, step by step. It runs under the sink's lease, after the tick's roll of whatever was
// waiting, so a run killed between storing its batch and committing it is committed by the next
// tick's roll (step 2 of the roll), and then found done here — never run twice:
//   1. done before?  A retained snapshot or marker names the run's batch id (a batch still waiting: wait).
//   2. produce       SQL: DuckDB runs the query → one Parquet file. Files: the listing → NDJSON rows.
//   3. store         one PUT of _sink/<sink>/<run id>.parquet|.ndjson (x-amz-meta received, rows, sink),
//                    then its ledger row (pending: lag shows it, as a producer's batch)
//   4. roll          the normal roll commits it (same recovery, same rejects)
// A failing query (or listing) stores nothing: its error is the run's, the sink keeps its schedule.
import { createHash } from 'node:crypto'
import { BATCH_META, batchKey, NDJSON, parquetBatchKey } from '../../contract/bucket.ts'
import type { FeedBatch } from '../../contract/internal.ts'
import type { LoadedTable } from '../../iceberg/catalog/index.ts'
import type { SinkView } from '../api.ts'
import { intakeRecords } from '../recovery.ts'
import type { RollContext } from '../roll.ts'
import { indexFiles } from './files.ts'
import { runQuery, SqlRefused, SqlRunFailed, type SqlLimits } from './sql.ts'

export interface FeedRunReport {
  run_id: string
  manual: boolean
  outcome: 'ok' | 'done_before' | 'failed'
  at: string
  rows: number
  seconds: number
  error: string | null
}

type DueFeed = NonNullable<SinkView['feed']> & { run: NonNullable<NonNullable<SinkView['feed']>['run']> }

export interface FeedContext extends Pick<RollContext, 'catalog' | 'bucket' | 'log' | 'checkpoint'> {
  sql: SqlLimits
  /** Puts the stored batch in the ledger (pending), so the sink's lag shows it until it is committed. */
  recordBatch: (batch: Omit<FeedBatch, 'roller'>) => Promise<void>
  /** The normal roll of the sink, which commits the stored batch. */
  roll: () => Promise<unknown>
}

/** Why a run does not start now (the intake holds a batch not yet committed): it waits for the next tick. */
export class FeedWaits extends Error {
  override name = 'FeedWaits'
}

export async function runFeed(sink: SinkView & { feed: DueFeed }, ctx: FeedContext): Promise<FeedRunReport> {
  const { run } = sink.feed
  const started = Date.now()
  const report = (outcome: FeedRunReport['outcome'], rows: number, error: string | null): FeedRunReport => ({
    run_id: run.run_id,
    manual: run.manual,
    outcome,
    at: new Date(started).toISOString(),
    rows,
    seconds: (Date.now() - started) / 1000,
    error,
  })
  const table = await ctx.catalog.loadTable({ namespace: [sink.table.namespace], name: sink.table.name })
  if (await doneBefore(sink, run.run_id, table, ctx)) return report('done_before', 0, null) //  1
  let produced: { key: string; body: Uint8Array; contentType: string; rows: number }
  try {
    produced = await produce(sink, table, ctx) //                                                 2
  } catch (err) {
    if (!(err instanceof SqlRunFailed || err instanceof SqlRefused || sink.feed.kind === 'files')) throw err
    return report('failed', 0, (err as Error).message)
  }
  if (produced.rows === 0) return report('ok', 0, null) // nothing new: nothing to store or commit
  await storeBatch(sink, produced, started, ctx) //                                               3
  await ctx.checkpoint('feed-batch')
  await ctx.roll() //                                                                             4
  return report('ok', produced.rows, null)
}

// 1. The run's batch id is its slot: named by a retained snapshot or marker of this sink, it is
//    committed already. A batch still waiting (the tick's roll could not take it) makes the run wait
//    for the next tick: a files run reads "indexed" from the table, which must hold every earlier run.
async function doneBefore(sink: SinkView, runId: string, table: LoadedTable, ctx: FeedContext): Promise<boolean> {
  const { batches, records } = await intakeRecords(ctx.bucket, sink.id, table.metadata)
  if (records.has(runId)) return true
  if (batches.length > 0) throw new FeedWaits(`${batches.length} batch(es) still wait in the intake; the run waits for the next tick`)
  return false
}

// 2. The run's rows.
async function produce(sink: SinkView & { feed: DueFeed }, table: LoadedTable, ctx: FeedContext) {
  const id = sink.feed.run.run_id
  if (sink.feed.kind === 'sql') {
    const { parquet, rows } = await runQuery(sink.feed.query ?? '', ctx.sql)
    return { key: parquetBatchKey(sink.id, id), body: parquet, contentType: 'application/vnd.apache.parquet', rows }
  }
  const lines = await indexFiles(
    { kind: 'files', prefix: sink.feed.prefix ?? '', every_seconds: sink.feed.every_seconds, pattern: sink.feed.pattern ?? null },
    table,
    ctx.bucket,
  )
  return { key: batchKey(sink.id, id), body: new TextEncoder().encode(lines.map((l) => `${l}\n`).join('')), contentType: NDJSON, rows: lines.length }
}

// 3. One PUT, as the edge stores a producer's batch: __ingest_ts is the run's time. Then the ledger's
//    row: after the PUT, so a row never names a batch that was not stored (a crash between the two
//    leaves the batch to the next tick's roll, unseen by lag for that while, as before).
async function storeBatch(
  sink: SinkView & { feed: DueFeed },
  p: { key: string; body: Uint8Array; contentType: string; rows: number },
  started: number,
  ctx: FeedContext,
) {
  const received = new Date(started).toISOString().replace('Z', '000Z')
  await ctx.bucket.put(p.key, p.body, {
    contentType: p.contentType,
    metadata: { [BATCH_META.received]: received, [BATCH_META.rows]: String(p.rows), [BATCH_META.sink]: sink.id },
  })
  await ctx.recordBatch({
    batch_id: sink.feed.run.run_id,
    body_sha256: createHash('sha256').update(p.body).digest('hex'),
    bytes: p.body.length,
    rows: p.rows,
    received_at: received,
  })
}
