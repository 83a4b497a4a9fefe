// Avro Object Container Files (https://avro.apache.org/docs/1.11.1/specification/#object-container-files),
// the format of Iceberg manifests and manifest lists (format v1–v3): what the reader
// (read-container.ts) and the writer (write-container.ts) share. Kept apart so reading code (the
// edge's table sample) never carries the encoder.
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

export type AvroCodec = 'null' | 'deflate'

export const MAGIC = [0x4f, 0x62, 0x6a, 0x01] // "Obj" 1
export const SYNC_SIZE = 16

// Codecs through web-standard streams: Node 20 and workerd both have them.
export async function pipe(data: Uint8Array, transform: TransformStream<Uint8Array, Uint8Array>): Promise<Uint8Array> {
  const stream = new Blob([data]).stream().pipeThrough(transform)
  return new Uint8Array(await new Response(stream).arrayBuffer())
}
