// Parquet pages → leaf columns: the file's schema tree with its levels, and each needed column chunk
// decoded to raw (repetition level, definition level, physical value) triplets. Only hyparquet's page
// decoders are used (its row reader converts lossily); parquet/read-rows.ts assembles rows from these.
import type { ColumnChunk, CompressionCodec, DataPageHeader, PageHeader, SchemaElement } from 'hyparquet'
import { parquetHeader } from 'hyparquet/src/column.js'
import { readDataPage, readDataPageV2 } from 'hyparquet/src/datapage.js'
import { readPlain } from 'hyparquet/src/plain.js'
import { snappyUncompress } from 'hyparquet/src/snappy.js'
import { ParquetReadError } from './values.ts'
import { zstdWasm } from './zstd-wasm.ts'

/** Decompresses one page; `uncompressedSize` is the page header's. May be async. */
export type Decompressor = (input: Uint8Array, uncompressedSize: number) => Uint8Array | Promise<Uint8Array>

// ---- the Parquet schema tree, with levels ----

export interface PNode {
  element: SchemaElement
  children: PNode[]
  parent?: PNode
  /** names from the root (excluded), as path_in_schema */
  path: string[]
  /** max definition level here: optional and repeated nodes on the path, this one included */
  def: number
  /** max repetition level here: repeated nodes on the path, this one included */
  rep: number
}

export function schemaTree(elements: SchemaElement[]): PNode {
  let i = 0
  const build = (parent: PNode | undefined): PNode => {
    const element = elements[i++]
    if (!element) throw new ParquetReadError('truncated Parquet schema')
    const rt = element.repetition_type
    const node: PNode = {
      element,
      children: [],
      parent,
      path: parent ? [...parent.path, element.name] : [],
      def: parent ? parent.def + (rt === 'REQUIRED' ? 0 : 1) : 0,
      rep: parent ? parent.rep + (rt === 'REPEATED' ? 1 : 0) : 0,
    }
    for (let c = 0; c < (element.num_children ?? 0); c++) node.children.push(build(node))
    return node
  }
  return build(undefined)
}

export const isOptional = (n: PNode) => n.element.repetition_type === 'OPTIONAL'
export const isLeaf = (n: PNode) => n.children.length === 0

export function firstLeaf(n: PNode): PNode {
  while (!isLeaf(n)) {
    if (!n.children.length) throw new ParquetReadError(`empty group ${n.path.join('.')}`)
    n = n.children[0]
  }
  return n
}

// ---- leaf columns: decoded triplets ----

export interface Leaf {
  node: PNode
  /** per row group: triplets */
  count: number
  reps: Uint8Array | Uint16Array
  defs: Uint8Array | Uint16Array
  /** the physical value of each triplet at the max definition level (undefined elsewhere) */
  values: unknown[]
  /** the next triplet to consume */
  pos: number
}

export type Decompressors = (codec: CompressionCodec, input: Uint8Array, size: number) => Uint8Array | Promise<Uint8Array>

export async function readChunk(view: DataView, chunk: ColumnChunk, leaf: Leaf, decompress: Decompressors): Promise<void> {
  const md = chunk.meta_data!
  const element = leaf.node.element
  const type = element.type
  if (!type) throw new ParquetReadError(`column ${leaf.node.path.join('.')} has no physical type`)
  const total = Number(md.num_values)
  const dictOffset = md.dictionary_page_offset === undefined ? undefined : Number(md.dictionary_page_offset)
  const dataOffset = Number(md.data_page_offset)
  const start = dictOffset !== undefined && dictOffset > 0 && dictOffset < dataOffset ? dictOffset : dataOffset
  const end = start + Number(md.total_compressed_size)
  const maxDef = leaf.node.def
  const maxRep = leaf.node.rep
  const LevelArray = Math.max(maxDef, maxRep) < 256 ? Uint8Array : Uint16Array
  const reps = new LevelArray(total)
  const defs = new LevelArray(total)
  const values: unknown[] = new Array(total)
  // the decoder's view of the column: the elements from the root down
  const schemaPath: Array<{ element: SchemaElement }> = []
  for (let n: PNode | undefined = leaf.node; n; n = n.parent) schemaPath.unshift({ element: n.element })
  const decoder = { type, element, schemaPath, codec: md.codec, parsers: undefined, pathInSchema: leaf.node.path } as any

  const reader = { view, offset: start }
  let dictionary: ArrayLike<unknown> | undefined
  let n = 0
  while (n < total) {
    if (reader.offset >= end) throw new ParquetReadError(`column ${leaf.node.path.join('.')}: ${total - n} values missing from its pages`)
    const header: PageHeader = parquetHeader(reader)
    const pageStart = reader.offset
    const compressed = new Uint8Array(view.buffer, view.byteOffset + pageStart, header.compressed_page_size)
    reader.offset += header.compressed_page_size
    const uncompressedSize = Number(header.uncompressed_page_size)

    if (header.type === 'DICTIONARY_PAGE') {
      const page = md.codec === 'UNCOMPRESSED' ? compressed : await decompress(md.codec, compressed, uncompressedSize)
      const count = header.dictionary_page_header!.num_values
      dictionary = readPlain({ view: new DataView(page.buffer, page.byteOffset, page.byteLength), offset: 0 }, type, count, element.type_length)
      continue
    }
    let page: { definitionLevels?: number[]; repetitionLevels: number[]; dataPage: ArrayLike<unknown> }
    let encoding: string
    let numValues: number
    if (header.type === 'DATA_PAGE') {
      const daph = header.data_page_header as DataPageHeader
      const bytes = md.codec === 'UNCOMPRESSED' ? compressed : await decompress(md.codec, compressed, uncompressedSize)
      page = readDataPage(bytes, daph, decoder)
      encoding = daph.encoding
      numValues = daph.num_values
    } else if (header.type === 'DATA_PAGE_V2') {
      const daph2 = header.data_page_header_v2!
      let bytes = compressed
      let h = header
      if (daph2.is_compressed !== false && md.codec !== 'UNCOMPRESSED') {
        // levels stay uncompressed in v2; decompress the values behind them here (possibly async)
        const levelsLength = daph2.repetition_levels_byte_length + daph2.definition_levels_byte_length
        const data = await decompress(md.codec, compressed.subarray(levelsLength), uncompressedSize - levelsLength)
        bytes = new Uint8Array(levelsLength + data.length)
        bytes.set(compressed.subarray(0, levelsLength))
        bytes.set(data, levelsLength)
        h = { ...header, uncompressed_page_size: bytes.length, data_page_header_v2: { ...daph2, is_compressed: false } }
      }
      page = readDataPageV2(bytes, h, decoder)
      encoding = daph2.encoding
      numValues = daph2.num_values
    } else {
      continue // an index page: nothing to read
    }
    if (n + numValues > total) throw new ParquetReadError(`column ${leaf.node.path.join('.')}: more values in its pages than in its metadata`)
    const { definitionLevels: dl, repetitionLevels: rl, dataPage } = page
    const useDict = encoding === 'PLAIN_DICTIONARY' || encoding === 'RLE_DICTIONARY'
    if (useDict && !dictionary) throw new ParquetReadError(`column ${leaf.node.path.join('.')}: dictionary page missing`)
    let v = 0
    for (let i = 0; i < numValues; i++, n++) {
      const d = dl?.length ? dl[i] : maxDef
      reps[n] = rl.length ? rl[i] : 0
      defs[n] = d
      if (d === maxDef) {
        const x = dataPage[v++]
        values[n] = useDict ? dictionary![x as number] : x
      }
    }
    if (v !== dataPage.length) throw new ParquetReadError(`column ${leaf.node.path.join('.')}: ${dataPage.length} values for ${v} defined levels`)
  }
  leaf.count = total
  leaf.reps = reps
  leaf.defs = defs
  leaf.values = values
  leaf.pos = 0
}

export function decompressorsOf(custom: Partial<Record<CompressionCodec, Decompressor>> = {}): Decompressors {
  return async (codec, input, size) => {
    let out: Uint8Array
    const own = custom[codec]
    if (own) {
      out = await own(input, size)
    } else if (codec === 'SNAPPY') {
      out = new Uint8Array(size)
      snappyUncompress(input, out)
    } else if (codec === 'ZSTD') {
      // the size bounds the output when a frame does not carry its content size
      out = (await zstdWasm()).decompress(input, { defaultHeapSize: Math.max(size, 1) })
    } else if (codec === 'GZIP') {
      const stream = new Blob([input]).stream().pipeThrough(new DecompressionStream('gzip'))
      out = new Uint8Array(await new Response(stream).arrayBuffer())
    } else {
      throw new ParquetReadError(`no decompressor for ${codec} (pass one in options.decompressors)`)
    }
    if (out.length !== size) throw new ParquetReadError(`${codec} page decompressed to ${out.length} bytes, header says ${size}`)
    return out
  }
}
