// Iceberg data files in Parquet → column buffers (columns.ts), row group by row group: the column-wise
// twin of parquet/read-rows.ts, for rewriting a data file without a JavaScript object per row. Each flat
// top-level column (every primitive but geometry/geography/unknown/variant) is decoded from its pages
// into the buffer layout the writer takes (read-pages.ts); where the file's physical type is already
// that layout (the usual case) the decoded bytes are used as they are, a few common widenings are done
// in place of a JS value per row, and anything else (INT96, millisecond timestamps, a decimal in
// another width...) goes value by value through parquet/values.ts's converter, exactly as
// readDataFile would read it. Nested columns, the types kept as Values, and fields the file lacks
// (initial-default) are read by readDataFile itself and handed over as Values.
//
// Columns are matched to fields by Parquet field_id, or by name in a file without any (as
// parquet/read-rows.ts does). Strings are kept as the file's bytes (not re-validated as UTF-8).
// Runtime-neutral: Uint8Array/DataView only.

import type { SchemaElement } from 'hyparquet'
import { parquetMetadata } from 'hyparquet'
import { buildersFor, layoutOf, type Layout } from './builders.ts'
import { decompressorsOf, isLeaf, schemaTree, type PNode } from './pages.ts'
import { readDataFile, type ReadDataFileOptions } from './read-rows.ts'
import { converter, ParquetReadError, unitOf } from './values.ts'
import type { NestedField, Primitive, Row, Schema } from '../spec/types.ts'
import type { ColumnBatch, ColumnData, ColumnValues } from './columns.ts'
import { readFlatChunk, type RawChunk } from './read-pages.ts'

export type ReadColumnsOptions = ReadDataFileOptions

/** How a flat column's physical values become its layout. */
type Way = 'same' | 'int32to64' | 'float2double' | 'fixed2int32' | 'fixed2int64' | 'convert'

interface FlatPlan {
  field: NestedField
  node: PNode
  layout: Layout
  width: number
  primitive: Primitive
  way: Way
  conv: (v: any) => any
}

/** Every row group of the file (those with rows), fields of `schema` (or only `columns`) keyed by field id. */
export async function readColumns(bytes: Uint8Array, schema: Schema, opts: ReadColumnsOptions = {}): Promise<ColumnBatch[]> {
  const out: ColumnBatch[] = []
  for await (const b of readColumnGroups(bytes, schema, opts)) out.push(b)
  return out
}

/** The file's row groups one at a time, so only one is decoded at once. */
export async function* readColumnGroups(bytes: Uint8Array, schema: Schema, opts: ReadColumnsOptions = {}): AsyncGenerator<ColumnBatch> {
  const buffer = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? (bytes.buffer as ArrayBuffer) : (bytes.slice().buffer as ArrayBuffer)
  const meta = parquetMetadata(buffer, { geoparquet: false })
  const view = new DataView(buffer)
  const root = schemaTree(meta.schema)
  const byId = meta.schema.slice(1).some((e) => e.field_id !== undefined)
  const decompress = decompressorsOf(opts.decompressors)

  const flat: FlatPlan[] = []
  const slow: NestedField[] = []
  for (const field of selectFields(schema, opts.columns)) {
    const node = root.children.find((c) => (byId ? c.element.field_id === field.id : c.element.name === field.name))
    const { layout, width, primitive } = layoutOf(field.type)
    if (!node || layout === 'values' || !primitive) {
      slow.push(field)
      continue
    }
    const where = node.path.join('.')
    if (!isLeaf(node)) throw new ParquetReadError(`column ${where} is a group, the schema says ${field.type}`)
    if (node.element.repetition_type === 'REPEATED') throw new ParquetReadError(`column ${where} is repeated, the schema says ${field.type}`)
    // the converter refuses a physical type the field cannot be read as, as readDataFile does
    const conv = converter(primitive, node.element, where)
    flat.push({ field, node, layout, width, primitive, conv, way: wayOf(primitive, layout, width, node.element) })
  }
  // nested columns, Values-only types and fields the file lacks: readDataFile's rows, sliced per group
  const slowRows: Row[] = slow.length ? await readDataFile(bytes, schema, { columns: slow.map((f) => f.name), decompressors: opts.decompressors }) : []

  let at = 0
  for (const group of meta.row_groups) {
    const rows = Number(group.num_rows)
    if (rows === 0) continue
    const columns = new Map<number, ColumnData>()
    for (const p of flat) {
      const chunk = group.columns.find((c) => c.meta_data && pathEquals(c.meta_data.path_in_schema, p.node.path))
      const where = p.node.path.join('.')
      if (!chunk?.meta_data) throw new ParquetReadError(`row group without column ${where}`)
      if (chunk.file_path) throw new ParquetReadError(`column ${where} is in another file (${chunk.file_path})`)
      const raw = await readFlatChunk(view, chunk, p.node, decompress)
      if (raw.rows !== rows) throw new ParquetReadError(`column ${where}: ${raw.rows} values in a row group of ${rows} rows`)
      columns.set(p.field.id, toColumn(p, raw))
    }
    for (const f of slow) {
      const values = slowRows.slice(at, at + rows).map((r) => r[f.name] ?? null)
      if (values.length !== rows) throw new ParquetReadError(`column ${f.name}: fewer values than rows`)
      const [b] = buildersFor([f], rows)
      for (const v of values) b.appendValue(v)
      columns.set(f.id, b.finish())
    }
    at += rows
    yield { rows, columns }
  }
}

function selectFields(schema: Schema, columns: string[] | undefined): NestedField[] {
  if (!columns) return schema.fields
  const names = new Set(schema.fields.map((f) => f.name))
  for (const c of columns) if (!names.has(c)) throw new ParquetReadError(`no column ${c} in the table schema`)
  const wanted = new Set(columns)
  return schema.fields.filter((f) => wanted.has(f.name))
}

const pathEquals = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i])

/** Whether the file's values are already the layout's bytes, or one of the cheap widenings. */
function wayOf(p: Primitive, layout: Layout, width: number, e: SchemaElement): Way {
  const t = e.type
  switch (p.kind) {
    case 'boolean':
    case 'int':
    case 'date':
    case 'float':
      return t === layout ? 'same' : 'convert'
    case 'long':
      return t === 'INT64' ? 'same' : t === 'INT32' ? 'int32to64' : 'convert'
    case 'double':
      return t === 'DOUBLE' ? 'same' : t === 'FLOAT' ? 'float2double' : 'convert'
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      return t === 'INT64' && (unitOf(e) ?? 'MICROS') === 'MICROS' ? 'same' : 'convert'
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return t === 'INT64' && (unitOf(e) ?? 'NANOS') === 'NANOS' ? 'same' : 'convert'
    case 'decimal': {
      if (t === layout && (t !== 'FIXED_LEN_BYTE_ARRAY' || e.type_length === width)) return 'same'
      if (layout === 'INT64' && t === 'INT32') return 'int32to64'
      if (t === 'FIXED_LEN_BYTE_ARRAY' && layout === 'INT64' && (e.type_length ?? 0) <= 8) return 'fixed2int64'
      if (t === 'FIXED_LEN_BYTE_ARRAY' && layout === 'INT32' && (e.type_length ?? 0) <= 4) return 'fixed2int32'
      return 'convert'
    }
    case 'string':
    case 'binary':
      return t === 'BYTE_ARRAY' ? 'same' : 'convert'
    case 'uuid':
    case 'fixed':
      return t === 'FIXED_LEN_BYTE_ARRAY' && e.type_length === width ? 'same' : 'convert'
    default:
      return 'convert'
  }
}

function toColumn(p: FlatPlan, raw: RawChunk): ColumnData {
  const n = raw.count
  const b = raw.bytes
  let data: ColumnValues
  switch (p.way) {
    case 'same':
      data = sameLayout(p.layout, raw)
      break
    case 'int32to64': {
      const src = new Int32Array(b.buffer, b.byteOffset, n)
      const dst = new Int32Array(n * 2)
      for (let i = 0; i < n; i++) {
        dst[2 * i] = src[i]
        dst[2 * i + 1] = src[i] >> 31
      }
      data = { physical: 'INT64', values: new BigInt64Array(dst.buffer) }
      break
    }
    case 'float2double':
      data = { physical: 'DOUBLE', values: Float64Array.from(new Float32Array(b.buffer, b.byteOffset, n)) }
      break
    case 'fixed2int32':
    case 'fixed2int64': {
      // big-endian two's complement, sign-extended into 32-bit words
      const w = raw.width
      const wide = p.way === 'fixed2int64'
      const dst = new Int32Array(wide ? n * 2 : n)
      for (let i = 0; i < n; i++) {
        let hi = w > 0 && b[i * w] & 0x80 ? -1 : 0
        let lo = hi
        for (let j = 0; j < w; j++) {
          hi = (hi << 8) | (lo >>> 24)
          lo = (lo << 8) | b[i * w + j]
        }
        if (wide) {
          dst[2 * i] = lo
          dst[2 * i + 1] = hi
        } else dst[i] = lo
      }
      data = wide ? { physical: 'INT64', values: new BigInt64Array(dst.buffer) } : { physical: 'INT32', values: dst }
      break
    }
    case 'convert':
      return convertEach(p, raw)
  }
  return { kind: 'flat', present: raw.present, count: n, data }
}

function sameLayout(layout: Layout, raw: RawChunk): ColumnValues {
  const b = raw.bytes
  const n = raw.count
  switch (layout) {
    case 'BOOLEAN':
      return { physical: 'BOOLEAN', values: b }
    case 'INT32':
      return { physical: 'INT32', values: new Int32Array(b.buffer, b.byteOffset, n) }
    case 'INT64':
      return { physical: 'INT64', values: new BigInt64Array(b.buffer, b.byteOffset, n) }
    case 'FLOAT':
      return { physical: 'FLOAT', values: new Float32Array(b.buffer, b.byteOffset, n) }
    case 'DOUBLE':
      return { physical: 'DOUBLE', values: new Float64Array(b.buffer, b.byteOffset, n) }
    case 'BYTE_ARRAY':
      return { physical: 'BYTE_ARRAY', offsets: raw.offsets, bytes: b }
    case 'FIXED_LEN_BYTE_ARRAY':
      return { physical: 'FIXED_LEN_BYTE_ARRAY', width: raw.width, bytes: b }
    default:
      throw new Error(`no flat layout ${layout}`)
  }
}

/** Value by value, as readDataFile reads them: the physical value as hyparquet gives it, then the converter. */
function convertEach(p: FlatPlan, raw: RawChunk): ColumnData {
  const [builder] = buildersFor([p.field], raw.rows)
  const b = raw.bytes
  const w = raw.width
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength)
  const physical = (k: number): unknown => {
    switch (raw.type) {
      case 'BOOLEAN':
        return b[k] === 1
      case 'INT32':
        return view.getInt32(k * 4, true)
      case 'INT64':
        return view.getBigInt64(k * 8, true)
      case 'INT96':
        return (BigInt(view.getInt32(k * 12 + 8, true)) << 64n) | view.getBigInt64(k * 12, true)
      case 'FLOAT':
        return view.getFloat32(k * 4, true)
      case 'DOUBLE':
        return view.getFloat64(k * 8, true)
      case 'BYTE_ARRAY':
        return b.subarray(raw.offsets[k], raw.offsets[k + 1])
      default:
        return b.subarray(k * w, (k + 1) * w)
    }
  }
  let k = 0
  for (let r = 0; r < raw.rows; r++) {
    if (raw.present && !raw.present[r]) builder.appendNull()
    else builder.appendValue(p.conv(physical(k++)))
  }
  return builder.finish()
}
