// Exactly once by recovery (spec "Exactly once"): a batch is consumed when a retained snapshot of this
// sink, or a committed marker, names it — and it was stored before that record, with 1 h tolerance.
import { summaryBatchIds } from '../contract/summary.ts'
import type { LoadedTable } from '../iceberg/catalog/index.ts'
import { CommitAbandoned } from '../iceberg/transaction/transact.ts'
import type { TableMetadata } from '../iceberg/spec/metadata.ts'
import type { Bucket } from '../iceberg/io/s3.ts'
import { listIntake, readMarker, type IntakeObject, type Marker } from './intake.ts'

export const CLOCK_SKEW_MS = 3600_000

export interface ConsumedRecord {
  atMs: number
  snapshotId: string | null
  source: 'snapshot' | 'marker'
}

/** Every batch id any retained snapshot of this sink or any marker names; the newer record wins. */
export function consumedRecords(metadata: TableMetadata, sinkId: string, markers: Marker[]): Map<string, ConsumedRecord> {
  const records = new Map<string, ConsumedRecord>()
  const add = (ids: string[], record: ConsumedRecord) => {
    for (const id of ids) {
      const prev = records.get(id)
      if (!prev || prev.atMs < record.atMs) records.set(id, record)
    }
  }
  for (const s of metadata.snapshots) {
    const ids = summaryBatchIds((s.summary ?? {}) as Record<string, string>, sinkId)
    if (ids) add(ids, { atMs: Number(s['timestamp-ms']), snapshotId: s['snapshot-id'].toString(), source: 'snapshot' })
  }
  for (const m of markers) add(m.batchIds, { atMs: Date.parse(m.committedAt), snapshotId: m.snapshotId, source: 'marker' })
  return records
}

/** The intake's batches and markers, and every batch id a retained snapshot or a marker names (steps 2 of a roll and 1 of a feed's run). */
export async function intakeRecords(
  bucket: Bucket,
  sinkId: string,
  metadata: TableMetadata,
  listed: Promise<{ batches: IntakeObject[]; markers: string[] }> = listIntake(bucket, sinkId),
): Promise<{ batches: IntakeObject[]; markers: Marker[]; records: Map<string, ConsumedRecord> }> {
  const listing = await listed
  const markers = (await Promise.all(listing.markers.map((k) => readMarker(bucket, k)))).filter((m): m is Marker => m !== null)
  return { batches: listing.batches, markers, records: consumedRecords(metadata, sinkId, markers) }
}

/** Stored before the record (1 h of tolerance for clock skew)? A batch stored later is a new send. */
export function storedBefore(receivedMicros: bigint, record: ConsumedRecord): boolean {
  return Number(receivedMicros / 1000n) <= record.atMs + CLOCK_SKEW_MS
}

/** If another roller committed any of these batches since the roll read the table, commit nothing. */
export function recheckFor(sink: { id: string }, batchIds: string[], seen: Set<bigint>): (base: LoadedTable) => void {
  const mine = new Set(batchIds)
  return (base) => {
    for (const s of base.metadata.snapshots) {
      if (seen.has(s['snapshot-id'])) continue
      const named = summaryBatchIds((s.summary ?? {}) as Record<string, string>, sink.id) ?? []
      if (named.some((id) => mine.has(id))) throw new CommitAbandoned(`snapshot ${s['snapshot-id']} already holds batch(es) of this roll`)
    }
  }
}
