// A lossless Thrift Compact Protocol reader/writer for Parquet footers: every field keeps its id and
// wire type (i16 stays i16, a whole-number double stays a double, unknown fields pass through), so a
// footer read and written back is byte-identical except where a caller changed a value.
// hyparquet's reader drops the wire types and hyparquet-writer's serializer guesses them from JS
// values, so a round trip through them could change a footer; this one cannot.

export const T = { TRUE: 1, FALSE: 2, BYTE: 3, I16: 4, I32: 5, I64: 6, DOUBLE: 7, BINARY: 8, LIST: 9, SET: 10, MAP: 11, STRUCT: 12 } as const

interface TField {
  id: number
  type: number
  value: TValue
}
export type TStruct = TField[]
export interface TList {
  elemType: number
  items: TValue[]
}
export type TValue = boolean | number | bigint | Uint8Array | TStruct | TList

interface Reader {
  bytes: Uint8Array
  view: DataView
  pos: number
}

function varint(r: Reader): bigint {
  let result = 0n
  let shift = 0n
  for (;;) {
    if (r.pos >= r.bytes.length) throw new Error('thrift: truncated varint')
    const b = r.bytes[r.pos++]
    result |= BigInt(b & 0x7f) << shift
    if (!(b & 0x80)) return result
    shift += 7n
  }
}
const zigzag = (v: bigint) => (v >> 1n) ^ -(v & 1n)

function readValue(r: Reader, type: number): TValue {
  switch (type) {
    case T.TRUE:
      return true
    case T.FALSE:
      return false
    case T.BYTE:
      return r.view.getInt8(r.pos++)
    case T.I16:
    case T.I32:
      return Number(zigzag(varint(r)))
    case T.I64:
      return zigzag(varint(r))
    case T.DOUBLE: {
      const v = r.view.getFloat64(r.pos, true)
      r.pos += 8
      return v
    }
    case T.BINARY: {
      const n = Number(varint(r))
      if (r.pos + n > r.bytes.length) throw new Error('thrift: binary past the end')
      const v = r.bytes.slice(r.pos, r.pos + n)
      r.pos += n
      return v
    }
    case T.LIST:
    case T.SET: {
      const head = r.bytes[r.pos++]
      const elemType = head & 0x0f
      let size = head >> 4
      if (size === 15) size = Number(varint(r))
      const items: TValue[] = []
      for (let i = 0; i < size; i++) {
        // In a list, booleans are one byte each (1 true, 2 false; some writers write 0 for false).
        items.push(elemType === T.TRUE || elemType === T.FALSE ? r.bytes[r.pos++] === 1 : readValue(r, elemType))
      }
      return { elemType, items }
    }
    case T.STRUCT:
      return readStruct(r)
    default:
      throw new Error(`thrift: unsupported compact type ${type}`)
  }
}

function readStruct(r: Reader): TStruct {
  const fields: TStruct = []
  let fid = 0
  for (;;) {
    if (r.pos >= r.bytes.length) throw new Error('thrift: struct without STOP')
    const b = r.bytes[r.pos++]
    const type = b & 0x0f
    if (type === 0) return fields
    const delta = b >> 4
    fid = delta ? fid + delta : Number(zigzag(varint(r)))
    fields.push({ id: fid, type, value: readValue(r, type) })
  }
}

/** Parses one struct starting at `offset`; returns it and where it ended. */
export function readThriftStruct(bytes: Uint8Array, offset = 0): { struct: TStruct; end: number } {
  const r: Reader = { bytes, view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), pos: offset }
  const struct = readStruct(r)
  return { struct, end: r.pos }
}

class Out {
  private buf = new Uint8Array(4096)
  length = 0
  private ensure(n: number) {
    if (this.length + n <= this.buf.length) return
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.length + n))
    next.set(this.buf.subarray(0, this.length))
    this.buf = next
  }
  byte(b: number) {
    this.ensure(1)
    this.buf[this.length++] = b & 0xff
  }
  bytes(b: Uint8Array) {
    this.ensure(b.length)
    this.buf.set(b, this.length)
    this.length += b.length
  }
  varint(v: bigint) {
    do {
      let b = Number(v & 0x7fn)
      v >>= 7n
      if (v) b |= 0x80
      this.byte(b)
    } while (v)
  }
  zigzag(v: bigint) {
    this.varint(v >= 0n ? v << 1n : (-v << 1n) - 1n)
  }
  result() {
    return this.buf.slice(0, this.length)
  }
}

function writeValue(o: Out, type: number, v: TValue): void {
  switch (type) {
    case T.TRUE:
    case T.FALSE:
      return // in a struct the value is the field type
    case T.BYTE:
      o.byte(v as number)
      return
    case T.I16:
    case T.I32:
      o.zigzag(BigInt(v as number))
      return
    case T.I64:
      o.zigzag(v as bigint)
      return
    case T.DOUBLE: {
      const b = new Uint8Array(8)
      new DataView(b.buffer).setFloat64(0, v as number, true)
      o.bytes(b)
      return
    }
    case T.BINARY: {
      const b = v as Uint8Array
      o.varint(BigInt(b.length))
      o.bytes(b)
      return
    }
    case T.LIST:
    case T.SET: {
      const { elemType, items } = v as TList
      if (items.length < 15) o.byte((items.length << 4) | elemType)
      else {
        o.byte(0xf0 | elemType)
        o.varint(BigInt(items.length))
      }
      for (const item of items) {
        if (elemType === T.TRUE || elemType === T.FALSE) o.byte(item ? 1 : 2)
        else writeValue(o, elemType, item)
      }
      return
    }
    case T.STRUCT:
      writeStruct(o, v as TStruct)
      return
    default:
      throw new Error(`thrift: unsupported compact type ${type}`)
  }
}

function writeStruct(o: Out, s: TStruct): void {
  let last = 0
  for (const f of s) {
    const type = f.type === T.TRUE || f.type === T.FALSE ? (f.value ? T.TRUE : T.FALSE) : f.type
    const delta = f.id - last
    if (delta > 0 && delta <= 15) o.byte((delta << 4) | type)
    else {
      o.byte(type)
      o.zigzag(BigInt(f.id))
    }
    writeValue(o, type, f.value)
    last = f.id
  }
  o.byte(0)
}

export function writeThriftStruct(s: TStruct): Uint8Array {
  const o = new Out()
  writeStruct(o, s)
  return o.result()
}

// ---------- field access ----------

export function field<V extends TValue = TValue>(s: TStruct, id: number): V | undefined {
  return s.find((f) => f.id === id)?.value as V | undefined
}

/** Sets (or adds, in id order) a field; `undefined` removes it. */
export function setField(s: TStruct, id: number, type: number, value: TValue | undefined): void {
  const at = s.findIndex((f) => f.id === id)
  if (value === undefined) {
    if (at >= 0) s.splice(at, 1)
    return
  }
  if (at >= 0) {
    s[at] = { id, type, value }
    return
  }
  const before = s.findIndex((f) => f.id > id)
  s.splice(before < 0 ? s.length : before, 0, { id, type, value })
}

export function cloneStruct(s: TStruct): TStruct {
  return s.map((f) => ({ ...f, value: cloneValue(f.value) }))
}

function cloneValue(v: TValue): TValue {
  if (Array.isArray(v)) return cloneStruct(v)
  if (typeof v === 'object' && !(v instanceof Uint8Array)) return { elemType: v.elemType, items: v.items.map(cloneValue) }
  return v
}
