// A `replace` commit (Java's RewriteFiles, PyIceberg's replace): some live data files are removed and
// files holding the same rows are added, in one snapshot that changes no row.
//
// Manifests: each manifest that holds a removed file is rewritten with that file as DELETED (its
// data and file sequence numbers kept) and its other live files as EXISTING (snapshot id, sequence
// numbers and v3 first_row_id kept); manifests without a removed file are carried over unchanged; the
// added files go to new manifest(s), one per partition spec, as ADDED entries.
//
// Data sequence numbers (spec "Sequence Number Inheritance": "a new file with data that logically
// belongs to an older sequence number ... must be provided explicitly and not inherited"): an added
// file given `dataSequenceNumber` (a rewrite of older rows) is written with that explicit data
// sequence number and a null file sequence number, which the new snapshot assigns — Java's
// RewriteFiles.dataSequenceNumber(), written by ManifestWriter.add(file, dataSequenceNumber). Other
// added files inherit the new snapshot's sequence number. Keeping the source's number keeps "which
// commit a row came from" through a rewrite: dedupe's tie-break reads it.
//
// Either way it is only exact when no delete file applies to the rewritten files (a position delete
// names the old path; an equality delete's reach depends on the data sequence number), so callers
// must not rewrite files in a partition that a live delete file may apply to; `validate` re-checks
// that on every base.
//
// Retries (transact.ts): the added files' manifests are written once (prepareReplace); after a
// conflict each attempt re-reads the fresh base, checks that every removed file is still live
// (PlanStale if not: plan again), and writes the rewritten manifests and the manifest list for it.

import type { Catalog, LoadedTable } from '../catalog/index.ts'
import { PlanStale, transact, type Change, type RetryPolicy, type TransactOptions } from './transact.ts'
import {
  hasLiveFiles,
  DELETED,
  EXISTING,
  writeManifest,
  writeManifestList,
  type DataFile,
  type ManifestEntry,
  type ManifestFile,
} from '../manifest/manifest.ts'
import { readLiveFiles, type LiveEntry, type ManifestCache, type TableFiles } from '../read/live-files.ts'
import { currentSchema, type Snapshot, type SnapshotSummary, type TableMetadata } from '../spec/metadata.ts'
import type { PartitionRecord } from '../spec/partition.ts'
import { appendSnapshot, commitChanges, manifestListLocation, manifestLocation, newSnapshotId, planSnapshot, writableFormat } from './snapshot.ts'

/** A stable text key of a partition tuple within a spec. */
export function partitionKey(specId: number, p: PartitionRecord): string {
  const value = (v: unknown) => (v instanceof Uint8Array ? `b:${Array.from(v).join(',')}` : typeof v === 'bigint' ? `n:${v}` : JSON.stringify(v))
  return `${specId}|${Object.keys(p)
    .sort()
    .map((k) => `${k}=${value(p[k])}`)
    .join('/')}`
}

export interface ReplaceInput {
  /** Paths of live data files to remove. */
  deleted: Set<string>
  /**
   * The files that replace them, with the partition spec each was written for and, for a rewrite of
   * older rows, the data sequence number to keep (at most the base's last sequence number).
   */
  added: ReplacementFile[]
  /** Called with every base's files before anything is written for it: throw PlanStale to plan again, CommitAbandoned to commit nothing. */
  validate?: (files: TableFiles, base: LoadedTable) => void
  /** `replace` (the default) changes no row; `overwrite` replaces rows (a keyed roll, a dedupe). */
  operation?: 'replace' | 'overwrite'
  /** Extra snapshot summary properties; they cannot override the standard keys. */
  properties?: Record<string, string>
  snapshotId?: bigint
  retry?: RetryPolicy
  onRetry?: TransactOptions['onRetry']
  /** Every metadata file this replace writes is pushed here (for clean-up when it is not committed). */
  written?: string[]
}

export interface ReplacementFile {
  specId: number
  dataFile: DataFile
  /** Written explicitly instead of inherited: the sequence number of the commit the rows came from. */
  dataSequenceNumber?: bigint
}

export interface ReplaceResult {
  table: LoadedTable
  snapshotId: bigint
}

const sum = (files: DataFile[], pick: (f: DataFile) => number | bigint) => files.reduce((n, f) => n + BigInt(pick(f)), 0n)

/** Java's SnapshotSummary for a replace: added/deleted counts and the parent's totals moved by them. */
export function replaceSummary(parent: Snapshot | undefined, added: ReplacementFile[], deleted: LiveEntry[]): SnapshotSummary {
  const a = added.map((x) => x.dataFile)
  const d = deleted.map((x) => x.entry.dataFile)
  const partitions = new Set([
    ...added.map((x) => partitionKey(x.specId, x.dataFile.partition)),
    ...deleted.map((x) => partitionKey(x.manifest.partitionSpecId, x.entry.dataFile.partition)),
  ])
  const summary: SnapshotSummary = {
    operation: 'replace',
    'added-data-files': String(a.length),
    'deleted-data-files': String(d.length),
    'added-records': String(sum(a, (f) => f.recordCount)),
    'deleted-records': String(sum(d, (f) => f.recordCount)),
    'added-files-size': String(sum(a, (f) => f.fileSizeInBytes)),
    'removed-files-size': String(sum(d, (f) => f.fileSizeInBytes)),
    'changed-partition-count': String(partitions.size),
  }
  const change: Record<string, bigint> = {
    'total-records': sum(a, (f) => f.recordCount) - sum(d, (f) => f.recordCount),
    'total-files-size': sum(a, (f) => f.fileSizeInBytes) - sum(d, (f) => f.fileSizeInBytes),
    'total-data-files': BigInt(a.length - d.length),
    'total-delete-files': 0n,
    'total-position-deletes': 0n,
    'total-equality-deletes': 0n,
  }
  for (const [key, delta] of Object.entries(change)) {
    const previous = parent ? parent.summary[key] : '0'
    if (previous === undefined || !/^\d+$/.test(previous)) continue // unknown stays unknown, as in Java
    summary[key] = String(BigInt(previous) + delta)
  }
  return summary
}

function specOf(meta: TableMetadata, specId: number) {
  const spec = meta['partition-specs'].find((s) => s['spec-id'] === specId)
  if (!spec) throw new Error(`partition spec ${specId} is not in the table metadata`)
  return spec
}

/** A replace ready to commit: its added files' manifests are written; `change` builds it on a base. */
export interface PreparedReplace {
  snapshotId: bigint
  /** the metadata files written so far (manifests, manifest lists) */
  written: string[]
  change(base: LoadedTable, attempt: number): Promise<Change>
}

/** Writes the added files' manifests once; the change is built for each base it is tried on. */
export async function prepareReplace(table: LoadedTable, input: ReplaceInput): Promise<PreparedReplace> {
  const snapshotId = input.snapshotId ?? newSnapshotId()
  const commitUuid = crypto.randomUUID()
  const written = input.written ?? []
  const cache: ManifestCache = new Map()
  const rewritten = new Map<string, ManifestFile>() // source manifest path → its rewrite (valid for any base holding it)
  let n = 0

  // The added files' manifests, once: ADDED entries inherit this snapshot's id and file sequence
  // number, and its data sequence number unless they keep an older one.
  const addedManifests: ManifestFile[] = []
  const bySpec = new Map<number, ReplacementFile[]>()
  for (const added of input.added) {
    const kept = added.dataSequenceNumber
    if (kept !== undefined && (kept < 0n || kept > table.metadata['last-sequence-number']))
      throw new RangeError(`${added.dataFile.filePath}: data sequence number ${kept} is not one of a commit of this table`)
    bySpec.set(added.specId, [...(bySpec.get(added.specId) ?? []), added])
  }
  for (const [specId, files] of bySpec) {
    const manifestPath = manifestLocation(table.metadata, commitUuid, n++)
    const m = await writeManifest({
      formatVersion: writableFormat(table.metadata),
      schema: currentSchema(table.metadata),
      spec: specOf(table.metadata, specId),
      snapshotId,
      manifestPath,
      entries: files.map(({ dataFile, dataSequenceNumber }) => ({ dataFile, sequenceNumber: dataSequenceNumber ?? null })),
    })
    written.push(manifestPath)
    await table.io.write(manifestPath, m.bytes, 'application/octet-stream')
    addedManifests.push(m.manifest)
  }

  const change = async (base: LoadedTable, attempt: number): Promise<Change> => {
    const files = await readLiveFiles(base, cache)
    const live = new Set(files.data.map((x) => x.entry.dataFile.filePath))
    const missing = [...input.deleted].filter((p) => !live.has(p))
    if (missing.length) throw new PlanStale(`${missing.length} file(s) to rewrite are no longer live, e.g. ${missing[0]}`)
    input.validate?.(files, base)

    const formatVersion = writableFormat(base.metadata)
    const plan = planSnapshot(base.metadata, { snapshotId })
    const deletedEntries = files.data.filter((x) => input.deleted.has(x.entry.dataFile.filePath))
    const touched = new Set(deletedEntries.map((x) => x.manifest.manifestPath))
    const manifests: ManifestFile[] = [...addedManifests]
    for (const m of files.manifests) {
      if (!touched.has(m.manifestPath)) {
        if (hasLiveFiles(m)) manifests.push(m)
        continue
      }
      let out = rewritten.get(m.manifestPath)
      if (!out) {
        const entries = files.data
          .filter((x) => x.manifest.manifestPath === m.manifestPath)
          .map(
            ({ entry: e }): ManifestEntry => ({
              status: input.deleted.has(e.dataFile.filePath) ? DELETED : EXISTING,
              snapshotId: input.deleted.has(e.dataFile.filePath) ? snapshotId : e.snapshotId,
              sequenceNumber: e.sequenceNumber,
              fileSequenceNumber: e.fileSequenceNumber,
              dataFile: e.dataFile,
            }),
          )
        const manifestPath = manifestLocation(base.metadata, commitUuid, n++)
        const w = await writeManifest({
          formatVersion,
          schema: currentSchema(base.metadata),
          spec: specOf(base.metadata, m.partitionSpecId),
          snapshotId,
          manifestPath,
          entries,
        })
        written.push(manifestPath)
        await base.io.write(manifestPath, w.bytes, 'application/octet-stream')
        rewritten.set(m.manifestPath, (out = w.manifest))
      }
      manifests.push(out)
    }
    const list = await writeManifestList({
      formatVersion,
      snapshotId,
      parentSnapshotId: plan.parentSnapshotId,
      sequenceNumber: plan.sequenceNumber,
      firstRowId: plan.firstRowId,
      manifests,
    })
    const listPath = manifestListLocation(base.metadata, snapshotId, commitUuid, attempt)
    written.push(listPath)
    await base.io.write(listPath, list.bytes, 'application/octet-stream')
    const summary = { ...input.properties, ...replaceSummary(files.snapshot, input.added, deletedEntries), operation: input.operation ?? 'replace' }
    const snapshot = appendSnapshot(plan, { manifestList: listPath, summary, addedRows: list.addedRows })
    return commitChanges(base.metadata, snapshot, plan.branch)
  }
  return { snapshotId, written, change }
}

/**
 * One replace on `table`, retried on conflicts; a stale plan (a file to remove no longer live, or
 * `validate` throwing PlanStale) is the caller's to plan again, so it is thrown here.
 */
export async function replaceDataFiles(catalog: Catalog, table: LoadedTable, input: ReplaceInput): Promise<ReplaceResult> {
  let planned = false
  const done = await transact(
    catalog,
    table,
    {
      plan: async (base) => {
        if (planned) throw new PlanStale('the replace no longer fits the table')
        planned = true
        return prepareReplace(base, input)
      },
      change: (p, base, attempt) => p.change(base, attempt),
      snapshotId: (p) => p.snapshotId,
    },
    { retry: input.retry, onRetry: input.onRetry },
  )
  return { table: done!.table, snapshotId: done!.plan.snapshotId }
}
