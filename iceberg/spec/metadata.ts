// Table metadata (spec "Table Metadata", Appendix C), format v1 read, v2 and v3 read and write.
//
// Lossless: the file is parsed with lossless-json. Fields the spec types as 63-bit longs that are
// ids or counters (snapshot ids, sequence numbers, row ids) become bigint; small ints and
// millisecond timestamps become number; every other number — in unknown fields, field defaults,
// statistics we do not model — stays a LosslessNumber and is written back with its exact digits.
// Unknown top-level and nested fields are kept in place, so parse → serialize preserves them.

import { isLosslessNumber } from 'lossless-json'
import { parseLossless, stringifyLossless } from './json.ts'
import { buildPartitionSpec, lastAssignedFieldId, PARTITION_FIELD_ID_START, type PartitionFieldInput, type PartitionSpec } from './partition.ts'
import type { IcebergType, NestedField, Schema } from './types.ts'

type FormatVersion = 1 | 2 | 3

export interface SnapshotSummary {
  operation: 'append' | 'replace' | 'overwrite' | 'delete' | string
  [key: string]: string
}

export interface Snapshot {
  'snapshot-id': bigint
  'parent-snapshot-id'?: bigint
  'sequence-number'?: bigint
  'timestamp-ms': number
  'manifest-list'?: string
  /** v1 only: manifest locations when there is no manifest list. */
  manifests?: string[]
  summary: SnapshotSummary
  'schema-id'?: number
  /** v3 row lineage */
  'first-row-id'?: bigint
  'added-rows'?: bigint
  'key-id'?: string
  [unknown: string]: unknown
}

export interface SnapshotRef {
  'snapshot-id': bigint
  type: 'branch' | 'tag'
  'min-snapshots-to-keep'?: number
  'max-snapshot-age-ms'?: number
  'max-ref-age-ms'?: number
  [unknown: string]: unknown
}

interface SnapshotLogEntry {
  'timestamp-ms': number
  'snapshot-id': bigint
}
export interface MetadataLogEntry {
  'timestamp-ms': number
  'metadata-file': string
}

interface SortField {
  transform: string
  'source-id': number
  direction: 'asc' | 'desc'
  'null-order': 'nulls-first' | 'nulls-last'
  [unknown: string]: unknown
}

export interface SortOrder {
  'order-id': number
  fields: SortField[]
}

export interface TableMetadata {
  'format-version': FormatVersion
  'table-uuid': string
  location: string
  'last-sequence-number': bigint
  'last-updated-ms': number
  'last-column-id': number
  schemas: Schema[]
  'current-schema-id': number
  'partition-specs': PartitionSpec[]
  'default-spec-id': number
  'last-partition-id': number
  properties: Record<string, string>
  /** Absent (or null, or -1 from old writers) when the table has no snapshot. */
  'current-snapshot-id'?: bigint | null
  snapshots: Snapshot[]
  'snapshot-log': SnapshotLogEntry[]
  'metadata-log': MetadataLogEntry[]
  'sort-orders': SortOrder[]
  'default-sort-order-id': number
  refs: Record<string, SnapshotRef>
  statistics?: unknown[]
  'partition-statistics'?: unknown[]
  /** v3: higher than every assigned row id; the next snapshot's first-row-id. */
  'next-row-id'?: bigint
  'encryption-keys'?: unknown[]
  [unknown: string]: unknown
}

export class MetadataError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'MetadataError'
  }
}

// ---------- number conversion ----------

function big(v: unknown, what: string): bigint {
  if (typeof v === 'bigint') return v
  if (isLosslessNumber(v) && /^-?\d+$/.test(v.value)) return BigInt(v.value)
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v)
  throw new MetadataError(`${what}: expected an integer, got ${String(v)}`)
}

function int(v: unknown, what: string): number {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return v
  if (isLosslessNumber(v) || typeof v === 'bigint') {
    const n = Number(isLosslessNumber(v) ? v.value : v)
    if (Number.isSafeInteger(n)) return n
  }
  throw new MetadataError(`${what}: expected an integer, got ${String(v)}`)
}

type Obj = Record<string, unknown>

/** Converts `keys` of `o` in place when present and not null. */
function convert(o: Obj, keys: string[], fn: (v: unknown, what: string) => unknown, where: string): void {
  for (const k of keys) if (o[k] !== undefined && o[k] !== null) o[k] = fn(o[k], `${where}.${k}`)
}

function normalizeType(t: unknown, where: string): void {
  if (typeof t !== 'object' || t === null) return
  const o = t as Obj
  convert(o, ['element-id', 'key-id', 'value-id'], int, where)
  if (o.type === 'struct') for (const f of (o.fields as Obj[]) ?? []) normalizeField(f, where)
  if (o.type === 'list') normalizeType(o.element, `${where}.element`)
  if (o.type === 'map') {
    normalizeType(o.key, `${where}.key`)
    normalizeType(o.value, `${where}.value`)
  }
}

function normalizeField(f: Obj, where: string): void {
  convert(f, ['id'], int, where)
  normalizeType(f.type, `${where}.${String(f.name)}`)
}

function normalizeSchema(s: Obj): void {
  convert(s, ['schema-id'], int, 'schema')
  if (Array.isArray(s['identifier-field-ids'])) s['identifier-field-ids'] = (s['identifier-field-ids'] as unknown[]).map((v) => int(v, 'identifier-field-ids'))
  normalizeType(s, 'schema')
}

function normalizeSpec(s: Obj): void {
  convert(s, ['spec-id'], int, 'partition-spec')
  for (const f of (s.fields as Obj[]) ?? []) {
    convert(f, ['source-id', 'field-id'], int, 'partition-field')
    if (Array.isArray(f['source-ids'])) f['source-ids'] = (f['source-ids'] as unknown[]).map((v) => int(v, 'source-ids'))
  }
}

function normalizeSnapshot(s: Obj): void {
  convert(s, ['snapshot-id', 'parent-snapshot-id', 'sequence-number', 'first-row-id', 'added-rows'], big, 'snapshot')
  convert(s, ['timestamp-ms', 'schema-id'], int, 'snapshot')
}

// ---------- parse / serialize ----------

/** Parses one schema's JSON text (as stringifyLossless writes it), ids as numbers, defaults exact. */
export function parseSchema(text: string): Schema {
  const s = parseLossless(text) as Obj
  if (typeof s !== 'object' || s === null || Array.isArray(s)) throw new MetadataError('a schema must be a JSON object')
  normalizeSchema(s)
  return s as unknown as Schema
}

/** Parses metadata.json text. v1 metadata gains the v2 list fields (`schemas`, `partition-specs`) it implies. */
export function parseMetadata(text: string): TableMetadata {
  const m = parseLossless(text) as Obj
  if (typeof m !== 'object' || m === null || Array.isArray(m)) throw new MetadataError('table metadata must be a JSON object')
  convert(
    m,
    ['format-version', 'last-updated-ms', 'last-column-id', 'current-schema-id', 'default-spec-id', 'last-partition-id', 'default-sort-order-id'],
    int,
    'metadata',
  )
  convert(m, ['last-sequence-number', 'current-snapshot-id', 'next-row-id'], big, 'metadata')
  const version = m['format-version']
  if (version !== 1 && version !== 2 && version !== 3) throw new MetadataError(`unsupported format-version ${String(version)}`)

  if (m.schema) normalizeSchema(m.schema as Obj)
  if (!Array.isArray(m.schemas)) {
    if (!m.schema) throw new MetadataError('metadata has no schemas')
    m.schemas = [{ 'schema-id': 0, ...(m.schema as Obj) }]
    m['current-schema-id'] ??= (m.schemas as Obj[])[0]['schema-id']
  } else {
    for (const s of m.schemas as Obj[]) normalizeSchema(s)
  }
  if (!Array.isArray(m['partition-specs'])) {
    const fields = Array.isArray(m['partition-spec']) ? (m['partition-spec'] as Obj[]) : []
    m['partition-specs'] = [{ 'spec-id': 0, fields }]
    m['default-spec-id'] ??= 0
  }
  for (const s of m['partition-specs'] as Obj[]) normalizeSpec(s)
  m['last-partition-id'] ??= Math.max(PARTITION_FIELD_ID_START - 1, ...(m['partition-specs'] as PartitionSpec[]).map(lastAssignedFieldId))
  m['last-sequence-number'] ??= 0n
  m.properties ??= {}
  m.snapshots ??= []
  for (const s of m.snapshots as Obj[]) normalizeSnapshot(s)
  m['snapshot-log'] ??= []
  for (const e of m['snapshot-log'] as Obj[]) {
    convert(e, ['snapshot-id'], big, 'snapshot-log')
    convert(e, ['timestamp-ms'], int, 'snapshot-log')
  }
  m['metadata-log'] ??= []
  for (const e of m['metadata-log'] as Obj[]) convert(e, ['timestamp-ms'], int, 'metadata-log')
  m['sort-orders'] ??= [{ 'order-id': 0, fields: [] }]
  for (const o of m['sort-orders'] as Obj[]) {
    convert(o, ['order-id'], int, 'sort-order')
    for (const f of (o.fields as Obj[]) ?? []) convert(f, ['source-id'], int, 'sort-field')
  }
  m['default-sort-order-id'] ??= 0
  if (m.refs === undefined || m.refs === null) {
    // Spec: a table always has a `main` branch; older metadata implies it from current-snapshot-id.
    const current = m['current-snapshot-id'] as bigint | null | undefined
    m.refs = current !== undefined && current !== null && current >= 0n ? { main: { 'snapshot-id': current, type: 'branch' } } : {}
  } else {
    for (const r of Object.values(m.refs as Record<string, Obj>)) {
      convert(r, ['snapshot-id'], big, 'ref')
      convert(r, ['min-snapshots-to-keep', 'max-snapshot-age-ms', 'max-ref-age-ms'], int, 'ref')
    }
  }
  for (const s of (m.statistics as Obj[] | undefined) ?? []) {
    convert(s, ['snapshot-id'], big, 'statistics')
    for (const b of (s['blob-metadata'] as Obj[] | undefined) ?? []) convert(b, ['snapshot-id', 'sequence-number'], big, 'blob-metadata')
  }
  for (const s of (m['partition-statistics'] as Obj[] | undefined) ?? []) convert(s, ['snapshot-id'], big, 'partition-statistics')
  if (version === 3) m['next-row-id'] ??= 0n
  return m as TableMetadata
}

/** Writes metadata.json text; bigint and LosslessNumber values keep their exact digits. */
export function serializeMetadata(m: TableMetadata, indent?: number): string {
  return stringifyLossless(m, indent)
}

// ---------- lookups ----------

export function currentSchema(m: TableMetadata): Schema {
  const s = m.schemas.find((x) => x['schema-id'] === m['current-schema-id'])
  if (!s) throw new MetadataError(`current-schema-id ${m['current-schema-id']} is not among the schemas`)
  return s
}

export function defaultSpec(m: TableMetadata): PartitionSpec {
  const s = m['partition-specs'].find((x) => x['spec-id'] === m['default-spec-id'])
  if (!s) throw new MetadataError(`default-spec-id ${m['default-spec-id']} is not among the partition specs`)
  return s
}

/** The id a branch points at (`main` falls back to current-snapshot-id), or null for none. */
export function branchSnapshotId(m: TableMetadata, branch = 'main'): bigint | null {
  const ref = m.refs?.[branch]
  if (ref) return ref['snapshot-id']
  if (branch !== 'main') return null
  const id = m['current-snapshot-id']
  return id === undefined || id === null || id < 0n ? null : id
}

function snapshotById(m: TableMetadata, id: bigint): Snapshot | undefined {
  return m.snapshots.find((s) => s['snapshot-id'] === id)
}

export function currentSnapshot(m: TableMetadata, branch = 'main'): Snapshot | undefined {
  const id = branchSnapshotId(m, branch)
  return id === null ? undefined : snapshotById(m, id)
}

// ---------- new tables ----------

export interface NewTableInput {
  location: string
  /**
   * The table's columns. Field ids in it are placeholders: every id (fields, list elements, map
   * keys and values) is reassigned from 1, breadth-first — all fields of a struct before their
   * children — exactly as Java's TypeUtil.assignFreshIds and PyIceberg's new_table_metadata do.
   * `schema-id` becomes 0 and identifier-field-ids are remapped.
   */
  schema: { fields: NestedField[]; 'identifier-field-ids'?: number[] }
  /** A spec whose `source-id`s refer to the ids in `schema` as given; field ids are reassigned from 1000. */
  spec?: PartitionSpec
  /** Alternatively, the partition fields by column name (`{ source: 'ts', transform: 'day' }`); validated. */
  partitionFields?: PartitionFieldInput[]
  /** A sort order whose `source-id`s refer to the ids in `schema` as given; an empty one is unsorted (order-id 0), any other gets order-id 1. */
  sortOrder?: SortOrder
  formatVersion: 2 | 3
  properties?: Record<string, string>
  tableUuid?: string
  /** Defaults to now. */
  lastUpdatedMs?: number
}

/** Reassigns ids; returns the new schema and a map old id → new id (for top-level-unique old ids). */
export function assignFreshIds(schema: { fields: NestedField[]; 'identifier-field-ids'?: number[] }): {
  schema: Schema
  lastColumnId: number
  idMap: Map<number, number>
} {
  let next = 0
  const idMap = new Map<number, number>()
  const freshType = (t: IcebergType): IcebergType => {
    if (typeof t === 'string') return t
    if (t.type === 'struct') return { type: 'struct', fields: freshFields(t.fields) }
    if (t.type === 'list') {
      const id = ++next
      idMap.set(t['element-id'], id)
      return { type: 'list', 'element-id': id, element: freshType(t.element), 'element-required': t['element-required'] }
    }
    const keyId = ++next
    const valueId = ++next
    idMap.set(t['key-id'], keyId)
    idMap.set(t['value-id'], valueId)
    return { type: 'map', 'key-id': keyId, key: freshType(t.key), 'value-id': valueId, value: freshType(t.value), 'value-required': t['value-required'] }
  }
  const freshFields = (fields: NestedField[]): NestedField[] => {
    // All ids of this level first, then the nested types: Java's and PyIceberg's order.
    const ids = fields.map((f) => {
      const id = ++next
      idMap.set(f.id, id)
      return id
    })
    return fields.map((f, i) => ({ ...f, id: ids[i], type: freshType(f.type) }))
  }
  const fields = freshFields(schema.fields)
  const out: Schema = { type: 'struct', 'schema-id': 0, fields }
  if (schema['identifier-field-ids']?.length) out['identifier-field-ids'] = schema['identifier-field-ids'].map((id) => idMap.get(id) ?? id)
  return { schema: out, lastColumnId: next, idMap }
}

/** Metadata for a new, empty table (PyIceberg's new_table_metadata; Java's TableMetadata.newTableMetadata). */
export function newTableMetadata(input: NewTableInput): TableMetadata {
  const { schema, lastColumnId, idMap } = assignFreshIds(input.schema)
  if (input.spec && input.partitionFields) throw new MetadataError('give either spec or partitionFields, not both')
  let spec: PartitionSpec
  if (input.partitionFields) {
    spec = buildPartitionSpec(schema, input.partitionFields)
  } else {
    const fields = (input.spec?.fields ?? []).map((f, i) => {
      const sourceId = idMap.get(f['source-id'])
      if (sourceId === undefined) throw new MetadataError(`partition field ${f.name}: source id ${f['source-id']} is not in the schema`)
      return { ...f, 'source-id': sourceId, 'field-id': PARTITION_FIELD_ID_START + i }
    })
    spec = { 'spec-id': 0, fields }
  }
  // As Java's and PyIceberg's assign_fresh_sort_order_ids: source ids follow the schema's fresh ids.
  const sortFields = (input.sortOrder?.fields ?? []).map((f) => {
    const sourceId = idMap.get(f['source-id'])
    if (sourceId === undefined) throw new MetadataError(`sort field: source id ${f['source-id']} is not in the schema`)
    return { ...f, 'source-id': sourceId }
  })
  const order: SortOrder = { 'order-id': sortFields.length > 0 ? 1 : 0, fields: sortFields }
  const m: TableMetadata = {
    'format-version': input.formatVersion,
    'table-uuid': input.tableUuid ?? crypto.randomUUID(),
    location: input.location.replace(/\/+$/, ''),
    'last-sequence-number': 0n,
    'last-updated-ms': input.lastUpdatedMs ?? Date.now(),
    'last-column-id': lastColumnId,
    schemas: [schema],
    'current-schema-id': 0,
    'partition-specs': [spec],
    'default-spec-id': 0,
    'last-partition-id': lastAssignedFieldId(spec),
    properties: { ...(input.properties ?? {}) },
    snapshots: [],
    'snapshot-log': [],
    'metadata-log': [],
    'sort-orders': [order],
    'default-sort-order-id': order['order-id'],
    refs: {},
  }
  if (input.formatVersion === 3) m['next-row-id'] = 0n
  return m
}
