// One flat column chunk (a top-level, non-repeated leaf) decoded straight into buffers in its physical
// layout: a presence byte per row, and the non-null values as fixed-width bytes or as offsets + bytes
// (read-columns.ts turns these into column buffers). Unlike parquet/pages.ts no JavaScript value is
// made per value for PLAIN and dictionary pages, the encodings pyarrow and PyIceberg write; the
// rarer encodings go through hyparquet's decoders and are copied in. Data pages v1 and v2.
// Runtime-neutral: Uint8Array/DataView only.

import type { ColumnChunk, DataPageHeader, PageHeader, ParquetType } from 'hyparquet'
import { parquetHeader } from 'hyparquet/src/column.js'
import { deltaByteArray, deltaLengthByteArray } from 'hyparquet/src/delta.js'
import { byteStreamSplit, readRleBitPackedHybrid } from 'hyparquet/src/encoding.js'
import type { Decompressors, PNode } from './pages.ts'
import { ParquetReadError } from './values.ts'
import { deltaInt32, deltaInt64 } from './read-delta.ts'

/** A decoded flat chunk: `count` non-null values of `rows`, in the file's physical type. */
export interface RawChunk {
  type: ParquetType
  rows: number
  /** 1 per row with a value; null when no row is null */
  present: Uint8Array | null
  count: number
  /** bytes per value (BOOLEAN 1, INT96 12, FIXED_LEN_BYTE_ARRAY its length); 0 for BYTE_ARRAY */
  width: number
  /** fixed width: count × width bytes (its own, 8-byte aligned ArrayBuffer); BYTE_ARRAY: the value bytes */
  bytes: Uint8Array
  /** BYTE_ARRAY: value i is bytes[offsets[i], offsets[i + 1]) */
  offsets: Int32Array
}

const WIDTH: Partial<Record<ParquetType, number>> = { BOOLEAN: 1, INT32: 4, INT64: 8, INT96: 12, FLOAT: 4, DOUBLE: 8, BYTE_ARRAY: 0 }

/** Growable output of one chunk. */
class Out {
  bytes: Uint8Array
  offsets: Int32Array
  count = 0
  /** BYTE_ARRAY: bytes used */
  used = 0

  constructor(
    readonly width: number,
    values: number,
    byteHint: number,
  ) {
    this.bytes = new Uint8Array(width ? values * width : Math.max(byteHint, 64))
    this.offsets = new Int32Array(width ? 0 : values + 1)
  }

  room(n: number): void {
    if (this.used + n <= this.bytes.length) return
    const next = new Uint8Array(Math.max(this.used + n, this.bytes.length * 2))
    next.set(this.bytes.subarray(0, this.used))
    this.bytes = next
  }

  /** One BYTE_ARRAY value from src[start, start + len). */
  pushBytes(src: Uint8Array, start: number, len: number): void {
    if (this.used + len > this.bytes.length) this.room(len)
    const b = this.bytes
    let at = this.used
    if (len < 32) for (let j = 0; j < len; j++) b[at++] = src[start + j]
    else {
      b.set(src.subarray(start, start + len), at)
      at += len
    }
    this.used = at
    this.offsets[++this.count] = at
  }
}

/** Decodes a flat column chunk (every row one triplet, definition level 0 or 1). */
export async function readFlatChunk(view: DataView, chunk: ColumnChunk, node: PNode, decompress: Decompressors): Promise<RawChunk> {
  const md = chunk.meta_data!
  const where = node.path.join('.')
  const type = node.element.type
  if (!type) throw new ParquetReadError(`column ${where} has no physical type`)
  const width = type === 'FIXED_LEN_BYTE_ARRAY' ? (node.element.type_length ?? 0) : WIDTH[type]
  if (width === undefined || (type === 'FIXED_LEN_BYTE_ARRAY' && width <= 0)) throw new ParquetReadError(`column ${where}: no width for ${type}`)
  if (node.rep !== 0 || node.def > 1) throw new ParquetReadError(`column ${where} is not a flat column`)
  const total = Number(md.num_values)
  const optional = node.def === 1
  const present = optional ? new Uint8Array(total) : null
  const out = new Out(width, total, Number(md.total_uncompressed_size))
  const dictOffset = md.dictionary_page_offset === undefined ? undefined : Number(md.dictionary_page_offset)
  const dataOffset = Number(md.data_page_offset)
  const start = dictOffset !== undefined && dictOffset > 0 && dictOffset < dataOffset ? dictOffset : dataOffset
  const end = start + Number(md.total_compressed_size)
  const reader = { view, offset: start }
  let dict: RawChunk | undefined
  let n = 0
  while (n < total) {
    if (reader.offset >= end) throw new ParquetReadError(`column ${where}: ${total - n} values missing from its pages`)
    const header: PageHeader = parquetHeader(reader)
    const compressed = new Uint8Array(view.buffer, view.byteOffset + reader.offset, header.compressed_page_size)
    reader.offset += header.compressed_page_size
    const size = Number(header.uncompressed_page_size)
    const inflate = (b: Uint8Array, s: number) => (md.codec === 'UNCOMPRESSED' ? b : decompress(md.codec, b, s))

    if (header.type === 'DICTIONARY_PAGE') {
      const page = await inflate(compressed, size)
      const count = header.dictionary_page_header!.num_values
      const d = new Out(width, count, page.length)
      decodeValues(page, 0, page.length, 'PLAIN', type, count, d, undefined, where)
      dict = { type, rows: count, present: null, count, width, bytes: d.bytes, offsets: d.offsets }
      continue
    }
    let page: Uint8Array
    let encoding: string
    let num: number
    let defsLength: number | undefined // v1: a 4-byte length prefix; v2: the header's
    let nullsV2 = 0
    let valuesAt: number
    if (header.type === 'DATA_PAGE') {
      const h = header.data_page_header as DataPageHeader
      page = await inflate(compressed, size)
      encoding = h.encoding
      num = h.num_values
      valuesAt = -1 // after the levels
    } else if (header.type === 'DATA_PAGE_V2') {
      const h = header.data_page_header_v2!
      encoding = h.encoding
      num = h.num_values
      const levels = h.repetition_levels_byte_length + h.definition_levels_byte_length
      if (h.repetition_levels_byte_length !== 0) throw new ParquetReadError(`column ${where}: repetition levels in a flat column`)
      if (h.is_compressed !== false && md.codec !== 'UNCOMPRESSED') {
        // the levels stay uncompressed in v2; only the values behind them are compressed
        const data = await inflate(compressed.subarray(levels), size - levels)
        page = new Uint8Array(levels + data.length)
        page.set(compressed.subarray(0, levels))
        page.set(data, levels)
      } else page = compressed
      defsLength = h.definition_levels_byte_length
      nullsV2 = h.num_nulls
      valuesAt = levels
    } else {
      continue // an index page: nothing to read
    }
    if (n + num > total) throw new ParquetReadError(`column ${where}: more values in its pages than in its metadata`)
    const pv = new DataView(page.buffer, page.byteOffset, page.byteLength)
    const r = { view: pv, offset: 0 } // the levels come first (no repetition levels in a flat column)
    let defined = num
    if (optional) {
      const defs = present!.subarray(n, n + num)
      if (defsLength === undefined || defsLength > 0) readRleBitPackedHybrid(r, 1, defs, defsLength)
      else if (nullsV2 === 0)
        defs.fill(1) // v2 without level bytes: nothing is null
      else throw new ParquetReadError(`column ${where}: ${nullsV2} nulls and no definition levels`)
      defined = 0
      for (let i = 0; i < num; i++) defined += defs[i]
    }
    if (valuesAt < 0) valuesAt = r.offset
    const before = out.count
    decodeValues(page, valuesAt, page.length, encoding, type, defined, out, dict, where)
    if (out.count - before !== defined) throw new ParquetReadError(`column ${where}: ${out.count - before} values for ${defined} defined levels`)
    n += num
  }
  const nulls = present ? total - out.count : 0
  return {
    type,
    rows: total,
    present: nulls > 0 ? present : null,
    count: out.count,
    width,
    bytes: width ? out.bytes.subarray(0, out.count * width) : out.bytes.subarray(0, out.used),
    offsets: width ? out.offsets : out.offsets.subarray(0, out.count + 1),
  }
}

/** Appends `count` values of one page (page[from, to)) to `out`. */
function decodeValues(
  page: Uint8Array,
  from: number,
  to: number,
  encoding: string,
  type: ParquetType,
  count: number,
  out: Out,
  dict: RawChunk | undefined,
  where: string,
): void {
  if (count === 0) return
  const view = new DataView(page.buffer, page.byteOffset, page.byteLength)
  const reader = { view, offset: from }
  const w = out.width
  const at = out.count
  switch (encoding) {
    case 'PLAIN':
      if (type === 'BOOLEAN') {
        if (from + Math.ceil(count / 8) > to) throw truncated(where)
        for (let i = 0; i < count; i++) out.bytes[at + i] = (page[from + (i >> 3)] >> (i & 7)) & 1
      } else if (w > 0) {
        if (from + count * w > to) throw truncated(where)
        out.bytes.set(page.subarray(from, from + count * w), at * w)
      } else {
        let p = from
        for (let i = 0; i < count; i++) {
          if (p + 4 > to) throw truncated(where)
          const len = view.getUint32(p, true)
          if (p + 4 + len > to) throw truncated(where)
          out.pushBytes(page, p + 4, len)
          p += 4 + len
        }
        return
      }
      break
    case 'PLAIN_DICTIONARY':
    case 'RLE_DICTIONARY': {
      if (!dict) throw new ParquetReadError(`column ${where}: dictionary page missing`)
      const bitWidth = page[reader.offset++]
      const idx = new Int32Array(count)
      if (bitWidth) readRleBitPackedHybrid(reader, bitWidth, idx, to - reader.offset)
      gather(dict, idx, out, where)
      return
    }
    case 'RLE': {
      if (type !== 'BOOLEAN') throw new ParquetReadError(`column ${where}: RLE values of type ${type}`)
      readRleBitPackedHybrid(reader, 1, out.bytes.subarray(at, at + count))
      break
    }
    case 'DELTA_BINARY_PACKED':
      if (type === 'INT32') deltaInt32(reader, count, new Int32Array(out.bytes.buffer, out.bytes.byteOffset + at * 4, count))
      else if (type === 'INT64') deltaInt64(reader, count, new Int32Array(out.bytes.buffer, out.bytes.byteOffset + at * 8, count * 2))
      else throw new ParquetReadError(`column ${where}: DELTA_BINARY_PACKED values of type ${type}`)
      break
    case 'BYTE_STREAM_SPLIT': {
      if (!w || type === 'BOOLEAN' || type === 'INT96') throw new ParquetReadError(`column ${where}: BYTE_STREAM_SPLIT values of type ${type}`)
      const got = byteStreamSplit(reader, count, type, w)
      if (type === 'FIXED_LEN_BYTE_ARRAY') (got as Uint8Array[]).forEach((v, i) => out.bytes.set(v, (at + i) * w))
      else out.bytes.set(new Uint8Array((got as Int32Array).buffer, 0, count * w), at * w)
      break
    }
    case 'DELTA_LENGTH_BYTE_ARRAY':
    case 'DELTA_BYTE_ARRAY': {
      if (type !== 'BYTE_ARRAY' && type !== 'FIXED_LEN_BYTE_ARRAY') throw new ParquetReadError(`column ${where}: ${encoding} values of type ${type}`)
      const got: Uint8Array[] = new Array(count)
      if (encoding === 'DELTA_LENGTH_BYTE_ARRAY') deltaLengthByteArray(reader, count, got)
      else deltaByteArray(reader, count, got)
      for (let i = 0; i < count; i++) {
        if (w === 0) out.pushBytes(got[i], 0, got[i].length)
        else if (got[i].length !== w) throw new ParquetReadError(`column ${where}: a value of ${got[i].length} bytes in a ${w}-byte column`)
        else out.bytes.set(got[i], (at + i) * w)
      }
      if (w === 0) return
      break
    }
    default:
      throw new ParquetReadError(`column ${where}: unsupported encoding ${encoding}`)
  }
  out.count += count
}

/** Dictionary indices → values (fixed width copied in 32-bit words where they fit, never as numbers). */
function gather(dict: RawChunk, idx: Int32Array, out: Out, where: string): void {
  const n = idx.length
  const size = dict.count
  for (let i = 0; i < n; i++) if (idx[i] >>> 0 >= size) throw new ParquetReadError(`column ${where}: dictionary index ${idx[i]} of ${size}`)
  const w = out.width
  const at = out.count
  if (w === 0) {
    for (let i = 0; i < n; i++) {
      const k = idx[i]
      out.pushBytes(dict.bytes, dict.offsets[k], dict.offsets[k + 1] - dict.offsets[k])
    }
    return
  }
  if (w === 4 || w === 8) {
    const words = w >> 2
    const src = new Int32Array(dict.bytes.buffer, dict.bytes.byteOffset, size * words)
    const dst = new Int32Array(out.bytes.buffer, out.bytes.byteOffset + at * w, n * words)
    if (words === 1) for (let i = 0; i < n; i++) dst[i] = src[idx[i]]
    else
      for (let i = 0; i < n; i++) {
        const k = idx[i] << 1
        dst[2 * i] = src[k]
        dst[2 * i + 1] = src[k + 1]
      }
  } else {
    const src = dict.bytes
    const dst = out.bytes
    for (let i = 0; i < n; i++) {
      const s = idx[i] * w
      const d = (at + i) * w
      for (let j = 0; j < w; j++) dst[d + j] = src[s + j]
    }
  }
  out.count += n
}

const truncated = (where: string) => new ParquetReadError(`column ${where}: a page ends inside its values`)
