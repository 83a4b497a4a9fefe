// One column of a row group built from several batches: their buffers concatenated in order (a
// single batch is passed through without a copy). A column a batch lacks is null in its rows.

import type { Value } from '../spec/types.ts'
import type { ColumnData, ColumnValues } from './columns.ts'
import { ColumnDataError, type FlatColumn } from './flat.ts'

export interface Part {
  /** undefined: the batch has no such column (all null) */
  data: ColumnData | undefined
  rows: number
}

/** The column over all parts' rows; undefined only when no part has it (every row null). */
export function concatColumn(name: string, parts: Part[]): ColumnData | undefined {
  const given = parts.filter((p) => p.data !== undefined)
  if (given.length === 0) return undefined
  if (parts.length === 1) return parts[0].data
  const kinds = new Set(given.map((p) => p.data!.kind))
  if (kinds.size > 1) throw new ColumnDataError(`column ${name}: flat in some batches, values in others`)
  if (kinds.has('values')) {
    const values: Value[] = []
    for (const p of parts) {
      if (p.data?.kind === 'values') {
        if (p.data.values.length !== p.rows) throw new ColumnDataError(`column ${name}: ${p.data.values.length} values for ${p.rows} rows`)
        for (const v of p.data.values) values.push(v)
      } else for (let i = 0; i < p.rows; i++) values.push(null)
    }
    return { kind: 'values', values }
  }
  const flats = parts.map((p) => p.data as FlatColumn | undefined)
  const first = given[0].data as FlatColumn
  for (const f of flats) {
    if (f && f.data.physical !== first.data.physical) throw new ColumnDataError(`column ${name}: ${f.data.physical} and ${first.data.physical} buffers`)
  }
  const rows = parts.reduce((n, p) => n + p.rows, 0)
  const count = flats.reduce((n, f) => n + (f?.count ?? 0), 0)
  let present: Uint8Array | null = null
  if (count < rows) {
    present = new Uint8Array(rows)
    let at = 0
    parts.forEach((p, i) => {
      const f = flats[i]
      if (f?.present) present!.set(f.present.subarray(0, p.rows), at)
      else if (f) present!.fill(1, at, at + p.rows)
      at += p.rows
    })
  }
  return {
    kind: 'flat',
    present,
    count,
    data: concatValues(
      first.data,
      flats.map((f) => (f ? { data: f.data, count: f.count } : undefined)),
      count,
    ),
  }
}

function concatValues(like: ColumnValues, parts: Array<{ data: ColumnValues; count: number } | undefined>, count: number): ColumnValues {
  const present = parts.filter((p): p is { data: ColumnValues; count: number } => p !== undefined)
  switch (like.physical) {
    case 'BOOLEAN':
      return {
        physical: 'BOOLEAN',
        values: concatTyped(
          new Uint8Array(count),
          present.map((p) => (p.data as typeof like).values.subarray(0, p.count)),
        ),
      }
    case 'INT32':
      return {
        physical: 'INT32',
        values: concatTyped(
          new Int32Array(count),
          present.map((p) => (p.data as typeof like).values.subarray(0, p.count)),
        ),
      }
    case 'INT64':
      return {
        physical: 'INT64',
        values: concatTyped(
          new BigInt64Array(count),
          present.map((p) => (p.data as typeof like).values.subarray(0, p.count)),
        ),
      }
    case 'FLOAT':
      return {
        physical: 'FLOAT',
        values: concatTyped(
          new Float32Array(count),
          present.map((p) => (p.data as typeof like).values.subarray(0, p.count)),
        ),
      }
    case 'DOUBLE':
      return {
        physical: 'DOUBLE',
        values: concatTyped(
          new Float64Array(count),
          present.map((p) => (p.data as typeof like).values.subarray(0, p.count)),
        ),
      }
    case 'FIXED_LEN_BYTE_ARRAY': {
      const w = like.width
      const bytes = concatTyped(
        new Uint8Array(count * w),
        present.map((p) => (p.data as typeof like).bytes.subarray(0, p.count * w)),
      )
      return { physical: 'FIXED_LEN_BYTE_ARRAY', width: w, bytes }
    }
    case 'BYTE_ARRAY': {
      const parts2 = present.map((p) => p.data as typeof like)
      const total = present.reduce((n, p, i) => n + parts2[i].offsets[p.count] - parts2[i].offsets[0], 0)
      const offsets = new Int32Array(count + 1)
      const bytes = new Uint8Array(total)
      let v = 0
      let at = 0
      present.forEach((p, i) => {
        const { offsets: o, bytes: b } = parts2[i]
        const shift = at - o[0]
        for (let k = 0; k < p.count; k++) offsets[v + k] = o[k] + shift
        bytes.set(b.subarray(o[0], o[p.count]), at)
        at += o[p.count] - o[0]
        v += p.count
      })
      offsets[count] = at
      return { physical: 'BYTE_ARRAY', offsets, bytes }
    }
  }
}

function concatTyped<T extends { set(src: ArrayLike<unknown>, at: number): void; length: number }>(
  out: T,
  parts: Array<{ length: number } & ArrayLike<unknown>>,
): T {
  let at = 0
  for (const p of parts) {
    out.set(p as never, at)
    at += p.length
  }
  return out
}
