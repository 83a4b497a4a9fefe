// Compaction (bin-packing): per partition, the live data files below the target size are merged into
// as few files as fit the target and committed as one `replace` snapshot that changes no row.
//
// Files are merged at the Parquet level (parquet/concat-files.ts: column chunks copied byte for byte, a
// new footer), so no value is ever decoded; only files with identical Parquet schemas and key-value
// metadata go into one output. The merged file's manifest metrics come from the inputs' entries
// (merge-metrics.ts). v3 tables keep row lineage exact: the merged file carries each row's
// `_row_id` and `_last_updated_sequence_number` explicitly.
//
// Commit order survives a compaction. A file's data sequence number says which commit its rows came
// from, and readers order rows by it (dedupe: "a tie goes to the later commit"). A merged file keeps
// the data sequence number of its oldest input (written explicitly: replace.ts), its inputs are
// concatenated in sequence-number order, and it only spans a run of sequence numbers that no other
// file of the partition falls into: the walk below closes the open output at every file it leaves out
// (too big, not Parquet, another Parquet schema, unmergeable), and an output starting at a sequence
// number another file also holds stays within that one number. So for rows of two different commits,
// "which is later" reads the same before and after: by sequence number between files, by position
// within a merged file. (Per partition: dedupe's ties are within one, as a keyed table is
// unpartitioned.) Java's RewriteDataFiles stamps the starting snapshot's sequence number on every
// output instead (at least its newest input's), which keeps equality deletes committed during the
// rewrite applying, but puts the merged old rows after rows committed since; the oldest input's
// number would put the merged newer rows before those, which is why a run never spans another file.
//
// Delete files: a partition a live delete file may apply to (its own, or every partition for one in an
// unpartitioned spec, which applies globally) is left alone, and `validate` re-checks that on every
// base, so no delete committed meanwhile is moved or detached. Any delete committed later gets a
// sequence number above every existing one, so it still applies to a merged file's older number.
//
// Also left alone: non-Parquet files, files at or over the target, v3 files without a first_row_id
// (upgraded tables), files the concatenation refuses.
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
import { partitionKey, prepareReplace, type PreparedReplace } from '../transaction/replace.ts'
import { dataSequenceNumber, readLiveFiles, type LiveEntry, type TableFiles } from '../read/live-files.ts'
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
  /** The oldest input's: the merged rows keep their place in commit order. */
  dataSequenceNumber: bigint
}

const dirOf = (path: string) => path.slice(0, path.lastIndexOf('/'))

interface PartitionFiles {
  /** Every live data file of the partition, by data sequence number (files that may merge first at a tie). */
  files: LiveEntry[]
  /** Those that may merge, by their manifest entries (size, format, row ids). */
  mergeable: Set<LiveEntry>
}

/** The partitions a live delete file may apply to (by partitionKey); null when one in an unpartitioned spec applies to all. */
function deleteReach(table: LoadedTable, files: TableFiles): Set<string> | null {
  const reach = new Set<string>()
  for (const x of files.deletes) {
    const spec = table.metadata['partition-specs'].find((s) => s['spec-id'] === x.manifest.partitionSpecId)
    if (!spec || spec.fields.length === 0) return null
    reach.add(partitionKey(x.manifest.partitionSpecId, x.entry.dataFile.partition))
  }
  return reach
}

/** The partitions worth compacting (at least `minInputs` files that may merge), each with all its live data files in commit order. */
function candidates(table: LoadedTable, files: TableFiles, target: number, minInputs: number): PartitionFiles[] {
  const v3 = table.metadata['format-version'] === 3
  const withDeletes = deleteReach(table, files)
  if (withDeletes === null) return []
  const groups = new Map<string, PartitionFiles>()
  for (const x of files.data) {
    const f = x.entry.dataFile
    const key = partitionKey(x.manifest.partitionSpecId, f.partition)
    if (withDeletes.has(key)) continue
    const group = groups.get(key) ?? { files: [], mergeable: new Set() }
    groups.set(key, group)
    group.files.push(x)
    if ((f.fileFormat ?? 'PARQUET').toUpperCase() !== 'PARQUET' || (f.content ?? 0) !== 0) continue
    if (Number(f.fileSizeInBytes) >= target) continue
    if (v3 && (f.firstRowId === null || f.firstRowId === undefined)) continue
    group.mergeable.add(x)
  }
  const order = (g: PartitionFiles) => (a: LiveEntry, b: LiveEntry) => {
    const sa = dataSequenceNumber(a)
    const sb = dataSequenceNumber(b)
    if (sa !== sb) return sa < sb ? -1 : 1
    return Number(g.mergeable.has(b)) - Number(g.mergeable.has(a))
  }
  return [...groups.values()].filter((g) => g.mergeable.size >= minInputs).map((g) => ({ ...g, files: g.files.sort(order(g)) }))
}

/**
 * Walks one partition's files in commit order, merging runs of mergeable files into outputs (see the
 * header: no other file's sequence number falls inside an output's run); returns the outputs.
 */
async function compactPartition(
  table: LoadedTable,
  partition: PartitionFiles,
  target: number,
  run: string,
  counter: { n: number },
  written: string[],
): Promise<Output[]> {
  const v3 = table.metadata['format-version'] === 3
  const types = primitiveTypes([currentSchema(table.metadata), ...table.metadata.schemas])
  const outputs: Output[] = []
  type Bin = { key: string; first: bigint; last: bigint; pointOnly: boolean; size: number; inputs: Array<ConcatInput & { live: LiveEntry }> }
  let open: Bin | null = null
  // The highest sequence number held by a file outside the open output (left out, or in an earlier output).
  let claimed = -1n
  const claim = (seq: bigint) => {
    if (seq > claimed) claimed = seq
  }

  const close = async () => {
    const bin = open
    open = null
    if (!bin) return
    claim(bin.last)
    if (bin.inputs.length < 2) return
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
      dataSequenceNumber: bin.first,
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

  for (const live of partition.files) {
    const f = live.entry.dataFile
    const seq = dataSequenceNumber(live)
    if (!partition.mergeable.has(live)) {
      await close()
      claim(seq)
      continue
    }
    const bytes = await table.io.read(f.filePath)
    let key: string
    let footer: ReturnType<typeof readFooter>
    try {
      if (bytes.length !== Number(f.fileSizeInBytes)) throw new NotMergeable('size differs from the manifest')
      footer = readFooter(bytes)
      key = mergeKey(footer, v3)
    } catch (err) {
      if (!(err instanceof NotMergeable)) throw err
      await close()
      claim(seq)
      continue
    }
    const size = Number(f.fileSizeInBytes)
    const bin = open as Bin | null
    if (bin && (bin.key !== key || bin.size + size > target || (bin.pointOnly && seq > bin.first))) await close()
    // An output starting at a number another file holds must not reach past it (the header's rule).
    open ??= { key, first: seq, last: seq, pointOnly: claimed === seq, size: 0, inputs: [] }
    open.inputs.push({ bytes, footer, live, lineage: v3 ? { firstRowId: f.firstRowId!, sequenceNumber: seq } : undefined })
    open.size += size
    open.last = seq
  }
  await close()
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
          for (const partition of groups) outputs.push(...(await compactPartition(base, partition, target, run, counter, written)))
        } catch (err) {
          await deleteQuietly(base, written)
          throw err
        }
        if (outputs.length === 0) return null
        const inputs = outputs.flatMap((o) => o.inputs)
        const touched = new Set(inputs.map((x) => partitionKey(x.manifest.partitionSpecId, x.entry.dataFile.partition)))
        const replace = await prepareReplace(base, {
          deleted: new Set(inputs.map((x) => x.entry.dataFile.filePath)),
          added: outputs.map(({ specId, dataFile, dataSequenceNumber }) => ({ specId, dataFile, dataSequenceNumber })),
          written,
          validate: (now, fresh) => {
            const reach = deleteReach(fresh, now)
            if (reach === null || [...touched].some((key) => reach.has(key))) throw new PlanStale('a delete file now applies to a partition being compacted')
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
