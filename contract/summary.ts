// The snapshot summary keys a sink's commits carry (spec "The roll", step 6; "Exactly once"). They are
// data, spelled exactly as the spec spells them: engines and recovery read them from the tables.

/**
 * The prefixes, current first: every roll writes its keys under the first; an older roll carries the
 * same keys under the earlier one, and they still count.
 */
export const SUMMARY_PREFIXES = ['lakehousebox.sink.', 'tablemere.sink.'] as const

/** The keys of a roll's snapshot (an append, or a keyed roll's overwrite). */
export const SUMMARY = {
  /** The sink's id. */
  id: 'lakehousebox.sink.id',
  /** The consumed batch ids, comma-separated. */
  batches: 'lakehousebox.sink.batches',
  rows: 'lakehousebox.sink.rows',
  rejectedRows: 'lakehousebox.sink.rejected_rows',
  /** RFC 3339; the committed marker's committed_at too. */
  rolledAt: 'lakehousebox.sink.rolled_at',
  /** A keyed roll's: files rewritten without their replaced rows, their bytes, files whose key columns were read. */
  rewrittenFiles: 'lakehousebox.sink.rewritten_files',
  rewrittenBytes: 'lakehousebox.sink.rewritten_bytes',
  keyFilesRead: 'lakehousebox.sink.key_files_read',
} as const

/** The keys of a whole-table dedupe's snapshot (POST /v1/sinks/{id}/dedupe). */
export const DEDUPE_SUMMARY = {
  sink: 'lakehousebox.dedupe.sink',
  rowsRemoved: 'lakehousebox.dedupe.rows_removed',
} as const

/** The batch ids a snapshot of this sink names, under either prefix; null when it is not this sink's roll. */
export function summaryBatchIds(summary: Record<string, string>, sinkId: string): string[] | null {
  for (const prefix of SUMMARY_PREFIXES) {
    if (summary[`${prefix}id`] === sinkId) return (summary[`${prefix}batches`] ?? '').split(',').filter(Boolean)
  }
  return null
}
