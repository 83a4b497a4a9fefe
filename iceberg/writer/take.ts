// Rows of a column batch picked by index (a partition's share of a batch, or a row group's slice),
// copied value by value without making a JavaScript value for the flat columns.

import { buildersFor, finishBatch, type ColumnBuilder } from '../parquet/builders.ts'
import type { ColumnBatch, ColumnData, ColumnValues } from '../parquet/columns.ts'
import type { NestedField, Row, Value } from '../spec/types.ts'

/** The rows `indices` (ascending) of `batch`, as a new batch. */
export function takeRows(fields: NestedField[], batch: ColumnBatch, indices: ArrayLike<number>): ColumnBatch {
  const builders = buildersFor(fields)
  fields.forEach((f, i) => copyRows(batch.columns.get(f.id)!, builders[i], indices))
  return finishBatch(fields, builders, indices.length)
}

/** Rows from..to-1 of `batch`: views of its buffers, nothing copied (string offsets stay absolute). */
export function sliceRows(batch: ColumnBatch, from: number, to: number): ColumnBatch {
  const columns = new Map<number, ColumnData>()
  for (const [id, col] of batch.columns) columns.set(id, sliceColumn(col, from, to))
  return { rows: to - from, columns }
}

function sliceColumn(col: ColumnData, from: number, to: number): ColumnData {
  if (col.kind === 'values') return { kind: 'values', values: col.values.slice(from, to) }
  let k0 = from
  let k1 = to
  if (col.present) {
    k0 = 0
    for (let r = 0; r < from; r++) k0 += col.present[r]
    k1 = k0
    for (let r = from; r < to; r++) k1 += col.present[r]
  }
  const present = col.present ? col.present.subarray(from, to) : null
  const d = col.data
  const data: ColumnValues =
    d.physical === 'BYTE_ARRAY'
      ? { physical: 'BYTE_ARRAY', offsets: d.offsets.subarray(k0, k1 + 1), bytes: d.bytes }
      : d.physical === 'FIXED_LEN_BYTE_ARRAY'
        ? { physical: 'FIXED_LEN_BYTE_ARRAY', width: d.width, bytes: d.bytes.subarray(k0 * d.width, k1 * d.width) }
        : ({ physical: d.physical, values: d.values.subarray(k0, k1) } as ColumnValues)
  return { kind: 'flat', present, count: k1 - k0, data }
}

/** Rows in the Value form (already checked against the schema) as a column batch. */
export function rowsToColumns(fields: NestedField[], rows: Row[]): ColumnBatch {
  const builders = buildersFor(fields)
  for (const row of rows) fields.forEach((f, i) => builders[i].appendValue(row[f.name] ?? null))
  return finishBatch(fields, builders, rows.length)
}

/** One column's values row by row (null for a null): for the partition transforms. */
export function columnValues(col: ColumnData, rows: number, toValue: (col: Extract<ColumnData, { kind: 'flat' }>, k: number) => Value): Value[] {
  if (col.kind === 'values') return col.values
  const out: Value[] = new Array(rows)
  let k = 0
  for (let r = 0; r < rows; r++) out[r] = col.present && !col.present[r] ? null : toValue(col, k++)
  return out
}

function copyRows(col: ColumnData, to: ColumnBuilder, indices: ArrayLike<number>): void {
  if (col.kind === 'values') {
    for (let i = 0; i < indices.length; i++) to.appendValue(col.values[indices[i]])
    return
  }
  // value index of each row: rows before it that have a value
  const present = col.present
  let valueAt: (row: number) => number
  if (present) {
    const at = new Int32Array(present.length + 1)
    for (let r = 0; r < present.length; r++) at[r + 1] = at[r] + present[r]
    valueAt = (row) => (present[row] ? at[row] : -1)
  } else valueAt = (row) => row
  const data = col.data
  const raw =
    data.physical === 'BYTE_ARRAY'
      ? data.bytes
      : data.physical === 'FIXED_LEN_BYTE_ARRAY'
        ? data.bytes
        : data.physical === 'BOOLEAN'
          ? data.values
          : new Uint8Array(data.values.buffer, data.values.byteOffset, data.values.byteLength)
  const width = to.width
  for (let i = 0; i < indices.length; i++) {
    const k = valueAt(indices[i])
    if (k < 0) {
      to.appendNull()
      continue
    }
    if (data.physical === 'BYTE_ARRAY') {
      to.appendBytes(data.bytes.subarray(data.offsets[k], data.offsets[k + 1]))
      continue
    }
    const slot = to.slot()
    to.bytes.set(raw.subarray(k * width, (k + 1) * width), slot * width)
    to.commitValue()
  }
}
