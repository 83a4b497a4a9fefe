// A nested column's value (struct, list, map) read from the line's bytes straight into the Value form
// its reference converter gives (values.ts): no intermediate object per struct, no LosslessNumber per
// number. Strings, booleans, int, long, float and double leaves are read here; other leaves go through
// readJson and their converter. Anything this reader is not sure of (escaped or unknown keys, a key
// twice, a null where one is required, an integer-like map key, long numbers) answers NOT_SURE, and
// the caller reads the value the way it did before (read-json.ts), which decides.

import type { IcebergType, Value } from '../spec/types.ts'
import { valueConverter, writeDefaultOf } from '../spec/values.ts'
import type { Cursor } from './cursor.ts'
import { NOT_SURE, readJson, text } from './read-json.ts'

type Reader = (c: Cursor) => Value | typeof NOT_SURE

const utf8 = new TextEncoder()
const POW10 = Array.from({ length: 16 }, (_, k) => 10 ** k)

/** The reader of a struct, list or map type; undefined for any other type (the caller's way stands). */
export function nestedReader(type: IcebergType, formatVersion: 2 | 3): Reader | undefined {
  return typeof type === 'string' ? undefined : compile(type, formatVersion)
}

function compile(type: IcebergType, formatVersion: 2 | 3): Reader {
  if (typeof type === 'string') return primitive(type.trim(), formatVersion)
  switch (type.type) {
    case 'struct': {
      if (type.fields.some((f) => f.name === '__proto__')) return () => NOT_SURE
      const fields = type.fields.map((f) => ({
        name: f.name,
        bytes: utf8.encode(f.name),
        required: f.required,
        read: compile(f.type, formatVersion),
        writeDefault: writeDefaultOf(f, formatVersion),
      }))
      const got: Array<Value | undefined> = new Array(fields.length)
      return (c) => {
        if (c.peek() !== 0x7b) return NOT_SURE
        c.pos++
        got.fill(undefined)
        c.ws()
        if (c.peek() === 0x7d) c.pos++
        else
          for (;;) {
            c.ws()
            if (c.peek() !== 0x22) return NOT_SURE
            const start = c.pos + 1
            const end = c.plainStringEnd(start)
            if (end < 0) return NOT_SURE
            let i = 0
            while (i < fields.length && !c.equals(start, end, fields[i].bytes)) i++
            if (i === fields.length || got[i] !== undefined) return NOT_SURE // unknown or repeated: the reference decides
            c.pos = end + 1
            c.ws()
            if (c.peek() !== 0x3a) return NOT_SURE
            c.pos++
            const v = value(c, fields[i].read, fields[i].required)
            if (v === NOT_SURE) return NOT_SURE
            got[i] = v
            c.ws()
            const next = c.peek()
            c.pos++
            if (next === 0x7d) break
            if (next !== 0x2c) return NOT_SURE
          }
        const out: { [name: string]: Value } = {}
        for (let i = 0; i < fields.length; i++) {
          const f = fields[i]
          const v = got[i]
          if (v !== undefined) out[f.name] = v
          else if (f.writeDefault !== undefined) out[f.name] = f.writeDefault
          else if (f.required) return NOT_SURE
          else out[f.name] = null
        }
        return out
      }
    }
    case 'list': {
      const element = compile(type.element, formatVersion)
      const required = type['element-required']
      return (c) => {
        if (c.peek() !== 0x5b) return NOT_SURE
        c.pos++
        const out: Value[] = []
        c.ws()
        if (c.peek() === 0x5d) {
          c.pos++
          return out
        }
        for (;;) {
          const v = value(c, element, required)
          if (v === NOT_SURE) return NOT_SURE
          out.push(v)
          c.ws()
          const next = c.peek()
          c.pos++
          if (next === 0x5d) return out
          if (next !== 0x2c) return NOT_SURE
        }
      }
    }
    case 'map': {
      if (type.key !== 'string') return () => NOT_SURE
      const read = compile(type.value, formatVersion)
      const required = type['value-required']
      return (c) => {
        if (c.peek() !== 0x7b) return NOT_SURE
        c.pos++
        const out: Array<[Value, Value]> = []
        c.ws()
        if (c.peek() === 0x7d) {
          c.pos++
          return out
        }
        let keys: Set<string> | null = null
        for (;;) {
          c.ws()
          if (c.peek() !== 0x22) return NOT_SURE
          const start = c.pos + 1
          const end = c.plainStringEnd(start)
          if (end < 0) return NOT_SURE
          const key = text(c.buf, start, end)
          // An integer-like key: an object lists it first, in numeric order (the reference's order).
          if (key === undefined || key === '__proto__' || (start < end && c.buf[start] >= 0x30 && c.buf[start] <= 0x39)) return NOT_SURE
          if (out.length > 0) {
            keys ??= new Set(out.map((e) => e[0] as string))
            if (keys.has(key)) return NOT_SURE
            keys.add(key)
          }
          c.pos = end + 1
          c.ws()
          if (c.peek() !== 0x3a) return NOT_SURE
          c.pos++
          const v = value(c, read, required)
          if (v === NOT_SURE) return NOT_SURE
          out.push([key, v])
          c.ws()
          const next = c.peek()
          c.pos++
          if (next === 0x7d) return out
          if (next !== 0x2c) return NOT_SURE
        }
      }
    }
  }
}

/** A member's or element's value: null where allowed, else the type's reader. */
function value(c: Cursor, read: Reader, required: boolean): Value | typeof NOT_SURE {
  c.ws()
  if (c.isNull()) {
    if (required) return NOT_SURE
    c.pos += 4
    return null
  }
  return read(c)
}

function primitive(type: string, formatVersion: 2 | 3): Reader {
  switch (type) {
    case 'string':
      return (c) => {
        if (c.peek() !== 0x22) return NOT_SURE
        const start = c.pos + 1
        const end = c.plainStringEnd(start)
        if (end < 0) return NOT_SURE
        const s = text(c.buf, start, end)
        if (s === undefined) return NOT_SURE
        c.pos = end + 1
        return s
      }
    case 'boolean':
      return (c) => {
        const v = c.bool()
        return v < 0 ? NOT_SURE : v === 1
      }
    case 'int':
    case 'long': {
      const long = type === 'long'
      return (c) => {
        if (!c.number() || c.fraction || c.exponent || c.digitsEnd - c.digitsStart > 15) return NOT_SURE
        const n = c.smallInteger()
        if (long) return BigInt(n)
        return n < -2147483648 || n > 2147483647 ? NOT_SURE : n === 0 ? 0 : n
      }
    }
    case 'float':
    case 'double': {
      const float = type === 'float'
      return (c) => {
        if (!c.number() || c.exponent || c.digitsEnd - c.digitsStart + c.fractionEnd - c.fractionStart > 15) return NOT_SURE
        // digits over a power of ten, both exact: one rounding, Number()'s (read-value.ts's shortDecimal)
        const buf = c.buf
        let n = 0
        for (let k = c.digitsStart; k < c.digitsEnd; k++) n = n * 10 + (buf[k] - 0x30)
        for (let k = c.fractionStart; k < c.fractionEnd; k++) n = n * 10 + (buf[k] - 0x30)
        let x = n / POW10[c.fractionEnd - c.fractionStart]
        if (c.negative) x = -x
        return float ? Math.fround(x) : x
      }
    }
    default: {
      const convert = valueConverter(type, formatVersion)
      return (c) => {
        const v = readJson(c)
        if (v === NOT_SURE) return NOT_SURE
        const out = convert(v)
        return out === undefined ? NOT_SURE : out
      }
    }
  }
}
