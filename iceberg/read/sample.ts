// The first rows of a table's newest data file, as JSON text: what an operator looks at to see what
// landed (GET /v1/tables/{…}/sample). Read with the runtime-neutral Parquet reader, so the edge can
// serve it on Workers; the rows are the file's as written (delete files are not applied).
import { decompress as zstdDecompress } from 'fzstd'
import type { LoadedTable } from '../catalog/index.ts'
import { readDataFile } from '../parquet/read-rows.ts'
import { currentSchema } from '../spec/metadata.ts'
import { rowJson } from '../spec/row-json.ts'
import { dataSequenceNumber, readLiveFiles } from './live-files.ts'

// ZSTD (the roller's codec) in pure JS: the zstd wasm the roller uses cannot be instantiated from bytes
// on Workers, and a sample's few pages decompress in milliseconds either way (fzstd is ~2.8× slower).
const DECOMPRESSORS = { ZSTD: (input: Uint8Array, size: number) => zstdDecompress(input, new Uint8Array(size)) }

/** A file larger than this is not read whole for a sample (a Worker has 128 MB); an older, smaller one is. */
const MAX_FILE_BYTES = 32 * 1024 * 1024

export interface TableSample {
  /** The snapshot read; null for a table without one. */
  snapshotId: string | null
  /** The data file the rows come from; null when the table has none to sample. */
  file: string | null
  /** Each row as JSON text (spec/row-json.ts), lossless. */
  rows: string[]
}

export async function sampleRows(table: LoadedTable, limit: number): Promise<TableSample> {
  const live = await readLiveFiles(table)
  if (!live.snapshot) return { snapshotId: null, file: null, rows: [] }
  const snapshotId = live.snapshot['snapshot-id'].toString()
  const candidates = live.data.filter(
    (l) => (l.entry.dataFile.fileFormat ?? 'PARQUET').toUpperCase() === 'PARQUET' && Number(l.entry.dataFile.fileSizeInBytes) <= MAX_FILE_BYTES,
  )
  // Newest: the highest data sequence number; among one commit's files, the last listed.
  const newest = candidates.reduce<(typeof candidates)[number] | undefined>(
    (best, l) => (!best || dataSequenceNumber(l) >= dataSequenceNumber(best) ? l : best),
    undefined,
  )
  if (!newest) return { snapshotId, file: null, rows: [] }
  const schema = currentSchema(table.metadata)
  const rows = await readDataFile(await table.io.read(newest.entry.dataFile.filePath), schema, { maxRows: limit, decompressors: DECOMPRESSORS })
  return { snapshotId, file: newest.entry.dataFile.filePath, rows: rows.slice(0, limit).map((r) => rowJson(schema, r)) }
}
