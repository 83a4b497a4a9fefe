// Iceberg types in the spec's own JSON form (format/spec.md, "Appendix C: JSON serialization"),
// so metadata.json round-trips without a translation layer.

/** A primitive type as the spec writes it: "long", "decimal(38, 10)", "fixed[16]", "geometry(OGC:CRS84)". */
export type PrimitiveTypeName = string

export interface NestedField {
  id: number
  name: string
  required: boolean
  type: IcebergType
  doc?: string
  'initial-default'?: unknown
  'write-default'?: unknown
}

export interface StructType {
  type: 'struct'
  fields: NestedField[]
}

export interface ListType {
  type: 'list'
  'element-id': number
  element: IcebergType
  'element-required': boolean
}

export interface MapType {
  type: 'map'
  'key-id': number
  key: IcebergType
  'value-id': number
  value: IcebergType
  'value-required': boolean
}

export type IcebergType = PrimitiveTypeName | StructType | ListType | MapType

export interface Schema extends StructType {
  'schema-id': number
  'identifier-field-ids'?: number[]
}

/** A primitive type, parsed. */
export type Primitive =
  | { kind: 'boolean' | 'int' | 'long' | 'float' | 'double' | 'date' | 'time' | 'string' | 'uuid' | 'binary' | 'unknown' | 'variant' }
  | { kind: 'timestamp' | 'timestamptz' | 'timestamp_ns' | 'timestamptz_ns' }
  | { kind: 'decimal'; precision: number; scale: number }
  | { kind: 'fixed'; length: number }
  | { kind: 'geometry'; crs?: string }
  | { kind: 'geography'; crs?: string; algorithm?: string }

const SIMPLE = new Set([
  'boolean',
  'int',
  'long',
  'float',
  'double',
  'date',
  'time',
  'string',
  'uuid',
  'binary',
  'unknown',
  'variant',
  'timestamp',
  'timestamptz',
  'timestamp_ns',
  'timestamptz_ns',
])

/** Thrown for a type string the spec does not define. */
export class UnknownTypeError extends Error {
  constructor(readonly typeName: string) {
    super(`unknown Iceberg type: ${typeName}`)
    this.name = 'UnknownTypeError'
  }
}

export function parsePrimitive(name: PrimitiveTypeName): Primitive {
  const t = name.trim()
  if (SIMPLE.has(t)) return { kind: t } as Primitive
  let m = /^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(t)
  if (m) {
    const precision = Number(m[1])
    const scale = Number(m[2])
    if (precision < 1 || precision > 38 || scale > precision) throw new UnknownTypeError(name)
    return { kind: 'decimal', precision, scale }
  }
  m = /^fixed\[\s*(\d+)\s*\]$/.exec(t)
  if (m) return { kind: 'fixed', length: Number(m[1]) }
  m = /^geometry(?:\(\s*([^)]*?)\s*\))?$/.exec(t)
  if (m) return m[1] ? { kind: 'geometry', crs: m[1] } : { kind: 'geometry' }
  m = /^geography(?:\(\s*([^,)]*?)\s*(?:,\s*([^)]*?)\s*)?\))?$/.exec(t)
  if (m) {
    const g: Primitive = { kind: 'geography' }
    if (m[1]) g.crs = m[1]
    if (m[2]) g.algorithm = m[2]
    return g
  }
  throw new UnknownTypeError(name)
}

export function isPrimitive(t: IcebergType): t is PrimitiveTypeName {
  return typeof t === 'string'
}

/**
 * How a row holds each type's value once validated (values.ts produces it; parquet/data-file.ts, bounds.ts
 * and the partition transforms consume it). A row is a plain object keyed by field name;
 * a missing optional value is null.
 *
 * boolean → boolean          int, date → number (date: days since 1970-01-01)
 * long → bigint              float, double → number (NaN and ±Infinity allowed)
 * decimal(P,S) → bigint      (the unscaled value: "12.30" in decimal(9,2) → 1230n)
 * time → bigint              (microseconds since midnight)
 * timestamp, timestamptz → bigint (microseconds since epoch, UTC)
 * timestamp_ns, timestamptz_ns → bigint (nanoseconds since epoch, UTC)
 * string → string            uuid → Uint8Array(16)
 * fixed[L], binary → Uint8Array
 * geometry → Uint8Array (WKB, little-endian, longitude/latitude)
 * struct → object keyed by field name;  list → array;  map → Array<[key, value]>
 * unknown → always null
 */
export type Value = null | boolean | number | bigint | string | Uint8Array | Value[] | Array<[Value, Value]> | { [name: string]: Value }

export type Row = { [name: string]: Value }
