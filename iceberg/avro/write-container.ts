// Writing Avro Object Container Files (manifests, manifest lists): header, then blocks of encoded
// records. Writing only; see container.ts.

import { MAGIC, pipe, SYNC_SIZE, type AvroCodec } from './container.ts'
import { ByteWriter, encode, utf8 } from './encode.ts'
import { AvroError, collectNames, type AvroSchema, type Named } from './schema.ts'

const BLOCK_BYTES = 1 << 20 // flush a block once it holds about 1 MiB of encoded records

// Avro's "deflate" codec is raw DEFLATE (RFC 1951): no zlib header, no checksum.
const compress = (data: Uint8Array, codec: AvroCodec) => (codec === 'deflate' ? pipe(data, new CompressionStream('deflate-raw')) : Promise.resolve(data))

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
