// Iceberg data files in Parquet → rows in the Value representation of types.ts, exactly: the inverse
// of parquet/data-file.ts, for rewriting a data file while keeping every other row and column as it was.
//
// hyparquet's row reader converts on the way (DECIMAL to lossy numbers, timestamps to Date, maps to
// objects keyed by String(key), a null struct to undefined), so only its page decoders are used here:
// each needed leaf column is decoded to its raw (repetition level, definition level, physical value)
// triplets, and rows are assembled from the levels (Dremel) against the Iceberg schema, converting
// each physical value by the Iceberg type it is read as.
//
// Columns are matched to Iceberg fields by Parquet field_id (Appendix A), at every depth; a field the
// file lacks reads as its initial-default (null when it has none); columns the schema lacks are
// never decoded. A file without any field ids (a migrated Hive file without a name mapping) is
// matched by name instead.
//
// Runtime-neutral: Uint8Array/DataView only; zstd loads the wasm decoder on first use, gzip uses
// DecompressionStream.

import type { ColumnChunk, CompressionCodec, FileMetaData } from 'hyparquet'
import { parquetMetadata } from 'hyparquet'
import { decompressorsOf, firstLeaf, isLeaf, isOptional, readChunk, schemaTree, type Decompressor, type Leaf, type PNode } from './pages.ts'
import { converter, ParquetReadError } from './values.ts'
import { toRow } from '../spec/values.ts'

export { ParquetReadError }

import {
  isPrimitive,
  parsePrimitive,
  type IcebergType,
  type ListType,
  type MapType,
  type NestedField,
  type Row,
  type Schema,
  type StructType,
  type Value,
} from '../spec/types.ts'

export interface ReadDataFileOptions {
  /** top-level field names to read, in any order; default all. Rows hold only these keys. */
  columns?: string[]
  /**
   * Decompressors by codec, over the built-in ones (SNAPPY; ZSTD through the zstd wasm, loaded on
   * first use; GZIP through DecompressionStream). LZ4_RAW, BROTLI and the like need one here.
   */
  decompressors?: Partial<Record<CompressionCodec, Decompressor>>
  /** Stop after the row group that brings the rows read to this many (the rest is not decoded): a sample's first rows. */
  maxRows?: number
}

/** Thrown when a data file does not fit the table schema (a column of another shape or type, a required field missing...). */

/**
 * Reads every row of a Parquet data file as the table's `schema` sees it, in the Value
 * representation of types.ts (row keys in schema order; with `columns`, only those).
 */
export async function readDataFile(bytes: Uint8Array, schema: Schema, opts: ReadDataFileOptions = {}): Promise<Row[]> {
  const buffer = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? (bytes.buffer as ArrayBuffer) : (bytes.slice().buffer as ArrayBuffer)
  const meta = parquetMetadata(buffer, { geoparquet: false })
  const view = new DataView(buffer)

  const fields = selectFields(schema, opts.columns)
  const ctx = new PlanContext(meta)
  const plans = fields.map((f) => ({ name: f.name, plan: ctx.planField(f, ctx.root) }))
  const leaves = [...ctx.leaves.values()]
  const decompress = decompressorsOf(opts.decompressors)

  const rows: Row[] = []
  for (const group of meta.row_groups) {
    if (opts.maxRows !== undefined && rows.length >= opts.maxRows) break
    const numRows = Number(group.num_rows)
    if (numRows === 0) continue
    const chunks = new Map<string, ColumnChunk>()
    for (const chunk of group.columns) {
      if (chunk.meta_data) chunks.set(pathKey(chunk.meta_data.path_in_schema), chunk)
    }
    for (const leaf of leaves) {
      const chunk = chunks.get(pathKey(leaf.node.path))
      if (!chunk?.meta_data) throw new ParquetReadError(`row group without column ${leaf.node.path.join('.')}`)
      if (chunk.file_path) throw new ParquetReadError(`column ${leaf.node.path.join('.')} is in another file (${chunk.file_path})`)
      await readChunk(view, chunk, leaf, decompress)
    }
    for (let r = 0; r < numRows; r++) {
      const row: Row = {}
      for (const { name, plan } of plans) row[name] = read(plan)
      rows.push(row)
    }
    for (const leaf of leaves) {
      if (leaf.pos !== leaf.count) {
        throw new ParquetReadError(`column ${leaf.node.path.join('.')}: ${leaf.count - leaf.pos} values left after ${numRows} rows`)
      }
    }
  }
  return rows
}

function selectFields(schema: Schema, columns: string[] | undefined): NestedField[] {
  if (!columns) return schema.fields
  const byName = new Map(schema.fields.map((f) => [f.name, f]))
  for (const c of columns) if (!byName.has(c)) throw new ParquetReadError(`no column ${c} in the table schema`)
  const wanted = new Set(columns)
  return schema.fields.filter((f) => wanted.has(f.name))
}

const pathKey = (path: string[]) => path.join('\u0000')

// ---- the read plan: Iceberg fields matched to Parquet nodes ----

type Plan =
  | { k: 'const'; value: Value }
  | { k: 'prim'; node: PNode; leaf: Leaf; conv: (v: any) => Value }
  | { k: 'struct'; node: PNode; fields: Array<[string, Plan]>; leaves: Leaf[]; extra: Leaf[] }
  | { k: 'list'; node: PNode; repeated: PNode; element: Plan; leaves: Leaf[]; extra: Leaf[] }
  | { k: 'map'; node: PNode; repeated: PNode; key: Plan; value: Plan; leaves: Leaf[]; extra: Leaf[] }

class PlanContext {
  readonly root: PNode
  readonly leaves = new Map<PNode, Leaf>()
  /** false for files without any field id: matched by name */
  private readonly byId: boolean

  constructor(meta: FileMetaData) {
    this.root = schemaTree(meta.schema)
    this.byId = meta.schema.slice(1).some((e) => e.field_id !== undefined)
  }

  private leaf(node: PNode): Leaf {
    let l = this.leaves.get(node)
    if (!l) {
      l = { node, count: 0, reps: new Uint8Array(0), defs: new Uint8Array(0), values: [], pos: 0 }
      this.leaves.set(node, l)
    }
    return l
  }

  private child(parent: PNode, id: number, name: string): PNode | undefined {
    return parent.children.find((c) => (this.byId ? c.element.field_id === id : c.element.name === name))
  }

  planField(field: NestedField, parent: PNode): Plan {
    const node = this.child(parent, field.id, field.name)
    if (!node) return { k: 'const', value: missingValue(field, parent) }
    return this.plan(field.type, node, field.name)
  }

  private plan(type: IcebergType, node: PNode, name: string): Plan {
    const where = node.path.join('.')
    if (isPrimitive(type)) {
      const p = parsePrimitive(type)
      if (p.kind === 'unknown') return { k: 'const', value: null }
      if (p.kind === 'variant') throw new ParquetReadError(`cannot read variant column ${where}`)
      if (!isLeaf(node)) throw new ParquetReadError(`column ${where} is a group, the schema says ${type}`)
      return { k: 'prim', node, leaf: this.leaf(node), conv: converter(p, node.element, where) }
    }
    if (isLeaf(node)) throw new ParquetReadError(`column ${where} is a primitive, the schema says ${type.type}`)
    if (type.type === 'struct') return this.planStruct(type, node)
    if (type.type === 'list') return this.planList(type, node)
    return this.planMap(type, node, name)
  }

  private planStruct(type: StructType, node: PNode): Plan {
    if (node.element.repetition_type === 'REPEATED' && node.parent?.element.converted_type !== 'LIST') {
      // a repeated group outside a LIST is a legacy list, not a struct
      throw new ParquetReadError(`column ${node.path.join('.')} is repeated, the schema says struct`)
    }
    const fields: Array<[string, Plan]> = type.fields.map((f) => [f.name, this.planField(f, node)])
    const leaves = fields.flatMap(([, p]) => leavesOf(p))
    return { k: 'struct', node, fields, ...this.probe(node, leaves) }
  }

  private planList(type: ListType, node: PNode): Plan {
    const repeated = node.children.length === 1 ? node.children[0] : undefined
    if (repeated?.element.repetition_type !== 'REPEATED') {
      throw new ParquetReadError(`column ${node.path.join('.')} is not a Parquet list`)
    }
    // 3-level lists (the spec's, everyone's today); the backward-compatibility rules of
    // LogicalTypes.md for 2-level ones: a repeated primitive, or a repeated group of several
    // fields or named `array` / `<list>_tuple`, is the element itself.
    const twoLevel =
      isLeaf(repeated) || repeated.children.length !== 1 || repeated.element.name === 'array' || repeated.element.name === `${node.element.name}_tuple`
    const elementNode = twoLevel ? repeated : repeated.children[0]
    const element = this.plan(type.element, elementNode, 'element')
    return { k: 'list', node, repeated, element, ...this.probe(node, leavesOf(element)) }
  }

  private planMap(type: MapType, node: PNode, name: string): Plan {
    const repeated = node.children.length === 1 ? node.children[0] : undefined
    if (repeated?.element.repetition_type !== 'REPEATED' || isLeaf(repeated) || repeated.children.length < 1) {
      throw new ParquetReadError(`column ${node.path.join('.')} (${name}) is not a Parquet map`)
    }
    const keyNode = (this.byId ? this.child(repeated, type['key-id'], 'key') : undefined) ?? repeated.children[0]
    const valueNode = (this.byId ? this.child(repeated, type['value-id'], 'value') : undefined) ?? repeated.children[1]
    const key = this.plan(type.key, keyNode, 'key')
    const value: Plan = valueNode ? this.plan(type.value, valueNode, 'value') : { k: 'const', value: null }
    return { k: 'map', node, repeated, key, value, ...this.probe(node, [...leavesOf(key), ...leavesOf(value)]) }
  }

  /**
   * The leaves a group reads. A group none of whose schema fields are in the file still needs one
   * column for its levels (null or not, how many elements): its first leaf, skipped over.
   */
  private probe(node: PNode, leaves: Leaf[]): { leaves: Leaf[]; extra: Leaf[] } {
    if (leaves.length) return { leaves, extra: [] }
    const l = this.leaf(firstLeaf(node))
    return { leaves: [l], extra: [l] }
  }
}

function leavesOf(p: Plan): Leaf[] {
  switch (p.k) {
    case 'const':
      return []
    case 'prim':
      return [p.leaf]
    default:
      return p.leaves
  }
}

/** A field the file lacks: its initial-default, in the Value form; null when it has none. */
function missingValue(field: NestedField, parent: PNode): Value {
  const d = field['initial-default']
  if (d === undefined || d === null) {
    if (field.required) {
      const where = [...parent.path, field.name].join('.')
      throw new ParquetReadError(`data file lacks required field ${where} (id ${field.id}) and it has no initial-default`)
    }
    return null
  }
  // values.ts converts the spec's single-value JSON form for write-defaults; the same form here.
  const probe: StructType = { type: 'struct', fields: [{ ...field, name: 'v', required: false, 'write-default': d }] }
  const res = toRow(probe, {}, { formatVersion: 3 })
  if (!res.ok) throw new ParquetReadError(`initial-default of field ${field.name} does not fit its type`)
  return res.row.v
}

// ---- assembly ----

/** Moves past one instance of a node at repetition level `rep`: its first triplet and any deeper ones. */
function skip(l: Leaf, rep: number): void {
  l.pos++
  while (l.pos < l.count && l.reps[l.pos] > rep) l.pos++
}

function read(p: Plan): Value {
  switch (p.k) {
    case 'const':
      return p.value !== null && typeof p.value === 'object' ? structuredClone(p.value) : p.value
    case 'prim': {
      const l = p.leaf
      const i = l.pos++
      if (i >= l.count) throw new ParquetReadError(`column ${l.node.path.join('.')}: fewer values than rows`)
      return l.defs[i] === p.node.def ? p.conv(l.values[i]) : null
    }
    case 'struct': {
      if (isNull(p.node, p.leaves)) return null
      const out: { [name: string]: Value } = {}
      for (const [name, fp] of p.fields) out[name] = read(fp)
      for (const l of p.extra) skip(l, p.node.rep)
      return out
    }
    case 'list':
    case 'map': {
      if (isNull(p.node, p.leaves)) return null
      const probe = p.leaves[0]
      if (probe.defs[probe.pos] < p.repeated.def) {
        for (const l of p.leaves) skip(l, p.node.rep)
        return []
      }
      const out: Value[] = []
      const rep = p.repeated.rep
      do {
        out.push(p.k === 'list' ? read(p.element) : [read(p.key), read(p.value)])
        for (const l of p.extra) skip(l, rep)
      } while (probe.pos < probe.count && probe.reps[probe.pos] === rep)
      return out
    }
  }
}

/** Whether this instance of an optional node is null; if so, moves every leaf past it. */
function isNull(node: PNode, leaves: Leaf[]): boolean {
  const probe = leaves[0]
  if (probe.pos >= probe.count) throw new ParquetReadError(`column ${probe.node.path.join('.')}: fewer values than rows`)
  if (!isOptional(node) || probe.defs[probe.pos] >= node.def) return false
  for (const l of leaves) skip(l, node.rep)
  return true
}
