// The Avro binary encoding (https://avro.apache.org/docs/1.11.1/specification/#binary-encoding), driven
// by a schema in its JSON form: writing only (manifests and manifest lists), so code that only reads
// Avro (decode.ts; the edge's table sample) never carries it.

import { AvroError, resolve, typeName, type AvroSchema, type Named } from './schema.ts'

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
