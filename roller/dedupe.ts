// Whole-table dedupe for a keyed sink (POST /v1/sinks/{id}/dedupe): keep only the latest row per key
// — latest by __ingest_ts, a tie going to the later commit (data sequence number, which every rewrite
// keeps: replace.ts) — in one commit.
// Refused past 1 GiB of rewritten data files or 10 million rows, with the reason in dedupe.last.
// Its crash points: 'dedupe-files' (the rewritten files written, nothing committed) and 'dedupe-commit'
// (committed, not reported). A dedupe killed after its commit is found again by the restarted one: the
// table then has no loser, and dedupe.last reports the commit that removed them (earlierDedupe).
import { DEDUPE_SUMMARY } from '../contract/summary.ts'
import { INGEST_TS } from '../contract/table.ts'
import { CommitConflict, type Catalog, type LoadedTable } from '../iceberg/catalog/index.ts'
import { currentSchema, currentSnapshot, defaultSpec, type TableMetadata } from '../iceberg/spec/metadata.ts'
import { readDataFile } from '../iceberg/parquet/read-rows.ts'
import { dropRows } from '../iceberg/parquet/drop-rows.ts'
import { readColumnGroups } from '../iceberg/parquet/read-columns.ts'
import { prepareReplace, type PreparedReplace, type ReplacementFile } from '../iceberg/transaction/replace.ts'
import { dataSequenceNumber, readLiveFiles, type LiveEntry } from '../iceberg/read/live-files.ts'
import { assertUnmoved, PlanStale, transact, type RetryPolicy, type TransactOptions } from '../iceberg/transaction/transact.ts'
import type { Row } from '../iceberg/spec/types.ts'
import type { SinkView } from './api.ts'
import { keyOf, upsertProblem } from './upsert.ts'
import { PartitionedWriter, uploadDataFiles, type WriterCodecs } from '../iceberg/writer/partitioned.ts'

const DEDUPE_MAX_BYTES = 1024 * 1024 * 1024
const DEDUPE_MAX_ROWS = 10_000_000

export interface DedupeOptions {
  rollId: string
  compression: WriterCodecs
  maxBytes?: number
  maxRows?: number
  retry?: RetryPolicy
  onRetry?: TransactOptions['onRetry']
  /** A step boundary (the roll's: tests kill the roller here). */
  checkpoint?: (name: string) => void | Promise<void>
}

/**
 * A dedupe asked for may already be in the table: one of this sink's, committed since the request
 * (less a tolerance for the roller's clock against the edge's, well under the hour that separates two
 * dedupes), by a roller that died before reporting it.
 */
const REQUEST_SKEW_MS = 10 * 60_000

/** What dedupe.last says: when, rows removed, files rewritten — or why not. */
export type DedupeResult =
  | { at: string; rows_removed: number; files_rewritten: number; files_dropped: number; snapshot_id: string | null }
  | { at: string; refused: string; message: string }

interface Candidate {
  file: number
  row: number
  ingest: bigint
  seq: bigint
}

/** Later wins: by __ingest_ts, then by the commit's sequence number, then by place in the files. */
function later(a: Candidate, b: Candidate): boolean {
  if (a.ingest !== b.ingest) return a.ingest > b.ingest
  if (a.seq !== b.seq) return a.seq > b.seq
  return a.file !== b.file ? a.file > b.file : a.row > b.row
}

/** A dedupe refused by what the plan found (the reason goes to dedupe.last). */
class Refused extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message)
  }
}

interface Planned {
  removed: number
  rewritten: number
  dropped: number
  /** the snapshot the plan read: any other commit since may hold rows of these keys */
  planned: bigint | null
  replace: PreparedReplace
}

export async function dedupeTable(sink: SinkView, catalog: Catalog, opts: DedupeOptions): Promise<DedupeResult> {
  const at = () => new Date().toISOString()
  const key = sink.key
  if (!key) return { at: at(), refused: 'not_keyed', message: 'the sink has no key' }
  try {
    const table = await catalog.loadTable({ namespace: [sink.table.namespace], name: sink.table.name })
    const done = await transact<Planned>(
      catalog,
      table,
      {
        plan: (base) => planDedupe(sink, key, base, opts),
        change: async (p, base, attempt) => {
          assertUnmoved(base, p.planned)
          return p.replace.change(base, attempt)
        },
        snapshotId: (p) => p.replace.snapshotId,
      },
      { retry: opts.retry, onRetry: opts.onRetry },
    )
    if (!done) return earlierDedupe(sink, table.metadata, at())
    await opts.checkpoint?.('dedupe-commit')
    const p = done.plan
    return { at: at(), rows_removed: p.removed, files_rewritten: p.rewritten, files_dropped: p.dropped, snapshot_id: p.replace.snapshotId.toString() }
  } catch (err) {
    if (err instanceof Refused) return { at: at(), refused: err.reason, message: err.message }
    if (err instanceof CommitConflict || err instanceof PlanStale) return { at: at(), refused: 'conflicts', message: `the table kept moving: ${err.message}` }
    throw err
  }
}

/**
 * Nothing to remove: what dedupe.last says. When a dedupe of this sink committed since the request
 * (its roller died before the report), that commit, as its own report would have said it; otherwise 0.
 */
function earlierDedupe(sink: SinkView, metadata: TableMetadata, at: string): DedupeResult {
  const since = sink.dedupe_requested_at ? Date.parse(sink.dedupe_requested_at) - REQUEST_SKEW_MS : Number.NaN
  const found = metadata.snapshots
    .filter((s) => s.summary[DEDUPE_SUMMARY.sink] === sink.id && s['timestamp-ms'] >= since)
    .sort((a, b) => b['timestamp-ms'] - a['timestamp-ms'])[0]
  if (!found) return { at, rows_removed: 0, files_rewritten: 0, files_dropped: 0, snapshot_id: null }
  // A dedupe writes one file per file it rewrites (a keyed table is unpartitioned) and deletes those and the ones it drops.
  const added = Number(found.summary['added-data-files'] ?? 0)
  const deleted = Number(found.summary['deleted-data-files'] ?? 0)
  return {
    at,
    rows_removed: Number(found.summary[DEDUPE_SUMMARY.rowsRemoved] ?? 0),
    files_rewritten: added,
    files_dropped: Math.max(0, deleted - added),
    snapshot_id: found['snapshot-id'].toString(),
  }
}

/** Finds the losers of every key and writes the files without them; null when no row loses. */
async function planDedupe(sink: SinkView, key: string[], table: LoadedTable, opts: DedupeOptions): Promise<Planned | null> {
  const problem = upsertProblem(table.metadata, key)
  if (problem) throw new Refused(problem.reason, problem.message)
  const files = await readLiveFiles(table)
  if (files.deletes.length > 0) throw new Refused('delete_files', 'the table has delete files')
  const rows = files.data.reduce((n, e) => n + Number(e.entry.dataFile.recordCount), 0)
  if (rows > (opts.maxRows ?? DEDUPE_MAX_ROWS)) throw new Refused('too_many_rows', `${rows} rows, past the ${opts.maxRows ?? DEDUPE_MAX_ROWS}-row limit`)
  // Pass 1: the key columns and __ingest_ts of every row, to find the latest per key.
  const schema = currentSchema(table.metadata)
  const winners = new Map<string, Candidate>()
  const losers: Array<Set<number>> = files.data.map(() => new Set())
  for (const [file, entry] of files.data.entries()) {
    const seq = dataSequenceNumber(entry)
    const keyed = await readDataFile(await table.io.read(entry.entry.dataFile.filePath), schema, { columns: [...key, INGEST_TS] })
    keyed.forEach((r: Row, row: number) => {
      if (key.some((k) => r[k] === null || r[k] === undefined)) return // rows without a whole key stay
      const k = keyOf(r, key)
      const c: Candidate = { file, row, ingest: (r[INGEST_TS] as bigint | null) ?? -1n, seq }
      const prev = winners.get(k)
      if (!prev) winners.set(k, c)
      else if (later(c, prev)) {
        losers[prev.file].add(prev.row)
        winners.set(k, c)
      } else losers[file].add(row)
    })
  }
  const removed = losers.reduce((n, s) => n + s.size, 0)
  if (removed === 0) return null
  // The spec's limit is on the files the dedupe rewrites (a file that loses every row is dropped, not rewritten).
  const rewriteBytes = files.data.reduce(
    (n, e, file) => (losers[file].size > 0 && losers[file].size < Number(e.entry.dataFile.recordCount) ? n + Number(e.entry.dataFile.fileSizeInBytes) : n),
    0,
  )
  const maxBytes = opts.maxBytes ?? DEDUPE_MAX_BYTES
  if (rewriteBytes > maxBytes) throw new Refused('too_large', `${rewriteBytes} bytes of data files to rewrite, past the ${maxBytes}-byte limit`)

  // Pass 2: drop the files that lost every row; rewrite the others without their losers.
  const dropped: LiveEntry[] = []
  const rewritten: LiveEntry[] = []
  const added: ReplacementFile[] = []
  const specId = defaultSpec(table.metadata)['spec-id']
  for (const [file, entry] of files.data.entries()) {
    if (losers[file].size === 0) continue
    if (losers[file].size === Number(entry.entry.dataFile.recordCount)) {
      dropped.push(entry)
      continue
    }
    // Column buffers, the losers dropped in place: no row objects for the rows kept (as a keyed roll).
    let n = Number(entry.entry.dataFile.recordCount)
    for (const i of losers[file]) n = Math.max(n, i + 1)
    const drop = new Uint8Array(n)
    for (const i of losers[file]) drop[i] = 1
    const w = new PartitionedWriter(table, opts.compression)
    let at = 0
    for await (const batch of readColumnGroups(await table.io.read(entry.entry.dataFile.filePath), schema)) {
      w.append(dropRows(batch, drop, at))
      at += batch.rows
    }
    const out = w.finish(`${opts.rollId}-dedupe-${crypto.randomUUID()}`)
    await uploadDataFiles(table, out)
    // The kept rows keep the data sequence number of the commit they came from (the tie-break above).
    for (const f of out) added.push({ specId, dataFile: f.dataFile, dataSequenceNumber: dataSequenceNumber(entry) })
    rewritten.push(entry)
  }
  const replace = await prepareReplace(table, {
    deleted: new Set([...dropped, ...rewritten].map((e) => e.entry.dataFile.filePath)),
    added,
    operation: 'overwrite',
    properties: { [DEDUPE_SUMMARY.sink]: sink.id, [DEDUPE_SUMMARY.rowsRemoved]: String(removed) },
  })
  await opts.checkpoint?.('dedupe-files')
  return { removed, rewritten: rewritten.length, dropped: dropped.length, planned: currentSnapshot(table.metadata)?.['snapshot-id'] ?? null, replace }
}
