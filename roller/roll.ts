// The roll, step by step as the spec says it ("The roll", "Exactly once", "Rejects").
// Every step boundary is a checkpoint: a crash point the tests kill the roller at.
import { batchKey } from '../contract/bucket.ts'
import { INGEST_TS } from '../contract/table.ts'
import type { Catalog, LoadedTable } from '../iceberg/catalog/index.ts'
import { addColumnsChange } from '../iceberg/transaction/changes.ts'
import { commitWithRetry, type RetryPolicy, type TransactOptions } from '../iceberg/transaction/transact.ts'
import type { Bucket } from '../iceberg/io/s3.ts'
import { currentSchema, type TableMetadata } from '../iceberg/spec/metadata.ts'
import type { TableUpdate } from '../iceberg/spec/updates.ts'
import type { RollReport, SinkView } from './api.ts'
import { EndTick, listIntake, receivedMicros, type IntakeObject } from './intake.ts'
import type { Logger } from './log.ts'
import { intakeRecords, storedBefore } from './recovery.ts'
import { unwritableLines, wholeBatchLine, writeRejects } from './rejects.ts'
import { BatchChecker, elementIndexes, MAX_BATCH_BYTES, type CheckedBatch, type PendingBatch } from './validate.ts'
import { prefetch } from './pipeline.ts'
import type { ScanPool } from './scan-pool.ts'
import { KeyedRows, UpsertRefused, upsertProblem } from './upsert.ts'
import { UNMEASURED, type StageCpu } from './stage-cpu.ts'
import { commitFiles, commitKeyed, recordEmptyRoll, type BatchOutcome, type Committed } from './roll-commit.ts'
import { PartitionedWriter, WriterRefused, type WriterCodecs } from '../iceberg/writer/partitioned.ts'

const MAX_BATCHES = 1000
/**
 * Batches read (and scanned, on the scan threads) ahead of the one being written: bounded, for memory
 * and the store. bench:roll on 2 cores: 4 → 1.75 s, 8 → 1.60 s, 16 → 1.57 s, 32 → 1.88 s.
 */
const READ_AHEAD = 16
const RETENTION_PROPERTIES = { 'write.metadata.delete-after-commit.enabled': 'true', 'write.metadata.previous-versions-max': '5' }

export interface RollContext {
  rollId: string
  rollerId: string
  catalog: Catalog
  bucket: Bucket
  /** Page codecs, each table's chosen by its write.parquet.compression-codec and -level (codecs.ts). */
  compression: WriterCodecs
  /** Threads that scan the batches; none: they are scanned on this thread. */
  scanPool?: ScanPool | null
  retry?: RetryPolicy
  /** Called before each commit retry (the roller counts lhbox_commit_retries_total). */
  onRetry?: TransactOptions['onRetry']
  log: Logger
  /** A step boundary (tests kill the roller here). */
  checkpoint: (name: string) => void | Promise<void>
  report: (report: RollReport) => Promise<void>
  /** A keyed roll's limit on rewritten data files (default 256 MiB). */
  maxRewriteBytes?: number
  /** CPU per stage, when asked for (LHBOX_ROLL_STAGE_CPU; its compressors come wrapped in `compression`). */
  stageCpu?: StageCpu
  /**
   * A catch-up (roller/catch-up.ts): the table as the previous roll under this lease left it (its
   * commit's answer), so step 1 need not load it again; and whether another roll may follow this one
   * under the lease, in which case a roll that could not take every batch waiting keeps the lease.
   */
  catchUp?: { table?: LoadedTable; mayFollow: boolean; readAhead?: ReadAhead }
}

/**
 * A catch-up's next batches, read and scanned while the roll before commits (they wait in the intake
 * under the lease: reading them early is only a read). Used by the next roll when its table's schema
 * and its key are still the ones they were scanned for; any batch it does not choose is dropped.
 */
export interface ReadAhead {
  checkedFor: string
  batches: Map<string, Promise<CheckedBatch | null>>
}

export interface RollResult {
  snapshotIds: string[]
  batches: number
  rows: number
  rejectedRows: number
  repaired: number
  /** Under a catch-up: batches this roll could not take wait, and another roll follows under the lease (it was kept). */
  follows?: boolean
  /** Under a catch-up: the table as this roll left it (its last commit's answer, or as step 3 had it). */
  table?: LoadedTable
  /** Under a catch-up that follows: the next roll's first batches, being read. */
  readAhead?: ReadAhead
}

interface Invariant {
  pending: IntakeObject[]
  repaired: Array<{ batchId: string; snapshotId: string | null }>
  /** Markers whose batches are all out of the intake: deleted once the repair is reported. */
  settledMarkers: string[]
}

interface Validated {
  batches: BatchOutcome[]
  writer: PartitionedWriter
  /** A keyed sink's rows, latest per key (they go to an overwrite, not to the writer). */
  keyed: KeyedRows | null
  /** The writer refused the rows (v3: the batches go one by one). */
  refused: WriterRefused | null
}

export async function roll(sink: SinkView, ctx: RollContext): Promise<RollResult> {
  const started = Date.now()
  // The intake is listed while the table loads (step 2 needs both; neither needs the other).
  const listing = listIntake(ctx.bucket, sink.id)
  listing.catch(() => undefined) // awaited in step 2; a failed reload leaves it unheard
  const table = await reloadTable(sink, ctx) //                                1
  const invariant = await reestablishInvariant(sink, table, listing, ctx) //  2
  const base = await applyFirstRollChanges(table, ctx) //                     3
  const pending = readPendingBatches(sink, invariant) //                      4
  // Stage CPU: this thread's part of reading (GETs or the scan threads' hand-off) is step 5 less its
  // scans, encoding and compression; the commit is step 6 less its encoding and compression.
  const cpu = ctx.stageCpu ?? UNMEASURED
  try {
    const validated = await cpu.around('get', () => validateRows(sink, base, pending, ctx)) //   5
    // The scan threads are free now: the next roll's first batches are read while this one commits.
    const readAhead = ctx.catchUp?.mayFollow ? readNextAhead(sink, base, invariant, pending.length, ctx) : undefined
    const commits = await cpu.around('commit', () => writeAndCommit(sink, base, validated, seenSnapshots(table), ctx)) // 6
    // Behind: the limits left batches waiting; under a catch-up the next roll takes them at once.
    const follows = (ctx.catchUp?.mayFollow ?? false) && pending.length < invariant.pending.length
    const result = await finishRoll(sink, invariant, validated.batches, commits, ctx, started, follows) // 7
    return ctx.catchUp ? { ...result, follows, table: commits.findLast((c) => c.table)?.table ?? base, readAhead: follows ? readAhead : undefined } : result
  } catch (err) {
    if (!(err instanceof UpsertRefused)) throw err
    return disableForKey(sink, invariant, err, ctx)
  }
}

// 1. Reload the table as the tenant. A catch-up's next roll starts from the table its previous roll's
//    commit answered (the newest this roller can know; a commit on a moved table retries on the new one).
async function reloadTable(sink: SinkView, ctx: RollContext): Promise<LoadedTable> {
  const carried = ctx.catchUp?.table
  const same = carried && carried.identifier.name === sink.table.name && carried.identifier.namespace.join('.') === sink.table.namespace
  const table = same ? carried : await ctx.catalog.loadTable({ namespace: [sink.table.namespace], name: sink.table.name })
  await ctx.checkpoint('reload')
  return table
}

// 2. Re-establish the invariant: whatever a retained snapshot of this sink or a marker names, and
//    was stored before it, is consumed — deleted from the intake before anything new is committed.
async function reestablishInvariant(sink: SinkView, table: LoadedTable, listing: ReturnType<typeof listIntake>, ctx: RollContext): Promise<Invariant> {
  const { batches, markers, records } = await intakeRecords(ctx.bucket, sink.id, table.metadata, listing)
  const pending: IntakeObject[] = []
  const repaired = new Map<string, string | null>()
  for (const obj of batches) {
    const record = records.get(obj.batchId)
    const head = record ? await ctx.bucket.head(obj.key) : null
    if (!record || !head || !storedBefore(receivedMicros(head), record)) {
      if (!record || head) pending.push(obj)
      continue
    }
    try {
      await ctx.bucket.delete(obj.key)
    } catch (err) {
      throw new EndTick(`cannot delete consumed batch ${obj.batchId}: ${(err as Error).message}`, err)
    }
    repaired.set(obj.batchId, record.snapshotId)
    ctx.log.warn('repaired a consumed batch', { batch_id: obj.batchId, snapshot_id: record.snapshotId, source: record.source })
    await ctx.checkpoint('repair-delete')
  }
  // Batches the ledger still holds waiting that a record names are reported again until committed.
  for (const id of sink.ledger_pending) {
    const record = records.get(id)
    if (record && !pending.some((p) => p.batchId === id)) repaired.set(id, record.snapshotId)
  }
  const waiting = new Set(pending.map((p) => p.batchId))
  const settledMarkers = markers.filter((m) => !m.batchIds.some((id) => waiting.has(id))).map((m) => m.key)
  return { pending, repaired: [...repaired].map(([batchId, snapshotId]) => ({ batchId, snapshotId })), settledMarkers }
}

// 3. The first roll's changes, once: an optional __ingest_ts timestamptz and the metadata-retention
//    properties, in one commit. A table that already has both is left untouched.
async function applyFirstRollChanges(table: LoadedTable, ctx: RollContext): Promise<LoadedTable> {
  const change = (meta: TableMetadata) => {
    const hasColumn = currentSchema(meta).fields.some((f) => f.name === INGEST_TS)
    const missing = Object.fromEntries(Object.entries(RETENTION_PROPERTIES).filter(([k]) => !(k in meta.properties)))
    if (hasColumn && Object.keys(missing).length === 0) return null
    const c = hasColumn
      ? { requirements: [{ type: 'assert-table-uuid' as const, uuid: meta['table-uuid'] }], updates: [] as TableUpdate[] }
      : addColumnsChange(meta, [{ name: INGEST_TS, type: 'timestamptz', doc: 'When lhbox received the row (the batch’s arrival time).' }])
    if (Object.keys(missing).length > 0) c.updates.push({ action: 'set-properties', updates: missing })
    return c
  }
  if (!change(table.metadata)) return table
  const updated = await commitWithRetry(ctx.catalog, table, async (b) => change(b.metadata) ?? { requirements: [], updates: [] }, ctx.retry, ctx.onRetry)
  ctx.log.info('first-roll changes committed', { column: INGEST_TS, properties: RETENTION_PROPERTIES })
  await ctx.checkpoint('first-roll-commit')
  return updated
}

// 4. Choose the pending batches, oldest first: at most 1,000, within roll_bytes. They are read in
//    step 5, a few at a time, so a roll never holds all of its batches at once.
function readPendingBatches(sink: SinkView, invariant: Invariant): PendingBatch[] {
  // Arrival order: the ledger's (received_at, to the microsecond; its oldest 1,000 waiting batches),
  // then the listing's Last-Modified, whole seconds only on most stores, for any batch not in it.
  // A keyed sink needs the true order when a roll's limits fall between two batches of one second.
  const ordered = arrivalOrder(sink, invariant.pending)
  const chosen: PendingBatch[] = []
  let bytes = 0
  for (const obj of ordered) {
    if (chosen.length >= Math.min(MAX_BATCHES, sink.policy.max_batches)) break
    // An object too large to read is rejected whole in step 5 and does not count against roll_bytes.
    if (obj.size <= MAX_BATCH_BYTES) {
      if (chosen.length > 0 && bytes + obj.size > sink.policy.roll_bytes) break
      bytes += obj.size
    }
    chosen.push({ batchId: obj.batchId, key: obj.key, size: obj.size })
  }
  return chosen
}

function arrivalOrder(sink: SinkView, pending: IntakeObject[]): IntakeObject[] {
  const arrival = new Map(sink.ledger_pending.map((id, i) => [id, i]))
  const rank = (o: IntakeObject) => arrival.get(o.batchId) ?? Number.MAX_SAFE_INTEGER
  return [...pending].sort((a, b) => rank(a) - rank(b) || a.lastModified.getTime() - b.lastModified.getTime() || a.batchId.localeCompare(b.batchId))
}

// 5. Validate row by row against the current schema (__ingest_ts from the batch, never from the
//    producer), write the rejects files, and stream the good rows into the data file writer.
async function validateRows(sink: SinkView, table: LoadedTable, pending: PendingBatch[], ctx: RollContext): Promise<Validated> {
  const schema = currentSchema(table.metadata)
  const formatVersion = table.metadata['format-version'] === 3 ? 3 : 2
  const writer = new PartitionedWriter(table, ctx.compression)
  if (sink.key) {
    const problem = upsertProblem(table.metadata, sink.key)
    if (problem) throw new UpsertRefused(problem.reason, problem.message)
  }
  const validated: Validated = { batches: [], writer, keyed: sink.key ? new KeyedRows(sink.key) : null, refused: null }
  const cpu = ctx.stageCpu ?? UNMEASURED
  const checker = new BatchChecker(schema, formatVersion, sink.key, ctx.scanPool, cpu)
  const ahead = ctx.catchUp?.readAhead
  const early = ahead?.checkedFor === checkedFor(table, sink) ? ahead.batches : undefined
  for await (const batch of prefetch(pending, READ_AHEAD, (p) => early?.get(p.batchId) ?? checker.check(ctx.bucket, p))) {
    if (!batch) continue // consumed by another roller meanwhile
    if (batch.rejectLines.length > 0) await writeRejects(ctx.bucket, sink.id, batch.batchId, batch.rejectLines)
    if (validated.keyed) validated.keyed.add(batch.keyedRows)
    else if (!validated.refused && batch.columns) {
      try {
        cpu.run('encode', () => writer.append(batch.columns!))
      } catch (err) {
        if (!(err instanceof WriterRefused)) throw err
        validated.refused = err
      }
    }
    validated.batches.push({ batchId: batch.batchId, key: batch.key, rows: batch.rows, rejected: batch.rejected })
  }
  await ctx.checkpoint('rejects')
  return validated
}

/** What a batch's check depends on besides its bytes: the schema, format version and key it was checked against. */
const checkedFor = (table: LoadedTable, sink: SinkView) =>
  JSON.stringify([table.metadata['table-uuid'], currentSchema(table.metadata)['schema-id'], table.metadata['format-version'], sink.key])

/** Starts reading the first READ_AHEAD batches this roll left waiting (arrival order), for a catch-up's next roll. */
function readNextAhead(sink: SinkView, table: LoadedTable, invariant: Invariant, taken: number, ctx: RollContext): ReadAhead | undefined {
  const next = arrivalOrder(sink, invariant.pending).slice(taken, taken + READ_AHEAD)
  if (next.length === 0) return undefined
  const formatVersion = table.metadata['format-version'] === 3 ? 3 : 2
  const checker = new BatchChecker(currentSchema(table.metadata), formatVersion, sink.key, ctx.scanPool, ctx.stageCpu ?? UNMEASURED)
  const batches = new Map<string, Promise<CheckedBatch | null>>()
  for (const o of next) {
    const checked = checker.check(ctx.bucket, { batchId: o.batchId, key: o.key, size: o.size })
    checked.catch(() => undefined) // awaited by the next roll, or dropped with it
    batches.set(o.batchId, checked)
  }
  return { checkedFor: checkedFor(table, sink), batches }
}

// 6. Write the data file(s) and commit one append naming the batches; then the committed marker.
//    On a v3 table whose writer refuses the rows, the batches are committed one by one and the
//    refused batch is rejected whole (batch_unwritable).
async function writeAndCommit(sink: SinkView, table: LoadedTable, v: Validated, seen: Set<bigint>, ctx: RollContext): Promise<Committed[]> {
  const ids = v.batches.map((b) => b.batchId)
  if (ids.length === 0) return [] // nothing waited (a roll that only repaired): nothing to record
  if (v.keyed) return [v.keyed.size === 0 ? await recordEmptyRoll(sink, ids, ctx) : await commitKeyed(sink, table, v.keyed, v.batches, seen, ctx)]
  if (!v.refused && v.writer.rows === 0) return [await recordEmptyRoll(sink, ids, ctx)]
  if (!v.refused) {
    try {
      const files = (ctx.stageCpu ?? UNMEASURED).run('encode', () => v.writer.finish(`${ctx.rollId}-${crypto.randomUUID()}`))
      return [await commitFiles(sink, table, files, v.batches, seen, ctx)]
    } catch (err) {
      if (!(err instanceof WriterRefused)) throw err
      v.refused = err
    }
  }
  if (table.metadata['format-version'] !== 3) throw new EndTick(v.refused.message, v.refused)
  ctx.log.warn('the writer refused the roll; committing its batches one by one', { error: v.refused.message })
  const checker = new BatchChecker(currentSchema(table.metadata), 3)
  const commits: Committed[] = []
  let base = table
  for (const batch of v.batches) {
    const again = batch.rows > 0 ? await checker.check(ctx.bucket, { batchId: batch.batchId, key: batch.key, size: 0 }) : null
    if (!again?.columns || again.rows === 0) {
      commits.push(await recordEmptyRoll(sink, [batch.batchId], ctx))
      continue
    }
    try {
      const one = new PartitionedWriter(base, ctx.compression)
      one.append(again.columns)
      commits.push(await commitFiles(sink, base, one.finish(`${ctx.rollId}-${crypto.randomUUID()}`), [batch], seen, ctx))
      base = await ctx.catalog.loadTable(table.identifier)
    } catch (err) {
      if (!(err instanceof WriterRefused)) throw err
      // The intake object goes once the roll is recorded: its rows live on in the rejects file.
      const stored = await ctx.bucket.get(batch.key)
      const refused = stored
        ? unwritableLines(batch.batchId, new TextDecoder().decode(stored.body), again.rejectLines, err.message, elementIndexes(stored.head.metadata))
        : [wholeBatchLine(batch.batchId, 'batch_unwritable', err.message)]
      await writeRejects(ctx.bucket, sink.id, batch.batchId, [...again.rejectLines, ...refused])
      batch.rejected += batch.rows
      batch.rows = 0
      commits.push(await recordEmptyRoll(sink, [batch.batchId], ctx))
    }
  }
  return commits
}

/** A key the roller cannot apply: the sink is disabled with the upsert_* reason; its batches wait. */
async function disableForKey(_sink: SinkView, invariant: Invariant, err: UpsertRefused, ctx: RollContext): Promise<RollResult> {
  ctx.log.warn('sink disabled: its key cannot be applied', { reason: err.reason, error: err.message })
  await ctx.report({
    roller: ctx.rollerId,
    roll_id: ctx.rollId,
    consumed: groupBySnapshot(invariant.repaired),
    repaired: invariant.repaired.map((r) => r.batchId),
    disabled_reason: err.reason,
  })
  return { snapshotIds: [], batches: 0, rows: 0, rejectedRows: 0, repaired: invariant.repaired.length }
}

// 7. Delete the consumed batches, then the marker while reporting. Old rejects files go in the
//    maintenance sweep (LHBOX_REJECTS_RETENTION_DAYS), not here: listing them on every roll would cost
//    a roll O(rejects files kept).
async function finishRoll(
  sink: SinkView,
  invariant: Invariant,
  checked: BatchOutcome[],
  commits: Committed[],
  ctx: RollContext,
  started: number,
  follows: boolean,
): Promise<RollResult> {
  const keyOf = new Map(checked.map((b) => [b.batchId, b.key]))
  for (const c of commits) {
    // One DeleteObjects request (a roll names at most 1,000 batches): a store may apply it in part,
    // which step 2 repairs like any other crash between the commit and the deletes. The rows are in
    // the table, so the roll ends (the sink shows no error); the next roll settles the rest.
    await ctx.bucket.deleteMany(c.batchIds.map((id) => keyOf.get(id) ?? batchKey(sink.id, id))).catch((err) => {
      throw new EndTick(
        `committed (snapshot ${c.snapshotId ?? 'none'}); deleting its batches failed: ${(err as Error).message}; the next roll settles them`,
        err,
      )
    })
    await ctx.checkpoint('batch-delete')
  }
  const rows = checked.reduce((n, b) => n + b.rows, 0)
  const rejectedRows = checked.reduce((n, b) => n + b.rejected, 0)
  const snapshotIds = commits.flatMap((c) => (c.snapshotId === null ? [] : [c.snapshotId.toString()]))
  await ctx.checkpoint('before-report')
  // A committed roll's marker goes once its batches are out of the intake, while the report is made;
  // a marker whose delete fails is settled by the sink's next roll. An empty roll's marker is its
  // only record: it goes once the report is made (below).
  const committedMarkers = commits.flatMap((c) => (c.marker && c.snapshotId !== null ? [c.marker] : []))
  const markersDeleted = committedMarkers.map((marker) =>
    ctx.bucket.delete(marker).catch((err) => ctx.log.warn('marker not deleted; the next roll settles it', { marker, error: String(err) })),
  )
  await ctx.report({
    roller: ctx.rollerId,
    roll_id: ctx.rollId,
    consumed: [...commits.map((c) => ({ batch_ids: c.batchIds, snapshot_id: c.snapshotId?.toString() ?? null })), ...groupBySnapshot(invariant.repaired)],
    repaired: invariant.repaired.map((r) => r.batchId),
    last_roll:
      checked.length > 0
        ? {
            at: new Date().toISOString(),
            batches: checked.length,
            rows,
            rejected_rows: rejectedRows,
            snapshot_id: snapshotIds.at(-1) ?? null,
            seconds: (Date.now() - started) / 1000,
          }
        : null,
    rejects: { rows: rejectedRows, batches: checked.filter((b) => b.rejected > 0).length },
    // A dedupe asked for, a feed's run or a catch-up's next roll follows this roll under the same
    // lease; its report releases it.
    release: !(sink.dedupe_requested_at && sink.key) && !sink.feed?.run && !follows,
  })
  await Promise.all(markersDeleted)
  if (committedMarkers.length > 0) await ctx.checkpoint('marker-delete')
  await ctx.checkpoint('after-report')
  // A repair's marker is kept until the repair is reported; so is an empty roll's.
  const emptyMarkers = commits.flatMap((c) => (c.marker && c.snapshotId === null ? [c.marker] : []))
  await Promise.all([...invariant.settledMarkers, ...emptyMarkers].map((key) => ctx.bucket.delete(key).catch(() => undefined)))
  await ctx.checkpoint('settled-marker-delete')
  return { snapshotIds, batches: checked.length, rows, rejectedRows, repaired: invariant.repaired.length }
}

/** The snapshots the roll saw at step 1: a conflict re-check looks only at newer ones. */
function seenSnapshots(table: LoadedTable): Set<bigint> {
  return new Set(table.metadata.snapshots.map((s) => s['snapshot-id']))
}

function groupBySnapshot(repaired: Invariant['repaired']): Array<{ batch_ids: string[]; snapshot_id: string | null }> {
  const by = new Map<string | null, string[]>()
  for (const r of repaired) by.set(r.snapshotId, [...(by.get(r.snapshotId) ?? []), r.batchId])
  return [...by].map(([snapshot_id, batch_ids]) => ({ batch_ids, snapshot_id }))
}
