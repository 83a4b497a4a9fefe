// Rows to data files: one Parquet file, or one per partition on a time-partitioned v3 table,
// written row group by row group as the batches are validated.
import type { LoadedTable } from '../iceberg/catalog/index.ts'
import type { DataFile } from '../iceberg/manifest.ts'
import { currentSchema, defaultSpec } from '../iceberg/metadata.ts'
import { DataFileWriter, type Compression } from '../iceberg/parquet.ts'
import { bindSpec, partitionPath, partitionRecord, type BoundPartitionField, type PartitionRecord } from '../iceberg/partition.ts'
import type { Row, Schema } from '../iceberg/types.ts'

export interface EncodedFile {
  name: string
  bytes: Uint8Array
  dataFile: DataFile
}

/** The Parquet writer refused the rows (thrown by append or finish). */
export class WriterRefused extends Error {}

const ROW_GROUP_ROWS = 131_072

export class PartitionedWriter {
  private readonly schema: Schema
  private readonly bound: BoundPartitionField[] | null
  private readonly files = new Map<string, { partition: PartitionRecord; writer: DataFileWriter }>()
  rows = 0

  constructor(private readonly table: LoadedTable, private readonly compression: Compression) {
    this.schema = currentSchema(table.metadata)
    const spec = defaultSpec(table.metadata)
    this.bound = spec.fields.length > 0 ? bindSpec(spec, this.schema) : null
  }

  append(rows: Row[]): void {
    try {
      for (const row of rows) {
        const partition = this.bound ? partitionRecord(this.bound, row) : {}
        const path = this.bound ? partitionPath(this.bound, partition) : ''
        let f = this.files.get(path)
        if (!f) this.files.set(path, (f = { partition, writer: new DataFileWriter(this.schema, { compression: this.compression, rowGroupSize: ROW_GROUP_ROWS }) }))
        f.writer.append([row])
      }
    } catch (err) {
      throw new WriterRefused(`the Parquet writer refused the rows: ${(err as Error).message}`)
    }
    this.rows += rows.length
  }

  finish(fileStem: string): EncodedFile[] {
    let i = 0
    const out: EncodedFile[] = []
    for (const [path, f] of this.files) {
      let encoded
      try {
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
}

export async function uploadDataFiles(table: LoadedTable, files: EncodedFile[]): Promise<void> {
  await Promise.all(files.map((f) => table.io.write(f.dataFile.filePath, f.bytes, 'application/vnd.apache.parquet')))
}
