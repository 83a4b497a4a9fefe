// Physical Parquet values → Values of types.ts, by the Iceberg type a column is read as (exact:
// bigint longs and timestamps, unscaled decimals, bytes as Uint8Array).
import type { SchemaElement } from 'hyparquet'
import type { Primitive, Value } from '../spec/types.ts'

export class ParquetReadError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ParquetReadError'
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

type Unit = 'MILLIS' | 'MICROS' | 'NANOS'

/** The time unit of a TIMESTAMP/TIME column, from its logical type or its older converted type. */
export function unitOf(e: SchemaElement): Unit | undefined {
  const lt = e.logical_type
  if (lt && (lt.type === 'TIMESTAMP' || lt.type === 'TIME')) return lt.unit as Unit
  switch (e.converted_type) {
    case 'TIMESTAMP_MILLIS':
    case 'TIME_MILLIS':
      return 'MILLIS'
    case 'TIMESTAMP_MICROS':
    case 'TIME_MICROS':
      return 'MICROS'
  }
  return undefined
}

const PER_SECOND: Record<Unit, bigint> = { MILLIS: 1000n, MICROS: 1_000_000n, NANOS: 1_000_000_000n }

/** INT96 (legacy Impala/Spark timestamps): nanoseconds of the day, then the Julian day. */
function int96Nanos(v: bigint): bigint {
  const days = (v >> 64n) - 2440588n
  return days * 86_400_000_000_000n + (v & 0xffff_ffff_ffff_ffffn)
}

/** A temporal in `from` units as `to` units, refusing a conversion that would drop digits. */
function rescale(where: string, from: Unit, to: Unit): (v: bigint) => bigint {
  if (from === to) return (v) => v
  const a = PER_SECOND[from]
  const b = PER_SECOND[to]
  if (a < b) return (v) => v * (b / a)
  return (v) => {
    const f = a / b
    if (v % f !== 0n) throw new ParquetReadError(`column ${where}: ${v} ${from} is not a whole number of ${to}`)
    return v / f
  }
}

/** Big-endian two's complement → bigint (Parquet DECIMAL in FIXED_LEN_BYTE_ARRAY/BYTE_ARRAY). */
function twosComplement(b: Uint8Array): bigint {
  if (b.length === 0) return 0n
  let v = 0n
  for (let i = 0; i < b.length; i++) v = (v << 8n) | BigInt(b[i])
  return b[0] & 0x80 ? v - (1n << BigInt(b.length * 8)) : v
}

export function converter(p: Primitive, e: SchemaElement, where: string): (v: any) => Value {
  const physical = e.type
  const refuse = (): never => {
    throw new ParquetReadError(`column ${where}: Parquet ${physical}${e.logical_type ? ` (${e.logical_type.type})` : ''} cannot be read as ${p.kind}`)
  }
  const bytes = physical === 'BYTE_ARRAY' || physical === 'FIXED_LEN_BYTE_ARRAY'
  switch (p.kind) {
    case 'boolean':
      return physical === 'BOOLEAN' ? (v: boolean) => v : refuse()
    case 'int':
    case 'date':
      return physical === 'INT32' ? (v: number) => v : refuse()
    case 'long':
      if (physical === 'INT64') return (v: bigint) => v
      return physical === 'INT32' ? (v: number) => BigInt(v) : refuse() // int → long promotion
    case 'float':
      return physical === 'FLOAT' ? (v: number) => v : refuse()
    case 'double':
      return physical === 'DOUBLE' || physical === 'FLOAT' ? (v: number) => v : refuse() // float → double promotion
    case 'decimal': {
      const scale = e.logical_type?.type === 'DECIMAL' ? e.logical_type.scale : e.scale
      if (scale !== undefined && scale !== p.scale) {
        throw new ParquetReadError(`column ${where}: decimal scale ${scale} in the file, ${p.scale} in the schema`)
      }
      if (physical === 'INT32') return (v: number) => BigInt(v)
      if (physical === 'INT64') return (v: bigint) => v
      return bytes ? twosComplement : refuse()
    }
    case 'time': {
      if (physical === 'INT64') return rescale(where, unitOf(e) ?? 'MICROS', 'MICROS')
      if (physical === 'INT32' && unitOf(e) === 'MILLIS') return (v: number) => BigInt(v) * 1000n
      return refuse()
    }
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns': {
      const to: Unit = p.kind.endsWith('_ns') ? 'NANOS' : 'MICROS'
      if (physical === 'INT64') return rescale(where, unitOf(e) ?? to, to)
      if (physical === 'INT96') {
        const r = rescale(where, 'NANOS', to)
        return (v: bigint) => r(int96Nanos(v))
      }
      return refuse()
    }
    case 'string':
      return bytes
        ? (v: Uint8Array) => {
            try {
              return utf8.decode(v)
            } catch {
              throw new ParquetReadError(`column ${where}: a string value is not valid UTF-8`)
            }
          }
        : refuse()
    case 'uuid':
      if (!bytes) return refuse()
      return (v: Uint8Array) => {
        if (v.length !== 16) throw new ParquetReadError(`column ${where}: a uuid of ${v.length} bytes`)
        return v.slice()
      }
    case 'fixed':
      if (!bytes) return refuse()
      return (v: Uint8Array) => {
        if (v.length !== p.length) throw new ParquetReadError(`column ${where}: ${v.length} bytes in a fixed[${p.length}]`)
        return v.slice()
      }
    case 'binary':
    case 'geometry':
    case 'geography':
      return bytes ? (v: Uint8Array) => v.slice() : refuse()
    default:
      return refuse()
  }
}
