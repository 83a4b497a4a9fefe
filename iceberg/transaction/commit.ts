// Table changes with bounded retries: a CommitConflict re-applies the change on a freshly loaded
// base (up to 5 attempts, 0.5–8 s jittered backoff); CommitStateUnknown goes to the caller, who
// must reload and look for its own snapshot before anything else.
import { CommitConflict, type Catalog, type LoadedTable } from '../catalog/index.ts'
import { hasLiveFiles, readManifestList, writeManifest, writeManifestList, type DataFile, type ManifestFile } from '../manifest/manifest.ts'
import { currentSchema, currentSnapshot, defaultSpec, type TableMetadata } from '../spec/metadata.ts'
import { appendSnapshot, appendSummary, commitChanges, manifestListLocation, manifestLocation, newSnapshotId, planSnapshot } from './snapshot.ts'
import type { NestedField } from '../spec/types.ts'
import type { TableRequirement, TableUpdate } from '../spec/updates.ts'

export interface RetryPolicy {
  attempts: number
  minBackoffMs: number
  maxBackoffMs: number
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 5, minBackoffMs: 500, maxBackoffMs: 8000 }

export interface Change {
  requirements: TableRequirement[]
  updates: TableUpdate[]
}

/** Thrown by a `build` that sees, on a fresh base, that the change must not be made at all. */
export class CommitAbandoned extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'CommitAbandoned'
  }
}

function backoff(policy: RetryPolicy, attempt: number): Promise<void> {
  const ceiling = Math.min(policy.maxBackoffMs, policy.minBackoffMs * 2 ** attempt)
  const ms = policy.minBackoffMs + Math.random() * Math.max(0, ceiling - policy.minBackoffMs)
  return new Promise((r) => setTimeout(r, ms))
}

/** Builds a change on `table` and commits it; on conflict reloads and builds again. */
export async function commitWithRetry(
  catalog: Catalog,
  table: LoadedTable,
  build: (base: LoadedTable, attempt: number) => Promise<Change>,
  policy: RetryPolicy = DEFAULT_RETRY,
): Promise<LoadedTable> {
  let base = table
  for (let attempt = 0; ; attempt++) {
    const change = await build(base, attempt)
    try {
      return await catalog.commitTable(base, change.requirements, change.updates)
    } catch (err) {
      if (!(err instanceof CommitConflict) || attempt + 1 >= policy.attempts) throw err
      await backoff(policy, attempt)
      base = await catalog.loadTable(table.identifier)
    }
  }
}

export interface AppendOptions {
  /** Extra snapshot summary properties (e.g. lakehousebox.sink.*). */
  properties?: Record<string, string>
  /** Fixed across retries, so an unknown outcome can be resolved by looking for it. */
  snapshotId?: bigint
  /** Names this commit's metadata files (`<uuid>-m<n>.avro`, `snap-…-<uuid>.avro`); random by default. */
  commitUuid?: string
  retry?: RetryPolicy
  /** Called with each fresh base after a conflict; throw CommitAbandoned to commit nothing. */
  recheck?: (base: LoadedTable) => void | Promise<void>
}

export interface AppendResult {
  table: LoadedTable
  snapshotId: bigint
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
export const fastAppendManifests: AppendManifests = async ({ added, parent }) => [added, ...parent]

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
export async function appendWith(catalog: Catalog, table: LoadedTable, files: DataFile[], opts: AppendOptions, manifestsFor: AppendManifests): Promise<AppendResult> {
  const snapshotId = opts.snapshotId ?? newSnapshotId()
  const commitUuid = opts.commitUuid ?? crypto.randomUUID()
  const meta = table.metadata
  const formatVersion = formatOf(meta)
  const manifestPath = manifestLocation(meta, commitUuid, 0)
  const written = await writeManifest({ formatVersion, schema: currentSchema(meta), spec: defaultSpec(meta), snapshotId, manifestPath, entries: files.map((dataFile) => ({ dataFile })) })
  await table.io.write(manifestPath, written.bytes, 'application/octet-stream')

  const committed = await commitWithRetry(
    catalog,
    table,
    async (base, attempt) => {
      if (attempt > 0 && opts.recheck) await opts.recheck(base)
      const plan = planSnapshot(base.metadata, { snapshotId })
      const parent = currentSnapshot(base.metadata)
      const previous = parent?.['manifest-list'] ? (await readManifestList(await base.io.read(parent['manifest-list']))).manifests.filter(hasLiveFiles) : []
      const manifests = await manifestsFor({ base, snapshotId, added: written.manifest, files, parent: previous })
      const list = await writeManifestList({
        formatVersion: formatOf(base.metadata),
        snapshotId,
        parentSnapshotId: plan.parentSnapshotId,
        sequenceNumber: plan.sequenceNumber,
        firstRowId: plan.firstRowId,
        manifests,
      })
      const listPath = manifestListLocation(base.metadata, snapshotId, commitUuid, attempt)
      await base.io.write(listPath, list.bytes, 'application/octet-stream')
      const snapshot = appendSnapshot(plan, { manifestList: listPath, summary: appendSummary(parent, files, opts.properties), addedRows: list.addedRows })
      return commitChanges(base.metadata, snapshot, plan.branch)
    },
    opts.retry,
  )
  return { table: committed, snapshotId }
}

function formatOf(meta: TableMetadata): 2 | 3 {
  const v = meta['format-version']
  if (v !== 2 && v !== 3) throw new Error(`writing to format-version ${v} tables is not supported`)
  return v
}

/** Adds optional columns (fresh ids after last-column-id) as a new current schema. */
export function addColumnsChange(base: TableMetadata, columns: Array<Omit<NestedField, 'id' | 'required'>>): Change {
  const schema = currentSchema(base)
  let lastId = base['last-column-id']
  const fields = [...schema.fields, ...columns.map((c) => ({ ...c, id: ++lastId, required: false }))]
  const schemaId = Math.max(...base.schemas.map((s) => s['schema-id'])) + 1
  return {
    requirements: [
      { type: 'assert-table-uuid', uuid: base['table-uuid'] },
      { type: 'assert-current-schema-id', 'current-schema-id': schema['schema-id'] },
      { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': base['last-column-id'] },
    ],
    updates: [
      { action: 'add-schema', schema: { ...schema, 'schema-id': schemaId, fields }, 'last-column-id': lastId },
      { action: 'set-current-schema', 'schema-id': -1 },
    ],
  }
}

/** Sets column docs (by top-level name) as a new current schema; the table doc is the `comment` property. */
export function documentChange(base: TableMetadata, docs: { table?: string; columns?: Record<string, string> }): Change {
  const schema = currentSchema(base)
  const updates: TableUpdate[] = []
  const requirements: TableRequirement[] = [{ type: 'assert-table-uuid', uuid: base['table-uuid'] }]
  const columns = docs.columns ?? {}
  if (Object.keys(columns).length > 0) {
    const fields = schema.fields.map((f) => (f.name in columns ? { ...f, doc: columns[f.name] } : f))
    const schemaId = Math.max(...base.schemas.map((s) => s['schema-id'])) + 1
    requirements.push({ type: 'assert-current-schema-id', 'current-schema-id': schema['schema-id'] })
    updates.push({ action: 'add-schema', schema: { ...schema, 'schema-id': schemaId, fields }, 'last-column-id': base['last-column-id'] }, { action: 'set-current-schema', 'schema-id': -1 })
  }
  if (docs.table !== undefined) updates.push({ action: 'set-properties', updates: { comment: docs.table } })
  return { requirements, updates }
}

export function setPropertiesChange(base: TableMetadata, properties: Record<string, string>): Change {
  return { requirements: [{ type: 'assert-table-uuid', uuid: base['table-uuid'] }], updates: [{ action: 'set-properties', updates: properties }] }
}
