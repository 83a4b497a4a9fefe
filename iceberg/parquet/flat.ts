// One column chunk of a flat (top-level primitive) column, encoded straight from its buffers into
// v1 data pages (DATA_PAGE; read by every Parquet reader, Iceberg's own vectorized one included):
// definition levels as the RLE/bit-packed hybrid for an optional column, values PLAIN, or
// DELTA_BINARY_PACKED for integers where it comes out smaller; pages of about `pageSize` bytes of
// PLAIN values, each compressed on its own.

import type { ColumnChunk, CompressionCodec, Encoding, PageHeader, SchemaElement } from 'hyparquet'
import { writePageHeader } from 'hyparquet-writer/src/datapage.js'
import type { PageIndexes, Writer } from 'hyparquet-writer/src/types.js'
import type { Primitive } from '../spec/types.ts'
import type { Bytes } from './bytes.ts'
import type { ColumnData, ColumnValues } from './columns.ts'
import { writeDeltaInt32, writeDeltaInt64 } from './delta.ts'
import { fixedView, valueWidth, writePlain } from './plain.ts'
import { writeDefinitionLevels } from './rle.ts'
import { flatStatistics } from './stats.ts'

export type FlatColumn = Extract<ColumnData, { kind: 'flat' }>

export interface PageOptions {
  codec: CompressionCodec
  /** undefined: pages are stored as they are */
  compress?: (input: Uint8Array) => Uint8Array
  /** target bytes of PLAIN values per page */
  pageSize: number
  /** try DELTA_BINARY_PACKED for INT32/INT64 pages */
  delta: boolean
}

/** The leaf a flat column is written to. */
export interface FlatLeaf {
  name: string
  element: SchemaElement
  type: Primitive
}

export class ColumnDataError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ColumnDataError'
  }
}

/** Appends the chunk of `col` (`rows` rows) to `file`; returns its metadata and offset index. */
export function writeFlatChunk(file: Writer, scratch: Bytes, leaf: FlatLeaf, col: FlatColumn, rows: number, opts: PageOptions): PageIndexes {
  const { data, count } = col
  check(leaf, col, rows)
  const optional = leaf.element.repetition_type !== 'REQUIRED'
  const present = count < rows ? col.present : null
  const statistics = flatStatistics(leaf.type, data, count, rows)

  const chunkStart = file.offset
  const width = valueWidth(data)
  const rowsPerPage = data.physical === 'BOOLEAN' ? opts.pageSize * 8 : Math.max(1, Math.floor(opts.pageSize / Math.max(width, 1)))
  const words = data.physical === 'INT64' ? new Int32Array(data.values.buffer, data.values.byteOffset, data.values.length * 2) : undefined
  const pageCounts = new Map<Encoding, number>()
  const pageLocations = []
  let uncompressed = 0
  let r = 0
  let v = 0
  while (r < rows) {
    // the page: rows [r, r1), values [v, v1)
    let r1: number
    let v1: number
    if (data.physical === 'BYTE_ARRAY') {
      ;[r1, v1] = byteArrayPageEnd(data.offsets, present, r, v, rows, opts.pageSize)
    } else {
      r1 = Math.min(rows, r + rowsPerPage)
      v1 = present ? v + ones(present, r, r1) : r1
    }
    if (v1 > count) throw new ColumnDataError(`column ${leaf.name}: more present rows than values (${count})`)

    scratch.pos = 0
    if (optional) {
      scratch.ensure(4)
      scratch.pos = 4
      if (present) writeDefinitionLevels(scratch, present, r, r1)
      else {
        scratch.varint((r1 - r) * 2) // no nulls: one RLE run of 1s
        scratch.u8(1)
      }
      scratch.view.setInt32(0, scratch.pos - 4, true) // v1 pages prefix the levels with their length
    }
    let body: Uint8Array | undefined
    let encoding: Encoding = 'PLAIN'
    const valuesStart = scratch.pos
    if (opts.delta && v1 - v > 1 && (words || data.physical === 'INT32')) {
      const ok = words ? writeDeltaInt64(scratch, words, v, v1) : writeDeltaInt32(scratch, (data as { values: Int32Array }).values, v, v1)
      if (ok && scratch.pos - valuesStart < (v1 - v) * width) encoding = 'DELTA_BINARY_PACKED'
      else scratch.pos = valuesStart
    }
    if (encoding === 'PLAIN') {
      if (!optional) body = fixedView(data, v, v1) // the buffer's own bytes: no copy
      if (!body) writePlain(scratch, data, v, v1)
    }
    body ??= scratch.bytes()
    const stored = opts.compress ? opts.compress(body) : body

    const pageStart = file.offset
    const header: PageHeader = {
      type: 'DATA_PAGE',
      uncompressed_page_size: body.length,
      compressed_page_size: stored.length,
      data_page_header: {
        num_values: r1 - r,
        encoding,
        definition_level_encoding: 'RLE',
        repetition_level_encoding: 'RLE',
      },
    }
    writePageHeader(file, header)
    uncompressed += file.offset - pageStart + body.length
    file.appendBytes(stored)
    pageLocations.push({ offset: BigInt(pageStart), compressed_page_size: file.offset - pageStart, first_row_index: BigInt(r) })
    pageCounts.set(encoding, (pageCounts.get(encoding) ?? 0) + 1)
    r = r1
    v = v1
  }
  if (v !== count) throw new ColumnDataError(`column ${leaf.name}: ${count} values for ${v} present rows`)

  const encodings: Encoding[] = optional ? ['RLE', ...pageCounts.keys()] : [...pageCounts.keys()]
  const chunk: ColumnChunk = {
    file_offset: BigInt(chunkStart),
    meta_data: {
      type: leaf.element.type!,
      encodings,
      path_in_schema: [leaf.name],
      codec: opts.codec,
      num_values: BigInt(rows),
      total_uncompressed_size: BigInt(uncompressed),
      total_compressed_size: BigInt(file.offset - chunkStart),
      data_page_offset: BigInt(chunkStart),
      statistics,
      encoding_stats: [...pageCounts].map(([enc, n]) => ({ page_type: 'DATA_PAGE' as const, encoding: enc, count: n })),
    },
  }
  return { chunk, offsetIndex: { page_locations: pageLocations } }
}

function ones(present: Uint8Array, from: number, to: number): number {
  let n = 0
  for (let i = from; i < to; i++) n += present[i]
  return n
}

// Rows [r, r1) and values [v, v1) whose PLAIN bytes reach `pageSize` (at least one row); a null row
// counts as one byte so a page of nulls ends too.
function byteArrayPageEnd(offsets: Int32Array, present: Uint8Array | null, r: number, v: number, rows: number, pageSize: number): [number, number] {
  let size = 0
  if (!present) {
    // no nulls: rows are values; the first v1 whose bytes reach pageSize, by bisection
    let lo = v + 1
    let hi = v + (rows - r)
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (offsets[mid] - offsets[v] + 4 * (mid - v) >= pageSize) hi = mid
      else lo = mid + 1
    }
    return [r + (lo - v), lo]
  }
  let r1 = r
  let v1 = v
  while (r1 < rows && size < pageSize) {
    if (present[r1]) {
      size += 4 + offsets[v1 + 1] - offsets[v1]
      v1++
    } else {
      size++
    }
    r1++
  }
  return [r1, v1]
}

const PHYSICAL_OF: Record<ColumnValues['physical'], string> = {
  BOOLEAN: 'BOOLEAN',
  INT32: 'INT32',
  INT64: 'INT64',
  FLOAT: 'FLOAT',
  DOUBLE: 'DOUBLE',
  BYTE_ARRAY: 'BYTE_ARRAY',
  FIXED_LEN_BYTE_ARRAY: 'FIXED_LEN_BYTE_ARRAY',
}

// Shape checks that are cheap (no pass over the values): a wrong buffer would write a corrupt file.
function check(leaf: FlatLeaf, col: FlatColumn, rows: number): void {
  const { data, count, present } = col
  const where = `column ${leaf.name}`
  if (PHYSICAL_OF[data.physical] !== leaf.element.type) {
    throw new ColumnDataError(`${where}: ${data.physical} buffer for a Parquet ${leaf.element.type} column`)
  }
  if (!Number.isInteger(count) || count < 0 || count > rows) throw new ColumnDataError(`${where}: count ${count} for ${rows} rows`)
  if (present ? present.length < rows : count !== rows) {
    throw new ColumnDataError(`${where}: ${present ? `present holds ${present.length} rows of ${rows}` : `${count} values for ${rows} rows and no present`}`)
  }
  if (count < rows && leaf.element.repetition_type === 'REQUIRED') throw new ColumnDataError(`${where} is required and has ${rows - count} nulls`)
  let length: number
  switch (data.physical) {
    case 'BYTE_ARRAY':
      length = data.offsets.length - 1
      if (data.offsets[count] > data.bytes.length) throw new ColumnDataError(`${where}: offsets run past the bytes`)
      break
    case 'FIXED_LEN_BYTE_ARRAY':
      if (data.width !== leaf.element.type_length) throw new ColumnDataError(`${where}: width ${data.width}, the column's is ${leaf.element.type_length}`)
      length = Math.floor(data.bytes.length / data.width)
      break
    default:
      length = data.values.length
  }
  if (length < count) throw new ColumnDataError(`${where}: ${length} values in the buffer, count says ${count}`)
}
