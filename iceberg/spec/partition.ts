// Partition specs (spec "Partitioning", Appendix C "Partition Specs"): building them from column
// names, the partition tuple of a row, its Hive-style path and the human form of each value.

import { civilFromDays } from './temporal.ts'
import { applyTransform, parseTransform, resultType, transformProblem, transformToString, type Transform } from './transforms.ts'
import { parsePrimitive, type NestedField, type PrimitiveTypeName, type Row, type Schema, type Value } from './types.ts'

export interface PartitionField {
  'source-id': number
  'field-id': number
  name: string
  transform: string
  /** v3 multi-argument transforms; kept when read, not produced here. */
  'source-ids'?: number[]
}

export interface PartitionSpec {
  'spec-id': number
  fields: PartitionField[]
}

/** Partition field ids start here (spec; the reference implementation's convention). */
export const PARTITION_FIELD_ID_START = 1000
export const UNPARTITIONED: PartitionSpec = { 'spec-id': 0, fields: [] }

/** A partition tuple keyed by partition field name, values in the row form of types.ts. */
export type PartitionRecord = Record<string, Value>

export class PartitionSpecError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'PartitionSpecError'
  }
}

// ---------- schema lookups ----------

interface FieldLocation {
  field: NestedField
  /** Field names from the row root, e.g. ['payload', 'ts']. */
  path: string[]
}

/** Finds a field by id, descending only through structs (partition sources may not sit in lists or maps). */
function findField(schema: { fields: NestedField[] }, id: number, prefix: string[] = []): FieldLocation | undefined {
  for (const f of schema.fields) {
    if (f.id === id) return { field: f, path: [...prefix, f.name] }
    if (typeof f.type === 'object' && f.type.type === 'struct') {
      const found = findField(f.type, id, [...prefix, f.name])
      if (found) return found
    }
  }
  return undefined
}

/** Finds a field by dotted name (`a.b`), through structs. */
function findFieldByName(schema: { fields: NestedField[] }, name: string): FieldLocation | undefined {
  const parts = name.split('.')
  let fields = schema.fields
  const path: string[] = []
  for (let i = 0; i < parts.length; i++) {
    const f = fields.find((x) => x.name === parts[i])
    if (!f) return undefined
    path.push(f.name)
    if (i === parts.length - 1) return { field: f, path }
    if (typeof f.type !== 'object' || f.type.type !== 'struct') return undefined
    fields = f.type.fields
  }
  return undefined
}

// ---------- building specs ----------

/** A partition field as a caller names it: `{ source: 'ts', transform: 'day' }`. */
export interface PartitionFieldInput {
  source: string
  transform: string
  name?: string
}

/** The default partition field name Java's and PyIceberg's builders give (`ts_day`, `id_bucket`, ...). */
function defaultPartitionFieldName(sourceName: string, t: Transform): string {
  switch (t.kind) {
    case 'identity':
      return sourceName
    case 'bucket':
      return `${sourceName}_bucket`
    case 'truncate':
      return `${sourceName}_trunc`
    case 'void':
      return `${sourceName}_null`
    case 'unknown':
      throw new PartitionSpecError(`unknown transform ${t.name}`)
    default:
      return `${sourceName}_${t.kind}`
  }
}

/**
 * Parses the CLI form of one partition field: `day(ts)`, `hour(event.ts)`, `bucket(16, id)`,
 * `truncate(4, name)`, `identity(region)` or a bare column name (identity).
 */
export function parsePartitionExpression(text: string): PartitionFieldInput {
  const t = text.trim()
  let m = /^(year|month|day|hour|identity|void)\s*\(\s*([^(),\s]+)\s*\)$/.exec(t)
  if (m) return { source: m[2], transform: m[1] }
  m = /^(bucket|truncate)\s*\(\s*(\d+)\s*,\s*([^(),\s]+)\s*\)$/.exec(t)
  if (m) return { source: m[3], transform: `${m[1]}[${m[2]}]` }
  if (/^[^(),\s]+$/.test(t)) return { source: t, transform: 'identity' }
  throw new PartitionSpecError(
    `cannot parse partition ${JSON.stringify(text)}: use day(col), hour(col), month(col), year(col), bucket(N, col), truncate(W, col) or col`,
  )
}

/**
 * Builds a spec against a schema whose field ids are final, assigning partition field ids from
 * `lastPartitionId + 1`. Throws PartitionSpecError (a caller's 400) for unknown columns, transforms
 * that do not fit the column's type, and duplicate names.
 */
export function buildPartitionSpec(
  schema: { fields: NestedField[] },
  fields: PartitionFieldInput[],
  specId = 0,
  lastPartitionId = PARTITION_FIELD_ID_START - 1,
): PartitionSpec {
  const out: PartitionField[] = []
  let next = lastPartitionId + 1
  for (const input of fields) {
    const loc = findFieldByName(schema, input.source)
    if (!loc) throw new PartitionSpecError(`partition source column ${input.source} is not in the schema`)
    const t = parseTransform(input.transform)
    const problem = transformProblem(t, loc.field.type)
    if (problem) throw new PartitionSpecError(`cannot partition by ${transformToString(t)}(${input.source}): ${problem}`)
    const name = input.name ?? defaultPartitionFieldName(loc.path.join('.'), t)
    if (out.some((f) => f.name === name)) throw new PartitionSpecError(`duplicate partition field name ${name}`)
    out.push({ 'source-id': loc.field.id, 'field-id': next++, name, transform: transformToString(t) })
  }
  return { 'spec-id': specId, fields: out }
}

/** Highest partition field id of a spec, or 999 when it has none (Java's and PyIceberg's convention). */
export function lastAssignedFieldId(spec: PartitionSpec): number {
  return spec.fields.reduce((max, f) => Math.max(max, f['field-id']), PARTITION_FIELD_ID_START - 1)
}

// ---------- partition tuples ----------

export interface BoundPartitionField {
  field: PartitionField
  transform: Transform
  source: FieldLocation
  sourceType: PrimitiveTypeName
  /** The partition value's type (a primitive; `day` gives `date`). */
  type: PrimitiveTypeName
}

/** Resolves each partition field against the schema; throws for a missing or non-primitive source. */
export function bindSpec(spec: PartitionSpec, schema: { fields: NestedField[] }): BoundPartitionField[] {
  return spec.fields.map((field) => {
    const source = findField(schema, field['source-id'])
    if (!source) throw new PartitionSpecError(`partition field ${field.name}: source id ${field['source-id']} is not in the schema`)
    if (typeof source.field.type !== 'string') throw new PartitionSpecError(`partition field ${field.name}: source is not a primitive`)
    const transform = parseTransform(field.transform)
    return { field, transform, source, sourceType: source.field.type, type: resultType(transform, source.field.type) }
  })
}

/** The partition struct type: one optional field per partition field, ids = partition field ids. */
export function partitionType(spec: PartitionSpec, schema: Schema | { fields: NestedField[] }): NestedField[] {
  return bindSpec(spec, schema).map((b) => ({ id: b.field['field-id'], name: b.field.name, required: false, type: b.type }))
}

function valueAt(row: Row, path: string[]): Value {
  let v: Value = row
  for (const name of path) {
    if (v === null || typeof v !== 'object' || Array.isArray(v) || v instanceof Uint8Array) return null
    v = (v as { [k: string]: Value })[name] ?? null
  }
  return v
}

/** The partition tuple of a row. */
export function partitionRecord(bound: BoundPartitionField[], row: Row): PartitionRecord {
  const out: PartitionRecord = {}
  for (const b of bound) out[b.field.name] = applyTransform(b.transform, b.sourceType, valueAt(row, b.source.path))
  return out
}

// ---------- human strings and paths ----------

const pad = (n: number, w = 2) => (n < 0 ? '-' + String(-n).padStart(w, '0') : String(n).padStart(w, '0'))

function dateString(days: number): string {
  const [y, m, d] = civilFromDays(days)
  return `${pad(y, 4)}-${pad(m)}-${pad(d)}`
}

function fraction(micros: bigint): string {
  return micros === 0n ? '' : '.' + micros.toString().padStart(6, '0')
}

function timestampString(micros: bigint, zone: boolean): string {
  const days = micros >= 0n ? micros / 86_400_000_000n : -((-micros + 86_400_000_000n - 1n) / 86_400_000_000n)
  const rest = micros - days * 86_400_000_000n
  return `${dateString(Number(days))}T${timeString(rest)}${zone ? '+00:00' : ''}`
}

function timeString(micros: bigint): string {
  const s = micros / 1_000_000n
  return `${pad(Number(s / 3600n))}:${pad(Number((s / 60n) % 60n))}:${pad(Number(s % 60n))}${fraction(micros % 1_000_000n)}`
}

function base64(bytes: Uint8Array): string {
  let s = ''
  for (const b of bytes) s += String.fromCharCode(b)
  return btoa(s)
}

function uuidString(b: Uint8Array): string {
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

function decimalString(unscaled: bigint, scale: number): string {
  if (scale === 0) return unscaled.toString()
  const neg = unscaled < 0n
  const digits = (neg ? -unscaled : unscaled).toString().padStart(scale + 1, '0')
  return `${neg ? '-' : ''}${digits.slice(0, -scale)}.${digits.slice(-scale)}`
}

/** A partition value as people read it, the way PyIceberg's and Java's `toHumanString` print it. */
export function humanString(t: Transform, type: PrimitiveTypeName, v: Value): string {
  if (v === null || v === undefined) return 'null'
  switch (t.kind) {
    case 'year':
      return pad(1970 + (v as number), 4)
    case 'month': {
      const m = v as number
      const y = 1970 + Math.floor(m / 12)
      return `${pad(y, 4)}-${pad(m - (y - 1970) * 12 + 1)}`
    }
    case 'day':
      return dateString(v as number)
    case 'hour': {
      const h = v as number
      const days = Math.floor(h / 24)
      return `${dateString(days)}-${pad(h - days * 24)}`
    }
    default:
      break
  }
  const p = parsePrimitive(type)
  switch (p.kind) {
    case 'date':
      return dateString(v as number)
    case 'time':
      return timeString(v as bigint)
    case 'timestamp':
    case 'timestamptz':
      return timestampString(v as bigint, p.kind === 'timestamptz')
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return timestampString((v as bigint) / 1000n, p.kind === 'timestamptz_ns')
    case 'decimal':
      return decimalString(v as bigint, p.scale)
    case 'uuid':
      return uuidString(v as Uint8Array)
    case 'fixed':
    case 'binary':
      return base64(v as Uint8Array)
    default:
      return String(v)
  }
}

/** URL form encoding as Python's `quote_plus` does it (PyIceberg's partition paths). */
function quotePlus(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase())
    .replace(/%20/g, '+')
}

/** The Hive-style partition path, e.g. `ts_day=2026-09-21` or `region=eu/ts_hour=2026-09-21-12`. */
export function partitionPath(bound: BoundPartitionField[], record: PartitionRecord): string {
  return bound.map((b) => `${quotePlus(b.field.name)}=${quotePlus(humanString(b.transform, b.type, record[b.field.name] ?? null))}`).join('/')
}
