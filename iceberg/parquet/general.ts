// Columns held as one Value per row (struct, list, map, geometry; or any column a producer handed
// over that way) are encoded the general way: Dremel levels (dremel.ts, as hyparquet-writer's) and its column writer,
// exactly as ParquetWriter.write runs them for one top-level column (parquet/data-file.ts's writer), so these
// columns come out as they always have, statistics included.

import type { CompressionCodec, Encoding, SchemaTree } from 'hyparquet'
import { writeColumn } from 'hyparquet-writer/src/column.js'
import type { ColumnEncoder, Compressors, PageIndexes, Writer } from 'hyparquet-writer/src/types.js'
import type { Value } from '../spec/types.ts'
import { shredValues } from './dremel.ts'

export interface GeneralOptions {
  codec: CompressionCodec
  compressors: Compressors
  pageSize: number
}

/** Appends the chunks of every leaf under one top-level column (`path`: root first, then the column). */
export function writeValuesColumn(file: Writer, path: SchemaTree[], values: Value[], encoding: Encoding | undefined, opts: GeneralOptions): PageIndexes[] {
  const out: PageIndexes[] = []
  for (const leafPath of leafPaths(path)) {
    const schemaPath = leafPath.map((node) => node.element)
    const column: ColumnEncoder = {
      columnName: schemaPath
        .slice(1)
        .map((s) => s.name)
        .join('.'),
      element: schemaPath[schemaPath.length - 1],
      schemaPath,
      codec: opts.codec,
      compressors: opts.compressors,
      stats: true,
      pageSize: opts.pageSize,
      columnIndex: false,
      offsetIndex: true,
      encoding,
    }
    const pageData = shredValues(leafPath, values)
    out.push(writeColumn({ writer: file, column, pageData }))
  }
  return out
}

// Every primitive leaf under the column, depth-first (schema order).
function leafPaths(path: SchemaTree[]): SchemaTree[][] {
  const node = path[path.length - 1]
  if (!node.children.length) return [path]
  return node.children.flatMap((child) => leafPaths([...path, child]))
}
