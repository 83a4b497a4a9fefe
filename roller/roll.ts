// The roll, step by step as the spec says it ("The roll", "Exactly once", "Rejects").
// Every step boundary is a checkpoint: a crash point the tests kill the roller at.
import { CommitStateUnknown, type Catalog, type LoadedTable } from '../iceberg/catalog/index.ts'
import { addColumnsChange, CommitAbandoned, commitWithRetry, fastAppend, type RetryPolicy } from '../iceberg/commit.ts'
import type { S3Client } from '../iceberg/io/s3.ts'
import { parseLossless } from '../iceberg/json.ts'
import { currentSchema, type TableMetadata } from '../iceberg/metadata.ts'
import type { Compression } from '../iceberg/parquet.ts'
import type { Row } from '../iceberg/types.ts'
import type { TableUpdate } from '../iceberg/updates.ts'
import { toRow } from '../iceberg/values.ts'
import type { RollReport, SinkView } from './api.ts'
import { batchKey, EndTick, listIntake, markerBody, markerKey, readMarker, receivedMicros, type IntakeObject, type Marker } from './intake.ts'
import type { Logger } from './log.ts'
import { consumedRecords, storedBefore, summaryBatchIds } from './recovery.ts'
import { rejectLine, sweepRejects, wholeBatchLine, writeRejects } from './rejects.ts'
import { encodeDataFiles, uploadDataFiles } from './write.ts'

export const INGEST_TS = '__ingest_ts'
export const MAX_BATCHES = 1000
export const MAX_BATCH_BYTES = 16 * 1024 * 1024
const RETENTION_PROPERTIES = { 'write.metadata.delete-after-commit.enabled': 'true', 'write.metadata.previous-versions-max': '5' }

export interface RollContext {
  rollId: string
  rollerId: string
  catalog: Catalog
  bucket: S3Client
  compression: Compression
  retry?: RetryPolicy
  log: Logger
  /** A step boundary (tests kill the roller here). */
  checkpoint: (name: string) => void | Promise<void>
  report: (report: RollReport) => Promise<void>
}

export interface RollResult {
  snapshotIds: string[]
  batches: number
  rows: number
  rejectedRows: number
  repaired: number
}

interface Invariant {
  pending: IntakeObject[]
  repaired: Array<{ batchId: string; snapshotId: string | null }>
  /** Markers whose batches are all out of the intake: deleted once the repair is reported. */
  settledMarkers: string[]
}

interface Batch {
  batchId: string
  key: string
  receivedMicros: bigint
  /** The NDJSON lines, or why the batch is rejected whole. */
  lines: string[] | null
  whole?: { reason: 'batch_unreadable' | 'batch_too_large'; error: string; rows: number }
}

interface CheckedBatch {
  batchId: string
  rows: Row[]
  rejected: number
}

interface Committed {
  batchIds: string[]
  snapshotId: bigint | null
  marker: string | null
}

export async function roll(sink: SinkView, ctx: RollContext): Promise<RollResult> {
  const started = Date.now()
  const table = await reloadTable(sink, ctx) //                                1
  const invariant = await reestablishInvariant(sink, table, ctx) //           2
  const base = await applyFirstRollChanges(table, ctx) //                     3
  const pending = await readPendingBatches(sink, invariant, ctx) //           4
  const checked = await validateRows(sink, base, pending, ctx) //             5
  const commits = await writeAndCommit(sink, base, checked, ctx) //           6
  return finishRoll(sink, invariant, pending, checked, commits, ctx, started) // 7
}

// 1. Reload the table as the tenant.
async function reloadTable(sink: SinkView, ctx: RollContext): Promise<LoadedTable> {
  const table = await ctx.catalog.loadTable({ namespace: [sink.table.namespace], name: sink.table.name })
  await ctx.checkpoint('reload')
  return table
}

// 2. Re-establish the invariant: whatever a retained snapshot of this sink or a marker names, and
//    was stored before it, is consumed — deleted from the intake before anything new is committed.
async function reestablishInvariant(sink: SinkView, table: LoadedTable, ctx: RollContext): Promise<Invariant> {
  const listing = await listIntake(ctx.bucket, sink.id)
  const markers = (await Promise.all(listing.markers.map((k) => readMarker(ctx.bucket, k)))).filter((m): m is Marker => m !== null)
  const records = consumedRecords(table.metadata, sink.id, markers)
  const pending: IntakeObject[] = []
  const repaired = new Map<string, string | null>()
  for (const obj of listing.batches) {
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
    const c = hasColumn ? { requirements: [{ type: 'assert-table-uuid' as const, uuid: meta['table-uuid'] }], updates: [] as TableUpdate[] } : addColumnsChange(meta, [{ name: INGEST_TS, type: 'timestamptz', doc: 'When lhbox received the row (the batch’s arrival time).' }])
    if (Object.keys(missing).length > 0) c.updates.push({ action: 'set-properties', updates: missing })
    return c
  }
  if (!change(table.metadata)) return table
  const updated = await commitWithRetry(ctx.catalog, table, async (b) => change(b.metadata) ?? { requirements: [], updates: [] }, ctx.retry)
  ctx.log.info('first-roll changes committed', { column: INGEST_TS, properties: RETENTION_PROPERTIES })
  await ctx.checkpoint('first-roll-commit')
  return updated
}

// 4. Read the pending batches, oldest first: at most 1,000, within roll_bytes.
async function readPendingBatches(sink: SinkView, invariant: Invariant, ctx: RollContext): Promise<Batch[]> {
  const ordered = [...invariant.pending].sort((a, b) => a.lastModified.getTime() - b.lastModified.getTime() || a.batchId.localeCompare(b.batchId))
  const batches: Batch[] = []
  let bytes = 0
  for (const obj of ordered) {
    if (batches.length >= Math.min(MAX_BATCHES, sink.policy.max_batches)) break
    if (obj.size > MAX_BATCH_BYTES) {
      const head = await ctx.bucket.head(obj.key)
      if (!head) continue
      batches.push({ batchId: obj.batchId, key: obj.key, receivedMicros: receivedMicros(head), lines: null, whole: { reason: 'batch_too_large', error: `the object is ${obj.size} bytes; a producer's batch may be 16 MiB at most`, rows: Number(head.metadata.rows ?? 0) } })
      continue
    }
    if (batches.length > 0 && bytes + obj.size > sink.policy.roll_bytes) break
    const got = await ctx.bucket.get(obj.key)
    if (!got) continue // consumed by another roller meanwhile
    bytes += obj.size
    let lines: string[] | null
    try {
      lines = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(got.body).split('\n').filter((l) => l.trim() !== '')
    } catch {
      lines = null
    }
    const batch: Batch = { batchId: obj.batchId, key: obj.key, receivedMicros: receivedMicros(got.head), lines }
    if (!lines) batch.whole = { reason: 'batch_unreadable', error: 'the batch is not UTF-8 text', rows: Number(got.head.metadata.rows ?? 0) }
    batches.push(batch)
  }
  return batches
}

// 5. Validate row by row against the current schema; __ingest_ts comes from the batch, never from
//    the producer. The rejects files are written here.
async function validateRows(sink: SinkView, table: LoadedTable, batches: Batch[], ctx: RollContext): Promise<CheckedBatch[]> {
  const schema = currentSchema(table.metadata)
  const formatVersion = table.metadata['format-version'] === 3 ? 3 : 2
  const checked: CheckedBatch[] = []
  for (const batch of batches) {
    const rows: Row[] = []
    const rejects: string[] = []
    let rejected = 0
    if (batch.whole) {
      rejects.push(wholeBatchLine(batch.batchId, batch.whole.reason, batch.whole.error))
      rejected = batch.whole.rows
    } else {
      const parsed: unknown[] = []
      try {
        for (const line of batch.lines!) parsed.push(parseLossless(line))
      } catch (err) {
        rejects.push(wholeBatchLine(batch.batchId, 'batch_unreadable', (err as Error).message))
        rejected = batch.lines!.length
      }
      if (rejects.length === 0) {
        parsed.forEach((value, index) => {
          if (value && typeof value === 'object' && !Array.isArray(value)) delete (value as Record<string, unknown>)[INGEST_TS]
          const result = toRow(schema, value, { formatVersion })
          if (result.ok) {
            result.row[INGEST_TS] = batch.receivedMicros
            rows.push(result.row)
          } else {
            rejected++
            for (const r of result.rejects) rejects.push(rejectLine(batch.batchId, index, r, batch.lines![index]))
          }
        })
      }
    }
    if (rejects.length > 0) await writeRejects(ctx.bucket, sink.id, batch.batchId, rejects)
    checked.push({ batchId: batch.batchId, rows, rejected })
  }
  await ctx.checkpoint('rejects')
  return checked
}

// 6. Write the data file(s) and commit one append naming the batches; then the committed marker.
//    On a v3 table whose writer refuses the rows, the batches are committed one by one and the
//    refused batch is rejected whole (batch_unwritable).
async function writeAndCommit(sink: SinkView, table: LoadedTable, checked: CheckedBatch[], ctx: RollContext): Promise<Committed[]> {
  if (!checked.some((b) => b.rows.length > 0)) return [await recordEmptyRoll(sink, checked.map((b) => b.batchId), ctx)]
  try {
    return [await commitBatches(sink, table, checked, ctx)]
  } catch (err) {
    if (!(err instanceof WriterRefused) || table.metadata['format-version'] !== 3) throw err
    ctx.log.warn('the writer refused the roll; committing its batches one by one', { error: err.message })
  }
  const commits: Committed[] = []
  let base = table
  for (const batch of checked) {
    if (batch.rows.length === 0) {
      commits.push(await recordEmptyRoll(sink, [batch.batchId], ctx))
      continue
    }
    try {
      const c = await commitBatches(sink, base, [batch], ctx)
      commits.push(c)
      base = await ctx.catalog.loadTable(table.identifier)
    } catch (err) {
      if (!(err instanceof WriterRefused)) throw err
      await writeRejects(ctx.bucket, sink.id, batch.batchId, [wholeBatchLine(batch.batchId, 'batch_unwritable', err.message)])
      batch.rejected += batch.rows.length
      batch.rows = []
      commits.push(await recordEmptyRoll(sink, [batch.batchId], ctx))
    }
  }
  return commits
}

class WriterRefused extends Error {}

/**
 * An empty roll (every row rejected) commits no snapshot, so no snapshot names its batches. Its marker
 * (snapshot_id null) is the record that they are consumed: a roller that dies between the batch deletes
 * and the report finds it in step 2 and reports them, instead of leaving them pending in the ledger.
 */
async function recordEmptyRoll(sink: SinkView, batchIds: string[], ctx: RollContext): Promise<Committed> {
  const marker = markerKey(sink.id, `${ctx.rollId}-empty-${crypto.randomUUID()}`)
  await ctx.bucket.put(marker, markerBody(batchIds, null, new Date().toISOString()), { contentType: 'application/json' })
  await ctx.checkpoint('marker')
  return { batchIds, snapshotId: null, marker }
}

async function commitBatches(sink: SinkView, table: LoadedTable, batches: CheckedBatch[], ctx: RollContext): Promise<Committed> {
  const rows = batches.flatMap((b) => b.rows)
  const batchIds = batches.map((b) => b.batchId)
  let encoded
  try {
    encoded = encodeDataFiles(table, rows, ctx.compression, `${ctx.rollId}-${crypto.randomUUID()}`)
  } catch (err) {
    throw new WriterRefused(`the Parquet writer refused the rows: ${(err as Error).message}`)
  }
  const files = await uploadDataFiles(table, encoded)
  await ctx.checkpoint('data-file')
  const rolledAt = new Date().toISOString()
  const properties = {
    'lakehousebox.sink.id': sink.id,
    'lakehousebox.sink.batches': batchIds.join(','),
    'lakehousebox.sink.rows': String(rows.length),
    'lakehousebox.sink.rejected_rows': String(batches.reduce((n, b) => n + b.rejected, 0)),
    'lakehousebox.sink.rolled_at': rolledAt,
  }
  // If another roller committed any of these batches since they were read, commit nothing.
  const recheck = (base: LoadedTable) => {
    const mine = new Set(batchIds)
    for (const s of base.metadata.snapshots) {
      const named = summaryBatchIds((s.summary ?? {}) as Record<string, string>, sink.id) ?? []
      if (named.some((id) => mine.has(id))) throw new CommitAbandoned(`snapshot ${s['snapshot-id']} already holds batch(es) of this roll`)
    }
  }
  let snapshotId: bigint
  try {
    snapshotId = (await fastAppend(ctx.catalog, table, files.map((f) => f.dataFile), { properties, retry: ctx.retry, recheck })).snapshotId
  } catch (err) {
    if (err instanceof CommitAbandoned) throw new EndTick(err.message, err)
    if (!(err instanceof CommitStateUnknown)) throw err
    snapshotId = await resolveUnknownCommit(table, properties, ctx, err)
  }
  await ctx.checkpoint('commit')
  const marker = markerKey(sink.id, files[0].name)
  await ctx.bucket.put(marker, markerBody(batchIds, snapshotId, rolledAt), { contentType: 'application/json' })
  await ctx.checkpoint('marker')
  return { batchIds, snapshotId, marker }
}

/** An unknown outcome is resolved by reloading and looking for this roll's snapshot, never by retrying. */
async function resolveUnknownCommit(table: LoadedTable, properties: Record<string, string>, ctx: RollContext, cause: Error): Promise<bigint> {
  const fresh = await ctx.catalog.loadTable(table.identifier).catch((err) => {
    throw new EndTick(`commit outcome unknown and the table cannot be reloaded: ${(err as Error).message}`, err)
  })
  const ours = fresh.metadata.snapshots.find((s) => s.summary?.['lakehousebox.sink.rolled_at'] === properties['lakehousebox.sink.rolled_at'] && s.summary?.['lakehousebox.sink.batches'] === properties['lakehousebox.sink.batches'])
  if (!ours) throw new EndTick(`commit outcome unknown (${cause.message}); the table does not hold it: the next tick rolls again`, cause)
  ctx.log.warn('commit outcome was unknown; found it in the table', { snapshot_id: ours['snapshot-id'] })
  return ours['snapshot-id']
}

// 7. Delete the consumed batches, then the marker; report; sweep rejects older than 7 days.
async function finishRoll(sink: SinkView, invariant: Invariant, batches: Batch[], checked: CheckedBatch[], commits: Committed[], ctx: RollContext, started: number): Promise<RollResult> {
  const keyOf = new Map(batches.map((b) => [b.batchId, b.key]))
  for (const c of commits) {
    for (const id of c.batchIds) {
      await ctx.bucket.delete(keyOf.get(id) ?? batchKey(sink.id, id))
      await ctx.checkpoint('batch-delete')
    }
    // An empty roll's marker is its only record: it goes once the report is made (below).
    if (c.marker && c.snapshotId !== null) {
      await ctx.bucket.delete(c.marker)
      await ctx.checkpoint('marker-delete')
    }
  }
  const rows = checked.reduce((n, b) => n + b.rows.length, 0)
  const rejectedRows = checked.reduce((n, b) => n + b.rejected, 0)
  const snapshotIds = commits.flatMap((c) => (c.snapshotId === null ? [] : [c.snapshotId.toString()]))
  await ctx.checkpoint('before-report')
  await ctx.report({
    roller: ctx.rollerId,
    roll_id: ctx.rollId,
    consumed: [
      ...commits.map((c) => ({ batch_ids: c.batchIds, snapshot_id: c.snapshotId?.toString() ?? null })),
      ...groupBySnapshot(invariant.repaired),
    ],
    repaired: invariant.repaired.map((r) => r.batchId),
    last_roll:
      checked.length > 0
        ? { at: new Date().toISOString(), batches: checked.length, rows, rejected_rows: rejectedRows, snapshot_id: snapshotIds.at(-1) ?? null, seconds: (Date.now() - started) / 1000 }
        : null,
    rejects: { rows: rejectedRows, batches: checked.filter((b) => b.rejected > 0).length },
  })
  // A repair's marker is kept until the repair is reported; so is an empty roll's.
  const emptyMarkers = commits.flatMap((c) => (c.marker && c.snapshotId === null ? [c.marker] : []))
  for (const key of [...invariant.settledMarkers, ...emptyMarkers]) await ctx.bucket.delete(key).catch(() => undefined)
  await sweepRejects(ctx.bucket, sink.id).catch((err) => ctx.log.warn('rejects sweep failed', { error: String(err) }))
  return { snapshotIds, batches: checked.length, rows, rejectedRows, repaired: invariant.repaired.length }
}

function groupBySnapshot(repaired: Invariant['repaired']): Array<{ batch_ids: string[]; snapshot_id: string | null }> {
  const by = new Map<string | null, string[]>()
  for (const r of repaired) by.set(r.snapshotId, [...(by.get(r.snapshotId) ?? []), r.batchId])
  return [...by].map(([snapshot_id, batch_ids]) => ({ batch_ids, snapshot_id }))
}
