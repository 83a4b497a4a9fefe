// Test support: column buffers back to rows (the Value form of types.ts), so a test can compare what
// the scanner put in the columns with what toRow gives.
import type { ColumnBatch, ColumnData } from '../../../iceberg/parquet/columns.ts'
import { parsePrimitive, type Row, type Schema, type Value } from '../../../iceberg/types.ts'

const utf8 = new TextDecoder()

export function columnsToRows(schema: Schema, batch: ColumnBatch): Row[] {
  const rows: Row[] = Array.from({ length: batch.rows }, () => ({}))
  for (const field of schema.fields) {
    const col = batch.columns.get(field.id)
    if (!col) throw new Error(`no column for field ${field.id}`)
    const values = columnValues(field.type, col, batch.rows)
    values.forEach((v, i) => (rows[i][field.name] = v))
  }
  return rows
}

function columnValues(type: Schema['fields'][number]['type'], col: ColumnData, rows: number): Value[] {
  if (col.kind === 'values') {
    if (col.values.length !== rows) throw new Error(`values column of ${col.values.length} rows, not ${rows}`)
    return col.values
  }
  const p = typeof type === 'string' ? parsePrimitive(type) : undefined
  const out: Value[] = []
  let k = 0
  for (let r = 0; r < rows; r++) {
    if (col.present && !col.present[r]) {
      out.push(null)
      continue
    }
    out.push(valueAt(col.data, k++, p))
  }
  if (k !== col.count) throw new Error(`column has ${col.count} values, rows use ${k}`)
  return out
}

function valueAt(data: Extract<ColumnData, { kind: 'flat' }>['data'], i: number, p: ReturnType<typeof parsePrimitive> | undefined): Value {
  const decimal = p?.kind === 'decimal'
  switch (data.physical) {
    case 'BOOLEAN': return data.values[i] === 1
    case 'INT32': return decimal ? BigInt(data.values[i]) : data.values[i]
    case 'INT64': return data.values[i]
    case 'FLOAT': return data.values[i]
    case 'DOUBLE': return data.values[i]
    case 'BYTE_ARRAY': {
      const bytes = data.bytes.slice(data.offsets[i], data.offsets[i + 1])
      return p?.kind === 'string' ? utf8.decode(bytes) : bytes
    }
    case 'FIXED_LEN_BYTE_ARRAY': {
      const bytes = data.bytes.slice(i * data.width, (i + 1) * data.width)
      if (!decimal) return bytes
      let v = 0n
      for (const b of bytes) v = (v << 8n) | BigInt(b)
      return BigInt.asIntN(data.width * 8, v)
    }
  }
}
