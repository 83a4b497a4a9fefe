// Reading manifest lists (spec "Manifest Lists"): one Avro file per snapshot naming its manifests,
// with per-manifest counts and partition summaries. Reading only; list.ts writes them.

import { readAvroFile } from '../avro/read-container.ts'
import { fieldNamesById, recordOf } from './field-ids.ts'

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
