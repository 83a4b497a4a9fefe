// Avro schemas in their JSON form (https://avro.apache.org/docs/1.11.1/specification/#schema-declaration):
// named-type registration and resolution, shared by the binary encoder (encode.ts) and decoder
// (decode.ts). See container.ts for why this is our own code and how values map.

/** An Avro schema in its JSON form. */
export type AvroSchema = string | AvroSchema[] | { type: AvroSchema; [attribute: string]: unknown }

export class AvroError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'AvroError'
  }
}

// ---------- schema resolution (named types) ----------

export type Named = Map<string, { type: string; [k: string]: unknown }>

const PRIMITIVES = new Set(['null', 'boolean', 'int', 'long', 'float', 'double', 'bytes', 'string'])

/** Registers every named type (record, enum, fixed) so later references by name resolve. */
export function collectNames(schema: AvroSchema, named: Named, namespace = ''): void {
  if (typeof schema === 'string') return
  if (Array.isArray(schema)) {
    for (const branch of schema) collectNames(branch, named, namespace)
    return
  }
  const t = schema.type
  if (t === 'record' || t === 'error' || t === 'enum' || t === 'fixed') {
    const name = String(schema.name)
    const ns = typeof schema.namespace === 'string' ? schema.namespace : name.includes('.') ? name.slice(0, name.lastIndexOf('.')) : namespace
    const short = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1) : name
    named.set(ns ? `${ns}.${short}` : short, schema as { type: string })
    named.set(short, schema as { type: string })
    if (t !== 'enum' && t !== 'fixed') {
      for (const f of (schema.fields as { type: AvroSchema }[]) ?? []) collectNames(f.type, named, ns)
    }
    return
  }
  if (t === 'array') collectNames(schema.items as AvroSchema, named, namespace)
  else if (t === 'map') collectNames(schema.values as AvroSchema, named, namespace)
  else if (typeof t !== 'string') collectNames(t, named, namespace)
}

const COMPLEX = new Set(['record', 'error', 'enum', 'fixed', 'array', 'map'])

/** Follows name references and `{"type": <another type>}` wrappers down to a concrete type. */
export function resolve(schema: AvroSchema, named: Named): AvroSchema {
  if (typeof schema === 'string') {
    if (PRIMITIVES.has(schema)) return schema
    const found = named.get(schema)
    if (!found) throw new AvroError(`unknown Avro type name: ${schema}`)
    return found
  }
  if (Array.isArray(schema)) return schema
  const t = schema.type
  if (typeof t === 'string' && (PRIMITIVES.has(t) || COMPLEX.has(t))) return schema
  return resolve(t, named)
}

export function typeName(schema: AvroSchema): string {
  if (typeof schema === 'string') return schema
  if (Array.isArray(schema)) return 'union'
  return typeof schema.type === 'string' ? schema.type : typeName(schema.type)
}
