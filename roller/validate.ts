// One batch, row by row: parse each NDJSON line losslessly, check it against the table's schema
// (iceberg/values.ts), stamp __ingest_ts from the batch's arrival, and collect the reject lines.
import type { S3Client } from '../iceberg/io/s3.ts'
import { parseLossless } from '../iceberg/json.ts'
import type { Row, StructType } from '../iceberg/types.ts'
import { toRow } from '../iceberg/values.ts'
import { receivedMicros } from './intake.ts'
import { rejectLine, wholeBatchLine, type WholeBatchReason } from './rejects.ts'

export const INGEST_TS = '__ingest_ts'
export const MAX_BATCH_BYTES = 16 * 1024 * 1024

/** A batch chosen in step 4: not read yet. */
export interface PendingBatch {
  batchId: string
  key: string
  size: number
}

export interface CheckedBatch {
  batchId: string
  key: string
  rows: Row[]
  rejected: number
  rejectLines: string[]
}

/** Null when the object is gone (another roller consumed it meanwhile). */
/** `key`: a keyed sink's key columns — a row with a null in one is rejected (key_null). */
export async function checkBatch(s3: S3Client, batch: PendingBatch, schema: StructType, formatVersion: 2 | 3, key: string[] | null = null): Promise<CheckedBatch | null> {
  const whole = (reason: WholeBatchReason, error: string, rows: number): CheckedBatch => ({ batchId: batch.batchId, key: batch.key, rows: [], rejected: rows, rejectLines: [wholeBatchLine(batch.batchId, reason, error)] })
  if (batch.size > MAX_BATCH_BYTES) {
    const head = await s3.head(batch.key)
    if (!head) return null
    return whole('batch_too_large', `the object is ${batch.size} bytes; a producer's batch may be 16 MiB at most`, Number(head.metadata.rows ?? 0))
  }
  const got = await s3.get(batch.key)
  if (!got) return null
  let lines: string[]
  try {
    lines = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(got.body).split('\n').filter((l) => l.trim() !== '')
  } catch {
    return whole('batch_unreadable', 'the batch is not UTF-8 text', Number(got.head.metadata.rows ?? 0))
  }
  const parsed: unknown[] = []
  try {
    for (const line of lines) parsed.push(parseLossless(line))
  } catch (err) {
    return whole('batch_unreadable', (err as Error).message, lines.length)
  }
  const received = receivedMicros(got.head)
  const elementIndex = elementIndexes(got.head.metadata)
  const checked: CheckedBatch = { batchId: batch.batchId, key: batch.key, rows: [], rejected: 0, rejectLines: [] }
  parsed.forEach((value, index) => {
    // __ingest_ts is the batch's arrival, never the producer's say.
    if (value && typeof value === 'object' && !Array.isArray(value)) delete (value as Record<string, unknown>)[INGEST_TS]
    const result = toRow(schema, value, { formatVersion })
    const nullKey = result.ok && key ? key.find((k) => result.row[k] === null || result.row[k] === undefined) : undefined
    if (result.ok && nullKey === undefined) {
      result.row[INGEST_TS] = received
      checked.rows.push(result.row)
    } else if (result.ok) {
      checked.rejected++
      checked.rejectLines.push(rejectLine(batch.batchId, elementIndex(index), index, { reason: 'key_null', field: nullKey }, lines[index]))
    } else {
      checked.rejected++
      for (const r of result.rejects) checked.rejectLines.push(rejectLine(batch.batchId, elementIndex(index), index, r, lines[index]))
    }
  })
  return checked
}

/**
 * Line i of a batch is the i-th object the producer sent; x-amz-meta-skipped lists the elements the
 * edge did not store (not objects), so the producer's own index can be given back. No header: every
 * element was stored, line = index. `unrecorded`: the list was too long to keep, the index is unknown.
 */
function elementIndexes(metadata: Record<string, string>): (line: number) => number | null {
  if (metadata.skipped === undefined) return (line) => line
  if (metadata.skipped === 'unrecorded') return () => null
  const skipped = metadata.skipped.split(',').map(Number).sort((a, b) => a - b)
  return (line) => {
    let index = line
    for (const s of skipped) if (s <= index) index++
    return index
  }
}
