// Manifest files (spec "Manifests"): Avro files of manifest_entry records for one partition spec.
// Written for format v2 and v3; read for v1–v3 from any writer (columns are found by field id).
//
// Sequence-number inheritance: an ADDED entry is written with null snapshot/sequence numbers
// allowed; readers take them from the manifest list (`inheritFromManifest`). A v3 data file's
// first_row_id is written null and inherited the same way. So a manifest written once survives
// commit retries unchanged — only the manifest list is rewritten.

import { readAvroFile, writeAvroFile, type AvroCodec, type AvroSchema } from '../avro/container.ts'
import { compareValues, toSingleValueBytes } from '../spec/bounds.ts'
import { stringifyLossless } from '../spec/json.ts'
import { decimalRequiredBytes } from '../spec/decimal.ts'
import { fieldNamesById, manifestEntrySchema, recordOf } from './schemas.ts'
import { partitionType, type PartitionField, type PartitionRecord, type PartitionSpec } from '../spec/partition.ts'
import { minBigEndian } from '../spec/transforms.ts'
import { parsePrimitive, type NestedField, type PrimitiveTypeName, type Schema, type Value } from '../spec/types.ts'

export { hasLiveFiles, readManifestList, writeManifestList, type ManifestFile } from './list.ts'
import type { FieldSummary, ManifestFile } from './list.ts'

export const EXISTING = 0
export const ADDED = 1
export const DELETED = 2
type EntryStatus = typeof EXISTING | typeof ADDED | typeof DELETED

type Count = number | bigint

/** A data or delete file as a manifest stores it. Longs read back as bigint. */
export interface DataFile {
  /** 0 data (default), 1 position deletes, 2 equality deletes */
  content?: 0 | 1 | 2
  filePath: string
  /** Written as Java and PyIceberg write it: PARQUET, AVRO, ORC, PUFFIN. */
  fileFormat?: string
  partition: PartitionRecord
  recordCount: Count
  fileSizeInBytes: Count
  columnSizes?: Map<number, Count> | null
  valueCounts?: Map<number, Count> | null
  nullValueCounts?: Map<number, Count> | null
  nanValueCounts?: Map<number, Count> | null
  lowerBounds?: Map<number, Uint8Array> | null
  upperBounds?: Map<number, Uint8Array> | null
  keyMetadata?: Uint8Array | null
  splitOffsets?: Count[] | null
  equalityIds?: number[] | null
  sortOrderId?: number | null
  /** v3: null for new files (inherited from the manifest list). */
  firstRowId?: bigint | null
  referencedDataFile?: string | null
  contentOffset?: Count | null
  contentSizeInBytes?: Count | null
}

export interface ManifestEntry {
  status: EntryStatus
  /** Null only for ADDED entries: inherited from the manifest's added_snapshot_id. */
  snapshotId: bigint | null
  /** Data sequence number; null only for ADDED entries (inherited). */
  sequenceNumber: bigint | null
  fileSequenceNumber: bigint | null
  dataFile: DataFile
}

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

// ---------- reading ----------

export interface ReadManifest {
  formatVersion: 1 | 2 | 3
  content: 'data' | 'deletes'
  /** The table schema JSON text from the header (`schema`), if present. */
  schemaJson?: string
  schemaId?: number
  /** The partition fields from the header (`partition-spec`). */
  partitionFields: PartitionField[]
  specId?: number
  entries: ManifestEntry[]
}

type Rec = Record<string, unknown>

/** Reads a record field by its field id (names differ between writers and versions). */
function getter(schema: AvroSchema | undefined) {
  const names = schema ? fieldNamesById(schema) : new Map<number, string>()
  return (rec: Rec, id: number): unknown => {
    const name = names.get(id)
    return name === undefined ? null : (rec[name] ?? null)
  }
}

/** Avro map<int, T>: an array of {key, value} records, or (from lenient writers) an Avro string map. */
function readIntMap<T>(v: unknown): Map<number, T> | null {
  if (v === null || v === undefined) return null
  if (v instanceof Map) return new Map([...v.entries()].map(([k, x]) => [Number(k), x as T]))
  return new Map((v as { key: number; value: T }[]).map((e) => [e.key, e.value]))
}

/** Decimal partition values come back as the unscaled bigint; everything else as decoded. */
function readPartition(schema: AvroSchema | undefined, rec: Rec | null): PartitionRecord {
  const out: PartitionRecord = {}
  if (!schema || typeof schema !== 'object' || Array.isArray(schema) || !rec) return out
  for (const f of schema.fields as { name: string; type: AvroSchema }[]) {
    const v = rec[f.name] ?? null
    const t = Array.isArray(f.type) ? f.type.find((b) => b !== 'null') : f.type
    if (v instanceof Uint8Array && typeof t === 'object' && !Array.isArray(t) && t.logicalType === 'decimal') {
      let x = 0n
      for (const b of v) x = (x << 8n) | BigInt(b)
      out[f.name] = BigInt.asIntN(v.length * 8, x)
    } else {
      out[f.name] = v as Value
    }
  }
  return out
}

export async function readManifest(bytes: Uint8Array): Promise<ReadManifest> {
  const file = await readAvroFile(bytes)
  const meta = file.metadata
  const formatVersion = Number(meta['format-version'] ?? 1) as 1 | 2 | 3
  const entry = getter(file.schema)
  const dataFileSchema = recordOf(file.schema, 2)
  const df = getter(dataFileSchema)
  const partitionSchema = dataFileSchema ? recordOf(dataFileSchema, 102) : undefined
  const entries = file.records.map((r): ManifestEntry => {
    const rec = r as Rec
    const d = entry(rec, 2) as Rec
    const opt = <T>(id: number) => (df(d, id) ?? null) as T | null
    const dataFile: DataFile = {
      content: (opt<number>(134) ?? 0) as 0 | 1 | 2,
      filePath: df(d, 100) as string,
      fileFormat: df(d, 101) as string,
      partition: readPartition(partitionSchema, df(d, 102) as Rec | null),
      recordCount: df(d, 103) as bigint,
      fileSizeInBytes: df(d, 104) as bigint,
      columnSizes: readIntMap(df(d, 108)),
      valueCounts: readIntMap(df(d, 109)),
      nullValueCounts: readIntMap(df(d, 110)),
      nanValueCounts: readIntMap(df(d, 137)),
      lowerBounds: readIntMap(df(d, 125)),
      upperBounds: readIntMap(df(d, 128)),
      keyMetadata: opt<Uint8Array>(131),
      splitOffsets: opt<bigint[]>(132),
      equalityIds: opt<number[]>(135),
      sortOrderId: opt<number>(140),
      firstRowId: opt<bigint>(142),
      referencedDataFile: opt<string>(143),
      contentOffset: opt<bigint>(144),
      contentSizeInBytes: opt<bigint>(145),
    }
    return {
      status: entry(rec, 0) as EntryStatus,
      snapshotId: (entry(rec, 1) ?? null) as bigint | null,
      sequenceNumber: (entry(rec, 3) ?? null) as bigint | null,
      fileSequenceNumber: (entry(rec, 4) ?? null) as bigint | null,
      dataFile,
    }
  })
  return {
    formatVersion,
    content: meta.content === 'deletes' ? 'deletes' : 'data',
    schemaJson: meta.schema,
    schemaId: meta['schema-id'] !== undefined ? Number(meta['schema-id']) : undefined,
    partitionFields: meta['partition-spec'] ? (JSON.parse(meta['partition-spec']) as PartitionField[]) : [],
    specId: meta['partition-spec-id'] !== undefined ? Number(meta['partition-spec-id']) : undefined,
    entries,
  }
}

/**
 * Fills what entries inherit from their manifest-list entry (spec "Sequence Number Inheritance",
 * "First Row ID Inheritance"): snapshot id, data and file sequence numbers of ADDED entries (0 for
 * v1 manifests), and — for data manifests with a first_row_id — each null first_row_id in order.
 */
export function inheritFromManifest(entries: ManifestEntry[], manifest: ManifestFile): ManifestEntry[] {
  let nextRowId = manifest.firstRowId
  return entries.map((e) => {
    const seq = manifest.sequenceNumber ?? 0n
    const out: ManifestEntry = {
      ...e,
      snapshotId: e.snapshotId ?? manifest.addedSnapshotId,
      sequenceNumber: e.sequenceNumber ?? (e.status === ADDED || seq === 0n ? seq : null),
      fileSequenceNumber: e.fileSequenceNumber ?? (e.status === ADDED || seq === 0n ? seq : null),
    }
    if (manifest.content === 0 && nextRowId !== null && (e.dataFile.content ?? 0) === 0 && e.dataFile.firstRowId == null) {
      out.dataFile = { ...e.dataFile, firstRowId: nextRowId }
      nextRowId += BigInt(e.dataFile.recordCount)
    }
    return out
  })
}
