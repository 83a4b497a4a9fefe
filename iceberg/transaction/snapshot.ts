// Building the snapshot of a fast append (spec "Snapshots", "Snapshot Row IDs", Appendix F summary
// fields) and the REST-vocabulary changes that commit it. A fast append adds new manifest(s) and
// carries the parent's manifests over unchanged.
//
// The order a writer follows:
//   const plan = planSnapshot(base)                                   // id, sequence number, row ids
//   const { manifest } = await writeManifest({ snapshotId: plan.snapshotId, ... })
//   const list = await writeManifestList({ ...plan fields, manifests: [manifest, ...parentManifests] })
//   const snapshot = appendSnapshot(plan, { manifestList, summary: appendSummary(parent, files, props), addedRows: list.addedRows })
//   const { updates, requirements } = commitChanges(base, snapshot, plan.branch)
// On CommitConflict, start again from planSnapshot on the fresh base (new sequence number and row ids).

import { currentSchema, currentSnapshot, type Snapshot, type SnapshotSummary, type TableMetadata } from '../spec/metadata.ts'
import type { PartitionRecord } from '../spec/partition.ts'
import type { TableRequirement, TableUpdate } from '../spec/updates.ts'

export interface SnapshotPlan {
  snapshotId: bigint
  parentSnapshotId: bigint | null
  sequenceNumber: bigint
  timestampMs: number
  schemaId: number
  formatVersion: 2 | 3
  branch: string
  /** v3: the table's next-row-id, this snapshot's first-row-id. */
  firstRowId?: bigint
}

/** A random positive 63-bit id (never 0), as Java's and PyIceberg's snapshot ids are. */
export function newSnapshotId(): bigint {
  for (;;) {
    const bytes = crypto.getRandomValues(new Uint8Array(8))
    let v = 0n
    for (const b of bytes) v = (v << 8n) | BigInt(b)
    v = BigInt.asUintN(63, v)
    if (v !== 0n) return v
  }
}

export interface PlanOptions {
  branch?: string
  snapshotId?: bigint
  timestampMs?: number
}

/** The table's format version, when we write it (v2 and v3); v1 tables are read only. */
export function writableFormat(meta: TableMetadata): 2 | 3 {
  const v = meta['format-version']
  if (v !== 2 && v !== 3) throw new Error(`writing to format-version ${v} tables is not supported`)
  return v
}

/** Fixes what a new snapshot on `base` will be: id, parent, sequence number, time and (v3) first row id. */
export function planSnapshot(base: TableMetadata, options: PlanOptions = {}): SnapshotPlan {
  const version = writableFormat(base)
  const branch = options.branch ?? 'main'
  const parent = currentSnapshot(base, branch)
  let snapshotId = options.snapshotId ?? newSnapshotId()
  while (base.snapshots.some((s) => s['snapshot-id'] === snapshotId)) snapshotId = newSnapshotId()
  const plan: SnapshotPlan = {
    snapshotId,
    parentSnapshotId: parent ? parent['snapshot-id'] : null,
    sequenceNumber: base['last-sequence-number'] + 1n,
    // Never before the parent: snapshot-log must stay ordered.
    timestampMs: Math.max(options.timestampMs ?? Date.now(), parent?.['timestamp-ms'] ?? 0),
    schemaId: currentSchema(base)['schema-id'],
    formatVersion: version,
    branch,
  }
  if (version === 3) plan.firstRowId = base['next-row-id'] ?? 0n
  return plan
}

/** Where a commit's metadata files go: `write.metadata.path` or `<location>/metadata`. */
function metadataDir(base: TableMetadata): string {
  return (base.properties['write.metadata.path'] ?? `${base.location}/metadata`).replace(/\/+$/, '')
}

/** Java's and PyIceberg's manifest-list name: `snap-<snapshot id>-<attempt>-<commit uuid>.avro`. */
export function manifestListLocation(base: TableMetadata, snapshotId: bigint, commitUuid: string, attempt = 0): string {
  return `${metadataDir(base)}/snap-${snapshotId}-${attempt}-${commitUuid}.avro`
}

/** Java's and PyIceberg's manifest name: `<commit uuid>-m<n>.avro`. */
export function manifestLocation(base: TableMetadata, commitUuid: string, n: number): string {
  return `${metadataDir(base)}/${commitUuid}-m${n}.avro`
}

/** What the summary needs of each added file (a DataFile or DataFileMetrics plus partition fits). */
export interface AddedFile {
  content?: 0 | 1 | 2
  recordCount: number | bigint
  fileSizeInBytes: number | bigint
  partition?: PartitionRecord
}

function partitionKey(p: PartitionRecord | undefined): string {
  if (!p) return ''
  return Object.entries(p)
    .map(([k, v]) => `${k}=${v instanceof Uint8Array ? Array.from(v).join(',') : typeof v === 'bigint' ? `${v}n` : JSON.stringify(v)}`)
    .join('/')
}

const TOTALS = ['total-records', 'total-files-size', 'total-data-files', 'total-delete-files', 'total-position-deletes', 'total-equality-deletes'] as const

/**
 * The summary of an append (Java's SnapshotSummary): added-* counts, changed-partition-count and
 * the totals carried from the parent. Like Java, a total the parent's summary lacks is left out
 * (it cannot be known without reading every manifest). Caller properties (e.g. a sink id and its
 * batch ids) are added; they cannot override the standard keys.
 */
export function appendSummary(parent: Snapshot | undefined, files: AddedFile[], properties: Record<string, string> = {}): SnapshotSummary {
  if (files.some((f) => (f.content ?? 0) !== 0)) throw new Error('an append adds data files only')
  const records = files.reduce((n, f) => n + BigInt(f.recordCount), 0n)
  const size = files.reduce((n, f) => n + BigInt(f.fileSizeInBytes), 0n)
  const partitions = new Set(files.map((f) => partitionKey(f.partition)))
  const added: Record<(typeof TOTALS)[number], bigint> = {
    'total-records': records,
    'total-files-size': size,
    'total-data-files': BigInt(files.length),
    'total-delete-files': 0n,
    'total-position-deletes': 0n,
    'total-equality-deletes': 0n,
  }
  const summary: SnapshotSummary = { operation: 'append' }
  for (const [k, v] of Object.entries(properties)) summary[k] = v
  summary['added-data-files'] = String(files.length)
  summary['added-records'] = String(records)
  summary['added-files-size'] = String(size)
  summary['changed-partition-count'] = String(partitions.size)
  for (const key of TOTALS) {
    const previous = parent ? parent.summary[key] : '0'
    if (previous === undefined || !/^\d+$/.test(previous)) continue
    summary[key] = String(BigInt(previous) + added[key])
  }
  summary.operation = 'append'
  return summary
}

export interface SnapshotContents {
  manifestList: string
  summary: SnapshotSummary
  /** v3: WrittenManifestList.addedRows (rows the list assigned ids to). */
  addedRows?: bigint
}

/** The snapshot object for table metadata, fields in the spec's order. */
export function appendSnapshot(plan: SnapshotPlan, contents: SnapshotContents): Snapshot {
  const s: Record<string, unknown> = { 'snapshot-id': plan.snapshotId }
  if (plan.parentSnapshotId !== null) s['parent-snapshot-id'] = plan.parentSnapshotId
  s['sequence-number'] = plan.sequenceNumber
  s['timestamp-ms'] = plan.timestampMs
  s['manifest-list'] = contents.manifestList
  s.summary = contents.summary
  s['schema-id'] = plan.schemaId
  if (plan.formatVersion === 3) {
    if (plan.firstRowId === undefined || contents.addedRows === undefined) throw new Error('a v3 snapshot needs first-row-id and added-rows')
    s['first-row-id'] = plan.firstRowId
    s['added-rows'] = contents.addedRows
  }
  return s as Snapshot
}

/**
 * The REST-vocabulary commit of a new snapshot on `branch`: add it, move the branch, and require
 * that the table is the same one and the branch has not moved since `base` was loaded.
 */
export function commitChanges(base: TableMetadata, snapshot: Snapshot, branch = 'main'): { requirements: TableRequirement[]; updates: TableUpdate[] } {
  return {
    requirements: [
      { type: 'assert-table-uuid', uuid: base['table-uuid'] },
      { type: 'assert-ref-snapshot-id', ref: branch, 'snapshot-id': snapshot['parent-snapshot-id'] ?? null },
    ],
    updates: [
      { action: 'add-snapshot', snapshot },
      { action: 'set-snapshot-ref', 'ref-name': branch, type: 'branch', 'snapshot-id': snapshot['snapshot-id'] },
    ],
  }
}
