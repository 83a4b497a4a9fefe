// Rows dropped from a column batch in place: each column's buffers are compacted over themselves (the
// kept values moved down, fixed-width ones in 32-bit words), so a rewrite that keeps most of a file's
// rows copies each kept value once and allocates nothing per row. For batches the caller owns, such
// as readColumns' (read-columns.ts): the batch given must not be used afterwards.

import type { ColumnBatch, ColumnData, ColumnValues } from './columns.ts'

/** `batch` without the rows r where drop[from + r] is 1 (its buffers reused). */
export function dropRows(batch: ColumnBatch, drop: Uint8Array, from = 0): ColumnBatch {
  const keep = new Uint8Array(batch.rows)
  let kept = 0
  for (let r = 0; r < batch.rows; r++) kept += keep[r] = drop[from + r] ? 0 : 1
  if (kept === batch.rows) return batch
  const columns = new Map<number, ColumnData>()
  for (const [id, col] of batch.columns) columns.set(id, compact(col, keep, kept))
  return { rows: kept, columns }
}

function compact(col: ColumnData, keep: Uint8Array, kept: number): ColumnData {
  if (col.kind === 'values') return { kind: 'values', values: col.values.filter((_v, r) => keep[r] === 1) }
  const present = col.present
  const rows = keep.length
  // target value index for each kept value; -1 for a dropped one
  const moveTo = new Int32Array(col.count)
  let k = 0
  let w = 0
  let rw = 0 // rows kept so far: presence is moved down in place (rw ≤ r)
  for (let r = 0; r < rows; r++) {
    const has = present ? present[r] : 1
    if (keep[r] && present) present[rw++] = has
    if (has) moveTo[k++] = keep[r] ? w++ : -1
  }
  const d = col.data
  const data = moveValues(d, moveTo, w)
  return { kind: 'flat', present: present ? present.subarray(0, kept) : null, count: w, data }
}

function moveValues(d: ColumnValues, moveTo: Int32Array, count: number): ColumnValues {
  const n = moveTo.length
  switch (d.physical) {
    case 'BYTE_ARRAY': {
      const off = d.offsets
      const bytes = d.bytes
      let at = off[0]
      for (let k = 0; k < n; k++) {
        const t = moveTo[k]
        if (t < 0) continue
        const s = off[k]
        const e = off[k + 1]
        if (at !== s) bytes.copyWithin(at, s, e)
        at += e - s
        off[t + 1] = at // t ≤ k: offsets not yet read are never overwritten
      }
      return { physical: 'BYTE_ARRAY', offsets: off.subarray(0, count + 1), bytes: d.bytes.subarray(0, at) }
    }
    case 'FIXED_LEN_BYTE_ARRAY': {
      const b = d.bytes
      const w = d.width
      for (let k = 0; k < n; k++) {
        const t = moveTo[k]
        if (t >= 0 && t !== k) b.copyWithin(t * w, k * w, (k + 1) * w)
      }
      return { physical: 'FIXED_LEN_BYTE_ARRAY', width: w, bytes: b.subarray(0, count * w) }
    }
    case 'BOOLEAN': {
      const v = d.values
      for (let k = 0; k < n; k++) if (moveTo[k] >= 0) v[moveTo[k]] = v[k]
      return { physical: 'BOOLEAN', values: v.subarray(0, count) }
    }
    default: {
      // numbers moved as 32-bit words: never through a JS number (NaN payloads) or a BigInt
      const words = d.physical === 'INT64' || d.physical === 'DOUBLE' ? 2 : 1
      const v = new Int32Array(d.values.buffer, d.values.byteOffset, n * words)
      if (words === 1)
        for (let k = 0; k < n; k++) {
          if (moveTo[k] >= 0) v[moveTo[k]] = v[k]
        }
      else
        for (let k = 0; k < n; k++) {
          const t = moveTo[k]
          if (t < 0) continue
          v[2 * t] = v[2 * k]
          v[2 * t + 1] = v[2 * k + 1]
        }
      const values = d.values.subarray(0, count)
      return { physical: d.physical, values } as ColumnValues
    }
  }
}
