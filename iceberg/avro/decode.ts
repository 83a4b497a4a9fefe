// The Avro binary decoding (https://avro.apache.org/docs/1.11.1/specification/#binary-encoding), driven
// by the writer's schema in its JSON form: reading only, apart from the encoder (encode.ts).

import { AvroError, resolve, typeName, type AvroSchema, type Named } from './schema.ts'

export const utf8Decoder = new TextDecoder()

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
