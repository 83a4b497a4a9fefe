// Test helper: rows in the Value representation (types.ts) → a ColumnBatch (iceberg/parquet/columns.ts),
// the way an ingest scanner would fill one: every top-level primitive column flat in its physical
// layout, nested and geometry columns as one Value per row.
import { decimalRequiredBytes } from '../../../iceberg/spec/decimal.ts'
import type { ColumnBatch, ColumnData, ColumnValues } from '../../../iceberg/parquet/columns.ts'
import { isPrimitive, parsePrimitive, type Primitive, type Row, type Schema, type Value } from '../../../iceberg/spec/types.ts'
import { twosComplement } from '../../../iceberg/parquet/builders.ts'

export interface BatchOptions {
  /** field names to hand over as `values` even when primitive */
  asValues?: string[]
  /** give optional columns a `present` even when no row is null (default: null then) */
  alwaysPresent?: boolean
}

const utf8 = new TextEncoder()

export function rowsToBatch(schema: Schema, rows: Row[], opts: BatchOptions = {}): ColumnBatch {
  const columns = new Map<number, ColumnData>()
  for (const field of schema.fields) {
    const values = rows.map((r) => r[field.name] ?? null)
    const p = isPrimitive(field.type) ? parsePrimitive(field.type) : undefined
    if (!p || p.kind === 'geometry' || p.kind === 'geography' || p.kind === 'unknown' || opts.asValues?.includes(field.name)) {
      columns.set(field.id, { kind: 'values', values })
      continue
    }
    const given = values.filter((v): v is Exclude<Value, null> => v !== null)
    const present = given.length < rows.length || (opts.alwaysPresent && !field.required) ? Uint8Array.from(values, (v) => (v === null ? 0 : 1)) : null
    columns.set(field.id, { kind: 'flat', present, count: given.length, data: physical(p, given) })
  }
  return { rows: rows.length, columns }
}

function physical(p: Primitive, values: Value[]): ColumnValues {
  switch (p.kind) {
    case 'boolean':
      return { physical: 'BOOLEAN', values: Uint8Array.from(values, (v) => (v ? 1 : 0)) }
    case 'int':
    case 'date':
      return { physical: 'INT32', values: Int32Array.from(values as number[]) }
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return { physical: 'INT64', values: BigInt64Array.from(values as bigint[]) }
    case 'float':
      return { physical: 'FLOAT', values: Float32Array.from(values as number[]) }
    case 'double':
      return { physical: 'DOUBLE', values: Float64Array.from(values as number[]) }
    case 'decimal': {
      if (p.precision <= 9) return { physical: 'INT32', values: Int32Array.from(values as bigint[], Number) }
      if (p.precision <= 18) return { physical: 'INT64', values: BigInt64Array.from(values as bigint[]) }
      const width = decimalRequiredBytes(p.precision)
      const bytes = new Uint8Array(values.length * width)
      values.forEach((v, i) => bytes.set(twosComplement(v as bigint, width), i * width))
      return { physical: 'FIXED_LEN_BYTE_ARRAY', width, bytes }
    }
    case 'string':
    case 'binary': {
      const parts = values.map((v) => (typeof v === 'string' ? utf8.encode(v) : (v as Uint8Array)))
      // a non-zero first offset and slack at the end, as a scanner's shared buffer may have
      const offsets = new Int32Array(parts.length + 1)
      let at = 3
      offsets[0] = at
      parts.forEach((b, i) => (offsets[i + 1] = at += b.length))
      const bytes = new Uint8Array(at + 5)
      parts.forEach((b, i) => bytes.set(b, offsets[i]))
      return { physical: 'BYTE_ARRAY', offsets, bytes }
    }
    case 'uuid':
    case 'fixed': {
      const width = p.kind === 'fixed' ? p.length : 16
      const bytes = new Uint8Array(values.length * width)
      values.forEach((v, i) => bytes.set(v as Uint8Array, i * width))
      return { physical: 'FIXED_LEN_BYTE_ARRAY', width, bytes }
    }
    default:
      throw new Error(`no flat buffer for ${p.kind}`)
  }
}

/** Rows [from, to) of a batch's rows as their own batch (for several batches in one row group). */
export function sliceRows(rows: Row[], sizes: number[]): Row[][] {
  const out: Row[][] = []
  let at = 0
  for (const n of sizes) {
    out.push(rows.slice(at, at + n))
    at += n
  }
  if (at < rows.length) out.push(rows.slice(at))
  return out
}
