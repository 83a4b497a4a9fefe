// Rows to data files: one Parquet file, or one per partition on a time-partitioned v3 table.
import type { LoadedTable } from '../iceberg/catalog/index.ts'
import type { DataFile } from '../iceberg/manifest.ts'
import { currentSchema, defaultSpec } from '../iceberg/metadata.ts'
import { writeDataFile, type Compression } from '../iceberg/parquet.ts'
import { bindSpec, partitionPath, partitionRecord, type PartitionRecord } from '../iceberg/partition.ts'
import type { Row } from '../iceberg/types.ts'

export interface WrittenFile {
  name: string
  dataFile: DataFile
}

interface Group {
  partition: PartitionRecord
  path: string
  rows: Row[]
}

export function groupByPartition(table: LoadedTable, rows: Row[]): Group[] {
  const spec = defaultSpec(table.metadata)
  if (spec.fields.length === 0) return [{ partition: {}, path: '', rows }]
  const bound = bindSpec(spec, currentSchema(table.metadata))
  const groups = new Map<string, Group>()
  for (const row of rows) {
    const partition = partitionRecord(bound, row)
    const path = partitionPath(bound, partition)
    let g = groups.get(path)
    if (!g) groups.set(path, (g = { partition, path, rows: [] }))
    g.rows.push(row)
  }
  return [...groups.values()]
}

/** Encodes the files (throws if the writer refuses the rows); nothing is uploaded yet. */
export function encodeDataFiles(table: LoadedTable, rows: Row[], compression: Compression, rollId: string): Array<WrittenFile & { bytes: Uint8Array }> {
  const schema = currentSchema(table.metadata)
  return groupByPartition(table, rows).map((g, i) => {
    const { bytes, metrics } = writeDataFile(schema, g.rows, { compression })
    const name = `${rollId}-${String(i).padStart(5, '0')}.parquet`
    const filePath = `${table.metadata.location}/data/${g.path ? `${g.path}/` : ''}${name}`
    return { name, bytes, dataFile: { filePath, fileFormat: 'PARQUET', partition: g.partition, ...metrics } }
  })
}

export async function uploadDataFiles(table: LoadedTable, files: Array<WrittenFile & { bytes: Uint8Array }>): Promise<WrittenFile[]> {
  for (const f of files) await table.io.write(f.dataFile.filePath, f.bytes, 'application/vnd.apache.parquet')
  return files.map(({ name, dataFile }) => ({ name, dataFile }))
}
