// What the scanner does with each column of a schema, decided once: the kind of value it reads
// itself, and the reference converter (values.ts) for everything else.

import { LosslessNumber } from '../spec/json.ts'
import type { NestedField, Value } from '../spec/types.ts'
import { valueConverter, writeDefaultOf } from '../spec/values.ts'
import { nestedReader } from './read-nested.ts'

const utf8 = new TextEncoder()

export enum Kind {
  Boolean,
  Int,
  Long,
  Float,
  Double,
  Decimal,
  Date,
  Time,
  Uuid,
  Timestamp,
  TimestampNs,
  String,
  Text,
  Values,
  NullOnly,
  Constant,
}

export interface Column {
  field: NestedField
  name: Uint8Array
  kind: Kind
  required: boolean
  /** Timestamp: an offset is required (timestamptz) or refused (timestamp) */
  zoned: boolean
  /** Decimal */
  precision: number
  scale: number
  /** Text, Values and Decimal's other forms: the reference converter (undefined = toRow rejects) */
  convert: (v: unknown) => Value | undefined
  /** Values of a struct, list or map: read from the bytes (read-nested.ts) before the converter's way */
  nested: ReturnType<typeof nestedReader>
  writeDefault: Value | undefined
  constant: Value | undefined
}

export function compileColumn(field: NestedField, formatVersion: 2 | 3, constants: Set<string>): Column {
  const convert = valueConverter(field.type, formatVersion)
  const col: Column = {
    field,
    name: utf8.encode(field.name),
    kind: Kind.Values,
    required: field.required,
    zoned: false,
    precision: 0,
    scale: 0,
    convert,
    nested: nestedReader(field.type, formatVersion),
    writeDefault: writeDefaultOf(field, formatVersion),
    constant: undefined,
  }
  if (constants.has(field.name)) return { ...col, kind: Kind.Constant }
  if (typeof field.type !== 'string') return col
  const t = field.type.trim()
  const decimal = /^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(t)
  if (decimal) return { ...col, kind: Kind.Decimal, precision: Number(decimal[1]), scale: Number(decimal[2]) }
  switch (t) {
    case 'boolean':
      return { ...col, kind: Kind.Boolean }
    case 'int':
      return { ...col, kind: Kind.Int }
    case 'long':
      return { ...col, kind: Kind.Long }
    case 'float':
      return { ...col, kind: Kind.Float }
    case 'double':
      return { ...col, kind: Kind.Double }
    case 'date':
      return { ...col, kind: Kind.Date }
    case 'timestamp':
    case 'timestamptz':
      return { ...col, kind: Kind.Timestamp, zoned: t === 'timestamptz' }
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return formatVersion === 3 ? { ...col, kind: Kind.TimestampNs, zoned: t === 'timestamptz_ns' } : { ...col, kind: Kind.NullOnly }
    case 'string':
      return { ...col, kind: Kind.String }
    case 'time':
      return { ...col, kind: Kind.Time }
    case 'uuid':
      return { ...col, kind: Kind.Uuid }
    case 'binary':
      return { ...col, kind: Kind.Text }
    default:
      if (t.startsWith('fixed[')) return { ...col, kind: Kind.Text }
      // A type the reference refuses for every non-null value holds only nulls. Asked only here: the
      // probes below hold no value of the types above (a timestamp without a zone, a uuid), and
      // would send those down the slow path.
      if (refusesEverything(convert)) return { ...col, kind: Kind.NullOnly }
      return col // geometry and the rest: the converter, on parsed JSON
  }
}

/** unknown, geography, variant, v3 types on v2: every probe is refused. */
function refusesEverything(convert: (v: unknown) => Value | undefined): boolean {
  const probes: unknown[] = [
    true,
    'x',
    new LosslessNumber('1'),
    {},
    [],
    '2026-01-01',
    '00:00:00',
    '2026-01-01T00:00:00Z',
    'AAAA',
    { type: 'Point', coordinates: [0, 0] },
  ]
  return probes.every((p) => convert(p) === undefined)
}
