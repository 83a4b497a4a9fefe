// Test support: column buffers back to rows in the Value form, as readDataFile gives them (strings
// decoded keeping a BOM), to compare readColumns (iceberg/parquet/read-columns.ts) and the ingest scanner with it.
import type { ColumnBatch, ColumnData } from '../../../iceberg/parquet/columns.ts'
import { parsePrimitive, type NestedField, type Row, type Schema, type Value } from '../../../iceberg/spec/types.ts'

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
export function columnsToRows(s: Schema, batch: ColumnBatch): Row[] {
  const rows: Row[] = Array.from({ length: batch.rows }, () => ({}))
  for (const f of s.fields) {
    const col = batch.columns.get(f.id)
    if (!col) throw new Error(`no column for field ${f.id}`)
    let k = 0
    for (let r = 0; r < batch.rows; r++) {
      rows[r][f.name] = col.kind === 'values' ? col.values[r] : col.present && !col.present[r] ? null : valueAt(col, k++, f)
    }
    if (col.kind === 'flat' && k !== col.count) throw new Error(`column ${f.name} has ${col.count} values, rows use ${k}`)
  }
  return rows
}

function valueAt(col: Extract<ColumnData, { kind: 'flat' }>, i: number, f: NestedField): Value {
  const kind = parsePrimitive(f.type as string).kind
  const d = col.data
  switch (d.physical) {
    case 'BOOLEAN':
      return d.values[i] === 1
    case 'INT32':
      return kind === 'decimal' ? BigInt(d.values[i]) : d.values[i]
    case 'BYTE_ARRAY': {
      const bytes = d.bytes.slice(d.offsets[i], d.offsets[i + 1])
      return kind === 'string' ? utf8.decode(bytes) : bytes
    }
    case 'FIXED_LEN_BYTE_ARRAY': {
      const bytes = d.bytes.slice(i * d.width, (i + 1) * d.width)
      if (kind !== 'decimal') return bytes
      let v = 0n
      for (const b of bytes) v = (v << 8n) | BigInt(b)
      return BigInt.asIntN(d.width * 8, v)
    }
    default:
      return d.values[i]
  }
}
