// Compaction (bin-packing): per partition, the live data files below the target size are merged into
// as few files as fit the target and committed as one `replace` snapshot that changes no row.
//
// Files are merged at the Parquet level (parquet/concat-files.ts: column chunks copied byte for byte, a
// new footer), so no value is ever decoded; only files with identical Parquet schemas and key-value
// metadata go into one output. The merged file's manifest metrics come from the inputs' entries
// (merge-metrics.ts). v3 tables keep row lineage exact: the merged file carries each row's
// `_row_id` and `_last_updated_sequence_number` explicitly.
//
// Left alone: partitions with live delete files (a rewrite would detach position deletes from
// their file and move equality deletes' reach), non-Parquet files, files at or over the target,
// v3 files without a first_row_id (upgraded tables), files the concatenation refuses.
//
// Racing a writer: a conflict re-applies the same merged files on the fresh base with freshly built
// manifests while every input is still live; when one is gone the merged files are deleted and the
// compaction is planned again from scratch. An unknown commit outcome is resolved by reloading and
// looking for the snapshot id; if it is not there the error goes to the caller (files stay: an
// orphan is harmless, deleting a committed file is not).

import type { Catalog, LoadedTable } from '../catalog/index.ts'
import { PlanStale, transact, type RetryPolicy, type TransactOptions } from '../transaction/transact.ts'
import type { DataFile } from '../manifest/manifest.ts'
import { currentSchema } from '../spec/metadata.ts'
import { partitionKey, prepareReplace, readLiveFiles, type LiveEntry, type PreparedReplace, type TableFiles } from '../transaction/replace.ts'
import { mergeMetrics, primitiveTypes } from './merge-metrics.ts'
import { concatParquet, mergeKey, NotMergeable, readFooter, type ConcatInput } from '../parquet/concat-files.ts'

const DEFAULT_TARGET_FILE_SIZE = 128 * 1024 * 1024

export interface CompactOptions {
  /** Files below this size are merged, into outputs of about this size at most; default 128 MiB. */
  targetFileSizeBytes?: number
  /** A partition is compacted only when it has at least this many small files; default 2. */
  minInputFiles?: number
  retry?: RetryPolicy
  onRetry?: TransactOptions['onRetry']
}

export interface CompactResult {
  /** Data files removed (their rows now live in the added files). */
  rewrittenFiles: number
  addedFiles: number
  /** Bytes of the removed files. */
  bytesCompacted: number
  snapshotId: bigint
  table: LoadedTable
}

interface Output {
  specId: number
  dataFile: DataFile
  inputs: LiveEntry[]
}

const dirOf = (path: string) => path.slice(0, path.lastIndexOf('/'))

/** The live data files worth merging, grouped by partition, in commit order. */
function candidates(table: LoadedTable, files: TableFiles, target: number, minInputs: number): LiveEntry[][] {
  const v3 = table.metadata['format-version'] === 3
  const withDeletes = new Set(files.deletes.map((x) => partitionKey(x.manifest.partitionSpecId, x.entry.dataFile.partition)))
  const groups = new Map<string, LiveEntry[]>()
  for (const x of files.data) {
    const f = x.entry.dataFile
    const key = partitionKey(x.manifest.partitionSpecId, f.partition)
    if (withDeletes.has(key)) continue
    if ((f.fileFormat ?? 'PARQUET').toUpperCase() !== 'PARQUET' || (f.content ?? 0) !== 0) continue
    if (Number(f.fileSizeInBytes) >= target) continue
    if (v3 && (f.firstRowId === null || f.firstRowId === undefined)) continue
    groups.set(key, [...(groups.get(key) ?? []), x])
  }
  const bySeq = (a: LiveEntry, b: LiveEntry) =>
    a.entry.sequenceNumber! < b.entry.sequenceNumber! ? -1 : a.entry.sequenceNumber! > b.entry.sequenceNumber! ? 1 : 0
  return [...groups.values()].filter((g) => g.length >= minInputs).map((g) => g.sort(bySeq))
}

/** Reads, bins and writes the merged files of one partition; returns the outputs. */
async function compactPartition(
  table: LoadedTable,
  group: LiveEntry[],
  target: number,
  run: string,
  counter: { n: number },
  written: string[],
): Promise<Output[]> {
  const v3 = table.metadata['format-version'] === 3
  const types = primitiveTypes([currentSchema(table.metadata), ...table.metadata.schemas])
  const outputs: Output[] = []
  const bins = new Map<string, { inputs: Array<ConcatInput & { live: LiveEntry }>; size: number }>()

  const flush = async (key: string) => {
    const bin = bins.get(key)
    bins.delete(key)
    if (!bin || bin.inputs.length < 2) return
    const merged = concatParquet(bin.inputs, { lineage: v3 })
    const files = bin.inputs.map((i) => i.live.entry.dataFile)
    const metrics = mergeMetrics(files, types)
    if (merged.rowCount !== BigInt(metrics.recordCount))
      throw new Error(`compaction row count mismatch: ${merged.rowCount} rows written, ${metrics.recordCount} expected`)
    const first = files[0]
    const filePath = `${dirOf(first.filePath)}/${run}-${String(counter.n++).padStart(5, '0')}-compacted.parquet`
    written.push(filePath)
    await table.io.write(filePath, merged.bytes, 'application/vnd.apache.parquet')
    const sortOrders = new Set(files.map((f) => f.sortOrderId ?? null))
    outputs.push({
      specId: bin.inputs[0].live.manifest.partitionSpecId,
      inputs: bin.inputs.map((i) => i.live),
      dataFile: {
        content: 0,
        filePath,
        fileFormat: 'PARQUET',
        partition: first.partition,
        ...metrics,
        fileSizeInBytes: merged.bytes.length,
        splitOffsets: merged.splitOffsets,
        sortOrderId: sortOrders.size === 1 ? [...sortOrders][0] : null,
      },
    })
  }

  for (const live of group) {
    const f = live.entry.dataFile
    const bytes = await table.io.read(f.filePath)
    let key: string
    let footer: ReturnType<typeof readFooter>
    try {
      if (bytes.length !== Number(f.fileSizeInBytes)) throw new NotMergeable('size differs from the manifest')
      footer = readFooter(bytes)
      key = mergeKey(footer, v3)
    } catch (err) {
      if (err instanceof NotMergeable) continue
      throw err
    }
    const size = Number(f.fileSizeInBytes)
    const bin = bins.get(key)
    if (bin && bin.size + size > target) await flush(key)
    const open = bins.get(key) ?? { inputs: [], size: 0 }
    open.inputs.push({ bytes, footer, live, lineage: v3 ? { firstRowId: f.firstRowId!, sequenceNumber: live.entry.sequenceNumber! } : undefined })
    open.size += size
    bins.set(key, open)
  }
  for (const key of [...bins.keys()]) await flush(key)
  return outputs
}

async function deleteQuietly(table: LoadedTable, paths: string[]): Promise<void> {
  if (!paths.length) return
  await table.io.delete(paths).catch(() => undefined) // orphans are harmless; a later sweep may remove them
}

interface CompactPlan {
  outputs: Output[]
  inputs: LiveEntry[]
  replace: PreparedReplace
  /** every file the plan wrote: merged data files, manifests, manifest lists */
  written: string[]
}

/**
 * Merges each partition's small data files and commits one `replace` snapshot; null when nothing
 * is worth merging (no commit then).
 */
export async function compactTable(catalog: Catalog, table: LoadedTable, opts: CompactOptions = {}): Promise<CompactResult | null> {
  const target = opts.targetFileSizeBytes ?? DEFAULT_TARGET_FILE_SIZE
  const minInputs = Math.max(2, opts.minInputFiles ?? 2)
  const done = await transact<CompactPlan>(
    catalog,
    table,
    {
      plan: async (base) => {
        const groups = candidates(base, await readLiveFiles(base), target, minInputs)
        if (groups.length === 0) return null
        const run = crypto.randomUUID()
        const counter = { n: 0 }
        const written: string[] = []
        const outputs: Output[] = []
        try {
          for (const group of groups) outputs.push(...(await compactPartition(base, group, target, run, counter, written)))
        } catch (err) {
          await deleteQuietly(base, written)
          throw err
        }
        if (outputs.length === 0) return null
        const inputs = outputs.flatMap((o) => o.inputs)
        const touched = new Set(inputs.map((x) => partitionKey(x.manifest.partitionSpecId, x.entry.dataFile.partition)))
        const replace = await prepareReplace(base, {
          deleted: new Set(inputs.map((x) => x.entry.dataFile.filePath)),
          added: outputs.map(({ specId, dataFile }) => ({ specId, dataFile })),
          written,
          validate: (now) => {
            for (const x of now.deletes) {
              if (touched.has(partitionKey(x.manifest.partitionSpecId, x.entry.dataFile.partition)))
                throw new PlanStale('a delete file now applies to a partition being compacted')
            }
          },
        })
        return { outputs, inputs, replace, written }
      },
      change: (p, base, attempt) => p.replace.change(base, attempt),
      snapshotId: (p) => p.replace.snapshotId,
      discard: (p) => deleteQuietly(table, p.written), // nothing of this plan was committed
    },
    { retry: opts.retry, onRetry: opts.onRetry },
  )
  if (!done) return null
  const { inputs, outputs, replace } = done.plan
  return {
    rewrittenFiles: inputs.length,
    addedFiles: outputs.length,
    bytesCompacted: inputs.reduce((n, x) => n + Number(x.entry.dataFile.fileSizeInBytes), 0),
    snapshotId: replace.snapshotId,
    table: done.table,
  }
}
