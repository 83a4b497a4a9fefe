// What a table must be for a sink to feed it (spec "What a sink is", "A key"), and the policy ranges.
import { keyProblem, type KeyProblem } from '../contract/key-rule.ts'
import { INGEST_TS } from '../contract/table.ts'
import { currentSchema, defaultSpec, type TableMetadata } from '../iceberg/spec/metadata.ts'
import { isPrimitive, parsePrimitive, type IcebergType } from '../iceberg/spec/types.ts'
import { ApiError } from './errors.ts'

export const POLICY = {
  rollSeconds: { min: 60, default: 300, max: 86_400 },
  rollBytes: { min: 32 * 1024 * 1024, default: 64 * 1024 * 1024, max: 64 * 1024 * 1024 },
  inactivitySeconds: { min: 10, max: 86_400 },
} as const

const TIME_TRANSFORMS = new Set(['day', 'hour', 'month', 'year'])
const TIME_SOURCES = new Set(['date', 'timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns'])
const LONLAT = new Set(['OGC:CRS84', 'EPSG:4326'])

/** v2: unpartitioned; v3: only day/hour/month/year of a date or timestamp column (409 otherwise). */
export function checkPartitioning(meta: TableMetadata): void {
  const spec = defaultSpec(meta)
  if (spec.fields.length === 0) return
  const schema = currentSchema(meta)
  const typeOf = new Map(schema.fields.map((f) => [f.id, f.type]))
  const refuse = (why: string) => {
    throw new ApiError(409, 'partitioned_table_unsupported', why, { partition_spec: spec.fields.map((f) => `${f.transform}(${f['source-id']})`) })
  }
  if (meta['format-version'] < 3)
    refuse('a format-version 2 table must be unpartitioned for a sink; create it unpartitioned, or as format-version 3 partitioned by day/hour/month/year')
  for (const f of spec.fields) {
    const source = typeOf.get(f['source-id'])
    const sourceKind = typeof source === 'string' ? parsePrimitive(source).kind : 'nested'
    if (!TIME_TRANSFORMS.has(f.transform) || !TIME_SOURCES.has(sourceKind)) {
      refuse(
        `partition field ${f.name} is ${f.transform} of a ${sourceKind} column; a sink writes only tables partitioned by day, hour, month or year of a date or timestamp`,
      )
    }
  }
}

/**
 * Columns a sink cannot write, anywhere in the schema (409 unsupported_column_type): geography,
 * geometry with a CRS of its own, and variant (the roller does not write the Parquet variant encoding;
 * refused here so a sink is never created only to reject every row at roll).
 */
export function checkColumnTypes(meta: TableMetadata): void {
  const bad: string[] = []
  const walk = (t: IcebergType, path: string) => {
    if (isPrimitive(t)) {
      const p = parsePrimitive(t)
      if (p.kind === 'geography' || p.kind === 'variant' || (p.kind === 'geometry' && p.crs && !LONLAT.has(p.crs))) bad.push(`${path} (${t})`)
      return
    }
    if (t.type === 'struct') for (const f of t.fields) walk(f.type, `${path}.${f.name}`)
    else if (t.type === 'list') walk(t.element, `${path}.element`)
    else {
      walk(t.key, `${path}.key`)
      walk(t.value, `${path}.value`)
    }
  }
  for (const f of currentSchema(meta).fields) walk(f.type, f.name)
  if (bad.length > 0) {
    throw new ApiError(
      409,
      'unsupported_column_type',
      `a sink does not write geography or variant columns, and writes longitude/latitude geometries only; refused: ${bad.join(', ')}`,
      { columns: bad },
    )
  }
}

/** The API's answer to each reason of the key rule (the roller disables the sink with the reason itself). */
const KEY_ERRORS: Record<KeyProblem['reason'], [status: 400 | 409, code: string]> = {
  upsert_table_unsupported: [409, 'key_unsupported'],
  upsert_key_missing: [400, 'unknown_column'],
  upsert_key_type: [409, 'key_type_unsupported'],
}

/** A key needs a v2 unpartitioned table and top-level columns of a key type (contract/key-rule.ts). */
export function checkKey(meta: TableMetadata, key: string[]): void {
  const table = { formatVersion: meta['format-version'], partitioned: defaultSpec(meta).fields.length > 0, columns: currentSchema(meta).fields }
  const problem = keyProblem(table, key)
  if (!problem) return
  const [status, code] = KEY_ERRORS[problem.reason]
  throw new ApiError(status, code, problem.message, problem.columns.length > 0 ? { columns: problem.columns } : undefined)
}

/** Set when the table or some columns have no description (the spec's docs_hint). */
export function docsHint(meta: TableMetadata, ref: string): null | { message: string; table_doc_missing: boolean; columns: string[]; command: string } {
  const tableMissing = !meta.properties.comment
  const columns = currentSchema(meta)
    .fields.filter((f) => !f.doc && f.name !== INGEST_TS)
    .map((f) => f.name)
  if (!tableMissing && columns.length === 0) return null
  return {
    message: 'Other people’s agents will read this table; describe it and its columns so they know what a row is.',
    table_doc_missing: tableMissing,
    columns,
    command: `lhbox table document ${ref} --doc '…'${columns.map((c) => ` --column ${c}='…'`).join('')}`,
  }
}
