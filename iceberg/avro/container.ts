// Avro Object Container Files (https://avro.apache.org/docs/1.11.1/specification/#object-container-files),
// the format of Iceberg manifests and manifest lists (format v1–v3).
//
// Why our own codec instead of avsc: Iceberg readers resolve manifest columns by the `field-id`
// attributes in the file's schema, which avsc drops; snapshot ids are 63-bit longs, which avsc
// rejects without a custom type; and avsc works on Node `Buffer`s, while this library must run in
// workerd too. The schema is kept as the exact JSON text given by the caller and written verbatim
// into `avro.schema`; records are encoded by walking that schema. Plain Uint8Array/DataView only.
//
// Value mapping: null ↔ null, boolean ↔ boolean, int/float/double ↔ number, long ↔ bigint
// (a number is accepted on write), string ↔ string, bytes/fixed ↔ Uint8Array, enum ↔ symbol string,
// array ↔ array, map ↔ Map<string, …> (a plain object is accepted on write), record ↔ object keyed by
// field name, union ↔ the branch's value (the first branch that fits is written).

import { AvroError, ByteReader, ByteWriter, collectNames, decode, encode, utf8, utf8Decoder, type AvroSchema, type Named } from './codec.ts'

export type { AvroSchema } from './codec.ts'

export type AvroCodec = 'null' | 'deflate'

const MAGIC = [0x4f, 0x62, 0x6a, 0x01] // "Obj" 1
const SYNC_SIZE = 16
const BLOCK_BYTES = 1 << 20 // flush a block once it holds about 1 MiB of encoded records

// ---------- codecs (web-standard streams: Node 20 and workerd both have them) ----------

async function pipe(data: Uint8Array, transform: TransformStream<Uint8Array, Uint8Array>): Promise<Uint8Array> {
  const stream = new Blob([data]).stream().pipeThrough(transform)
  return new Uint8Array(await new Response(stream).arrayBuffer())
}

// Avro's "deflate" codec is raw DEFLATE (RFC 1951): no zlib header, no checksum.
const compress = (data: Uint8Array, codec: AvroCodec) => (codec === 'deflate' ? pipe(data, new CompressionStream('deflate-raw')) : Promise.resolve(data))

async function decompress(data: Uint8Array, codec: string): Promise<Uint8Array> {
  if (codec === 'null') return data
  if (codec === 'deflate') return pipe(data, new DecompressionStream('deflate-raw'))
  throw new AvroError(`unsupported Avro codec: ${codec} (this reader handles null and deflate)`)
}

// ---------- container files ----------

export interface AvroWriteOptions {
  /** The writer schema as JSON text; written verbatim so attributes like `field-id` survive. */
  schemaJson: string
  /** Extra header metadata (`avro.schema` and `avro.codec` are set by the writer). */
  metadata?: Record<string, string>
  codec?: AvroCodec
  /** 16 bytes; random when omitted. Tests pass a fixed one for reproducible output. */
  syncMarker?: Uint8Array
}

/** Encodes records into a complete Avro Object Container File. */
export async function writeAvroFile(records: readonly unknown[], options: AvroWriteOptions): Promise<Uint8Array> {
  const schema = JSON.parse(options.schemaJson) as AvroSchema
  const named: Named = new Map()
  collectNames(schema, named)
  const codec = options.codec ?? 'deflate'
  const sync = options.syncMarker ?? crypto.getRandomValues(new Uint8Array(SYNC_SIZE))
  if (sync.length !== SYNC_SIZE) throw new AvroError('sync marker must be 16 bytes')

  const out = new ByteWriter()
  out.raw(Uint8Array.from(MAGIC))
  const meta = new Map<string, string>(Object.entries(options.metadata ?? {}))
  meta.set('avro.schema', options.schemaJson)
  meta.set('avro.codec', codec)
  out.long(meta.size)
  for (const [k, v] of meta) {
    out.bytes(utf8.encode(k))
    out.bytes(utf8.encode(v))
  }
  out.long(0)
  out.raw(sync)

  let block = new ByteWriter()
  let count = 0
  const flush = async () => {
    if (count === 0) return
    const data = await compress(block.result(), codec)
    out.long(count)
    out.bytes(data)
    out.raw(sync)
    block = new ByteWriter()
    count = 0
  }
  for (const record of records) {
    encode(block, schema, record, named, '')
    count++
    if (block.pos >= BLOCK_BYTES) await flush()
  }
  await flush()
  return out.result()
}

export interface AvroFile {
  /** The writer schema exactly as stored in the file. */
  schemaJson: string
  schema: AvroSchema
  /** Header metadata decoded as UTF-8 (includes `avro.schema` and `avro.codec`). */
  metadata: Record<string, string>
  records: unknown[]
}

/** Reads a whole Avro Object Container File, decoding records with the writer's schema. */
export async function readAvroFile(bytes: Uint8Array): Promise<AvroFile> {
  const r = new ByteReader(bytes)
  const magic = r.take(4)
  if (!MAGIC.every((b, i) => magic[i] === b)) throw new AvroError('not an Avro object container file')
  // The header's metadata is an Avro map<bytes>: the record decoder reads it.
  const header = decode(r, { type: 'map', values: 'bytes' }, new Map()) as Map<string, Uint8Array>
  const metadata: Record<string, string> = Object.fromEntries([...header].map(([k, v]) => [k, utf8Decoder.decode(v)]))
  const sync = r.take(SYNC_SIZE).slice()
  const schemaJson = metadata['avro.schema']
  if (schemaJson === undefined) throw new AvroError('Avro file has no avro.schema')
  const schema = JSON.parse(schemaJson) as AvroSchema
  const named: Named = new Map()
  collectNames(schema, named)
  const codec = metadata['avro.codec'] ?? 'null'
  if (codec !== 'null' && codec !== 'deflate') throw new AvroError(`unsupported Avro codec: ${codec} (this reader handles null and deflate)`)

  const records: unknown[] = []
  while (r.pos < bytes.length) {
    const count = r.int()
    const data = await decompress(r.bytes(), codec)
    const br = new ByteReader(data)
    for (let i = 0; i < count; i++) records.push(decode(br, schema, named))
    const marker = r.take(SYNC_SIZE)
    if (!marker.every((b, i) => b === sync[i])) throw new AvroError('Avro sync marker mismatch (corrupt file)')
  }
  return { schemaJson, schema, metadata, records }
}
