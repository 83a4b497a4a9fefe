// The metrics of a file made by concatenating other files' row groups, from the inputs' manifest
// entries alone: counts and column sizes add up (the pages are the same bytes), the lower bound is
// the least of the inputs' lower bounds and the upper bound the greatest of their upper bounds,
// compared as values of the column's Iceberg type (Appendix D single-value bytes decoded). A metric
// an input does not have is dropped for the merged file, except a bound of an input whose column
// holds only nulls and NaNs there (it has no bound to give).

import { compareBytes, compareValues } from '../spec/bounds.ts'
import type { DataFile } from '../manifest/manifest.ts'
import { isPrimitive, parsePrimitive, type IcebergType, type NestedField, type Primitive, type Schema, type Value } from '../spec/types.ts'

type Count = number | bigint
type Metrics = Pick<DataFile, 'recordCount' | 'columnSizes' | 'valueCounts' | 'nullValueCounts' | 'nanValueCounts' | 'lowerBounds' | 'upperBounds'>

/** Every field id of the schemas with its primitive type; earlier schemas win (pass the current one first). */
export function primitiveTypes(schemas: Schema[]): Map<number, Primitive> {
  const out = new Map<number, Primitive>()
  const visit = (id: number, t: IcebergType) => {
    if (isPrimitive(t)) {
      if (!out.has(id)) {
        try {
          out.set(id, parsePrimitive(t))
        } catch {
          /* an unknown type gets no bounds */
        }
      }
      return
    }
    if (t.type === 'struct') t.fields.forEach((f: NestedField) => visit(f.id, f.type))
    else if (t.type === 'list') visit(t['element-id'], t.element)
    else {
      visit(t['key-id'], t.key)
      visit(t['value-id'], t.value)
    }
  }
  for (const s of schemas) s.fields.forEach((f) => visit(f.id, f.type))
  return out
}

/** A bound in comparable form, or undefined for a type (or a byte length) we cannot order. */
export function decodeBound(type: Primitive, b: Uint8Array): Value | undefined {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength)
  switch (type.kind) {
    case 'boolean':
      return b.length === 1 ? b[0] !== 0 : undefined
    case 'int':
    case 'date':
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      // A promoted column (int → long, date → timestamp) keeps its 4-byte bounds.
      if (b.length === 4) return BigInt(view.getInt32(0, true))
      if (b.length === 8) return view.getBigInt64(0, true)
      return undefined
    case 'float':
    case 'double':
      if (b.length === 4) return view.getFloat32(0, true)
      if (b.length === 8) return view.getFloat64(0, true)
      return undefined
    case 'decimal': {
      if (b.length === 0) return undefined
      let x = 0n
      for (const byte of b) x = (x << 8n) | BigInt(byte)
      return BigInt.asIntN(b.length * 8, x)
    }
    case 'string':
    case 'uuid':
    case 'fixed':
    case 'binary':
      return b // UTF-8 byte order is code point order
    default:
      return undefined // geometry, geography (bounding boxes), variant, unknown
  }
}

function compareBound(type: Primitive, a: Uint8Array, b: Uint8Array): number | undefined {
  const x = decodeBound(type, a)
  const y = decodeBound(type, b)
  if (x === undefined || y === undefined) return undefined
  if (x instanceof Uint8Array && y instanceof Uint8Array) return compareBytes(x, y)
  return compareValues(x, y)
}

function sumCounts(files: DataFile[], pick: (f: DataFile) => Map<number, Count> | null | undefined): Map<number, Count> | null {
  const maps = files.map(pick)
  if (maps.some((m) => !m)) return null
  const ids = new Set(maps.flatMap((m) => [...m!.keys()]))
  const out = new Map<number, Count>()
  for (const id of ids) {
    if (!maps.every((m) => m!.has(id))) continue
    out.set(
      id,
      maps.reduce((n, m) => n + BigInt(m!.get(id)!), 0n),
    )
  }
  return out
}

/** True when the file's column `id` is known to hold no value that could have a bound. */
function onlyNullsAndNaNs(f: DataFile, id: number): boolean {
  const values = f.valueCounts?.get(id)
  const nulls = f.nullValueCounts?.get(id)
  if (values === undefined || nulls === undefined) return false
  const nans = f.nanValueCounts?.get(id) ?? 0
  return BigInt(values) - BigInt(nulls) - BigInt(nans) === 0n
}

function mergeBounds(files: DataFile[], types: Map<number, Primitive>, upper: boolean): Map<number, Uint8Array> | null {
  const maps = files.map((f) => (upper ? f.upperBounds : f.lowerBounds))
  if (maps.every((m) => !m)) return null
  const ids = new Set(maps.flatMap((m) => (m ? [...m.keys()] : [])))
  const out = new Map<number, Uint8Array>()
  for (const id of ids) {
    const type = types.get(id)
    if (!type) continue
    let best: Uint8Array | undefined
    let ok = true
    files.forEach((f, i) => {
      const b = maps[i]?.get(id)
      if (b === undefined) {
        if (!onlyNullsAndNaNs(f, id)) ok = false
        return
      }
      if (best === undefined) {
        best = b
        return
      }
      const c = compareBound(type, b, best)
      if (c === undefined) ok = false
      else if (upper ? c > 0 : c < 0) best = b
    })
    if (ok && best !== undefined && decodeBound(type, best) !== undefined) out.set(id, best)
  }
  return out
}

/** The metrics of the concatenation of `files` (in any order). */
export function mergeMetrics(files: DataFile[], types: Map<number, Primitive>): Metrics {
  return {
    recordCount: files.reduce((n, f) => n + BigInt(f.recordCount), 0n),
    columnSizes: sumCounts(files, (f) => f.columnSizes),
    valueCounts: sumCounts(files, (f) => f.valueCounts),
    nullValueCounts: sumCounts(files, (f) => f.nullValueCounts),
    nanValueCounts: sumCounts(files, (f) => f.nanValueCounts),
    lowerBounds: mergeBounds(files, types, false),
    upperBounds: mergeBounds(files, types, true),
  }
}
