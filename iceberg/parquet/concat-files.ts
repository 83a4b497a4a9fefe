// Merging Parquet files without decoding a value: the row groups' column-chunk bytes of the inputs
// are copied one after another into one file, and a new footer lists the inputs' row groups with
// their offsets shifted. Every page, statistic and encoding stays byte for byte what it was, so no
// value can change (no JS number ever holds a long or a decimal). Only files whose schema elements
// (names, types, repetition, field ids, logical types) and key-value metadata (`iceberg.schema`) are
// byte-identical are merged.
//
// Not carried over: page indexes (ColumnIndex/OffsetIndex hold absolute page offsets) and bloom
// filters; both are optional and only speed up reads. Encrypted files and chunks stored in other
// files are refused.
//
// v3 row lineage (spec "Row Lineage"): a row moved to another file must keep its `_row_id` and
// `_last_updated_sequence_number`. With `lineage`, each input without the two columns gets them
// written (first_row_id + position, and the input's data sequence number) as two extra column
// chunks per row group, so the merged file carries every row's ids explicitly.

import { ByteWriter, ParquetWriter } from 'hyparquet-writer'
import { cloneStruct, field, readThriftStruct, setField, T, writeThriftStruct, type TList, type TStruct } from './thrift.ts'

const ROW_ID_FIELD_ID = 2147483540
const LAST_UPDATED_SEQ_FIELD_ID = 2147483539
const LINEAGE_NAMES = ['_row_id', '_last_updated_sequence_number']
const LINEAGE_IDS = [ROW_ID_FIELD_ID, LAST_UPDATED_SEQ_FIELD_ID]
const MAGIC = 0x31524150 // PAR1

export class NotMergeable extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'NotMergeable'
  }
}

export interface ParquetFooter {
  meta: TStruct
  /** Where the footer's thrift starts; every chunk must end before it. */
  footerStart: number
  /** Schema elements without trailing lineage columns; `lineageColumns` says how many were cut. */
  baseSchema: TStruct[]
  lineageColumns: number
  rowGroups: TStruct[]
}

const list = (s: TStruct, id: number): TStruct[] => (field<TList>(s, id)?.items ?? []) as TStruct[]
const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('')

/** Our lineage schema elements: optional int64 with the reserved field ids. */
function lineageElements(): TStruct[] {
  return LINEAGE_NAMES.map((name, i) => [
    { id: 1, type: T.I32, value: 2 }, // INT64
    { id: 3, type: T.I32, value: 1 }, // OPTIONAL
    { id: 4, type: T.BINARY, value: new TextEncoder().encode(name) },
    { id: 9, type: T.I32, value: LINEAGE_IDS[i] },
  ])
}

export function readFooter(bytes: Uint8Array): ParquetFooter {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (bytes.length < 12 || view.getUint32(0, true) !== MAGIC || view.getUint32(bytes.length - 4, true) !== MAGIC) {
    throw new NotMergeable('not a plain Parquet file (no PAR1 magic; encrypted footers are not supported)')
  }
  const length = view.getUint32(bytes.length - 8, true)
  const footerStart = bytes.length - 8 - length
  if (footerStart < 4) throw new NotMergeable('Parquet footer length is larger than the file')
  const { struct: meta } = readThriftStruct(bytes, footerStart)
  if (field(meta, 8) !== undefined) throw new NotMergeable('encrypted Parquet files are not supported')
  const schema = list(meta, 2)
  let lineageColumns = 0
  const ours = lineageElements().map((e) => hex(writeThriftStruct(e)))
  const tail = schema.slice(-2).map((e) => hex(writeThriftStruct(e)))
  if (tail.length === 2 && tail[0] === ours[0] && tail[1] === ours[1]) lineageColumns = 2
  else if (schema.some((e) => LINEAGE_IDS.includes(field<number>(e, 9) ?? -1))) lineageColumns = -1 // foreign lineage columns
  let baseSchema = schema
  if (lineageColumns === 2) {
    baseSchema = schema.slice(0, -2).map(cloneStruct)
    setField(baseSchema[0], 5, T.I32, (field<number>(baseSchema[0], 5) ?? 0) - 2)
  }
  return { meta, footerStart, baseSchema, lineageColumns, rowGroups: list(meta, 4) }
}

/**
 * What two files must share to be merged: their schema elements and key-value metadata, byte for
 * byte. With `lineage`, lineage columns of our own form are ignored (they are kept or written).
 */
export function mergeKey(footer: ParquetFooter, lineage: boolean): string {
  if (footer.lineageColumns < 0) throw new NotMergeable('the file has lineage columns of another form')
  const schema = lineage ? footer.baseSchema : list(footer.meta, 2)
  const kv = field<TList>(footer.meta, 5)
  return hex(writeThriftStruct([{ id: 1, type: T.LIST, value: { elemType: T.STRUCT, items: schema } }, ...(kv ? [{ id: 2, type: T.LIST, value: kv }] : [])]))
}

export interface ConcatInput {
  bytes: Uint8Array
  footer?: ParquetFooter
  /** v3: this file's first_row_id and data sequence number (needed when it has no lineage columns). */
  lineage?: { firstRowId: bigint; sequenceNumber: bigint }
}

export interface ConcatResult {
  bytes: Uint8Array
  rowCount: bigint
  /** The start of each row group, ascending (the data file's split_offsets). */
  splitOffsets: number[]
}

interface Piece {
  bytes: Uint8Array
  start: number
  length: number
  at?: number
}
interface GroupPlan {
  group: TStruct
  chunks: Array<{ chunk: TStruct; piece: Piece }>
}

/** The byte range of a column chunk: from its first page (dictionary or data) for total_compressed_size bytes. */
function chunkRange(chunk: TStruct, footerStart: number): { meta: TStruct; start: number; length: number } {
  if (field(chunk, 1) !== undefined) throw new NotMergeable('column chunks stored in another file are not supported')
  if (field(chunk, 8) !== undefined || field(chunk, 9) !== undefined) throw new NotMergeable('encrypted column chunks are not supported')
  const meta = field<TStruct>(chunk, 3)
  if (!meta) throw new NotMergeable('a column chunk has no metadata')
  const offsets = [field<bigint>(meta, 9), field<bigint>(meta, 11), field<bigint>(meta, 10)].filter((o): o is bigint => o !== undefined && o > 0n)
  const start = Number(offsets.reduce((a, b) => (b < a ? b : a)))
  const length = Number(field<bigint>(meta, 7) ?? -1n)
  if (length < 0 || start < 4 || start + length > footerStart) throw new NotMergeable('a column chunk lies outside the data pages')
  return { meta, start, length }
}

/** The lineage column chunks for one input: one row group per input row group, same row counts. */
function lineageChunks(footer: ParquetFooter, lineage: { firstRowId: bigint; sequenceNumber: bigint }): { bytes: Uint8Array; footer: ParquetFooter } {
  const writer = new ByteWriter()
  const elements = [
    { name: 'schema', num_children: 2 },
    { name: LINEAGE_NAMES[0], type: 'INT64' as const, repetition_type: 'OPTIONAL' as const, field_id: LINEAGE_IDS[0] },
    { name: LINEAGE_NAMES[1], type: 'INT64' as const, repetition_type: 'OPTIONAL' as const, field_id: LINEAGE_IDS[1] },
  ]
  const pq = new ParquetWriter({ writer, schema: elements, codec: 'UNCOMPRESSED', statistics: true })
  let next = lineage.firstRowId
  for (const group of footer.rowGroups) {
    const n = Number(field<bigint>(group, 3) ?? 0n)
    const ids = Array.from({ length: n }, (_, i) => next + BigInt(i))
    next += BigInt(n)
    pq.write({
      columnData: [
        { name: LINEAGE_NAMES[0], data: ids, encoding: 'DELTA_BINARY_PACKED' },
        { name: LINEAGE_NAMES[1], data: new Array(n).fill(lineage.sequenceNumber), encoding: 'DELTA_BINARY_PACKED' },
      ],
      rowGroupSize: Math.max(n, 1),
    })
  }
  pq.finish()
  const bytes = writer.getBytes()
  const generated = readFooter(bytes)
  if (generated.rowGroups.length !== footer.rowGroups.length) throw new NotMergeable('a file has an empty row group')
  return { bytes, footer: generated }
}

/** Concatenates the inputs' row groups, in order, into one Parquet file. */
export function concatParquet(inputs: ConcatInput[], opts: { lineage?: boolean } = {}): ConcatResult {
  if (inputs.length === 0) throw new Error('nothing to concatenate')
  const footers = inputs.map((i) => i.footer ?? readFooter(i.bytes))
  const lineage = opts.lineage ?? false
  const key = mergeKey(footers[0], lineage)
  if (footers.some((f) => mergeKey(f, lineage) !== key)) throw new NotMergeable('the files differ in schema or key-value metadata')

  const plans: GroupPlan[] = []
  inputs.forEach((input, i) => {
    const footer = footers[i]
    let extra: { bytes: Uint8Array; footer: ParquetFooter } | undefined
    if (lineage && footer.lineageColumns === 0) {
      if (!input.lineage) throw new NotMergeable('a v3 input without lineage columns needs its first_row_id and sequence number')
      extra = lineageChunks(footer, input.lineage)
    }
    footer.rowGroups.forEach((group, g) => {
      const chunks = list(group, 1).map((chunk) => {
        const r = chunkRange(chunk, footer.footerStart)
        return { chunk, piece: { bytes: input.bytes, start: r.start, length: r.length } }
      })
      if (extra) {
        for (const chunk of list(extra.footer.rowGroups[g], 1)) {
          const r = chunkRange(chunk, extra.footer.footerStart)
          chunks.push({ chunk, piece: { bytes: extra.bytes, start: r.start, length: r.length } })
        }
      }
      plans.push({ group, chunks })
    })
  })

  // Lay the chunks out and rewrite the footer's offsets.
  let offset = 4
  let rowCount = 0n
  const splitOffsets: number[] = []
  const groups: TStruct[] = plans.map((plan, ordinal) => {
    const group = cloneStruct(plan.group)
    let compressed = 0n
    let uncompressed = 0n
    const columns = plan.chunks.map(({ chunk, piece }) => {
      const c = cloneStruct(chunk)
      const meta = field<TStruct>(c, 3)!
      const delta = BigInt(offset - piece.start)
      for (const id of [9, 10, 11]) {
        const v = field<bigint>(meta, id)
        if (v !== undefined && v > 0n) setField(meta, id, T.I64, v + delta)
      }
      setField(meta, 14, T.I64, undefined) // bloom filter: not copied
      setField(meta, 15, T.I32, undefined)
      const fileOffset = field<bigint>(c, 2)
      if (fileOffset !== undefined && fileOffset > 0n) setField(c, 2, T.I64, fileOffset + delta)
      for (const id of [4, 5, 6, 7]) setField(c, id, T.I64, undefined) // page indexes: not copied
      compressed += BigInt(piece.length)
      uncompressed += field<bigint>(meta, 6) ?? 0n
      piece.at = offset
      offset += piece.length
      return c
    })
    const start = plan.chunks[0]?.piece.at ?? offset
    splitOffsets.push(start)
    rowCount += field<bigint>(group, 3) ?? 0n
    setField(group, 1, T.LIST, { elemType: T.STRUCT, items: columns })
    setField(group, 2, T.I64, uncompressed)
    if (field(group, 5) !== undefined) setField(group, 5, T.I64, BigInt(start))
    if (field(group, 6) !== undefined) setField(group, 6, T.I64, compressed)
    if (field(group, 7) !== undefined) setField(group, 7, T.I16, plans.length <= 32767 ? ordinal : undefined)
    return group
  })

  const meta = cloneStruct(footers[0].meta)
  if (lineage) {
    const schema = [...footers[0].baseSchema.map(cloneStruct), ...lineageElements()]
    setField(schema[0], 5, T.I32, (field<number>(schema[0], 5) ?? 0) + 2)
    setField(meta, 2, T.LIST, { elemType: T.STRUCT, items: schema })
    const orders = field<TList>(meta, 7)
    if (orders) {
      const leaves = schema.filter((e) => field(e, 5) === undefined).length
      const items = [...orders.items.slice(0, leaves - 2)]
      while (items.length < leaves) items.push([{ id: 1, type: T.STRUCT, value: [] }]) // TypeDefinedOrder
      setField(meta, 7, T.LIST, { elemType: T.STRUCT, items })
    }
  }
  setField(meta, 3, T.I64, rowCount)
  setField(meta, 4, T.LIST, { elemType: T.STRUCT, items: groups })
  const footer = writeThriftStruct(meta)

  const out = new Uint8Array(offset + footer.length + 8)
  const view = new DataView(out.buffer)
  view.setUint32(0, MAGIC, true)
  for (const plan of plans) {
    for (const { piece } of plan.chunks) out.set(piece.bytes.subarray(piece.start, piece.start + piece.length), piece.at!)
  }
  out.set(footer, offset)
  view.setUint32(offset + footer.length, footer.length, true)
  view.setUint32(offset + footer.length + 4, MAGIC, true)
  return { bytes: out, rowCount, splitOffsets }
}
