// The storage meter (spec "What it costs and where it is counted"): each warehouse's bucket listed and
// summed, _sink/ counted (and apart as intake_bytes, its rejects files as rejects_bytes), and each
// table's committed Parquet bytes from its current snapshot's summary. The edge leases the warehouses due a figure (every few minutes, or
// asked for with POST /v1/warehouses/{id}/measure); one roller measures each.
import type { StorageFigure } from '../contract/internal.ts'
import type { Catalog } from '../iceberg/catalog/index.ts'
import type { S3Client } from '../iceberg/io/s3.ts'
import { currentSnapshot } from '../iceberg/spec/metadata.ts'

const INTAKE = '_sink/'

/** _sink/<sink_id>/rejects/<batch_id>.ndjson (contract/bucket.ts rejectsKey). */
const REJECTS = /^_sink\/[^/]+\/rejects\//

/**
 * Every object in the bucket: bytes and count, the bytes under _sink/ (batches waiting, rejects,
 * markers), and of those the rejects files' (kept LHBOX_REJECTS_RETENTION_DAYS: what they cost).
 */
export async function measureBucket(bucket: S3Client): Promise<Pick<StorageFigure, 'bytes' | 'intake_bytes' | 'rejects_bytes' | 'objects'>> {
  let bytes = 0
  let intake = 0
  let rejects = 0
  let objects = 0
  for await (const o of bucket.list('')) {
    bytes += o.size
    objects++
    if (!o.key.startsWith(INTAKE)) continue
    intake += o.size
    if (REJECTS.test(o.key)) rejects += o.size
  }
  return { bytes, intake_bytes: intake, rejects_bytes: rejects, objects }
}

/** Each table's committed Parquet bytes, keyed <namespace>.<table>: total-files-size of its current snapshot (0 before the first). */
export async function measureTables(catalog: Catalog): Promise<Record<string, number>> {
  const tables: Record<string, number> = {}
  for (const namespace of await catalog.listNamespaces()) {
    for (const id of await catalog.listTables(namespace)) {
      const { metadata } = await catalog.loadTable(id)
      tables[[...id.namespace, id.name].join('.')] = Number(currentSnapshot(metadata)?.summary?.['total-files-size'] ?? 0)
    }
  }
  return tables
}
