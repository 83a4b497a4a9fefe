// A keyed roll (spec "A key: one row per key, not one per send"): the latest row per key wins, and
// ONE overwrite commit drops the files whose rows are all replaced, rewrites those partly replaced
// (every other row and column kept exactly) and adds the roll's rows. Same summary keys, markers
// and crash points as an append, so exactly-once by recovery is unchanged.
import { keyProblem, type KeyProblem, type UpsertReason } from '../contract/key-rule.ts'
import { SUMMARY } from '../contract/summary.ts'
import { INGEST_TS } from '../contract/table.ts'
import { CommitConflict, type Catalog, type LoadedTable } from '../iceberg/catalog/index.ts'
import { assertUnmoved, CommitAbandoned, PlanStale, transact, type Committed, type RetryPolicy, type TransactOptions } from '../iceberg/transaction/transact.ts'
import { currentSchema, currentSnapshot, defaultSpec, type TableMetadata } from '../iceberg/spec/metadata.ts'
import { buildersFor, finishBatch } from '../iceberg/parquet/builders.ts'
import { dropRows } from '../iceberg/parquet/drop-rows.ts'
import { KeySet } from '../iceberg/parquet/key-set.ts'
import { readColumnGroups } from '../iceberg/parquet/read-columns.ts'
import { prepareReplace, type PreparedReplace } from '../iceberg/transaction/replace.ts'
import { dataSequenceNumber, readLiveFiles, type LiveEntry } from '../iceberg/read/live-files.ts'
import { parsePrimitive, type Row, type Schema, type Value } from '../iceberg/spec/types.ts'
import { EndTick } from './intake.ts'
import { PartitionedWriter, uploadDataFiles, type EncodedFile, type WriterCodecs } from '../iceberg/writer/partitioned.ts'

const MAX_REWRITE_BYTES = 256 * 1024 * 1024
/** Data files read at once while planning (their key columns) and fetched ahead while rewriting. */
const READ_AHEAD = 4
const KEEP_BYTES = 64 * 1024 * 1024

/** A key the roller cannot apply: the sink is disabled with this upsert_* reason; batches wait. */
export class UpsertRefused extends Error {
  constructor(
    readonly reason: UpsertReason,
    message: string,
  ) {
    super(message)
    this.name = 'UpsertRefused'
  }
}

/** A stable text form of a row's key (bigint, bytes and strings never collide). */
export function keyOf(row: Row, key: string[]): string {
  return key.map((k) => encodeKeyPart(row[k])).join('\u0000')
}

function encodeKeyPart(v: Value): string {
  if (v instanceof Uint8Array) return `b${Array.from(v, (b) => b.toString(16).padStart(2, '0')).join('')}`
  if (typeof v === 'bigint') return `n${v}`
  if (typeof v === 'number') return `n${v}`
  return `${typeof v}${String(v)}`
}

/** The roll's rows, latest per key: the row received last wins, and within a batch the last one. */
export class KeyedRows {
  private readonly byKey = new Map<string, Row>()

  constructor(readonly key: string[]) {}

  add(rows: Row[]): void {
    for (const row of rows) {
      const k = keyOf(row, this.key)
      const prev = this.byKey.get(k)
      if (!prev || (prev[INGEST_TS] as bigint) <= (row[INGEST_TS] as bigint)) this.byKey.set(k, row)
    }
  }

  get size(): number {
    return this.byKey.size
  }

  rows(): Row[] {
    return [...this.byKey.values()]
  }
}

/** Why this table and key cannot take a keyed roll (contract/key-rule.ts), or null. */
export function upsertProblem(meta: TableMetadata, key: string[]): KeyProblem | null {
  return keyProblem({ formatVersion: meta['format-version'], partitioned: defaultSpec(meta).fields.length > 0, columns: currentSchema(meta).fields }, key)
}

interface UpsertPlan {
  /** Files whose rows are all replaced: dropped whole. */
  dropped: LiveEntry[]
  /** Files partly replaced: rewritten without the replaced rows. */
  rewritten: LiveEntry[]
  /** Per rewritten file (by path): 1 for each row, in file order, that the roll replaces. */
  replaced: Map<string, Uint8Array>
  /** The bytes of rewritten files the plan read, kept up to KEEP_BYTES in all so the rewrite need not fetch them again. */
  bytes: Map<string, Uint8Array>
  /** Data files read (the key columns) after the bounds pruning. */
  filesRead: number
  rewriteBytes: number
}

/** The roll's keys, ready to probe stored rows with: by their bytes, and by the bounds of each column. */
class RollKeys {
  readonly set: KeySet
  private readonly sorted = new Map<string, { kind: 'int'; values: BigInt64Array } | { kind: 'string'; values: Uint8Array[] }>()

  constructor(
    private readonly schema: Schema,
    private readonly key: string[],
    all: Row[],
  ) {
    const fields = key.map((k) => schema.fields.find((f) => f.name === k)!)
    // validation rejects a null key part (key_null); such a row could never match a stored one anyway
    const rows = all.filter((r) => key.every((k) => r[k] !== null && r[k] !== undefined))
    // the same buffer layout the column reader gives the stored rows
    const builders = buildersFor(fields, rows.length)
    for (const row of rows) fields.forEach((f, i) => builders[i].appendValue(row[f.name] ?? null))
    this.set = new KeySet(
      fields.map((f) => f.id),
      finishBatch(fields, builders, rows.length),
    )
    const enc = new TextEncoder()
    for (const f of fields) {
      const kind = parsePrimitive(f.type as string).kind
      if (kind === 'int' || kind === 'long')
        this.sorted.set(f.name, { kind: 'int', values: BigInt64Array.from(rows, (r) => BigInt(r[f.name] as number | bigint)).sort() })
      else if (kind === 'string') this.sorted.set(f.name, { kind: 'string', values: rows.map((r) => enc.encode(r[f.name] as string)).sort(compareBytes) })
    }
  }

  /** Could this file hold one of the keys? Bounds rule it out for string and integer key columns. */
  mayHold(entry: LiveEntry): boolean {
    for (const k of this.key) {
      const f = this.schema.fields.find((x) => x.name === k)!
      const keys = this.sorted.get(k)
      const lower = entry.entry.dataFile.lowerBounds?.get(f.id)
      const upper = entry.entry.dataFile.upperBounds?.get(f.id)
      if (!keys || !lower || !upper) continue
      if (keys.kind === 'int') {
        const lo = readInt(lower)
        const i = firstAtLeast(keys.values, (v) => v >= lo)
        if (i === keys.values.length || keys.values[i] > readInt(upper)) return false
      } else {
        // Bounds are UTF-8 bytes, truncated: the lower stays a lower bound; the upper was incremented.
        // Truncation keeps the order, so the least key at or past the lower bound decides.
        const i = firstAtLeast(keys.values, (v) => compareBytes(v, lower) >= 0)
        if (i === keys.values.length || compareBytes(keys.values[i].subarray(0, upper.length), upper) > 0) return false
      }
    }
    return true
  }
}

/** The first index whose value passes `ok` (a predicate monotone over the sorted values). */
function firstAtLeast<T>(values: ArrayLike<T>, ok: (v: T) => boolean): number {
  let lo = 0
  let hi = values.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (ok(values[mid])) hi = mid
    else lo = mid + 1
  }
  return lo
}

function readInt(b: Uint8Array): bigint {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength)
  return b.length === 4 ? BigInt(view.getInt32(0, true)) : view.getBigInt64(0, true)
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i]
  return a.length - b.length
}

/** fn over items, at most `limit` at once; results in the items' order. */
async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const i = next++
      out[i] = await fn(items[i])
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return out
}

/** Reads the key columns of the live files the bounds do not rule out, and sorts them. */
async function planUpsert(table: LoadedTable, key: string[], keyed: KeyedRows, maxRewriteBytes = MAX_REWRITE_BYTES): Promise<UpsertPlan> {
  const files = await readLiveFiles(table)
  if (files.deletes.length > 0) throw new UpsertRefused('upsert_delete_files', 'the table has delete files; a keyed sink rewrites data files only')
  const schema = currentSchema(table.metadata)
  const keys = new RollKeys(schema, key, keyed.rows())
  const plan: UpsertPlan = { dropped: [], rewritten: [], replaced: new Map(), bytes: new Map(), filesRead: 0, rewriteBytes: 0 }
  const candidates = files.data.filter((e) => keys.mayHold(e))
  plan.filesRead = candidates.length
  // Only the key columns are decoded, straight into buffers, and probed there: no row objects.
  let kept = 0
  const marks = await mapLimit(candidates, READ_AHEAD, async (entry) => {
    const bytes = await table.io.read(entry.entry.dataFile.filePath)
    let drop: Uint8Array = new Uint8Array(Number(entry.entry.dataFile.recordCount))
    let rows = 0
    let replaced = 0
    for await (const batch of readColumnGroups(bytes, schema, { columns: key })) {
      if (rows + batch.rows > drop.length) drop = grow(drop, rows + batch.rows)
      replaced += keys.set.mark(batch, drop, rows)
      rows += batch.rows
    }
    const keep = replaced > 0 && replaced < rows && kept + bytes.length <= KEEP_BYTES
    if (keep) kept += bytes.length
    return { rows, replaced, drop, bytes: keep ? bytes : null }
  })
  candidates.forEach((entry, i) => {
    const { rows, replaced, drop, bytes } = marks[i]
    if (replaced === 0) return
    if (replaced === rows) plan.dropped.push(entry)
    else {
      plan.rewritten.push(entry)
      plan.replaced.set(entry.entry.dataFile.filePath, drop)
      if (bytes) plan.bytes.set(entry.entry.dataFile.filePath, bytes)
      plan.rewriteBytes += Number(entry.entry.dataFile.fileSizeInBytes)
    }
  })
  if (plan.rewriteBytes > maxRewriteBytes) {
    throw new UpsertRefused(
      'upsert_rewrite_too_large',
      `the roll would rewrite ${plan.rewriteBytes} bytes of data files, past the ${maxRewriteBytes}-byte limit of one roll`,
    )
  }
  return plan
}

function grow(a: Uint8Array, n: number): Uint8Array {
  const b = new Uint8Array(n)
  b.set(a)
  return b
}

export interface UpsertContext {
  catalog: Catalog
  rollId: string
  compression: WriterCodecs
  checkpoint: (name: string) => void | Promise<void>
  /** Throws when another roller committed some of these batches since the roll read the table. */
  recheck: (base: LoadedTable) => void
  maxRewriteBytes?: number
  retry?: RetryPolicy
  onRetry?: TransactOptions['onRetry']
}

export interface UpsertCommit {
  snapshotId: bigint
  /** The table as the commit answered it. */
  table: LoadedTable
  files: EncodedFile[]
  plan: UpsertPlan
  /** Set when the commit's answer was lost and the table was found to hold the snapshot. */
  unknownOutcome?: Error
}

/** A keyed roll planned on one snapshot of the table, its files written. */
interface Planned {
  plan: UpsertPlan
  files: EncodedFile[]
  /** the snapshot the plan read: any other commit since may hold rows with these keys */
  planned: bigint | null
  replace: PreparedReplace
}

/**
 * Plans, writes and commits the overwrite; when the table moved meanwhile (a conflict), it is planned
 * again on the new base, after checking that no other roller committed these batches. An unknown
 * outcome is resolved by looking for the snapshot (transact.ts).
 */
export async function commitUpsert(
  table: LoadedTable,
  key: string[],
  keyed: KeyedRows,
  properties: Record<string, string>,
  ctx: UpsertContext,
): Promise<UpsertCommit> {
  let done: Committed<Planned> | null
  try {
    done = await transact<Planned>(
      ctx.catalog,
      table,
      {
        plan: async (base) => {
          // Every round: the first's base may already be newer than the table step 2 read.
          ctx.recheck(base)
          const plan = await planUpsert(base, key, keyed, ctx.maxRewriteBytes)
          const { files, kept } = await writeFiles(base, keyed, plan, ctx)
          await uploadDataFiles(base, files)
          await ctx.checkpoint('data-file')
          const replace = await prepareReplace(base, {
            deleted: new Set([...plan.dropped, ...plan.rewritten].map((e) => e.entry.dataFile.filePath)),
            // A rewritten file keeps its source's data sequence number: its rows are as old as they were.
            added: files.map((f) => ({
              specId: defaultSpec(base.metadata)['spec-id'],
              dataFile: f.dataFile,
              dataSequenceNumber: kept.get(f.dataFile.filePath),
            })),
            operation: 'overwrite',
            properties: {
              ...properties,
              [SUMMARY.rewrittenFiles]: String(plan.rewritten.length),
              [SUMMARY.rewrittenBytes]: String(plan.rewriteBytes),
              // Files whose key columns were read: the rest were ruled out by their bounds.
              [SUMMARY.keyFilesRead]: String(plan.filesRead),
            },
          })
          return { plan, files, planned: currentSnapshot(base.metadata)?.['snapshot-id'] ?? null, replace }
        },
        change: async (p, base, attempt) => {
          assertUnmoved(base, p.planned)
          return p.replace.change(base, attempt)
        },
        snapshotId: (p) => p.replace.snapshotId,
      },
      { retry: ctx.retry, onRetry: ctx.onRetry },
    )
  } catch (err) {
    // Another roller committed these batches: this roll ends, as an append's does (not a failure).
    if (err instanceof CommitAbandoned) throw new EndTick(err.message, err)
    if (err instanceof PlanStale || err instanceof CommitConflict)
      throw new EndTick(`the keyed roll kept conflicting (${err.message}); the next tick plans it again`, err)
    throw err // CommitStateUnknown included: the table does not hold this roll's snapshot
  }
  const p = done!.plan
  return { snapshotId: p.replace.snapshotId, table: done!.table, files: p.files, plan: p.plan, unknownOutcome: done!.unknownOutcome }
}

/**
 * The roll's rows in one file, and each partly replaced file without its replaced rows; `kept` maps
 * each rewritten file's path to its source's data sequence number.
 */
async function writeFiles(
  base: LoadedTable,
  keyed: KeyedRows,
  plan: UpsertPlan,
  ctx: UpsertContext,
): Promise<{ files: EncodedFile[]; kept: Map<string, bigint> }> {
  const schema = currentSchema(base.metadata)
  const out: EncodedFile[] = []
  const kept = new Map<string, bigint>()
  const fresh = new PartitionedWriter(base, ctx.compression)
  fresh.appendRows(keyed.rows())
  out.push(...fresh.finish(`${ctx.rollId}-${crypto.randomUUID()}`))
  // The next files are fetched while one is rewritten; each is decoded a row group at a time into
  // column buffers, its replaced rows dropped in place, and appended as columns (no row objects).
  const fetched = plan.rewritten.map(() => null as Promise<Uint8Array> | null)
  const fetch = (i: number) => {
    if (i >= plan.rewritten.length || fetched[i]) return
    const path = plan.rewritten[i].entry.dataFile.filePath
    const held = plan.bytes.get(path)
    plan.bytes.delete(path) // released once rewritten
    const read = held ? Promise.resolve(held) : base.io.read(path)
    read.catch(() => {}) // a failed read throws where it is awaited, not as an unhandled rejection
    fetched[i] = read
  }
  for (let i = 0; i < Math.min(READ_AHEAD - 1, plan.rewritten.length); i++) fetch(i)
  for (const [i, entry] of plan.rewritten.entries()) {
    fetch(i)
    fetch(i + READ_AHEAD - 1)
    const bytes = await fetched[i]!
    fetched[i] = null
    const drop = plan.replaced.get(entry.entry.dataFile.filePath)!
    const w = new PartitionedWriter(base, ctx.compression)
    let rows = 0
    for await (const batch of readColumnGroups(bytes, schema)) {
      w.append(dropRows(batch, drop, rows))
      rows += batch.rows
    }
    if (w.rows !== rows - countOnes(drop))
      throw new Error(`rewriting ${entry.entry.dataFile.filePath}: ${w.rows} rows kept of ${rows}, the plan replaced ${countOnes(drop)}`)
    for (const f of w.finish(`${ctx.rollId}-rewrite-${crypto.randomUUID()}`)) {
      out.push(f)
      kept.set(f.dataFile.filePath, dataSequenceNumber(entry))
    }
  }
  return { files: out, kept }
}

function countOnes(a: Uint8Array): number {
  let n = 0
  for (let i = 0; i < a.length; i++) n += a[i]
  return n
}
