// The roller's world in memory: a table in the in-memory catalog, the sink's bucket, a ledger that
// takes the roll reports as the edge would, and RollContexts whose checkpoints can stop a roll at a
// step (the in-memory equivalent of the crash tests). No server, no timers.
import type { RollReport, SinkView } from '../../../roller/api.ts'
import type { Logger } from '../../../roller/log.ts'
import { roll, type RollContext, type RollResult } from '../../../roller/roll.ts'
import { batchKey, rejectsKey } from '../../../contract/bucket.ts'
import { readDataFile } from '../../../iceberg/parquet/read-rows.ts'
import { currentSchema, type TableMetadata } from '../../../iceberg/spec/metadata.ts'
import type { NestedField, Row } from '../../../iceberg/spec/types.ts'
import { readLiveFiles } from '../../../iceberg/read/live-files.ts'
import { appendFiles } from '../../../iceberg/transaction/merge-append.ts'
import { PartitionedWriter, uploadDataFiles } from '../../../iceberg/writer/partitioned.ts'
import { MemoryCatalog, MemoryIO } from '../iceberg/memory-catalog.ts'
import { MemoryBucket } from './memory-bucket.ts'

export const SINK = 'snk_unit'
export const HOUR = 3600_000
const FAST = { attempts: 5, minBackoffMs: 1, maxBackoffMs: 2 }
const RETENTION = { 'write.metadata.delete-after-commit.enabled': 'true', 'write.metadata.previous-versions-max': '5' }

/** The edge's side of the roll reports: batches stay pending until a report names them consumed. */
class Ledger {
  /** Waiting batch ids, in arrival order (what SinkView.ledger_pending carries). */
  pending: string[] = []
  reports: RollReport[] = []
  /** batch id → the snapshot id the report gave (null: an empty roll). */
  committed = new Map<string, string | null>()
  /** Reports to refuse before taking one (the edge unreachable). */
  refuse = 0

  async report(r: RollReport): Promise<void> {
    if (this.refuse > 0) {
      this.refuse--
      throw new Error('the edge did not answer')
    }
    this.reports.push(structuredClone(r))
    for (const c of r.consumed) {
      for (const id of c.batch_ids) {
        this.committed.set(id, c.snapshot_id)
        this.pending = this.pending.filter((p) => p !== id)
      }
    }
  }
}

export interface World {
  catalog: MemoryCatalog
  bucket: MemoryBucket
  ledger: Ledger
  /** warn lines the rolls logged */
  warnings: Array<{ msg: string; fields?: Record<string, unknown> }>
  rolls: number
}

const FIELDS: NestedField[] = [
  { id: 1, name: 'x', required: false, type: 'long' },
  { id: 2, name: 'who', required: false, type: 'string' },
]

/**
 * A fresh world: an unpartitioned table (x long, who string). `prepared`: the table already has
 * __ingest_ts and the retention properties (the first-roll changes made).
 */
export async function world(opts: { prepared?: boolean; properties?: Record<string, string>; ingestTs?: boolean } = {}): Promise<World> {
  const catalog = new MemoryCatalog(new MemoryIO())
  const ingestTs = opts.ingestTs ?? opts.prepared ?? false
  const fields: NestedField[] = ingestTs ? [...FIELDS, { id: 3, name: '__ingest_ts', required: false, type: 'timestamptz' }] : FIELDS
  await catalog.createTable(['ns'], { name: 't', schema: { fields }, properties: { ...(opts.prepared ? RETENTION : {}), ...opts.properties } })
  return { catalog, bucket: new MemoryBucket(), ledger: new Ledger(), warnings: [], rolls: 0 }
}

function sinkView(w: World, policy: Partial<SinkView['policy']> = {}, key: string[] | null = null): SinkView {
  return {
    id: SINK,
    name: 'unit',
    project_id: 'prj_unit',
    state: 'active',
    table: { namespace: 'ns', name: 't' },
    warehouse: {
      id: 'wh_unit',
      name: 'unit',
      catalog: { type: 'sql', catalog_name: 'unit' },
      location: 's3://bucket/wh',
      bucket: 'mem',
      endpoint: 'memory://',
      region: 'auto',
      maintenance: 'on',
    },
    policy: { roll_seconds: 300, roll_bytes: 64 * 1024 * 1024, inactivity_seconds: null, max_batches: 1000, ...policy },
    key,
    lag: { batches: w.ledger.pending.length, bytes: 0, oldest_at: null, newest_at: null },
    ledger_pending: [...w.ledger.pending],
    due: true,
    dedupe_requested_at: null,
    feed: null,
    lease: null,
  }
}

/** RFC 3339 with microseconds, as the intake writes x-amz-meta-received. */
function rfc3339(ms: number, micros = 0): string {
  return new Date(ms).toISOString().replace('Z', `${String(micros).padStart(3, '0')}Z`)
}

export interface SendOptions {
  /** x-amz-meta-received, ms (default: the bucket's clock); null: no header (Last-Modified counts). */
  receivedMs?: number | null
  receivedMicros?: number
  lastModified?: Date
  /** x-amz-meta-skipped: the elements an older edge did not store */
  skipped?: string
  /** The ledger knows the batch (default true). */
  ledger?: boolean
}

/** Stores a batch as the intake does: one element a line, with the intake's headers. */
export function send(w: World, batchId: string, lines: string[], opts: SendOptions = {}): string {
  const key = batchKey(SINK, batchId)
  const receivedMs = opts.receivedMs === undefined ? w.bucket.now() : opts.receivedMs
  const metadata: Record<string, string> = { rows: String(lines.length), sink: SINK }
  if (receivedMs !== null) metadata.received = rfc3339(receivedMs, opts.receivedMicros)
  if (opts.skipped !== undefined) metadata.skipped = opts.skipped
  w.bucket.store(key, lines.map((l) => l + '\n').join(''), { contentType: 'application/x-ndjson', metadata, lastModified: opts.lastModified })
  if (opts.ledger ?? true) w.ledger.pending.push(batchId)
  return key
}

/** Thrown from a checkpoint: the roller died there. */
export class Crash extends Error {
  constructor(readonly at: string) {
    super(`crashed at ${at}`)
  }
}

export interface RollOptions {
  policy?: Partial<SinkView['policy']>
  /** A keyed sink's key columns (default: an append sink). */
  key?: string[]
  /** `name` or `name:n` (the n-th time that checkpoint is passed in this roll). */
  crashAt?: string
  /** Called at every checkpoint, before a crash there. */
  at?: (name: string) => void | Promise<void>
  /** The checkpoints passed, in order. */
  steps?: string[]
}

function context(w: World, opts: RollOptions = {}): RollContext {
  const [crashName, nth] = (opts.crashAt ?? '').split(':')
  const seen = new Map<string, number>()
  const warn = (msg: string, fields?: Record<string, unknown>) => void w.warnings.push({ msg, fields })
  const log: Logger = { info: () => undefined, warn, error: warn, child: () => log }
  return {
    rollId: `roll-${++w.rolls}`,
    rollerId: 'unit-roller',
    catalog: w.catalog,
    bucket: w.bucket,
    compression: 'uncompressed',
    scanPool: null,
    retry: FAST,
    log,
    checkpoint: async (name) => {
      opts.steps?.push(name)
      await opts.at?.(name)
      const n = (seen.get(name) ?? 0) + 1
      seen.set(name, n)
      if (name === crashName && n === Number(nth ?? 1)) throw new Crash(name)
    },
    report: (r) => w.ledger.report(r),
  }
}

/** One roll of the sink, with the ledger as it is now. */
export function rollOnce(w: World, opts: RollOptions = {}): Promise<RollResult> {
  return roll(sinkView(w, opts.policy, opts.key ?? null), context(w, opts))
}

/** Every row of the table's current snapshot, read back from its data files. */
export async function tableRows(w: World): Promise<Row[]> {
  const table = w.catalog.current
  const schema = currentSchema(table.metadata)
  const rows: Row[] = []
  for (const { entry } of (await readLiveFiles(table)).data) rows.push(...(await readDataFile(await table.io.read(entry.dataFile.filePath), schema)))
  return rows
}

/** The x values in the table, sorted. */
export async function xs(w: World): Promise<number[]> {
  return (await tableRows(w)).map((r) => Number(r.x)).sort((a, b) => a - b)
}

export function snapshots(w: World): TableMetadata['snapshots'] {
  return w.catalog.current.metadata.snapshots
}

/** The sink's keys left in the bucket, by kind. */
export function leftovers(w: World): { intake: string[]; markers: string[]; rejects: string[] } {
  const prefix = `_sink/${SINK}/`
  const rest = w.bucket.keys(prefix).map((k) => k.slice(prefix.length))
  return {
    intake: rest.filter((k) => !k.includes('/')).map((k) => k.replace(/\.ndjson$/, '')),
    markers: rest.filter((k) => k.startsWith('committed/')),
    rejects: rest.filter((k) => k.startsWith('rejects/')).map((k) => k.slice('rejects/'.length).replace(/\.ndjson$/, '')),
  }
}

/**
 * A report's consumed groups that name batches. (A roll that finds nothing to roll still records an
 * empty roll naming no batch, and reports it as a group with no ids: not what these tests are about.)
 */
export function consumedOf(r: RollReport): RollReport['consumed'] {
  return r.consumed.filter((c) => c.batch_ids.length > 0)
}

/** The markers of the sink and the batch ids each names. */
export function markersOf(w: World): Record<string, string[]> {
  const prefix = `_sink/${SINK}/`
  return Object.fromEntries(w.bucket.keys(`${prefix}committed/`).map((k) => [k.slice(prefix.length), JSON.parse(w.bucket.text(k)!).batch_ids]))
}

export function rejectsOf(w: World, batchId: string): Array<Record<string, unknown>> {
  const text = w.bucket.text(rejectsKey(SINK, batchId))
  return text === null
    ? []
    : text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
}

/**
 * A roll's commit made some other way (an earlier roller, another sink): an append of `rows` (x values)
 * whose summary names `batchIds` under `prefix`. Returns the snapshot's id and time.
 */
export async function commitRecord(
  w: World,
  batchIds: string[],
  xValues: number[],
  opts: { prefix?: string; sinkId?: string } = {},
): Promise<{ snapshotId: string; atMs: number }> {
  const prefix = opts.prefix ?? 'lakehousebox.sink.'
  const table = w.catalog.current
  const writer = new PartitionedWriter(table, 'uncompressed')
  const hasTs = currentSchema(table.metadata).fields.some((f) => f.name === '__ingest_ts')
  writer.appendRows(xValues.map((x) => ({ x: BigInt(x), who: 'earlier', ...(hasTs ? { __ingest_ts: 0n } : {}) })))
  const files = writer.finish(`earlier-${crypto.randomUUID()}`)
  await uploadDataFiles(table, files)
  const properties = { [`${prefix}id`]: opts.sinkId ?? SINK, [`${prefix}batches`]: batchIds.join(','), [`${prefix}rows`]: String(xValues.length) }
  const done = await appendFiles(
    w.catalog,
    table,
    files.map((f) => f.dataFile),
    { properties, retry: FAST },
  )
  const snap = done.table.metadata.snapshots.find((s) => s['snapshot-id'] === done.snapshotId)!
  return { snapshotId: done.snapshotId.toString(), atMs: Number(snap['timestamp-ms']) }
}
