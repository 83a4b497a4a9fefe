// Iceberg data files in Parquet from column buffers (columns.ts), row group by row group. The
// Parquet schema, field ids, `iceberg.schema` metadata and metrics are parquet/data-file.ts's; only the
// encoding differs: flat columns go straight from their typed arrays to v1 data pages (flat.ts),
// without a JS object per value, and nested/geometry columns go through hyparquet-writer as before
// (general.ts). Chunks are written, and listed in each row group, in schema leaf order.
// Runtime-neutral: Uint8Array/DataView only.

import type { CompressionCodec, FileMetaData, RowGroup, SchemaTree } from 'hyparquet'
import { ByteWriter } from 'hyparquet-writer/src/bytewriter.js'
import { writeIndexes } from 'hyparquet-writer/src/indexes.js'
import { writeMetadata } from 'hyparquet-writer/src/metadata.js'
import { schemaPathResolver } from 'hyparquet-writer/src/schema.js'
import { snappyCompress } from 'hyparquet-writer/src/snappy.js'
import type { Compressors, PageIndexes } from 'hyparquet-writer/src/types.js'
import { stringify } from 'lossless-json'
import { dataFileMetrics } from './metrics.ts'
import { annotateGeospatial, parquetSchema, type Compression, type DataFile, type ParquetPlan, type WriteDataFileOptions } from './data-file.ts'
import { isPrimitive, parsePrimitive, type NestedField, type Primitive, type Schema } from '../spec/types.ts'
import { Bytes } from './bytes.ts'
import type { ColumnBatch, ColumnData } from './columns.ts'
import { concatColumn } from './concat.ts'
import { ColumnDataError, writeFlatChunk, type FlatLeaf, type PageOptions } from './flat.ts'
import { writeValuesColumn } from './general.ts'

export { ColumnDataError }

export interface ColumnFileWriterOptions extends WriteDataFileOptions {
  /**
   * DELTA_BINARY_PACKED for int/long/date/time/timestamp/decimal(≤18) pages where it is smaller
   * than PLAIN; default true. false writes only PLAIN, which Iceberg's vectorized reader (Spark)
   * reads in every version (delta only since Iceberg 1.10).
   */
  delta?: boolean
}

const DEFAULT_PAGE_SIZE = 1_048_576
// "<application> version <semver>", the form parquet-java's VersionParser reads: a created_by it cannot
// parse (hyparquet-writer's plain "hyparquet") makes it ignore the file's binary min/max statistics.
const CREATED_BY = 'lhbox version 0.1.0'
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1

/** A top-level column the file stores, and how. */
interface Planned {
  field: NestedField
  /** root → column, for hyparquet-writer */
  path: SchemaTree[]
  /** set for primitive columns (the only ones a flat buffer can fill) */
  leaf?: FlatLeaf
  encoding: ParquetPlan['columns'][number]['encoding']
}

/**
 * A data file written from column buffers: each `writeRowGroup` encodes (and compresses) one row
 * group and keeps only its bytes; `finish` writes the footer and returns the bytes and the same
 * metrics as parquet/data-file.ts's DataFileWriter. The caller sizes row groups (`rowGroupSize` is not used).
 */
export class ColumnFileWriter {
  private readonly plan: ParquetPlan
  private readonly columns: Planned[]
  private readonly file = new ByteWriter(1 << 20)
  private readonly scratch = new Bytes(1 << 20)
  private readonly rowGroups: RowGroup[] = []
  private readonly indexes: PageIndexes[] = []
  private readonly pages: PageOptions
  private readonly compressors: Compressors
  private rows = 0
  private finished = false

  constructor(
    private readonly schema: Schema,
    private readonly opts: ColumnFileWriterOptions = {},
  ) {
    if (!LITTLE_ENDIAN) throw new Error('ColumnFileWriter needs a little-endian platform (typed arrays are written as they are)')
    this.plan = parquetSchema(schema)
    const resolve = schemaPathResolver(this.plan.elements)
    const stored = new Map(this.plan.columns.map((c) => [c.name, c]))
    this.columns = schema.fields
      .filter((f) => stored.has(f.name))
      .map((field) => {
        const path = resolve([field.name])
        const element = path[path.length - 1].element
        const leaf = isPrimitive(field.type) ? { name: field.name, element, type: parsePrimitive(field.type) as Primitive } : undefined
        return { field, path, leaf, encoding: stored.get(field.name)!.encoding }
      })
    const { codec, compress } = codecOf(opts.compression ?? 'snappy')
    const pageSize = opts.pageSize ?? DEFAULT_PAGE_SIZE
    this.pages = { codec, compress, pageSize, delta: opts.delta ?? true }
    this.compressors = compress ? { [codec]: compress } : {}
    this.file.appendUint32(0x31524150) // PAR1
  }

  get rowCount(): number {
    return this.rows
  }

  /**
   * Encodes one row group from these batches, in order (their rows concatenated). A batch that does
   * not fit the schema throws ColumnDataError and leaves the file as it was.
   */
  writeRowGroup(batches: ColumnBatch[]): void {
    if (this.finished) throw new Error('writeRowGroup after finish')
    const rows = batches.reduce((n, b) => n + b.rows, 0)
    if (rows === 0) return
    if (this.columns.length === 0) {
      this.rows += rows // nothing to store (only unknown columns): rows are counted, as parquet/data-file.ts does
      return
    }
    const start = this.file.offset
    const written: PageIndexes[] = []
    try {
      for (const col of this.columns) {
        const data = concatColumn(
          col.field.name,
          batches.map((b) => ({ data: b.columns.get(col.field.id), rows: b.rows })),
        )
        written.push(...this.writeColumn(col, data, rows))
      }
    } catch (e) {
      // a refused batch leaves the file as it was: the caller may reject it and go on
      this.file.offset = start
      this.file.index = start
      throw e
    }
    this.rows += rows
    this.indexes.push(...written)
    const chunks = written.map((w) => w.chunk)
    let uncompressed = 0n
    for (const c of chunks) uncompressed += c.meta_data!.total_uncompressed_size
    this.rowGroups.push({
      columns: chunks,
      total_byte_size: uncompressed,
      num_rows: BigInt(rows),
      file_offset: BigInt(start),
      total_compressed_size: BigInt(this.file.offset - start),
    })
  }

  private writeColumn(col: Planned, data: ColumnData | undefined, rows: number): PageIndexes[] {
    if (data === undefined) {
      if (col.field.required) throw new ColumnDataError(`column ${col.field.name} is required and missing from the batch`)
      data = { kind: 'values', values: new Array(rows).fill(null) }
    }
    if (data.kind === 'flat') {
      if (!col.leaf) throw new ColumnDataError(`column ${col.field.name} is nested: it takes values, not a flat buffer`)
      return [writeFlatChunk(this.file, this.scratch, col.leaf, data, rows, this.pages)]
    }
    if (data.values.length !== rows) throw new ColumnDataError(`column ${col.field.name}: ${data.values.length} values for ${rows} rows`)
    return writeValuesColumn(this.file, col.path, data.values, col.encoding, {
      codec: this.pages.codec,
      compressors: this.compressors,
      pageSize: this.pages.pageSize,
    })
  }

  /** Writes the footer; returns the file and its metrics. */
  finish(): DataFile {
    if (this.finished) throw new Error('finish called twice')
    this.finished = true
    annotateGeospatial(this.plan, this.rowGroups)
    writeIndexes(this.file, this.indexes)
    const metadata = {
      version: 2,
      created_by: CREATED_BY,
      schema: this.plan.elements,
      num_rows: this.rowGroups.reduce((n, g) => n + g.num_rows, 0n),
      row_groups: this.rowGroups,
      key_value_metadata: [{ key: 'iceberg.schema', value: stringify(this.schema) ?? '' }],
    } as FileMetaData
    writeMetadata(this.file, metadata)
    this.file.appendUint32(0x31524150) // PAR1
    const bytes = this.file.getBytes()
    const metrics = dataFileMetrics(this.plan.leaves, this.rowGroups, bytes.length, { truncateLength: this.opts.truncateLength })
    metrics.recordCount = this.rows
    return { bytes, metrics }
  }
}

function codecOf(compression: Compression): { codec: CompressionCodec; compress?: (input: Uint8Array) => Uint8Array } {
  if (compression === 'uncompressed') return { codec: 'UNCOMPRESSED' }
  if (compression === 'snappy') return { codec: 'SNAPPY', compress: snappyCompress }
  return { codec: compression.codec === 'zstd' ? 'ZSTD' : 'GZIP', compress: compression.compress }
}
