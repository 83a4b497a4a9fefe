// Writing manifest lists (spec "Manifest Lists"): one Avro file per snapshot naming its manifests, with
// per-manifest counts and partition summaries. Writing one is where the snapshot's sequence number
// reaches new manifests and, in v3, where data manifests get their first_row_id. read-list.ts reads them.

import type { AvroCodec } from '../avro/container.ts'
import { writeAvroFile } from '../avro/write-container.ts'
import type { ManifestFile } from './read-list.ts'
import { manifestListSchema } from './schemas.ts'

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
