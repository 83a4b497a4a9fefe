// What a key needs (spec "A key: one row per key, not one per send"): a format-version 2, unpartitioned
// table, and top-level columns of a key type — string, integer, date, time, timestamp, uuid, decimal or
// boolean, never a float. The edge checks it when a key is set; the roller before every keyed roll and
// dedupe, since the table may have changed meanwhile, and disables the sink with the reason.

const KEY_TYPES = new Set(['string', 'int', 'long', 'date', 'time', 'timestamp', 'timestamptz', 'uuid', 'decimal', 'boolean'])

/**
 * A reason the roller cannot apply a key: the sink is disabled with it and its batches wait until the
 * key changes (spec: "an upsert_* reason"; PATCH {key} makes the sink active again).
 */
export type UpsertReason = `upsert_${string}`

export const isUpsertReason = (reason: unknown): reason is UpsertReason => typeof reason === 'string' && reason.startsWith('upsert_')

/** Why this key does not fit this table. */
export interface KeyProblem {
  reason: 'upsert_table_unsupported' | 'upsert_key_missing' | 'upsert_key_type'
  message: string
  /** The key columns at fault (none for upsert_table_unsupported). */
  columns: string[]
}

/** The table as the rule reads it: its format version, whether its default spec partitions, its current schema's top-level fields. */
export interface KeyTable {
  formatVersion: number
  partitioned: boolean
  /** A primitive type is a string (Iceberg's type JSON: 'long', 'decimal(9,2)'), a nested one an object. */
  columns: ReadonlyArray<{ name: string; type: unknown }>
}

/** Why `key` cannot be this table's key, or null. */
export function keyProblem(table: KeyTable, key: readonly string[]): KeyProblem | null {
  if (table.formatVersion !== 2 || table.partitioned) {
    return { reason: 'upsert_table_unsupported', message: 'a key needs a format-version 2, unpartitioned table', columns: [] }
  }
  const types = new Map(table.columns.map((c) => [c.name, c.type]))
  const missing = key.filter((k) => !types.has(k))
  if (missing.length > 0) return { reason: 'upsert_key_missing', message: `no column ${missing.join(', ')} in the table`, columns: missing }
  const wrong = key.filter((k) => !KEY_TYPES.has(primitiveKind(types.get(k))))
  if (wrong.length > 0) {
    const listed = wrong.map((k) => `${k} (${JSON.stringify(types.get(k))})`).join(', ')
    return {
      reason: 'upsert_key_type',
      message: `key columns must be string, integer, date, time, timestamp, uuid, decimal or boolean; not ${listed}`,
      columns: wrong,
    }
  }
  return null
}

/** A primitive type's kind ('decimal' for 'decimal(9,2)', 'fixed' for 'fixed[16]'); '' for a nested type. */
function primitiveKind(type: unknown): string {
  return typeof type === 'string' ? (/^[a-z_]+/.exec(type.trim())?.[0] ?? '') : ''
}
