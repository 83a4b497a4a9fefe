// The Avro binary encoding (https://avro.apache.org/docs/1.11.1/specification/#binary-encoding),
// driven by a schema in its JSON form. Used by avro/container.ts for container files; see there for why this
// is our own code and how values map.

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
function resolve(schema: AvroSchema, named: Named): AvroSchema {
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

function typeName(schema: AvroSchema): string {
  if (typeof schema === 'string') return schema
  if (Array.isArray(schema)) return 'union'
  return typeof schema.type === 'string' ? schema.type : typeName(schema.type)
}

// ---------- binary encoding ----------

export class ByteWriter {
  buf = new Uint8Array(4096)
  pos = 0
  private view = new DataView(this.buf.buffer)

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return
    let size = this.buf.length * 2
    while (size < this.pos + n) size *= 2
    const next = new Uint8Array(size)
    next.set(this.buf.subarray(0, this.pos))
    this.buf = next
    this.view = new DataView(next.buffer)
  }

  byte(b: number): void {
    this.ensure(1)
    this.buf[this.pos++] = b
  }

  raw(bytes: Uint8Array): void {
    this.ensure(bytes.length)
    this.buf.set(bytes, this.pos)
    this.pos += bytes.length
  }

  /** Zig-zag varint of a 64-bit signed value. */
  long(v: number | bigint): void {
    if (typeof v === 'number' && Number.isSafeInteger(v) && Math.abs(v) < 2 ** 52) {
      let z = v >= 0 ? v * 2 : -v * 2 - 1
      while (z >= 0x80) {
        this.byte((z % 0x80) | 0x80)
        z = Math.floor(z / 0x80)
      }
      this.byte(z)
      return
    }
    const b = BigInt(v)
    if (b < -(2n ** 63n) || b >= 2n ** 63n) throw new AvroError(`long out of range: ${b}`)
    let z = BigInt.asUintN(64, (b << 1n) ^ (b >> 63n))
    while (z >= 0x80n) {
      this.byte(Number(z & 0x7fn) | 0x80)
      z >>= 7n
    }
    this.byte(Number(z))
  }

  float(v: number): void {
    this.ensure(4)
    this.view.setFloat32(this.pos, v, true)
    this.pos += 4
  }

  double(v: number): void {
    this.ensure(8)
    this.view.setFloat64(this.pos, v, true)
    this.pos += 8
  }

  bytes(v: Uint8Array): void {
    this.long(v.length)
    this.raw(v)
  }

  result(): Uint8Array {
    return this.buf.slice(0, this.pos)
  }
}

export const utf8 = new TextEncoder()
export const utf8Decoder = new TextDecoder()

function fits(schema: AvroSchema, value: unknown, named: Named): boolean {
  const s = resolve(schema, named)
  switch (typeName(s)) {
    case 'null':
      return value === null || value === undefined
    case 'boolean':
      return typeof value === 'boolean'
    case 'int':
      return typeof value === 'number' && Number.isInteger(value)
    case 'long':
      return typeof value === 'bigint' || (typeof value === 'number' && Number.isInteger(value))
    case 'float':
    case 'double':
      return typeof value === 'number'
    case 'string':
      return typeof value === 'string'
    case 'enum':
      return typeof value === 'string'
    case 'bytes':
    case 'fixed':
      return value instanceof Uint8Array
    case 'array':
      return Array.isArray(value)
    case 'map':
      return value instanceof Map || (typeof value === 'object' && value !== null && !Array.isArray(value))
    case 'record':
    case 'error':
      return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array)
    default:
      return false
  }
}

export function encode(w: ByteWriter, schema: AvroSchema, value: unknown, named: Named, path: string): void {
  const s = resolve(schema, named)
  if (Array.isArray(s)) {
    const i = s.findIndex((b) => fits(b, value, named))
    if (i < 0) throw new AvroError(`${path}: value ${String(value)} fits no branch of the union`)
    w.long(i)
    encode(w, s[i], value, named, path)
    return
  }
  const t = typeName(s)
  const bad = (): never => {
    throw new AvroError(`${path}: expected ${t}, got ${value === null ? 'null' : typeof value}`)
  }
  switch (t) {
    case 'null':
      if (value !== null && value !== undefined) bad()
      return
    case 'boolean':
      if (typeof value !== 'boolean') bad()
      w.byte(value ? 1 : 0)
      return
    case 'int':
      if (typeof value !== 'number' || !Number.isInteger(value) || value < -(2 ** 31) || value >= 2 ** 31) bad()
      w.long(value as number)
      return
    case 'long':
      if (typeof value !== 'bigint' && (typeof value !== 'number' || !Number.isInteger(value))) bad()
      w.long(value as number | bigint)
      return
    case 'float':
      if (typeof value !== 'number') bad()
      w.float(value as number)
      return
    case 'double':
      if (typeof value !== 'number') bad()
      w.double(value as number)
      return
    case 'string':
      if (typeof value !== 'string') bad()
      w.bytes(utf8.encode(value as string))
      return
    case 'bytes':
      if (!(value instanceof Uint8Array)) bad()
      w.bytes(value as Uint8Array)
      return
    case 'fixed': {
      const size = (s as unknown as { size: number }).size
      if (!(value instanceof Uint8Array) || value.length !== size) bad()
      w.raw(value as Uint8Array)
      return
    }
    case 'enum': {
      const i = ((s as unknown as { symbols: string[] }).symbols ?? []).indexOf(value as string)
      if (i < 0) bad()
      w.long(i)
      return
    }
    case 'array': {
      if (!Array.isArray(value)) bad()
      const items = (s as unknown as { items: AvroSchema }).items
      const arr = value as unknown[]
      if (arr.length > 0) {
        w.long(arr.length)
        arr.forEach((item, i) => encode(w, items, item, named, `${path}[${i}]`))
      }
      w.long(0)
      return
    }
    case 'map': {
      const entries = value instanceof Map ? [...value.entries()] : Object.entries(value as object)
      const values = (s as unknown as { values: AvroSchema }).values
      if (entries.length > 0) {
        w.long(entries.length)
        for (const [k, v] of entries) {
          w.bytes(utf8.encode(String(k)))
          encode(w, values, v, named, `${path}.${String(k)}`)
        }
      }
      w.long(0)
      return
    }
    case 'record':
    case 'error': {
      if (typeof value !== 'object' || value === null) bad()
      const obj = value as Record<string, unknown>
      for (const f of (s as unknown as { fields: { name: string; type: AvroSchema }[] }).fields) {
        const v = obj[f.name]
        encode(w, f.type, v === undefined ? null : v, named, path ? `${path}.${f.name}` : f.name)
      }
      return
    }
    default:
      throw new AvroError(`${path}: unsupported Avro type ${t}`)
  }
}

// ---------- binary decoding ----------

export class ByteReader {
  pos = 0
  private view: DataView
  constructor(readonly buf: Uint8Array) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
  }

  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw new AvroError('unexpected end of Avro data')
  }

  byte(): number {
    this.need(1)
    return this.buf[this.pos++]
  }

  /** Zig-zag varint; a number while it is exactly representable, else a bigint. */
  long(): number | bigint {
    let n = 0
    let mul = 1
    let b: number
    let i = 0
    do {
      b = this.byte()
      n += (b & 0x7f) * mul
      mul *= 128
      i++
    } while (b & 0x80 && i < 7)
    if (!(b & 0x80)) return n % 2 === 0 ? n / 2 : -(n + 1) / 2
    // More than 49 bits: finish in bigint.
    let z = BigInt(n)
    let shift = 49n
    do {
      b = this.byte()
      z |= BigInt(b & 0x7f) << shift
      shift += 7n
    } while (b & 0x80)
    const v = (z >> 1n) ^ -(z & 1n)
    return BigInt.asIntN(64, v)
  }

  int(): number {
    return Number(this.long())
  }

  take(n: number): Uint8Array {
    this.need(n)
    const out = this.buf.subarray(this.pos, this.pos + n)
    this.pos += n
    return out
  }

  bytes(): Uint8Array {
    return this.take(this.int())
  }

  float(): number {
    this.need(4)
    const v = this.view.getFloat32(this.pos, true)
    this.pos += 4
    return v
  }

  double(): number {
    this.need(8)
    const v = this.view.getFloat64(this.pos, true)
    this.pos += 8
    return v
  }
}

export function decode(r: ByteReader, schema: AvroSchema, named: Named): unknown {
  const s = resolve(schema, named)
  if (Array.isArray(s)) {
    const i = r.int()
    if (i < 0 || i >= s.length) throw new AvroError(`union branch ${i} out of range`)
    return decode(r, s[i], named)
  }
  switch (typeName(s)) {
    case 'null':
      return null
    case 'boolean':
      return r.byte() !== 0
    case 'int':
      return r.int()
    case 'long':
      return BigInt(r.long())
    case 'float':
      return r.float()
    case 'double':
      return r.double()
    case 'string':
      return utf8Decoder.decode(r.bytes())
    case 'bytes':
      return r.bytes().slice()
    case 'fixed':
      return r.take((s as unknown as { size: number }).size).slice()
    case 'enum':
      return (s as unknown as { symbols: string[] }).symbols[r.int()]
    case 'array': {
      const out: unknown[] = []
      const items = (s as unknown as { items: AvroSchema }).items
      for (let n = r.int(); n !== 0; n = r.int()) {
        if (n < 0) {
          n = -n
          r.long() // block size in bytes, only useful for skipping
        }
        for (let i = 0; i < n; i++) out.push(decode(r, items, named))
      }
      return out
    }
    case 'map': {
      const out = new Map<string, unknown>()
      const values = (s as unknown as { values: AvroSchema }).values
      for (let n = r.int(); n !== 0; n = r.int()) {
        if (n < 0) {
          n = -n
          r.long()
        }
        for (let i = 0; i < n; i++) {
          const k = utf8Decoder.decode(r.bytes())
          out.set(k, decode(r, values, named))
        }
      }
      return out
    }
    case 'record':
    case 'error': {
      const out: Record<string, unknown> = {}
      for (const f of (s as unknown as { fields: { name: string; type: AvroSchema }[] }).fields) out[f.name] = decode(r, f.type, named)
      return out
    }
    default:
      throw new AvroError(`unsupported Avro type ${typeName(s)}`)
  }
}
