// Appends: one new manifest with the data files, the parent's manifests carried over (fast append)
// or merged (merge-append.ts), committed through transact with a fixed snapshot id.
import type { Catalog, LoadedTable } from '../catalog/index.ts'
import { hasLiveFiles, readManifestList, writeManifest, writeManifestList, type DataFile, type ManifestFile } from '../manifest/manifest.ts'
import { currentSchema, currentSnapshot, defaultSpec } from '../spec/metadata.ts'
import {
  appendSnapshot,
  appendSummary,
  commitChanges,
  manifestListLocation,
  manifestLocation,
  newSnapshotId,
  planSnapshot,
  writableFormat,
} from './snapshot.ts'
import { transact, type RetryPolicy, type TransactOptions } from './transact.ts'

export interface AppendOptions {
  /** Extra snapshot summary properties (e.g. lakehousebox.sink.*). */
  properties?: Record<string, string>
  /** Fixed across retries, so an unknown outcome can be resolved by looking for it. */
  snapshotId?: bigint
  /** Names this commit's metadata files (`<uuid>-m<n>.avro`, `snap-…-<uuid>.avro`); random by default. */
  commitUuid?: string
  retry?: RetryPolicy
  onRetry?: TransactOptions['onRetry']
  /**
   * Called with the base of every attempt (the first's too: it may be newer than the table the caller
   * read, after a commit of its own in between); throw CommitAbandoned to commit nothing.
   */
  recheck?: (base: LoadedTable) => void | Promise<void>
  /** The snapshot's time (ms) instead of now, never before its parent's: an import of old data, a retention test. */
  timestampMs?: number
  /**
   * The data files' upload, still in flight: the manifests are written meanwhile, and the commit waits
   * for it (a failed upload commits nothing and is thrown).
   */
  ready?: Promise<unknown>
}

export interface AppendResult {
  table: LoadedTable
  snapshotId: bigint
  /** Set when the commit's answer was lost and the table was found to hold the snapshot. */
  unknownOutcome?: Error
}

/** What an append's manifest list holds besides its own new manifest, decided anew for each base. */
export interface AppendManifestsInput {
  base: LoadedTable
  snapshotId: bigint
  /** The manifest with this append's files (ADDED entries; sequence number assigned by the list). */
  added: ManifestFile
  /** The data files in `added`, so a merge need not read the manifest back. */
  files: DataFile[]
  /** The parent snapshot's manifests that still hold live files, as listed. */
  parent: ManifestFile[]
}

/** Turns the new manifest and the parent's into the new snapshot's manifests (a merge, say). */
export type AppendManifests = (input: AppendManifestsInput) => Promise<ManifestFile[]>

/** A fast append's manifests: the new one first, the parent's carried over unchanged. */
const fastAppendManifests: AppendManifests = async ({ added, parent }) => [added, ...parent]

/**
 * A fast append: one new manifest with the data files, the parent's manifests carried over.
 * The manifest is written once; each attempt writes a manifest list for its base.
 */
export async function fastAppend(catalog: Catalog, table: LoadedTable, files: DataFile[], opts: AppendOptions = {}): Promise<AppendResult> {
  return appendWith(catalog, table, files, opts, fastAppendManifests)
}

/**
 * The append path shared by fastAppend and the merging append (transaction/merge-append.ts): only
 * how the snapshot's manifests are chosen from the new one and the parent's differs.
 */
export async function appendWith(
  catalog: Catalog,
  table: LoadedTable,
  files: DataFile[],
  opts: AppendOptions,
  manifestsFor: AppendManifests,
): Promise<AppendResult> {
  const snapshotId = opts.snapshotId ?? newSnapshotId()
  const commitUuid = opts.commitUuid ?? crypto.randomUUID()
  // The parent's manifest list, read while the manifest is written (a file that never changes).
  const parentLists = new Map<string, Promise<ManifestFile[]>>()
  const parentManifests = (base: LoadedTable): Promise<ManifestFile[]> => {
    const location = currentSnapshot(base.metadata)?.['manifest-list']
    if (!location) return Promise.resolve([])
    let read = parentLists.get(location)
    if (!read) {
      read = base.io.read(location).then(async (bytes) => (await readManifestList(bytes)).manifests.filter(hasLiveFiles))
      read.catch(() => undefined) // awaited by `change`; a plan that fails first leaves it unheard
      parentLists.set(location, read)
    }
    return read
  }
  const done = await transact(
    catalog,
    table,
    {
      // The files' manifest, written once: each attempt writes only a manifest list for its base.
      plan: async (base) => {
        const meta = base.metadata
        const manifestPath = manifestLocation(meta, commitUuid, 0)
        parentManifests(base)
        const written = await writeManifest({
          formatVersion: writableFormat(meta),
          schema: currentSchema(meta),
          spec: defaultSpec(meta),
          snapshotId,
          manifestPath,
          entries: files.map((dataFile) => ({ dataFile })),
        })
        await base.io.write(manifestPath, written.bytes, 'application/octet-stream')
        return written.manifest
      },
      snapshotId: () => snapshotId,
      change: async (added, base, attempt) => {
        await opts.recheck?.(base)
        const plan = planSnapshot(base.metadata, { snapshotId, timestampMs: opts.timestampMs })
        const parent = currentSnapshot(base.metadata)
        const previous = await parentManifests(base)
        const manifests = await manifestsFor({ base, snapshotId, added, files, parent: previous })
        const list = await writeManifestList({
          formatVersion: writableFormat(base.metadata),
          snapshotId,
          parentSnapshotId: plan.parentSnapshotId,
          sequenceNumber: plan.sequenceNumber,
          firstRowId: plan.firstRowId,
          manifests,
        })
        const listPath = manifestListLocation(base.metadata, snapshotId, commitUuid, attempt)
        // The list and the data files are written while the catalog writes its metadata: it waits for them before the commit.
        const ready = Promise.all([base.io.write(listPath, list.bytes, 'application/octet-stream'), opts.ready])
        const snapshot = appendSnapshot(plan, { manifestList: listPath, summary: appendSummary(parent, files, opts.properties), addedRows: list.addedRows })
        return { ...commitChanges(base.metadata, snapshot, plan.branch), ready }
      },
    },
    { retry: opts.retry, onRetry: opts.onRetry },
  )
  return { table: done!.table, snapshotId, unknownOutcome: done!.unknownOutcome }
}
