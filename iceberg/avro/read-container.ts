// Reading Avro Object Container Files (manifests, manifest lists): the header, then each block
// decoded with the writer's schema. Reading only; see container.ts.

import { MAGIC, pipe, SYNC_SIZE } from './container.ts'
import { ByteReader, decode, utf8Decoder } from './decode.ts'
import { AvroError, collectNames, type AvroSchema, type Named } from './schema.ts'

// Avro's "deflate" codec is raw DEFLATE (RFC 1951): no zlib header, no checksum.
async function decompress(data: Uint8Array, codec: string): Promise<Uint8Array> {
  if (codec === 'null') return data
  if (codec === 'deflate') return pipe(data, new DecompressionStream('deflate-raw'))
  throw new AvroError(`unsupported Avro codec: ${codec} (this reader handles null and deflate)`)
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
