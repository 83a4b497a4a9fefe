// Column batches to data files: one Parquet file per partition of the table's default spec (one in
// all for an unpartitioned table), written a row group at a time, so a roll holds at most one row
// group's rows per partition besides the encoded pages.

import type { DataFile } from '../manifest/manifest.ts'
import { currentSchema, defaultSpec, type TableMetadata } from '../spec/metadata.ts'
import type { ColumnBatch, ColumnData } from '../parquet/columns.ts'
import { pageCompression, type PageCodecs } from '../parquet/codecs.ts'
import type { Compression } from '../parquet/data-file.ts'
import { ColumnFileWriter } from '../parquet/write.ts'
import { bindSpec, partitionPath, partitionRecord, type BoundPartitionField, type PartitionRecord } from '../spec/partition.ts'
import { parsePrimitive, type NestedField, type Row, type Schema, type Value } from '../spec/types.ts'
import { columnValues, rowsToColumns, sliceRows, takeRows } from './take.ts'

export interface EncodedFile {
  name: string
  bytes: Uint8Array
  dataFile: DataFile
}

/** The codecs to choose from by a table's properties (codecs.ts), or one codec for every table. */
export type WriterCodecs = PageCodecs | Compression

/** The Parquet writer refused the rows (thrown by append or finish). */
export class WriterRefused extends Error {}

/** Rows per row group unless the table says otherwise (`write.parquet.row-group-limit`, as PyIceberg names it). */
const DEFAULT_ROW_GROUP_ROWS = 131_072

interface OpenFile {
  partition: PartitionRecord
  writer: ColumnFileWriter
  pending: ColumnBatch[]
  pendingRows: number
}

export class PartitionedWriter {
  private readonly schema: Schema
  private readonly bound: BoundPartitionField[] | null
  private readonly rowGroupRows: number
  private readonly compression: Compression
  private readonly files = new Map<string, OpenFile>()
  rows = 0

  constructor(
    private readonly table: { metadata: TableMetadata },
    codecs: WriterCodecs,
  ) {
    this.compression = typeof codecs === 'object' && 'zstd' in codecs ? pageCompression(table.metadata.properties, codecs) : codecs
    this.schema = currentSchema(table.metadata)
    const spec = defaultSpec(table.metadata)
    this.bound = spec.fields.length > 0 ? bindSpec(spec, this.schema) : null
    const limit = Number(table.metadata.properties['write.parquet.row-group-limit'])
    this.rowGroupRows = Number.isInteger(limit) && limit > 0 ? limit : DEFAULT_ROW_GROUP_ROWS
  }

  /** Rows in the Value form of types.ts, already checked against the schema. */
  appendRows(rows: Row[]): void {
    if (rows.length > 0) this.append(rowsToColumns(this.schema.fields, rows))
  }

  /** A batch whose columns follow the table's current schema. */
  append(batch: ColumnBatch): void {
    if (batch.rows === 0) return
    try {
      for (const [path, part] of this.split(batch)) this.add(path, part.partition, part.batch)
    } catch (err) {
      if (err instanceof WriterRefused) throw err
      throw new WriterRefused(`the Parquet writer refused the rows: ${(err as Error).message}`)
    }
    this.rows += batch.rows
  }

  finish(fileStem: string): EncodedFile[] {
    let i = 0
    const out: EncodedFile[] = []
    for (const [path, f] of this.files) {
      let encoded: ReturnType<ColumnFileWriter['finish']>
      try {
        this.flush(f)
        encoded = f.writer.finish()
      } catch (err) {
        throw new WriterRefused(`the Parquet writer refused the rows: ${(err as Error).message}`)
      }
      const name = `${fileStem}-${String(i++).padStart(5, '0')}.parquet`
      const filePath = `${this.table.metadata.location}/data/${path ? `${path}/` : ''}${name}`
      out.push({ name, bytes: encoded.bytes, dataFile: { filePath, fileFormat: 'PARQUET', partition: f.partition, ...encoded.metrics } })
    }
    return out
  }

  private add(path: string, partition: PartitionRecord, batch: ColumnBatch): void {
    let f = this.files.get(path)
    if (!f) this.files.set(path, (f = { partition, writer: new ColumnFileWriter(this.schema, { compression: this.compression }), pending: [], pendingRows: 0 }))
    let from = 0
    while (from < batch.rows) {
      const room = this.rowGroupRows - f.pendingRows
      const to = Math.min(batch.rows, from + room)
      f.pending.push(from === 0 && to === batch.rows ? batch : sliceRows(batch, from, to))
      f.pendingRows += to - from
      from = to
      if (f.pendingRows >= this.rowGroupRows) this.flush(f)
    }
  }

  private flush(f: OpenFile): void {
    if (f.pendingRows === 0) return
    f.writer.writeRowGroup(f.pending)
    f.pending = []
    f.pendingRows = 0
  }

  /** The batch's rows by partition path (the whole batch when the table is unpartitioned or it falls in one). */
  private split(batch: ColumnBatch): Map<string, { partition: PartitionRecord; batch: ColumnBatch }> {
    if (!this.bound) return new Map([['', { partition: {}, batch }]])
    const bound = this.bound
    const sources = new Map<string, Value[]>()
    for (const b of bound) {
      const top = this.schema.fields.find((f) => f.name === b.source.path[0])!
      if (!sources.has(top.name)) sources.set(top.name, columnValues(batch.columns.get(top.id)!, batch.rows, flatValue(top)))
    }
    const groups = new Map<string, { partition: PartitionRecord; rows: number[] }>()
    for (let r = 0; r < batch.rows; r++) {
      const row: Row = {}
      for (const [name, values] of sources) row[name] = values[r]
      const partition = partitionRecord(bound, row)
      const path = partitionPath(bound, partition)
      let g = groups.get(path)
      if (!g) groups.set(path, (g = { partition, rows: [] }))
      g.rows.push(r)
    }
    const out = new Map<string, { partition: PartitionRecord; batch: ColumnBatch }>()
    for (const [path, g] of groups) out.set(path, { partition: g.partition, batch: groups.size === 1 ? batch : takeRows(this.schema.fields, batch, g.rows) })
    return out
  }
}

/** The Value of a flat column's k-th value (partition sources are dates, timestamps and other primitives). */
function flatValue(field: NestedField): (col: Extract<ColumnData, { kind: 'flat' }>, k: number) => Value {
  const decimal = typeof field.type === 'string' && parsePrimitive(field.type).kind === 'decimal'
  const text = new TextDecoder()
  return (col, k) => {
    const d = col.data
    switch (d.physical) {
      case 'BOOLEAN':
        return d.values[k] === 1
      case 'INT32':
        return decimal ? BigInt(d.values[k]) : d.values[k]
      case 'INT64':
        return d.values[k]
      case 'FLOAT':
      case 'DOUBLE':
        return d.values[k]
      case 'BYTE_ARRAY': {
        const bytes = d.bytes.subarray(d.offsets[k], d.offsets[k + 1])
        return field.type === 'string' ? text.decode(bytes) : bytes
      }
      case 'FIXED_LEN_BYTE_ARRAY': {
        const bytes = d.bytes.subarray(k * d.width, (k + 1) * d.width)
        if (!decimal) return bytes
        let v = 0n
        for (const b of bytes) v = (v << 8n) | BigInt(b)
        return BigInt.asIntN(d.width * 8, v)
      }
    }
  }
}

/** Writes the encoded files to the table's storage (one PUT each, in parallel). */
export async function uploadDataFiles(
  table: { io: { write(path: string, bytes: Uint8Array, contentType?: string): Promise<unknown> } },
  files: EncodedFile[],
): Promise<void> {
  await Promise.all(files.map((f) => table.io.write(f.dataFile.filePath, f.bytes, 'application/vnd.apache.parquet')))
}
