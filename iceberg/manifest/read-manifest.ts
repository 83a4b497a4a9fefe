// Reading manifest files (spec "Manifests"): Avro files of manifest_entry records for one partition
// spec, read for v1–v3 from any writer (columns are found by field id), and what entries inherit
// from their manifest-list entry. Reading only; manifest.ts writes them.

import { readAvroFile } from '../avro/read-container.ts'
import type { AvroSchema } from '../avro/schema.ts'
import type { PartitionField, PartitionRecord } from '../spec/partition.ts'
import type { Value } from '../spec/types.ts'
import { fieldNamesById, recordOf } from './field-ids.ts'
import type { ManifestFile } from './read-list.ts'

export const EXISTING = 0
export const ADDED = 1
export const DELETED = 2
type EntryStatus = typeof EXISTING | typeof ADDED | typeof DELETED

export type Count = number | bigint

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
