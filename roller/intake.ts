// The sink's objects in the bucket: intake batches, committed markers (contract/bucket.ts).
import { BATCH_META, intakeEntry, sinkPrefix } from '../contract/bucket.ts'
import { parseLossless } from '../iceberg/spec/json.ts'
import type { Bucket, S3Head } from '../iceberg/io/s3.ts'
import { parseTimestamp } from '../iceberg/spec/temporal.ts'

export interface IntakeObject {
  batchId: string
  key: string
  size: number
  lastModified: Date
}

export interface Marker {
  key: string
  batchIds: string[]
  /** null: an empty roll (every row rejected) that committed no snapshot. */
  snapshotId: string | null
  committedAt: string
}

/** A failure that must end the tick: lag grows, nothing is appended twice. */
export class EndTick extends Error {
  constructor(
    message: string,
    override readonly cause?: unknown,
  ) {
    super(message)
    this.name = 'EndTick'
  }
}

/** Another roller holds the sink now (or the lease could not be renewed in time): this roll commits nothing more. */
export class LeaseLost extends EndTick {
  constructor(message: string) {
    super(message)
    this.name = 'LeaseLost'
  }
}

/** The batches waiting in the intake and the markers, in one listing of _sink/<id>/. */
export async function listIntake(s3: Bucket, sinkId: string): Promise<{ batches: IntakeObject[]; markers: string[] }> {
  const batches: IntakeObject[] = []
  const markers: string[] = []
  try {
    for await (const o of s3.list(sinkPrefix(sinkId))) {
      const entry = intakeEntry(sinkId, o.key)
      if (entry?.kind === 'marker') markers.push(o.key)
      else if (entry?.kind === 'batch') batches.push({ batchId: entry.batchId, key: o.key, size: o.size, lastModified: o.lastModified })
    }
  } catch (err) {
    throw new EndTick(`cannot list the intake of ${sinkId}: ${(err as Error).message}`, err)
  }
  return { batches, markers }
}

export async function readMarker(s3: Bucket, key: string): Promise<Marker | null> {
  let got: Awaited<ReturnType<Bucket['get']>>
  try {
    got = await s3.get(key)
  } catch (err) {
    throw new EndTick(`marker ${key} cannot be read: ${(err as Error).message}`, err)
  }
  if (!got) return null // deleted meanwhile
  try {
    const m = parseLossless(new TextDecoder().decode(got.body)) as { batch_ids: string[]; snapshot_id: unknown; committed_at: string }
    if (!Array.isArray(m.batch_ids) || typeof m.committed_at !== 'string' || Number.isNaN(Date.parse(m.committed_at))) throw new Error('not a marker')
    return { key, batchIds: m.batch_ids.map(String), snapshotId: m.snapshot_id === null ? null : String(m.snapshot_id), committedAt: m.committed_at }
  } catch (err) {
    throw new EndTick(`marker ${key} is unreadable: ${(err as Error).message}`, err)
  }
}

export function markerBody(batchIds: string[], snapshotId: bigint | null, committedAt: string): string {
  // The snapshot id as a JSON integer with its exact digits (null for an empty roll).
  return `{"batch_ids":${JSON.stringify(batchIds)},"snapshot_id":${snapshotId === null ? 'null' : snapshotId.toString()},"committed_at":${JSON.stringify(committedAt)}}`
}

/** The elements the edge stored in a batch (x-amz-meta-rows): a batch that cannot be read counts them all as rejected. */
export function storedRows(head: S3Head): number {
  return Number(head.metadata[BATCH_META.rows] ?? 0)
}

/** When the intake received the batch (x-amz-meta-received, microseconds), else the store's time. */
export function receivedMicros(head: S3Head): bigint {
  const received = head.metadata[BATCH_META.received]
  if (received) {
    const parsed = parseTimestamp(received, 'timestamptz')
    if (parsed.ok) return parsed.value
  }
  return BigInt(head.lastModified.getTime()) * 1000n
}
