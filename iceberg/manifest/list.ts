// Manifest lists (spec "Manifest Lists"): one Avro file per snapshot naming its manifests, with
// per-manifest counts and partition summaries. Writing one is where the snapshot's sequence
// number reaches new manifests and, in v3, where data manifests get their first_row_id.

import { readAvroFile, writeAvroFile, type AvroCodec } from '../avro/container.ts'
import { fieldNamesById, manifestListSchema, recordOf } from './schemas.ts'

export interface FieldSummary {
  containsNull: boolean
  containsNan: boolean | null
  lowerBound: Uint8Array | null
  upperBound: Uint8Array | null
}

/** One manifest_file record. Longs are bigint. */
export interface ManifestFile {
  manifestPath: string
  manifestLength: bigint
  partitionSpecId: number
  /** 0 data, 1 deletes */
  content: 0 | 1
  /** Null until the manifest list of the snapshot that adds it assigns one. */
  sequenceNumber: bigint | null
  minSequenceNumber: bigint | null
  addedSnapshotId: bigint
  /** Null only in v1 lists (meaning "unknown, assume non-zero"). */
  addedFilesCount: number | null
  existingFilesCount: number | null
  deletedFilesCount: number | null
  addedRowsCount: bigint | null
  existingRowsCount: bigint | null
  deletedRowsCount: bigint | null
  partitions: FieldSummary[] | null
  keyMetadata: Uint8Array | null
  /** v3: null for delete manifests, and for data manifests until assigned. */
  firstRowId: bigint | null
}

/**
 * Whether a manifest still has live (ADDED or EXISTING) files. One holding only DELETED entries
 * belongs to the snapshot that wrote it; later snapshots drop it, as Java's filter does.
 */
export function hasLiveFiles(m: ManifestFile): boolean {
  return (m.addedFilesCount ?? 1) > 0 || (m.existingFilesCount ?? 1) > 0
}

class ManifestListError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ManifestListError'
  }
}

export interface ManifestListInput {
  formatVersion: 2 | 3
  snapshotId: bigint
  parentSnapshotId: bigint | null
  sequenceNumber: bigint
  /** v3: the snapshot's first-row-id (the table's next-row-id). */
  firstRowId?: bigint
  /** New manifests of this snapshot first or last, as the caller likes; existing ones as read. */
  manifests: ManifestFile[]
  codec?: AvroCodec
}

export interface WrittenManifestList {
  bytes: Uint8Array
  /** The manifests as written (sequence numbers and first_row_id assigned). */
  manifests: ManifestFile[]
  /** v3: rows given ids by this list (the snapshot's `added-rows`); the table's next-row-id grows by it. */
  addedRows: bigint
}

const need = <T>(v: T | null, what: string): T => {
  if (v === null) throw new ManifestListError(`${what} is required in a v2/v3 manifest list`)
  return v
}

/** Writes a manifest list; assigns this snapshot's sequence number (and v3 row ids) to new manifests. */
export async function writeManifestList(input: ManifestListInput): Promise<WrittenManifestList> {
  const { formatVersion, snapshotId, sequenceNumber } = input
  if (formatVersion === 3 && input.firstRowId === undefined) throw new ManifestListError('a v3 manifest list needs the snapshot first-row-id')
  let nextRowId = input.firstRowId ?? 0n
  const manifests = input.manifests.map((m) => {
    const out = { ...m }
    if (out.sequenceNumber === null) {
      // Only a manifest written by this very commit may be unassigned (PyIceberg and Java check the same).
      if (out.addedSnapshotId !== snapshotId)
        throw new ManifestListError(`manifest ${m.manifestPath} from snapshot ${m.addedSnapshotId} has no sequence number`)
      out.sequenceNumber = sequenceNumber
    }
    if (out.minSequenceNumber === null) {
      if (out.addedSnapshotId !== snapshotId)
        throw new ManifestListError(`manifest ${m.manifestPath} from snapshot ${m.addedSnapshotId} has no min sequence number`)
      out.minSequenceNumber = sequenceNumber
    }
    // Spec "First Row ID Assignment": each unassigned data manifest starts where the previous one's
    // added + existing rows end.
    if (formatVersion === 3 && out.content === 0 && out.firstRowId === null) {
      out.firstRowId = nextRowId
      nextRowId += need(out.addedRowsCount, 'added_rows_count') + need(out.existingRowsCount, 'existing_rows_count')
    }
    return out
  })
  const records = manifests.map((m) => {
    const r: Record<string, unknown> = {
      manifest_path: m.manifestPath,
      manifest_length: m.manifestLength,
      partition_spec_id: m.partitionSpecId,
      content: m.content,
      sequence_number: m.sequenceNumber,
      min_sequence_number: m.minSequenceNumber,
      added_snapshot_id: m.addedSnapshotId,
      added_files_count: need(m.addedFilesCount, 'added_files_count'),
      existing_files_count: need(m.existingFilesCount, 'existing_files_count'),
      deleted_files_count: need(m.deletedFilesCount, 'deleted_files_count'),
      added_rows_count: need(m.addedRowsCount, 'added_rows_count'),
      existing_rows_count: need(m.existingRowsCount, 'existing_rows_count'),
      deleted_rows_count: need(m.deletedRowsCount, 'deleted_rows_count'),
      partitions:
        m.partitions?.map((p) => ({
          contains_null: p.containsNull,
          contains_nan: p.containsNan,
          lower_bound: p.lowerBound,
          upper_bound: p.upperBound,
        })) ?? null,
      key_metadata: m.keyMetadata,
    }
    if (formatVersion === 3) r.first_row_id = m.firstRowId
    return r
  })
  const metadata: Record<string, string> = {
    'snapshot-id': String(snapshotId),
    'parent-snapshot-id': input.parentSnapshotId === null ? 'null' : String(input.parentSnapshotId),
    'sequence-number': String(sequenceNumber),
    'format-version': String(formatVersion),
  }
  if (formatVersion === 3) metadata['first-row-id'] = String(input.firstRowId)
  const bytes = await writeAvroFile(records, { schemaJson: JSON.stringify(manifestListSchema(formatVersion)), metadata, codec: input.codec })
  return { bytes, manifests, addedRows: nextRowId - (input.firstRowId ?? 0n) }
}

export interface ReadManifestList {
  /** Header metadata: snapshot-id, parent-snapshot-id, sequence-number, format-version, ... */
  metadata: Record<string, string>
  manifests: ManifestFile[]
}

/** Reads a manifest list of any format version; v1 lists get sequence numbers 0 and content 0 (spec). */
export async function readManifestList(bytes: Uint8Array): Promise<ReadManifestList> {
  const file = await readAvroFile(bytes)
  const names = fieldNamesById(file.schema)
  const summaryNames = (() => {
    const list = recordOf(file.schema, 507)
    const items = list && typeof list === 'object' && !Array.isArray(list) ? (list.items as Parameters<typeof fieldNamesById>[0]) : undefined
    return items ? fieldNamesById(items) : new Map<number, string>()
  })()
  const get = (rec: Record<string, unknown>, id: number, map = names): unknown => {
    const name = map.get(id)
    return name === undefined ? null : (rec[name] ?? null)
  }
  const manifests = file.records.map((r): ManifestFile => {
    const rec = r as Record<string, unknown>
    const partitions = get(rec, 507) as Record<string, unknown>[] | null
    return {
      manifestPath: get(rec, 500) as string,
      manifestLength: get(rec, 501) as bigint,
      partitionSpecId: get(rec, 502) as number,
      content: ((get(rec, 517) as number | null) ?? 0) as 0 | 1,
      sequenceNumber: (get(rec, 515) as bigint | null) ?? 0n,
      minSequenceNumber: (get(rec, 516) as bigint | null) ?? 0n,
      addedSnapshotId: get(rec, 503) as bigint,
      addedFilesCount: get(rec, 504) as number | null,
      existingFilesCount: get(rec, 505) as number | null,
      deletedFilesCount: get(rec, 506) as number | null,
      addedRowsCount: get(rec, 512) as bigint | null,
      existingRowsCount: get(rec, 513) as bigint | null,
      deletedRowsCount: get(rec, 514) as bigint | null,
      partitions:
        partitions?.map((p) => ({
          containsNull: get(p, 509, summaryNames) as boolean,
          containsNan: get(p, 518, summaryNames) as boolean | null,
          lowerBound: get(p, 510, summaryNames) as Uint8Array | null,
          upperBound: get(p, 511, summaryNames) as Uint8Array | null,
        })) ?? null,
      keyMetadata: get(rec, 519) as Uint8Array | null,
      firstRowId: get(rec, 520) as bigint | null,
    }
  })
  return { metadata: file.metadata, manifests }
}
