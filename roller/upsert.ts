// A keyed roll (spec "A key: one row per key, not one per send"): the latest row per key wins, and
// ONE overwrite commit drops the files whose rows are all replaced, rewrites those partly replaced
// (every other row and column kept exactly) and adds the roll's rows. Same summary keys, markers
// and crash points as an append, so exactly-once by recovery is unchanged.
import { CommitConflict, type Catalog, type LoadedTable } from '../iceberg/catalog/index.ts'
import { CommitAbandoned } from '../iceberg/commit.ts'
import { currentSchema, currentSnapshot, defaultSpec, type TableMetadata } from '../iceberg/metadata.ts'
import { readDataFile } from '../iceberg/parquet-read.ts'
import { readLiveFiles, replaceDataFiles, RewriteStale, type LiveEntry } from '../iceberg/rewrite.ts'
import { isPrimitive, parsePrimitive, type Row, type Value } from '../iceberg/types.ts'
import type { SinkView } from './api.ts'
import { EndTick } from './intake.ts'
import { INGEST_TS } from './validate.ts'
import { PartitionedWriter, uploadDataFiles, type EncodedFile } from '../iceberg/writer/partitioned.ts'

const KEY_TYPES = new Set(['string', 'int', 'long', 'date', 'time', 'timestamp', 'timestamptz', 'uuid', 'decimal', 'boolean'])
export const MAX_REWRITE_BYTES = 256 * 1024 * 1024
const ATTEMPTS = 5

/** A key the roller cannot apply: the sink is disabled with this upsert_* reason; batches wait. */
export class UpsertRefused extends Error {
  constructor(readonly reason: string, message: string) {
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

  keys(): Set<string> {
    return new Set(this.byKey.keys())
  }

  rows(): Row[] {
    return [...this.byKey.values()]
  }
}

/** Why this table and key cannot take a keyed roll, or null. */
export function upsertProblem(meta: TableMetadata, key: string[]): { reason: string; message: string } | null {
  if (meta['format-version'] !== 2 || defaultSpec(meta).fields.length > 0) return { reason: 'upsert_table_unsupported', message: 'a key needs a format-version 2, unpartitioned table' }
  const fields = new Map(currentSchema(meta).fields.map((f) => [f.name, f]))
  for (const k of key) {
    const f = fields.get(k)
    if (!f) return { reason: 'upsert_key_missing', message: `key column ${k} is not in the table's schema` }
    if (!isPrimitive(f.type) || !KEY_TYPES.has(parsePrimitive(f.type).kind)) return { reason: 'upsert_key_type', message: `key column ${k} has type ${JSON.stringify(f.type)}, not a key type` }
  }
  return null
}

export interface UpsertPlan {
  /** Files whose rows are all replaced: dropped whole. */
  dropped: LiveEntry[]
  /** Files partly replaced: rewritten without the replaced rows. */
  rewritten: LiveEntry[]
  /** Data files read (the key columns) after the bounds pruning. */
  filesRead: number
  rewriteBytes: number
}

/** Could this file hold one of the roll's keys? Bounds rule it out for string and integer keys. */
function mayHold(entry: LiveEntry, meta: TableMetadata, key: string[], rows: Row[]): boolean {
  const fields = currentSchema(meta).fields
  for (const k of key) {
    const f = fields.find((x) => x.name === k)!
    const kind = parsePrimitive(f.type as string).kind
    const lower = entry.entry.dataFile.lowerBounds?.get(f.id)
    const upper = entry.entry.dataFile.upperBounds?.get(f.id)
    if (!lower || !upper) continue
    if (kind === 'int' || kind === 'long') {
      const lo = readInt(lower)
      const hi = readInt(upper)
      if (!rows.some((r) => BigInt(r[k] as number | bigint) >= lo && BigInt(r[k] as number | bigint) <= hi)) return false
    } else if (kind === 'string') {
      // Bounds are UTF-8 bytes, truncated: the lower stays a lower bound; the upper was incremented.
      const enc = new TextEncoder()
      if (!rows.some((r) => compareBytes(enc.encode(r[k] as string), lower) >= 0 && compareBytes(enc.encode(r[k] as string).subarray(0, upper.length), upper) <= 0)) return false
    }
  }
  return true
}

function readInt(b: Uint8Array): bigint {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength)
  return b.length === 4 ? BigInt(view.getInt32(0, true)) : view.getBigInt64(0, true)
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i]
  return a.length - b.length
}

/** Reads the key columns of the live files the bounds do not rule out, and sorts them. */
export async function planUpsert(table: LoadedTable, key: string[], keyed: KeyedRows, maxRewriteBytes = MAX_REWRITE_BYTES): Promise<UpsertPlan> {
  const files = await readLiveFiles(table)
  if (files.deletes.length > 0) throw new UpsertRefused('upsert_delete_files', 'the table has delete files; a keyed sink rewrites data files only')
  const schema = currentSchema(table.metadata)
  const rows = keyed.rows()
  const keys = keyed.keys()
  const plan: UpsertPlan = { dropped: [], rewritten: [], filesRead: 0, rewriteBytes: 0 }
  for (const entry of files.data) {
    if (!mayHold(entry, table.metadata, key, rows)) continue
    plan.filesRead++
    const existing = await readDataFile(await table.io.read(entry.entry.dataFile.filePath), schema, { columns: key })
    const replaced = existing.filter((r) => keys.has(keyOf(r, key))).length
    if (replaced === 0) continue
    if (replaced === existing.length) plan.dropped.push(entry)
    else {
      plan.rewritten.push(entry)
      plan.rewriteBytes += Number(entry.entry.dataFile.fileSizeInBytes)
    }
  }
  if (plan.rewriteBytes > maxRewriteBytes) {
    throw new UpsertRefused('upsert_rewrite_too_large', `the roll would rewrite ${plan.rewriteBytes} bytes of data files, past the ${maxRewriteBytes}-byte limit of one roll`)
  }
  return plan
}

export interface UpsertContext {
  catalog: Catalog
  rollId: string
  compression: ConstructorParameters<typeof PartitionedWriter>[1]
  checkpoint: (name: string) => void | Promise<void>
  reload: () => Promise<LoadedTable>
  /** Throws when another roller committed some of these batches since the roll read the table. */
  recheck: (base: LoadedTable) => void
  maxRewriteBytes?: number
  backoffMs?: number
}

export interface UpsertCommit {
  snapshotId: bigint
  files: EncodedFile[]
  plan: UpsertPlan
}

/**
 * Plans, writes and commits the overwrite; a conflict re-plans on the new base (a foreign commit may
 * have added rows with these keys). An unknown outcome is resolved by reloading and looking.
 */
export async function commitUpsert(table: LoadedTable, key: string[], keyed: KeyedRows, properties: Record<string, string>, ctx: UpsertContext): Promise<UpsertCommit> {
  let base = table
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (attempt > 0) {
      await new Promise((r) => setTimeout(r, (ctx.backoffMs ?? 500) * 2 ** (attempt - 1) * (0.5 + Math.random())))
      base = await ctx.reload()
      try {
        ctx.recheck(base)
      } catch (err) {
        // Another roller committed these batches: this roll ends, as an append's does (not a failure).
        if (err instanceof CommitAbandoned) throw new EndTick(err.message, err)
        throw err
      }
    }
    const plan = await planUpsert(base, key, keyed, ctx.maxRewriteBytes)
    const files = await writeFiles(base, keyed, plan, ctx)
    await uploadDataFiles(base, files)
    await ctx.checkpoint('data-file')
    const planned = currentSnapshot(base.metadata)?.['snapshot-id'] ?? null
    const summary = {
      ...properties,
      'lakehousebox.sink.rewritten_files': String(plan.rewritten.length),
      'lakehousebox.sink.rewritten_bytes': String(plan.rewriteBytes),
      // Files whose key columns were read: the rest were ruled out by their bounds.
      'lakehousebox.sink.key_files_read': String(plan.filesRead),
    }
    try {
      const committed = await replaceDataFiles(ctx.catalog, base, {
        deleted: new Set([...plan.dropped, ...plan.rewritten].map((e) => e.entry.dataFile.filePath)),
        added: files.map((f) => ({ specId: defaultSpec(base.metadata)['spec-id'], dataFile: f.dataFile })),
        operation: 'overwrite',
        properties: summary,
        retry: { attempts: 1, minBackoffMs: 0, maxBackoffMs: 0 },
        // Any other commit since the plan may hold rows with these keys: plan again.
        validate: (_files, b) => {
          if ((currentSnapshot(b.metadata)?.['snapshot-id'] ?? null) !== planned) throw new RewriteStale('the table moved since the plan')
        },
      })
      return { snapshotId: committed.snapshotId, files, plan }
    } catch (err) {
      if (err instanceof CommitConflict || err instanceof RewriteStale) continue
      if (err instanceof CommitAbandoned) throw new EndTick(err.message, err)
      throw err // CommitStateUnknown included: the caller reloads and looks for this roll's snapshot
    }
  }
  throw new EndTick(`the keyed roll conflicted ${ATTEMPTS} times; the next tick plans it again`)
}

/** The roll's rows in one file, and each partly replaced file without its replaced rows. */
async function writeFiles(base: LoadedTable, keyed: KeyedRows, plan: UpsertPlan, ctx: UpsertContext): Promise<EncodedFile[]> {
  const schema = currentSchema(base.metadata)
  const keys = keyed.keys()
  const out: EncodedFile[] = []
  const fresh = new PartitionedWriter(base, ctx.compression)
  fresh.appendRows(keyed.rows())
  out.push(...fresh.finish(`${ctx.rollId}-${crypto.randomUUID()}`))
  for (const entry of plan.rewritten) {
    const kept = (await readDataFile(await base.io.read(entry.entry.dataFile.filePath), schema)).filter((r) => !keys.has(keyOf(r, keyed.key)))
    const w = new PartitionedWriter(base, ctx.compression)
    w.appendRows(kept)
    out.push(...w.finish(`${ctx.rollId}-rewrite-${crypto.randomUUID()}`))
  }
  return out
}

