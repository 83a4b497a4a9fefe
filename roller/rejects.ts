// Rejects files: _sink/<sink>/rejects/<batch>.ndjson, one JSON object per rejected row with the
// original row's bytes (spec "Rejects"); swept after 7 days.
import { NDJSON, rejectsKey, rejectsPrefix } from '../contract/bucket.ts'
import type { Bucket } from '../iceberg/io/s3.ts'
import type { Reject } from '../iceberg/spec/values.ts'

/** A row's reason: the value checks' (values.ts), or a keyed sink's key_null. */
export type RowReject = Omit<Reject, 'reason'> & { reason: Reject['reason'] | 'key_null' }

const REJECTS_KEPT_MS = 7 * 24 * 3600_000

export type WholeBatchReason = 'batch_unreadable' | 'batch_too_large' | 'batch_unwritable'

/**
 * One line per rejected row (spec: "one JSON object per rejected row"): the first problem's reason and
 * fields, then — when the row has more than one — every problem under `problems`, then the row exactly
 * as the producer sent it. `index` is the row's place in the array the producer sent (null when the
 * batch did not record it); `line` its place in the stored batch.
 */
export function rejectLine(batchId: string, index: number | null, line: number, rejects: RowReject[], rowText: string): string {
  const [first] = rejects
  const problems = rejects.length > 1 ? { problems: rejects.map((r) => ({ reason: r.reason, field: r.field, expected: r.expected, got: r.got })) } : {}
  const head = JSON.stringify({
    batch_id: batchId,
    index,
    line,
    reason: first.reason,
    field: first.field,
    expected: first.expected,
    got: first.got,
    ...problems,
  })
  return `${head.slice(0, -1)},"row":${rowText}}`
}

export function wholeBatchLine(batchId: string, reason: WholeBatchReason, error: string, rowText: string | null = null, index: number | null = null): string {
  const head = JSON.stringify({ batch_id: batchId, index, reason, error })
  return `${head.slice(0, -1)},"row":${rowText ?? 'null'}}`
}

/**
 * The rows of a batch the writer refused (`stored`: the batch's text), one batch_unwritable line each
 * with the writer's error and the row's bytes (spec: "one JSON object per rejected row, with the
 * original row"), but for the rows the checks rejected: they have their lines already (`rejectLines`).
 */
export function unwritableLines(batchId: string, stored: string, rejectLines: string[], error: string, indexOf: (line: number) => number | null): string[] {
  // The stored line of each reject, from the head rejectLine writes (the row after it may not even parse).
  const rejected = new Set(rejectLines.map((l) => Number(/^\{"batch_id":"[^"]*","index":(?:null|\d+),"line":(\d+),/.exec(l)?.[1] ?? -1)))
  // Stored lines as the scanner counts them: blank lines skipped.
  const lines = stored.split('\n').filter((l) => !/^[\t\n\v\f\r ]*$/.test(l))
  return lines.flatMap((row, line) => (rejected.has(line) ? [] : [wholeBatchLine(batchId, 'batch_unwritable', error, row, indexOf(line))]))
}

export async function writeRejects(s3: Bucket, sinkId: string, batchId: string, lines: string[]): Promise<void> {
  await s3.put(rejectsKey(sinkId, batchId), lines.join('\n') + '\n', { contentType: NDJSON })
}

/** Deletes rejects files older than 7 days. */
export async function sweepRejects(s3: Bucket, sinkId: string, now = Date.now()): Promise<number> {
  const old: string[] = []
  for await (const o of s3.list(rejectsPrefix(sinkId))) if (now - o.lastModified.getTime() > REJECTS_KEPT_MS) old.push(o.key)
  if (old.length > 0) await s3.deleteMany(old)
  return old.length
}
