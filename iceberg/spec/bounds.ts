// Lower and upper bounds for a data file's metrics: the spec's binary single-value serialization
// (format/spec.md, "Appendix D: Single-value serialization"), the order the bounds are taken in,
// and the truncation of Java's default metrics mode `truncate(16)`.

import type { Primitive, Value } from './types.ts'

/** Java's and PyIceberg's default `write.metadata.metrics.default` is `truncate(16)`. */
export const DEFAULT_TRUNCATE_LENGTH = 16

const utf8 = new TextEncoder()
const utf8Decoder = new TextDecoder()

/**
 * One value in the spec's binary single-value form: little-endian ints, longs, floats and doubles;
 * date as int days; time and timestamps as long micros (nanos for the _ns types); decimal as the
 * unscaled value in big-endian two's complement, minimal bytes; string as UTF-8; uuid, fixed,
 * binary, geometry and geography as their bytes.
 */
export function toSingleValueBytes(type: Primitive, value: Value): Uint8Array {
  switch (type.kind) {
    case 'boolean':
      return new Uint8Array([value ? 1 : 0])
    case 'int':
    case 'date': {
      const out = new Uint8Array(4)
      new DataView(out.buffer).setInt32(0, Number(value), true)
      return out
    }
    case 'long':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns': {
      const out = new Uint8Array(8)
      new DataView(out.buffer).setBigInt64(0, BigInt(value as bigint | number), true)
      return out
    }
    case 'float': {
      const out = new Uint8Array(4)
      new DataView(out.buffer).setFloat32(0, value as number, true)
      return out
    }
    case 'double': {
      const out = new Uint8Array(8)
      new DataView(out.buffer).setFloat64(0, value as number, true)
      return out
    }
    case 'decimal':
      return decimalBytes(BigInt(value as bigint | number))
    case 'string':
      return utf8.encode(value as string)
    case 'uuid':
    case 'fixed':
    case 'binary':
    case 'geometry':
    case 'geography':
      return value as Uint8Array
    default:
      throw new Error(`no single-value serialization for ${type.kind}`)
  }
}

/**
 * The unscaled value as big-endian two's complement in the fewest bytes that keep its sign
 * (Java's BigInteger.toByteArray(): 0 → 00, 127 → 7f, 128 → 00 80, -1 → ff, -129 → ff 7f).
 */
export function decimalBytes(unscaled: bigint): Uint8Array {
  const bytes: number[] = []
  let v = unscaled
  for (;;) {
    const byte = Number(v & 0xffn)
    bytes.unshift(byte)
    v >>= 8n // arithmetic shift: a negative value ends at -1
    const signBit = byte & 0x80
    if ((v === 0n && !signBit) || (v === -1n && signBit)) break
  }
  return new Uint8Array(bytes)
}

/**
 * Orders two non-null values of one primitive type as Iceberg does for bounds: numbers and
 * bigints numerically (-0 before +0), strings by code point (= UTF-8 byte order, not UTF-16
 * code units), bytes unsigned lexicographically, false before true.
 */
export function compareValues(a: Value, b: Value): number {
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b)
  if (a instanceof Uint8Array && b instanceof Uint8Array) return compareBytes(a, b)
  if (typeof a === 'number' && typeof b === 'number' && a === 0 && b === 0) {
    return (Object.is(a, -0) ? 0 : 1) - (Object.is(b, -0) ? 0 : 1)
  }
  if ((a as number | bigint | boolean) < (b as number | bigint | boolean)) return -1
  if ((a as number | bigint | boolean) > (b as number | bigint | boolean)) return 1
  return 0
}

export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i]
  return a.length - b.length
}

function compareStrings(a: string, b: string): number {
  if (a === b) return 0
  // Comparing the UTF-8 bytes is exact and keeps surrogate pairs ordered after U+E000..U+FFFF.
  return compareBytes(utf8.encode(a), utf8.encode(b))
}

/** The lower bound of `truncate(length)`: strings cut to `length` code points, binary to `length` bytes. */
export function truncateLowerBound(type: Primitive, value: Value, length = DEFAULT_TRUNCATE_LENGTH): Value {
  if (type.kind === 'string') {
    const codePoints = Array.from(wellFormed(value as string))
    return codePoints.length <= length ? value : codePoints.slice(0, length).join('')
  }
  if (type.kind === 'binary') {
    const bytes = value as Uint8Array
    return bytes.length <= length ? bytes : bytes.slice(0, length)
  }
  return value
}

/**
 * The upper bound of `truncate(length)`, as Java's UnicodeUtil.truncateStringMax and
 * BinaryUtil.truncateBinaryMax: cut, then increment the last code point (byte) that can be
 * incremented and drop what follows it. `undefined` when none can be (the bound is then omitted).
 */
export function truncateUpperBound(type: Primitive, value: Value, length = DEFAULT_TRUNCATE_LENGTH): Value | undefined {
  if (type.kind === 'string') {
    const codePoints = Array.from(wellFormed(value as string), (c) => c.codePointAt(0)!)
    if (codePoints.length <= length) return value
    for (let i = length - 1; i >= 0; i--) {
      const next = nextCodePoint(codePoints[i])
      if (next !== undefined) return String.fromCodePoint(...codePoints.slice(0, i), next)
    }
    return undefined
  }
  if (type.kind === 'binary') {
    const bytes = value as Uint8Array
    if (bytes.length <= length) return bytes
    for (let i = length - 1; i >= 0; i--) {
      if (bytes[i] !== 0xff) {
        const out = bytes.slice(0, i + 1)
        out[i] += 1
        return out
      }
    }
    return undefined
  }
  return value
}

// The next Unicode scalar value: skips the surrogate range, none after U+10FFFF.
function nextCodePoint(cp: number): number | undefined {
  if (cp === 0xd7ff) return 0xe000
  if (cp >= 0x10ffff) return undefined
  return cp + 1
}

// A lone surrogate is written to Parquet as U+FFFD (TextEncoder); bound the bytes actually stored.
function wellFormed(s: string): string {
  return /[\ud800-\udfff]/.test(s) ? utf8Decoder.decode(utf8.encode(s)) : s
}

/** The serialized lower bound of a column whose smallest value is `min`. */
export function lowerBoundBytes(type: Primitive, min: Value, length = DEFAULT_TRUNCATE_LENGTH): Uint8Array {
  return toSingleValueBytes(type, truncateLowerBound(type, min, length))
}

/** The serialized upper bound of a column whose largest value is `max`; `undefined` to omit it. */
export function upperBoundBytes(type: Primitive, max: Value, length = DEFAULT_TRUNCATE_LENGTH): Uint8Array | undefined {
  const bound = truncateUpperBound(type, max, length)
  return bound === undefined ? undefined : toSingleValueBytes(type, bound)
}
