// JSON → Iceberg row values: one producer row (parsed losslessly) checked against a table schema and
// turned into the Row representation of types.ts, or every reason it does not fit.
// Nothing is coerced that could change a value: no rounding, no truncation, no string→number guessing,
// no dropped fields (an unknown field is a reject: silently dropping data is the one failure a
// producer cannot see).
//
// Paths in rejects: struct fields are dotted (`a.b`), list elements are indexed (`a[2]`, `a[2].b`),
// map values are keyed by their JSON key (`m["k"]`), and entries of a map sent as an array of
// {"key", "value"} are indexed with the member named (`m[3].key`, `m[3].value`).

import { base64Bytes, hexBytes } from './binary-text.ts'
import { parseDecimal, parseExactInteger } from './decimal.ts'
import { toWkb } from './geometry.ts'
import { describe, typeName } from './describe.ts'
import { isLosslessNumber, numberText } from './json.ts'
import { parseDate, parseTime, parseTimestamp } from './temporal.ts'
import {
  isPrimitive,
  parsePrimitive,
  UnknownTypeError,
  type IcebergType,
  type ListType,
  type MapType,
  type NestedField,
  type Primitive,
  type Row,
  type StructType,
  type Value,
} from './types.ts'

type RejectReason = 'missing_required' | 'unknown_field' | 'type_mismatch' | 'unsupported_type' | 'not_an_object'

export interface Reject {
  reason: RejectReason
  /** Path of the field: `a.b`, `a[2]`, `m["k"]` (see the top of this file). */
  field?: string
  /** The Iceberg type the schema expects, as the spec writes it ("decimal(9, 2)", "list<long>"). */
  expected?: string
  /** What was sent, briefly ("string \"abc\"", "number 1.5"), with why it does not fit in parentheses. */
  got?: string
}

export interface ToRowOptions {
  /**
   * The table's format version. v3-only types (timestamp_ns, timestamptz_ns, geometry) are refused on
   * a v2 table. Defaults to 2, so a caller that forgets never writes a v3 type into a v2 table.
   */
  formatVersion?: 2 | 3
}

export type ToRowResult = { ok: true; row: Row } | { ok: false; rejects: Reject[] }

/**
 * Turns one losslessly parsed JSON value into a row for `schema`, or all of its rejects.
 *
 * - not an object → not_an_object; a required field absent or null → missing_required;
 *   a member the schema lacks → unknown_field; a value of the wrong kind or out of range → type_mismatch;
 *   a non-null value for a type this writer does not write (geography, variant, geometry with its own
 *   CRS, v3 types on v2) → unsupported_type. A null in an optional column of any type is always fine.
 * - int and long accept JSON numbers whose value is an integer, written any way ("7", "7.0", "7e0");
 *   "7.5" is refused, never truncated. Strings are not numbers.
 * - float and double accept any JSON number (float rounds to float32), plus the strings "NaN",
 *   "Infinity" and "-Infinity", which JSON cannot otherwise carry. A number beyond the type's range is refused.
 * - An absent field with a `write-default` takes that default (it is in the spec's single-value JSON form).
 *
 * The schema is compiled once per schema object and version (cached), so treat schemas as immutable.
 */
export function toRow(schema: StructType, input: unknown, opts: ToRowOptions = {}): ToRowResult {
  if (!isObject(input)) return { ok: false, rejects: [{ reason: 'not_an_object', got: describe(input) }] }
  const struct = compiledSchema(schema, opts.formatVersion ?? 2)
  const rejects: Reject[] = []
  const row = struct.convertObject(input, '', rejects)
  return rejects.length === 0 ? { ok: true, row } : { ok: false, rejects }
}

/**
 * One column's converter, for callers that check values one at a time (the ingest scanner): the
 * Value toRow would give for a non-null JSON value of `type`, or undefined where toRow would reject it.
 */
export function valueConverter(type: IcebergType, formatVersion: 2 | 3): (value: unknown) => Value | undefined {
  const convert = compile(type, { formatVersion, bytes: 'base64' })
  return (value) => {
    const rejects: Reject[] = []
    const out = convert(value, '', rejects)
    return rejects.length === 0 ? out : undefined
  }
}

/** A field's write-default as a Value (undefined when it has none), for callers that fill columns. */
export function writeDefaultOf(field: NestedField, formatVersion: 2 | 3): Value | undefined {
  return compileWriteDefault(field, { formatVersion, bytes: 'base64' })
}

// ---- compiled converters ----

/** Converts a non-null JSON value at `path`, pushing rejects; the returned value is meaningless after a reject. */
type Convert = (value: unknown, path: string, rejects: Reject[]) => Value

interface CompiledStruct {
  convertObject(obj: Record<string, unknown>, prefix: string, rejects: Reject[]): { [name: string]: Value }
}

interface Context {
  formatVersion: 2 | 3
  /** base64 for producer rows; hex in the spec's single-value JSON (write-default). */
  bytes: 'base64' | 'hex'
}

const cache = new WeakMap<StructType, Map<number, CompiledStruct>>()

function compiledSchema(schema: StructType, formatVersion: 2 | 3): CompiledStruct {
  let byVersion = cache.get(schema)
  if (!byVersion) cache.set(schema, (byVersion = new Map()))
  let compiled = byVersion.get(formatVersion)
  if (!compiled) byVersion.set(formatVersion, (compiled = compileStruct(schema, { formatVersion, bytes: 'base64' })))
  return compiled
}

function compile(type: IcebergType, ctx: Context): Convert {
  if (isPrimitive(type)) return compilePrimitive(type, ctx)
  switch (type.type) {
    case 'struct': {
      const struct = compileStruct(type, ctx)
      const expected = typeName(type)
      return (v, path, rejects) => {
        if (!isObject(v)) return mismatch(rejects, path, expected, describe(v))
        return struct.convertObject(v, path + '.', rejects)
      }
    }
    case 'list':
      return compileList(type, ctx)
    case 'map':
      return compileMap(type, ctx)
  }
}

function compileStruct(struct: StructType, ctx: Context): CompiledStruct {
  const names = new Set(struct.fields.map((f) => f.name))
  const fields = struct.fields.map((f) => ({
    name: f.name,
    required: f.required,
    expected: typeName(f.type),
    convert: compile(f.type, ctx),
    writeDefault: compileWriteDefault(f, ctx),
  }))
  return {
    convertObject(obj, prefix, rejects) {
      const out: { [name: string]: Value } = {}
      for (const f of fields) {
        const v = Object.hasOwn(obj, f.name) ? obj[f.name] : undefined
        if (v === undefined && f.writeDefault !== undefined) {
          out[f.name] = f.writeDefault
        } else if (v === undefined || v === null) {
          if (f.required) rejects.push({ reason: 'missing_required', field: prefix + f.name, expected: f.expected })
          out[f.name] = null
        } else {
          out[f.name] = f.convert(v, prefix + f.name, rejects)
        }
      }
      for (const key of Object.keys(obj)) {
        if (!names.has(key)) rejects.push({ reason: 'unknown_field', field: prefix + key })
      }
      return out
    },
  }
}

/** A field's write-default as a Value, converted once; undefined when there is none (or it is null). */
function compileWriteDefault(field: NestedField, ctx: Context): Value | undefined {
  const d = field['write-default']
  if (d === undefined || d === null) return undefined
  const rejects: Reject[] = []
  const value = compile(field.type, { ...ctx, bytes: 'hex' })(d, field.name, rejects)
  if (rejects.length > 0) throw new TypeError(`write-default of field ${field.name} does not fit ${typeName(field.type)}`)
  return value
}

function compileList(list: ListType, ctx: Context): Convert {
  const element = compile(list.element, ctx)
  const expected = typeName(list)
  const elementExpected = typeName(list.element)
  return (v, path, rejects) => {
    if (!Array.isArray(v)) return mismatch(rejects, path, expected, describe(v))
    const out: Value[] = new Array(v.length)
    for (let i = 0; i < v.length; i++) {
      const e = v[i]
      if (e === null || e === undefined) {
        if (list['element-required']) rejects.push({ reason: 'missing_required', field: `${path}[${i}]`, expected: elementExpected })
        out[i] = null
      } else {
        out[i] = element(e, `${path}[${i}]`, rejects)
      }
    }
    return out
  }
}

function compileMap(map: MapType, ctx: Context): Convert {
  const key = compile(map.key, ctx)
  const value = compile(map.value, ctx)
  const expected = typeName(map)
  const keyExpected = typeName(map.key)
  const valueExpected = typeName(map.value)
  const stringKeys = map.key === 'string'

  const convertValue = (v: unknown, path: string, rejects: Reject[]): Value => {
    if (v !== null && v !== undefined) return value(v, path, rejects)
    if (map['value-required']) rejects.push({ reason: 'missing_required', field: path, expected: valueExpected })
    return null
  }

  return (v, path, rejects) => {
    const entries: Array<[Value, Value]> = []
    if (stringKeys && isObject(v)) {
      for (const k of Object.keys(v)) {
        const p = `${path}[${JSON.stringify(k)}]`
        entries.push([key(k, p, rejects), convertValue(v[k], p, rejects)])
      }
      return entries
    }
    if (!Array.isArray(v)) {
      const hint = isObject(v) ? ' (a map without string keys is an array of {"key", "value"})' : ''
      return mismatch(rejects, path, expected, describe(v) + hint)
    }
    const seen = new Set<string>()
    for (let i = 0; i < v.length; i++) {
      const entry = v[i]
      const p = `${path}[${i}]`
      if (!isObject(entry)) {
        mismatch(rejects, p, `{"key": ${keyExpected}, "value": ${valueExpected}}`, describe(entry))
        continue
      }
      for (const member of Object.keys(entry)) {
        if (member !== 'key' && member !== 'value') rejects.push({ reason: 'unknown_field', field: `${p}.${member}` })
      }
      const k = entry.key
      let kv: Value = null
      if (k === null || k === undefined) {
        // Iceberg map keys are always required.
        rejects.push({ reason: 'missing_required', field: `${p}.key`, expected: keyExpected })
      } else {
        const before = rejects.length
        kv = key(k, `${p}.key`, rejects)
        if (rejects.length === before) {
          const id = keyIdentity(kv)
          if (seen.has(id)) mismatch(rejects, `${p}.key`, keyExpected, `${describe(k)} (a duplicate key)`)
          seen.add(id)
        }
      }
      entries.push([kv, convertValue(entry.value, `${p}.value`, rejects)])
    }
    return entries
  }
}

/** A string that equals another key's exactly when the two keys are equal. */
function keyIdentity(v: Value): string {
  if (v instanceof Uint8Array) return `b:${Array.from(v).join(',')}`
  if (typeof v === 'bigint') return `n:${v}`
  if (typeof v === 'number') return `n:${Object.is(v, -0) ? '-0' : v}`
  if (typeof v === 'string') return `s:${v}`
  if (v === null || typeof v !== 'object') return `${typeof v}:${String(v)}`
  if (Array.isArray(v)) return `[${v.map((x) => keyIdentity(x as Value)).join(';')}]`
  return `{${Object.keys(v)
    .map((k) => `${JSON.stringify(k)}:${keyIdentity(v[k])}`)
    .join(';')}}`
}

// ---- primitives ----

const INT_MIN = -(2n ** 31n)
const INT_MAX = 2n ** 31n - 1n
const LONG_MIN = -(2n ** 63n)
const LONG_MAX = 2n ** 63n - 1n
const UUID = /^([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})$/i
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
const NON_FINITE: Record<string, number> = { NaN: NaN, Infinity: Infinity, '-Infinity': -Infinity }
const V3_ONLY = new Set(['timestamp_ns', 'timestamptz_ns', 'geometry', 'geography', 'variant', 'unknown'])

function compilePrimitive(name: string, ctx: Context): Convert {
  const expected = name.trim()
  let p: Primitive
  try {
    p = parsePrimitive(name)
  } catch (err) {
    if (!(err instanceof UnknownTypeError)) throw err
    return unsupported(expected)
  }
  const bad = (rejects: Reject[], path: string, v: unknown, why?: string): Value =>
    mismatch(rejects, path, expected, why === undefined ? describe(v) : `${describe(v)} (${why})`)

  if (ctx.formatVersion === 2 && V3_ONLY.has(p.kind) && p.kind !== 'unknown') return unsupported(expected)

  switch (p.kind) {
    case 'boolean':
      return (v, path, r) => (typeof v === 'boolean' ? v : bad(r, path, v))
    case 'int':
    case 'long': {
      const [min, max] = p.kind === 'int' ? [INT_MIN, INT_MAX] : [LONG_MIN, LONG_MAX]
      const asInt = p.kind === 'int'
      return (v, path, r) => {
        // A safe integer as a number (the scanner's nested reader gives short integers so): the value
        // its text would parse to, without the text (-0 is 0, as String(-0) is "0").
        if (typeof v === 'number' && Number.isSafeInteger(v)) {
          if (!asInt) return BigInt(v)
          if (v >= -2147483648 && v <= 2147483647) return v === 0 ? 0 : v
        }
        const text = numberText(v)
        if (text === undefined) return bad(r, path, v)
        const n = parseExactInteger(text)
        if (!n.ok) return bad(r, path, v, n.why === 'out of range' ? `out of range for ${p.kind}` : n.why)
        if (n.value < min || n.value > max) return bad(r, path, v, `out of range for ${p.kind}`)
        return asInt ? Number(n.value) : n.value
      }
    }
    case 'float':
    case 'double': {
      const round = p.kind === 'float' ? Math.fround : (x: number) => x
      return (v, path, r) => {
        // A finite number is its shortest text's value (String(-0) is "0": -0 reads as 0).
        if (typeof v === 'number' && Number.isFinite(v)) {
          const x = round(v === 0 ? 0 : v)
          if (Number.isFinite(x)) return x
        }
        if (typeof v === 'string' && Object.hasOwn(NON_FINITE, v)) return NON_FINITE[v]
        const text = numberText(v)
        if (text === undefined) return bad(r, path, v)
        const x = round(Number(text))
        // Finite text that becomes ±Infinity is beyond the type's range; rounding it there would invent a value.
        return Number.isFinite(x) ? x : bad(r, path, v, `out of range for ${p.kind}`)
      }
    }
    case 'decimal': {
      const { precision, scale } = p
      return (v, path, r) => {
        const text = typeof v === 'string' ? v : numberText(v)
        if (text === undefined) return bad(r, path, v)
        const d = parseDecimal(text, precision, scale)
        return d.ok ? d.value : bad(r, path, v, d.why)
      }
    }
    case 'date':
      return textual(parseDate, bad)
    case 'time':
      return textual(parseTime, bad)
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns': {
      const kind = p.kind
      return textual((s) => parseTimestamp(s, kind), bad)
    }
    case 'string':
      return (v, path, r) => {
        if (typeof v !== 'string') return bad(r, path, v)
        // A lone surrogate cannot be written as UTF-8; the writer would replace it, changing the value.
        return LONE_SURROGATE.test(v) ? bad(r, path, v, 'an unpaired UTF-16 surrogate') : v
      }
    case 'uuid':
      return (v, path, r) => {
        const m = typeof v === 'string' ? UUID.exec(v) : null
        return m ? hexBytes(m.slice(1).join(''))! : bad(r, path, v, typeof v === 'string' ? 'not a canonical UUID' : undefined)
      }
    case 'binary':
    case 'fixed': {
      const length = p.kind === 'fixed' ? p.length : undefined
      const decode = ctx.bytes === 'hex' ? hexBytes : base64Bytes
      return (v, path, r) => {
        if (typeof v !== 'string') return bad(r, path, v)
        const bytes = decode(v)
        if (!bytes) return bad(r, path, v, ctx.bytes === 'hex' ? 'not hex' : 'not base64')
        if (length !== undefined && bytes.length !== length) return bad(r, path, v, `${bytes.length} bytes, not ${length}`)
        return bytes
      }
    }
    case 'geometry': {
      // EPSG:4326 is longitude/latitude too as Iceberg stores it (coordinates are always x/y), so the
      // same WKB fits; a CRS of any other kind would need a reprojection we do not do.
      if (p.crs !== undefined && p.crs !== 'OGC:CRS84' && p.crs !== 'EPSG:4326') return unsupported(expected)
      return (v, path, r) => {
        const wkb = toWkb(v)
        return wkb.ok ? wkb.value : bad(r, path, v, wkb.why)
      }
    }
    case 'unknown':
      // The unknown type holds only nulls; the caller has already accepted null and absent.
      return (v, path, r) => bad(r, path, v)
    case 'geography':
    case 'variant':
      return unsupported(expected)
  }
}

/** A converter for types written as JSON strings and parsed by `parse`. */
function textual<T extends Value>(
  parse: (s: string) => { ok: true; value: T } | { ok: false; why: string },
  bad: (rejects: Reject[], path: string, v: unknown, why?: string) => Value,
): Convert {
  return (v, path, r) => {
    if (typeof v !== 'string') return bad(r, path, v)
    const x = parse(v)
    return x.ok ? x.value : bad(r, path, v, x.why)
  }
}

function unsupported(expected: string): Convert {
  return (v, path, rejects) => {
    rejects.push({ reason: 'unsupported_type', field: path, expected, got: describe(v) })
    return null
  }
}

function mismatch(rejects: Reject[], path: string, expected: string, got: string): Value {
  rejects.push({ reason: 'type_mismatch', field: path, expected, got })
  return null
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !isLosslessNumber(v) && !(v instanceof Uint8Array)
}
