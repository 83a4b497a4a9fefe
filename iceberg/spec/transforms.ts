// Partition transforms (spec "Partition Transforms", Appendix B for bucket hashing).
// Values are in the row form of types.ts: timestamps are bigint micros (nanos for *_ns), dates are
// number days, longs and decimals bigint. Time transforms floor toward negative infinity, so
// 1969-12-31T23:00Z is day -1 and month -1, as Java (since 0.x fixes) and PyIceberg compute them.

import { civilFromDays } from './temporal.ts'
import { parsePrimitive, type IcebergType, type PrimitiveTypeName, type Value } from './types.ts'

export type Transform =
  | { kind: 'identity' | 'year' | 'month' | 'day' | 'hour' | 'void' }
  | { kind: 'bucket'; n: number }
  | { kind: 'truncate'; width: number }
  /** A transform this library does not know: readable, never writable (spec: writers must not commit with it). */
  | { kind: 'unknown'; name: string }

class TransformError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'TransformError'
  }
}

export function parseTransform(text: string): Transform {
  const t = text.trim()
  if (t === 'identity' || t === 'year' || t === 'month' || t === 'day' || t === 'hour' || t === 'void') return { kind: t }
  let m = /^bucket\[\s*(\d+)\s*\]$/.exec(t)
  if (m && Number(m[1]) > 0) return { kind: 'bucket', n: Number(m[1]) }
  m = /^truncate\[\s*(\d+)\s*\]$/.exec(t)
  if (m && Number(m[1]) > 0) return { kind: 'truncate', width: Number(m[1]) }
  return { kind: 'unknown', name: t }
}

export function transformToString(t: Transform): string {
  switch (t.kind) {
    case 'bucket':
      return `bucket[${t.n}]`
    case 'truncate':
      return `truncate[${t.width}]`
    case 'unknown':
      return t.name
    default:
      return t.kind
  }
}

const TIME_SOURCES = new Set(['date', 'timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns'])
const BUCKET_SOURCES = new Set([
  'int',
  'long',
  'decimal',
  'date',
  'time',
  'timestamp',
  'timestamptz',
  'timestamp_ns',
  'timestamptz_ns',
  'string',
  'uuid',
  'fixed',
  'binary',
])

/** Why `t` cannot apply to a source of type `source`, or null when it can (spec's "Source types"). */
export function transformProblem(t: Transform, source: IcebergType): string | null {
  if (typeof source !== 'string') return `partition source must be a primitive column, not a ${source.type}`
  const kind = parsePrimitive(source).kind
  switch (t.kind) {
    case 'identity':
      return ['geometry', 'geography', 'variant', 'unknown'].includes(kind) ? `identity cannot partition a ${source} column` : null
    case 'year':
    case 'month':
    case 'day':
      return TIME_SOURCES.has(kind) ? null : `${t.kind} needs a date or timestamp column, not ${source}`
    case 'hour':
      return TIME_SOURCES.has(kind) && kind !== 'date' ? null : `hour needs a timestamp column, not ${source}`
    case 'bucket':
      return BUCKET_SOURCES.has(kind) ? null : `bucket cannot partition a ${source} column`
    case 'truncate':
      return ['int', 'long', 'decimal', 'string', 'binary'].includes(kind) ? null : `truncate cannot partition a ${source} column`
    case 'void':
      return null
    case 'unknown':
      return `unknown transform ${t.name}`
  }
}

/**
 * The partition field's type. `day` yields `date` (not the spec table's `int`): Java and PyIceberg
 * both type it as date, so their manifests carry `{"type":"int","logicalType":"date"}` and paths
 * read `ts_day=2026-09-21`. The stored value is the same int either way.
 */
export function resultType(t: Transform, source: PrimitiveTypeName): PrimitiveTypeName {
  switch (t.kind) {
    case 'identity':
    case 'truncate':
    case 'void':
    case 'unknown':
      return source
    case 'day':
      return 'date'
    default:
      return 'int'
  }
}

// ---------- time ----------

const MICROS_PER_HOUR = 3_600_000_000n
const MICROS_PER_DAY = 86_400_000_000n

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q
}

function toMicros(kind: string, v: bigint): bigint {
  return kind.endsWith('_ns') ? floorDiv(v, 1000n) : v
}

function epochDay(kind: string, v: Value): number {
  if (kind === 'date') return Number(v)
  return Number(floorDiv(toMicros(kind, BigInt(v as bigint)), MICROS_PER_DAY))
}

// ---------- bucket (Murmur3 x86 32-bit, seed 0) ----------

function murmur3(bytes: Uint8Array): number {
  const c1 = 0xcc9e2d51
  const c2 = 0x1b873593
  let h = 0
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const blocks = bytes.length >> 2
  for (let i = 0; i < blocks; i++) {
    let k = view.getUint32(i * 4, true)
    k = Math.imul(k, c1)
    k = (k << 15) | (k >>> 17)
    k = Math.imul(k, c2)
    h ^= k
    h = (h << 13) | (h >>> 19)
    h = (Math.imul(h, 5) + 0xe6546b64) | 0
  }
  let k = 0
  const tail = blocks * 4
  switch (bytes.length & 3) {
    // biome-ignore lint/suspicious/noFallthroughSwitchClause: murmur3's tail falls through, as the reference implementation
    case 3:
      k ^= bytes[tail + 2] << 16
    // biome-ignore lint/suspicious/noFallthroughSwitchClause: murmur3's tail falls through, as the reference implementation
    case 2:
      k ^= bytes[tail + 1] << 8
    case 1:
      k ^= bytes[tail]
      k = Math.imul(k, c1)
      k = (k << 15) | (k >>> 17)
      k = Math.imul(k, c2)
      h ^= k
  }
  h ^= bytes.length
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h | 0
}

function longBytes(v: bigint): Uint8Array {
  const out = new Uint8Array(8)
  new DataView(out.buffer).setBigInt64(0, BigInt.asIntN(64, v), true)
  return out
}

/** Two's complement big-endian in the fewest bytes (Appendix B note 2; also Appendix D's decimal form). */
export function minBigEndian(v: bigint): Uint8Array {
  let n = 1
  while (v < -(1n << BigInt(8 * n - 1)) || v >= 1n << BigInt(8 * n - 1)) n++
  const out = new Uint8Array(n)
  let x = BigInt.asUintN(8 * n, v)
  for (let i = n - 1; i >= 0; i--) {
    out[i] = Number(x & 0xffn)
    x >>= 8n
  }
  return out
}

/** The spec's 32-bit hash of a value (Appendix B). */
export function hashValue(source: PrimitiveTypeName, v: Value): number {
  const kind = parsePrimitive(source).kind
  switch (kind) {
    case 'int':
    case 'date':
    case 'long':
    case 'time':
      return murmur3(longBytes(BigInt(v as number | bigint)))
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return murmur3(longBytes(toMicros(kind, v as bigint)))
    case 'decimal':
      return murmur3(minBigEndian(v as bigint))
    case 'string':
      return murmur3(new TextEncoder().encode(v as string))
    case 'uuid':
    case 'fixed':
    case 'binary':
      return murmur3(v as Uint8Array)
    default:
      throw new TransformError(`bucket cannot hash a ${source} value`)
  }
}

// ---------- apply ----------

/** Computes a partition value from a source value (null in, null out — spec). */
export function applyTransform(t: Transform, source: PrimitiveTypeName, v: Value): Value {
  if (v === null || v === undefined) return null
  const kind = parsePrimitive(source).kind
  switch (t.kind) {
    case 'identity':
      return v
    case 'void':
      return null
    case 'day':
      return epochDay(kind, v)
    case 'hour':
      if (kind === 'date') throw new TransformError('hour cannot apply to a date')
      return Number(floorDiv(toMicros(kind, BigInt(v as bigint)), MICROS_PER_HOUR))
    case 'month':
    case 'year': {
      const [y, m] = civilFromDays(epochDay(kind, v))
      return t.kind === 'year' ? y - 1970 : (y - 1970) * 12 + (m - 1)
    }
    case 'bucket':
      return (hashValue(source, v) & 0x7fffffff) % t.n
    case 'truncate':
      return truncate(kind, t.width, v)
    case 'unknown':
      throw new TransformError(`cannot compute unknown transform ${t.name}`)
  }
}

function truncate(kind: string, width: number, v: Value): Value {
  switch (kind) {
    case 'int': {
      const n = v as number
      return n - (((n % width) + width) % width)
    }
    case 'long':
    case 'decimal': {
      const n = v as bigint
      const w = BigInt(width)
      return n - (((n % w) + w) % w)
    }
    case 'string': {
      // At most `width` code points, never splitting a surrogate pair.
      return Array.from(v as string)
        .slice(0, width)
        .join('')
    }
    case 'binary':
      return (v as Uint8Array).slice(0, width)
    default:
      throw new TransformError(`truncate cannot apply to ${kind}`)
  }
}
