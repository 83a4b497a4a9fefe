// Rejects files: _sink/<sink>/rejects/<batch>.ndjson, one JSON object per rejected row with the
// original row's bytes (spec "Rejects"); deleted by the maintenance sweep once older than
// LHBOX_REJECTS_RETENTION_DAYS (issue 31, part 5).
import { NDJSON, rejectsKey, rejectsPrefix } from '../contract/bucket.ts'
import type { Bucket } from '../iceberg/io/s3.ts'
import type { Reject } from '../iceberg/spec/values.ts'

/** A row's reason: the value checks' (values.ts), or a keyed sink's key_null. */
export type RowReject = Omit<Reject, 'reason'> & { reason: Reject['reason'] | 'key_null' }

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

/** Rejects files one sweep deletes per sink at most: a backlog goes over several sweeps, each bounded. */
export const REJECTS_SWEEP_LIMIT = 10_000

/**
 * Deletes the sink's rejects files last modified more than `keptMs` before `now` (at most `limit`),
 * and says how many and how many bytes. The sink's rejects.rows_total is a counter in its row: it
 * keeps counting. Run under the sink's lease, so no roll rewrites a file while it goes.
 */
export async function sweepRejects(
  s3: Bucket,
  sinkId: string,
  keptMs: number,
  now = Date.now(),
  limit = REJECTS_SWEEP_LIMIT,
): Promise<{ files: number; bytes: number }> {
  const old: string[] = []
  let bytes = 0
  for await (const o of s3.list(rejectsPrefix(sinkId))) {
    if (now - o.lastModified.getTime() <= keptMs) continue
    old.push(o.key)
    bytes += o.size
    if (old.length >= limit) break
  }
  if (old.length > 0) await s3.deleteMany(old)
  return { files: old.length, bytes }
}
