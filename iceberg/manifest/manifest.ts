// Manifest files (spec "Manifests"): Avro files of manifest_entry records for one partition spec.
// Written here for format v2 and v3; read for v1–v3 from any writer in read-manifest.ts.
//
// Sequence-number inheritance: an ADDED entry is written with null snapshot/sequence numbers
// allowed; readers take them from the manifest list (`inheritFromManifest`). A v3 data file's
// first_row_id is written null and inherited the same way. So a manifest written once survives
// commit retries unchanged — only the manifest list is rewritten.

import type { AvroCodec } from '../avro/container.ts'
import { writeAvroFile } from '../avro/write-container.ts'
import { compareValues, toSingleValueBytes } from '../spec/bounds.ts'
import { stringifyLossless } from '../spec/json.ts'
import { decimalRequiredBytes } from '../spec/decimal.ts'
import { manifestEntrySchema } from './schemas.ts'
import { partitionType, type PartitionSpec, type PartitionRecord } from '../spec/partition.ts'
import { minBigEndian } from '../spec/transforms.ts'
import { parsePrimitive, type NestedField, type PrimitiveTypeName, type Schema, type Value } from '../spec/types.ts'
import { ADDED, DELETED, EXISTING, type Count, type DataFile, type ManifestEntry } from './read-manifest.ts'
import type { FieldSummary, ManifestFile } from './read-list.ts'

// The manifest room's door for the writing side: the reading side too (read-manifest.ts, read-list.ts),
// which code that must not carry the writers (iceberg/read/) imports directly.
export { ADDED, DELETED, EXISTING, inheritFromManifest, readManifest, type DataFile, type ManifestEntry } from './read-manifest.ts'
export { hasLiveFiles, readManifestList, type ManifestFile } from './read-list.ts'
export { writeManifestList } from './list.ts'

class ManifestError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ManifestError'
  }
}

// ---------- writing ----------

export interface ManifestInput {
  formatVersion: 2 | 3
  /** The table schema the files were written with (stored in the header; types the partition). */
  schema: Schema
  spec: PartitionSpec
  /** The snapshot this manifest is written for (the manifest list's added_snapshot_id). */
  snapshotId: bigint
  /** Where the manifest will be stored; recorded in the returned ManifestFile. */
  manifestPath: string
  /** Entries; a bare `{ dataFile }` is an ADDED entry with inherited ids and sequence numbers. */
  entries: Array<Partial<ManifestEntry> & { dataFile: DataFile }>
  content?: 'data' | 'deletes'
  codec?: AvroCodec
}

export interface WrittenManifest {
  bytes: Uint8Array
  /** Its manifest-list entry; sequence numbers and first_row_id are assigned by writeManifestList. */
  manifest: ManifestFile
}

const countMap = (m: Map<number, Count> | null | undefined) =>
  m ? [...m.entries()].sort((a, b) => a[0] - b[0]).map(([key, value]) => ({ key, value: BigInt(value) })) : null
const boundMap = (m: Map<number, Uint8Array> | null | undefined) =>
  m ? [...m.entries()].sort((a, b) => a[0] - b[0]).map(([key, value]) => ({ key, value })) : null
const optBig = (v: Count | null | undefined) => (v === null || v === undefined ? null : BigInt(v))

/** A decimal's unscaled value as the sign-extended big-endian bytes of a fixed of `size`. */
function decimalFixed(unscaled: bigint, size: number): Uint8Array {
  const min = minBigEndian(unscaled)
  if (min.length > size) throw new ManifestError(`decimal ${unscaled} does not fit ${size} bytes`)
  const out = new Uint8Array(size).fill(unscaled < 0n ? 0xff : 0)
  out.set(min, size - min.length)
  return out
}

function partitionAvroValue(type: PrimitiveTypeName, v: Value): unknown {
  if (v === null || v === undefined) return null
  const p = parsePrimitive(type)
  if (p.kind === 'decimal') {
    return decimalFixed(BigInt(v as bigint), decimalRequiredBytes(p.precision))
  }
  return v
}

function dataFileRecord(f: DataFile, pfields: NestedField[], formatVersion: 2 | 3): Record<string, unknown> {
  const partition: Record<string, unknown> = {}
  for (const pf of pfields) partition[pf.name] = partitionAvroValue(pf.type as PrimitiveTypeName, f.partition[pf.name] ?? null)
  const r: Record<string, unknown> = {
    content: f.content ?? 0,
    file_path: f.filePath,
    file_format: f.fileFormat ?? 'PARQUET',
    partition,
    record_count: BigInt(f.recordCount),
    file_size_in_bytes: BigInt(f.fileSizeInBytes),
    column_sizes: countMap(f.columnSizes),
    value_counts: countMap(f.valueCounts),
    null_value_counts: countMap(f.nullValueCounts),
    nan_value_counts: countMap(f.nanValueCounts),
    lower_bounds: boundMap(f.lowerBounds),
    upper_bounds: boundMap(f.upperBounds),
    key_metadata: f.keyMetadata ?? null,
    split_offsets: f.splitOffsets ? f.splitOffsets.map((x) => BigInt(x)) : null,
    equality_ids: f.equalityIds ?? null,
    sort_order_id: f.sortOrderId ?? null,
    referenced_data_file: f.referencedDataFile ?? null,
  }
  if (formatVersion >= 3) {
    r.first_row_id = f.firstRowId ?? null
    r.content_offset = optBig(f.contentOffset)
    r.content_size_in_bytes = optBig(f.contentSizeInBytes)
  }
  return r
}

/** Per partition field: nulls, NaNs and the min/max of the other values (the manifest list's field_summary). */
function partitionSummaries(pfields: NestedField[], records: PartitionRecord[]): FieldSummary[] {
  return pfields.map((pf) => {
    let containsNull = false
    let containsNan = false
    let min: Value = null
    let max: Value = null
    for (const rec of records) {
      const v = rec[pf.name] ?? null
      if (v === null) containsNull = true
      else if (typeof v === 'number' && Number.isNaN(v)) containsNan = true
      else {
        if (min === null || compareValues(v, min) < 0) min = v
        if (max === null || compareValues(v, max) > 0) max = v
      }
    }
    const type = parsePrimitive(pf.type as PrimitiveTypeName)
    return {
      containsNull,
      containsNan,
      lowerBound: min === null ? null : toSingleValueBytes(type, min),
      upperBound: max === null ? null : toSingleValueBytes(type, max),
    }
  })
}

/** Writes a manifest file; returns its bytes and its manifest-list entry. */
export async function writeManifest(input: ManifestInput): Promise<WrittenManifest> {
  const { formatVersion, schema, spec, snapshotId } = input
  const content = input.content ?? 'data'
  const pfields = partitionType(spec, schema)
  const avroSchema = manifestEntrySchema(formatVersion, pfields)
  let added = 0,
    existing = 0,
    deleted = 0
  let addedRows = 0n,
    existingRows = 0n,
    deletedRows = 0n
  let minSeq: bigint | null = null
  const records = input.entries.map((e, i) => {
    const status = e.status ?? ADDED
    const seq = e.sequenceNumber ?? null
    const fileSeq = e.fileSequenceNumber ?? null
    if (status !== ADDED && (seq === null || fileSeq === null)) {
      throw new ManifestError(`entry ${i} (${e.dataFile.filePath}): existing and deleted entries must carry their sequence numbers`)
    }
    if (content === 'data' && (e.dataFile.content ?? 0) !== 0) throw new ManifestError(`entry ${i}: a data manifest holds only data files`)
    const rows = BigInt(e.dataFile.recordCount)
    if (status === ADDED) {
      added++
      addedRows += rows
    } else if (status === EXISTING) {
      existing++
      existingRows += rows
    } else {
      deleted++
      deletedRows += rows
    }
    if (status !== DELETED && seq !== null && (minSeq === null || seq < minSeq)) minSeq = seq
    return {
      status,
      snapshot_id: e.snapshotId === undefined ? snapshotId : e.snapshotId,
      sequence_number: seq,
      file_sequence_number: fileSeq,
      data_file: dataFileRecord(e.dataFile, pfields, formatVersion),
    }
  })
  const bytes = await writeAvroFile(records, {
    schemaJson: JSON.stringify(avroSchema),
    codec: input.codec,
    metadata: {
      schema: stringifyLossless(schema),
      'schema-id': String(schema['schema-id']),
      'partition-spec': JSON.stringify(spec.fields),
      'partition-spec-id': String(spec['spec-id']),
      'format-version': String(formatVersion),
      content,
    },
  })
  const manifest: ManifestFile = {
    manifestPath: input.manifestPath,
    manifestLength: BigInt(bytes.length),
    partitionSpecId: spec['spec-id'],
    content: content === 'data' ? 0 : 1,
    sequenceNumber: null,
    minSequenceNumber: minSeq,
    addedSnapshotId: snapshotId,
    addedFilesCount: added,
    existingFilesCount: existing,
    deletedFilesCount: deleted,
    addedRowsCount: addedRows,
    existingRowsCount: existingRows,
    deletedRowsCount: deletedRows,
    partitions: partitionSummaries(
      pfields,
      input.entries.map((e) => e.dataFile.partition),
    ),
    keyMetadata: null,
    firstRowId: null,
  }
  return { bytes, manifest }
}
