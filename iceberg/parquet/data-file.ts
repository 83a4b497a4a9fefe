// Iceberg data files in Parquet, through hyparquet-writer, following format/spec.md
// "Appendix A: Format-specific Requirements" (Parquet): every column and every nested child
// (struct fields, list `element`, map `key`/`value`) carries its Iceberg field id; lists use the
// 3-level form; the Iceberg schema JSON is stored under the `iceberg.schema` key, as Java does.
// Runtime-neutral: Uint8Array only, compression comes in as a function (see zstd.ts).

import type { CompressionCodec, Encoding, RowGroup, SchemaElement } from 'hyparquet'
import { ByteWriter, ParquetWriter } from 'hyparquet-writer'
import type { ColumnSource } from 'hyparquet-writer'
import { stringify } from 'lossless-json'
import { decimalRequiredBytes } from '../spec/decimal.ts'
import { dataFileMetrics, type DataFileMetrics, type LeafColumn } from './metrics.ts'
import { isPrimitive, parsePrimitive, type IcebergType, type Primitive, type Row, type Schema } from '../spec/types.ts'

export { decimalRequiredBytes } from '../spec/decimal.ts'

/** A synchronous block compressor (Parquet compresses each page on its own). */
type Compressor = (input: Uint8Array) => Uint8Array

/**
 * How pages are compressed. Snappy is built into hyparquet-writer; zstd and gzip need a
 * compressor from the caller (Iceberg's default, zstd level 3: `await loadZstd()` in zstd.ts).
 */
export type Compression = 'uncompressed' | 'snappy' | { codec: 'zstd' | 'gzip'; compress: Compressor }

export interface WriteDataFileOptions {
  /** rows per row group; default 1,048,576 (PyIceberg's write.parquet.row-group-limit) */
  rowGroupSize?: number
  /** target uncompressed page size in bytes; default 1 MiB (Java's write.parquet.page-size-bytes) */
  pageSize?: number
  /** default 'snappy' (the only codec that needs no compressor) */
  compression?: Compression
  /** metrics truncate(N) for string and binary bounds; default 16 */
  truncateLength?: number
}

export interface DataFile {
  bytes: Uint8Array
  metrics: DataFileMetrics
}

const DEFAULT_ROW_GROUP_SIZE = 1_048_576
const DEFAULT_PAGE_SIZE = 1_048_576

/** Thrown for a schema this writer cannot put in Parquet (variant for now). */
class UnsupportedParquetType extends Error {
  constructor(
    readonly field: string,
    readonly typeName: string,
  ) {
    super(`cannot write ${typeName} column ${field} to Parquet`)
    this.name = 'UnsupportedParquetType'
  }
}

/**
 * A data file written row group by row group: rows given to `append` are held only until a row
 * group is full, then encoded (compressed) and dropped, so a large file never holds every row as
 * JS objects at once.
 */
class DataFileWriter {
  private readonly plan: ParquetPlan
  private readonly writer = new ByteWriter()
  private readonly pq: ParquetWriter
  private readonly rowGroupSize: number
  private buffered: Row[] = []
  private rows = 0

  constructor(
    schema: Schema,
    private readonly opts: WriteDataFileOptions = {},
  ) {
    this.plan = parquetSchema(schema)
    const { codec, compressors } = codecOf(opts.compression ?? 'snappy')
    this.rowGroupSize = opts.rowGroupSize ?? DEFAULT_ROW_GROUP_SIZE
    this.pq = new ParquetWriter({
      writer: this.writer,
      schema: this.plan.elements,
      codec,
      compressors,
      statistics: true,
      kvMetadata: [{ key: 'iceberg.schema', value: schemaJson(schema) }],
    })
  }

  get rowCount(): number {
    return this.rows
  }

  append(rows: Row[]): void {
    for (const row of rows) {
      this.buffered.push(row)
      if (this.buffered.length >= this.rowGroupSize) this.flush()
    }
    this.rows += rows.length
  }

  private flush(): void {
    if (this.buffered.length === 0) return
    const rows = this.buffered
    this.buffered = []
    const columnData: ColumnSource[] = this.plan.columns.map((col) => ({
      name: col.name,
      data: rows.map((row) => row[col.name] ?? null),
      encoding: col.encoding,
    }))
    this.pq.write({ columnData, rowGroupSize: rows.length, pageSize: this.opts.pageSize ?? DEFAULT_PAGE_SIZE })
  }

  finish(): DataFile {
    this.flush()
    annotateGeospatial(this.plan, this.pq.row_groups)
    this.pq.finish()
    const bytes = this.writer.getBytes()
    const metrics = dataFileMetrics(this.plan.leaves, this.pq.row_groups, bytes.length, { truncateLength: this.opts.truncateLength })
    // hyparquet-writer counts rows only from columns; an empty file or a schema of only unknown
    // columns still has the rows the caller gave.
    metrics.recordCount = this.rows
    return { bytes, metrics }
  }
}

/**
 * Writes `rows` (the Value representation of types.ts, already validated against `schema`) as one
 * Parquet file, and returns its bytes and the metrics its manifest entry needs.
 */
export function writeDataFile(schema: Schema, rows: Row[], opts: WriteDataFileOptions = {}): DataFile {
  const w = new DataFileWriter(schema, opts)
  w.append(rows)
  return w.finish()
}

function codecOf(compression: Compression): { codec: CompressionCodec; compressors: Partial<Record<CompressionCodec, Compressor>> } {
  if (compression === 'uncompressed') return { codec: 'UNCOMPRESSED', compressors: {} }
  if (compression === 'snappy') return { codec: 'SNAPPY', compressors: {} }
  const codec: CompressionCodec = compression.codec === 'zstd' ? 'ZSTD' : 'GZIP'
  return { codec, compressors: { [codec]: compression.compress } }
}

// The schema JSON as Java's SchemaParser writes it; lossless so a bigint default stays exact.
function schemaJson(schema: Schema): string {
  return stringify(schema) ?? ''
}

/** The Parquet schema for an Iceberg schema, and what the writer and the metrics need to know. */
export interface ParquetPlan {
  /** flattened depth-first, root first, as Parquet's FileMetaData.schema */
  elements: SchemaElement[]
  /** the top-level columns to write, in schema order (unknown columns are left out) */
  columns: Array<{ name: string; encoding?: Encoding }>
  /** every primitive leaf, depth-first */
  leaves: LeafColumn[]
  /** leaf elements of geometry/geography columns, annotated only after the pages are written */
  geospatial: Array<{ element: SchemaElement; type: Primitive }>
}

export function parquetSchema(schema: Schema): ParquetPlan {
  const plan: ParquetPlan = { elements: [], columns: [], leaves: [], geospatial: [] }
  const root: SchemaElement = { name: 'table', num_children: 0 }
  plan.elements.push(root)
  for (const field of schema.fields) {
    const added = addField(plan, [], field.name, field.id, field.required, field.type, false)
    if (!added) continue
    root.num_children!++
    plan.columns.push({ name: field.name, encoding: added.encoding })
  }
  return plan
}

/**
 * Appends the elements of one field (and its children) to the plan. Returns undefined when the
 * field has nothing to store (unknown, or a struct of only unknown fields: "omit from data files").
 */
function addField(
  plan: ParquetPlan,
  parentPath: string[],
  name: string,
  fieldId: number,
  required: boolean,
  type: IcebergType,
  repeated: boolean,
): { encoding?: Encoding } | undefined {
  const path = [...parentPath, name]
  const repetition_type = required ? 'REQUIRED' : 'OPTIONAL'
  if (isPrimitive(type)) {
    const primitive = parsePrimitive(type)
    if (primitive.kind === 'unknown') return undefined
    if (primitive.kind === 'variant') throw new UnsupportedParquetType(path.join('.'), type)
    const element: SchemaElement = { name, repetition_type, field_id: fieldId, ...physicalType(primitive) }
    plan.elements.push(element)
    plan.leaves.push({ path, fieldId, type: primitive, repeated })
    if (primitive.kind === 'geometry' || primitive.kind === 'geography') plan.geospatial.push({ element, type: primitive })
    return { encoding: encodingOf(primitive) }
  }
  if (type.type === 'struct') {
    const group: SchemaElement = { name, repetition_type, num_children: 0, field_id: fieldId }
    const at = plan.elements.push(group) - 1
    for (const child of type.fields) {
      if (addField(plan, path, child.name, child.id, child.required, child.type, repeated)) group.num_children!++
    }
    if (group.num_children === 0) {
      plan.elements.splice(at, 1)
      return undefined
    }
    return {}
  }
  if (type.type === 'list') {
    // <list-repetition> group <name> (LIST) { repeated group list { <element-repetition> <element-type> element; } }
    const group: SchemaElement = {
      name,
      repetition_type,
      num_children: 1,
      field_id: fieldId,
      converted_type: 'LIST',
      logical_type: { type: 'LIST' },
    }
    const at = plan.elements.push(group, { name: 'list', repetition_type: 'REPEATED', num_children: 1 }) - 2
    if (!addField(plan, [...path, 'list'], 'element', type['element-id'], type['element-required'], type.element, true)) {
      plan.elements.splice(at, 2)
      return undefined
    }
    return {}
  }
  // <map-repetition> group <name> (MAP) { repeated group key_value { required <key-type> key; <value-repetition> <value-type> value; } }
  const group: SchemaElement = {
    name,
    repetition_type,
    num_children: 1,
    field_id: fieldId,
    converted_type: 'MAP',
    logical_type: { type: 'MAP' },
  }
  const entries: SchemaElement = { name: 'key_value', repetition_type: 'REPEATED', num_children: 2 }
  const at = plan.elements.push(group, entries) - 2
  const key = addField(plan, [...path, 'key_value'], 'key', type['key-id'], true, type.key, true)
  const value = addField(plan, [...path, 'key_value'], 'value', type['value-id'], type['value-required'], type.value, true)
  if (!key || !value) {
    plan.elements.splice(at) // a map of unknown keys or values cannot be represented: drop it whole
    plan.leaves = plan.leaves.filter((leaf) => !startsWith(leaf.path, path))
    plan.geospatial = plan.geospatial.filter((g) => plan.elements.includes(g.element))
    return undefined
  }
  return {}
}

function startsWith(path: string[], prefix: string[]): boolean {
  return prefix.every((p, i) => path[i] === p)
}

/** Appendix A's Parquet type for each Iceberg primitive. */
function physicalType(p: Primitive): Omit<SchemaElement, 'name'> {
  switch (p.kind) {
    case 'boolean':
      return { type: 'BOOLEAN' }
    case 'int':
      return { type: 'INT32' }
    case 'long':
      return { type: 'INT64' }
    case 'float':
      return { type: 'FLOAT' }
    case 'double':
      return { type: 'DOUBLE' }
    case 'decimal': {
      const decimal = {
        converted_type: 'DECIMAL' as const,
        precision: p.precision,
        scale: p.scale,
        logical_type: { type: 'DECIMAL' as const, precision: p.precision, scale: p.scale },
      }
      if (p.precision <= 9) return { type: 'INT32', ...decimal }
      if (p.precision <= 18) return { type: 'INT64', ...decimal }
      return { type: 'FIXED_LEN_BYTE_ARRAY', type_length: decimalRequiredBytes(p.precision), ...decimal }
    }
    case 'date':
      return { type: 'INT32', converted_type: 'DATE', logical_type: { type: 'DATE' } }
    case 'time':
      return { type: 'INT64', converted_type: 'TIME_MICROS', logical_type: { type: 'TIME', isAdjustedToUTC: false, unit: 'MICROS' } }
    // Parquet's LogicalTypes.md asks writers to put the legacy TIMESTAMP_MICROS on local timestamps too.
    case 'timestamp':
      return { type: 'INT64', converted_type: 'TIMESTAMP_MICROS', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'MICROS' } }
    case 'timestamptz':
      return { type: 'INT64', converted_type: 'TIMESTAMP_MICROS', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' } }
    case 'timestamp_ns':
      return { type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'NANOS' } }
    case 'timestamptz_ns':
      return { type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'NANOS' } }
    case 'string':
      return { type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' } }
    case 'uuid':
      return { type: 'FIXED_LEN_BYTE_ARRAY', type_length: 16, logical_type: { type: 'UUID' } }
    case 'fixed':
      return { type: 'FIXED_LEN_BYTE_ARRAY', type_length: p.length }
    case 'binary':
      return { type: 'BYTE_ARRAY' }
    // GEOMETRY/GEOGRAPHY are set after writing (annotateGeospatial): hyparquet-writer would take
    // the values for GeoJSON, and ours are WKB already.
    case 'geometry':
    case 'geography':
      return { type: 'BYTE_ARRAY' }
    default:
      throw new Error(`no Parquet type for ${p.kind}`)
  }
}

/** The fewest bytes whose two's complement holds every unscaled value of `precision` digits. */

/**
 * The encoding of a top-level primitive column. Integers and temporals delta-encode
 * (DELTA_BINARY_PACKED: sorted or clustered ids and times shrink to a few bits); strings and the
 * other types take hyparquet-writer's choice, dictionary when it at least halves the column and
 * PLAIN otherwise (Java's dictionary-with-fallback); booleans RLE. hyparquet-writer takes one
 * encoding per top-level column, so nested columns always take the automatic choice.
 */
function encodingOf(p: Primitive): Encoding | undefined {
  switch (p.kind) {
    case 'int':
    case 'long':
    case 'date':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return 'DELTA_BINARY_PACKED'
    case 'decimal':
      return p.precision <= 18 ? 'DELTA_BINARY_PACKED' : undefined
    default:
      return undefined
  }
}

/**
 * Marks geometry/geography leaves with their logical type once the pages are written (set earlier,
 * hyparquet-writer would take the WKB values for GeoJSON), and drops the byte-wise min/max Parquet
 * statistics of those columns (WKB bytes have no meaningful order; the null count stays).
 */
export function annotateGeospatial(plan: ParquetPlan, rowGroups: RowGroup[]): void {
  if (!plan.geospatial.length) return
  for (const { element, type } of plan.geospatial) {
    if (type.kind === 'geometry') {
      element.logical_type = type.crs && type.crs !== 'OGC:CRS84' ? { type: 'GEOMETRY', crs: type.crs } : { type: 'GEOMETRY' }
    } else if (type.kind === 'geography') {
      const algorithm = type.algorithm?.toUpperCase() as 'SPHERICAL' | undefined
      element.logical_type = {
        type: 'GEOGRAPHY',
        ...(type.crs && type.crs !== 'OGC:CRS84' ? { crs: type.crs } : {}),
        ...(algorithm && algorithm !== 'SPHERICAL' ? { algorithm } : {}),
      }
    }
  }
  const geo = new Set(plan.leaves.filter((l) => l.type.kind === 'geometry' || l.type.kind === 'geography').map((l) => l.path.join('\u0000')))
  for (const group of rowGroups) {
    for (const chunk of group.columns) {
      const meta = chunk.meta_data
      if (meta?.statistics && geo.has(meta.path_in_schema.join('\u0000'))) meta.statistics = { null_count: meta.statistics.null_count }
    }
  }
}
