// The Iceberg REST catalog's commit vocabulary (TableUpdate, TableRequirement in the REST OpenAPI
// spec) and a pure, local application of it. The REST catalog sends these to the server; the SQL
// catalog checks the requirements and applies the updates itself with the same semantics as Java's
// TableMetadata.Builder (sequence-number and row-id checks, snapshot-log, metadata-log).

import type { PartitionSpec } from './partition.ts'
import { lastAssignedFieldId } from './partition.ts'
import { branchSnapshotId, MetadataError, type MetadataLogEntry, type Snapshot, type SnapshotRef, type SortOrder, type TableMetadata } from './metadata.ts'
import type { IcebergType, NestedField, Schema } from './types.ts'

export type TableUpdate =
  | { action: 'assign-uuid'; uuid: string }
  | { action: 'upgrade-format-version'; 'format-version': 2 | 3 }
  | { action: 'add-schema'; schema: Schema; 'last-column-id'?: number }
  | { action: 'set-current-schema'; 'schema-id': number }
  | { action: 'add-spec'; spec: PartitionSpec }
  | { action: 'set-default-spec'; 'spec-id': number }
  | { action: 'add-sort-order'; 'sort-order': SortOrder }
  | { action: 'set-default-sort-order'; 'sort-order-id': number }
  | { action: 'add-snapshot'; snapshot: Snapshot }
  | ({ action: 'set-snapshot-ref'; 'ref-name': string } & SnapshotRef)
  | { action: 'remove-snapshots'; 'snapshot-ids': bigint[] }
  | { action: 'remove-snapshot-ref'; 'ref-name': string }
  | { action: 'set-location'; location: string }
  | { action: 'set-properties'; updates: Record<string, string> }
  | { action: 'remove-properties'; removals: string[] }
  | { action: 'remove-schemas'; 'schema-ids': number[] }
  | { action: 'remove-partition-specs'; 'spec-ids': number[] }

export type TableRequirement =
  | { type: 'assert-create' }
  | { type: 'assert-table-uuid'; uuid: string }
  | { type: 'assert-ref-snapshot-id'; ref: string; 'snapshot-id': bigint | null }
  | { type: 'assert-last-assigned-field-id'; 'last-assigned-field-id': number }
  | { type: 'assert-current-schema-id'; 'current-schema-id': number }
  | { type: 'assert-last-assigned-partition-id'; 'last-assigned-partition-id': number }
  | { type: 'assert-default-spec-id'; 'default-spec-id': number }
  | { type: 'assert-default-sort-order-id'; 'default-sort-order-id': number }

/**
 * Why the requirements fail against `base` (null: the table does not exist), or null when they hold:
 * in Apache Iceberg's own words (UpdateRequirement), which its clients and catalog tests look for.
 */
export function requirementFailure(base: TableMetadata | null, requirements: TableRequirement[]): string | null {
  for (const r of requirements) {
    if (r.type === 'assert-create') {
      if (base) return 'Requirement failed: table already exists'
      continue
    }
    if (!base) return 'Requirement failed: table does not exist'
    switch (r.type) {
      case 'assert-table-uuid':
        if (base['table-uuid'] !== r.uuid) return `Requirement failed: UUID does not match: expected ${r.uuid} != ${base['table-uuid']}`
        break
      case 'assert-ref-snapshot-id': {
        const ref = base.refs[r.ref]
        const actual = ref ? ref['snapshot-id'] : r.ref === 'main' ? branchSnapshotId(base) : null
        if (actual === r['snapshot-id']) break
        if (actual === null) return `Requirement failed: branch or tag ${r.ref} is missing, expected ${r['snapshot-id']}`
        const kind = ref?.type ?? 'branch'
        if (r['snapshot-id'] === null) return `Requirement failed: ${kind} ${r.ref} was created concurrently`
        return `Requirement failed: ${kind} ${r.ref} has changed: expected id ${r['snapshot-id']} != ${actual}`
      }
      case 'assert-last-assigned-field-id':
        if (base['last-column-id'] !== r['last-assigned-field-id'])
          return `Requirement failed: last assigned field id changed: expected id ${r['last-assigned-field-id']} != ${base['last-column-id']}`
        break
      case 'assert-current-schema-id':
        if (base['current-schema-id'] !== r['current-schema-id'])
          return `Requirement failed: current schema changed: expected id ${r['current-schema-id']} != ${base['current-schema-id']}`
        break
      case 'assert-last-assigned-partition-id':
        if (base['last-partition-id'] !== r['last-assigned-partition-id'])
          return `Requirement failed: last assigned partition id changed: expected id ${r['last-assigned-partition-id']} != ${base['last-partition-id']}`
        break
      case 'assert-default-spec-id':
        if (base['default-spec-id'] !== r['default-spec-id'])
          return `Requirement failed: default partition spec changed: expected id ${r['default-spec-id']} != ${base['default-spec-id']}`
        break
      case 'assert-default-sort-order-id':
        if (base['default-sort-order-id'] !== r['default-sort-order-id'])
          return `Requirement failed: default sort order changed: expected id ${r['default-sort-order-id']} != ${base['default-sort-order-id']}`
        break
    }
  }
  return null
}

function highestFieldId(fields: NestedField[]): number {
  const ofType = (t: IcebergType): number => {
    if (typeof t === 'string') return 0
    if (t.type === 'struct') return highestFieldId(t.fields)
    if (t.type === 'list') return Math.max(t['element-id'], ofType(t.element))
    return Math.max(t['key-id'], t['value-id'], ofType(t.key), ofType(t.value))
  }
  return fields.reduce((max, f) => Math.max(max, f.id, ofType(f.type)), 0)
}

/** Same fields, ids, types and docs (schema-id aside): Java reuses such a schema instead of adding it. */
const sameStruct = (a: Schema, b: Schema) => JSON.stringify({ ...a, 'schema-id': 0 }) === JSON.stringify({ ...b, 'schema-id': 0 })

export interface ApplyOptions {
  /** Clock for last-updated-ms and snapshot-log entries of refs to older snapshots. */
  now?: number
  /** The metadata file `base` was loaded from; recorded in metadata-log (Java's previousFileLocation). */
  previousMetadataLocation?: string
}

/** Applies updates to a copy of `base`; throws MetadataError for an update that cannot apply. */
export function applyUpdates(base: TableMetadata, updates: TableUpdate[], options: ApplyOptions = {}): TableMetadata {
  const now = options.now ?? Date.now()
  // Copy every container we may change; nested objects are replaced, never mutated.
  const m: TableMetadata = {
    ...base,
    schemas: [...base.schemas],
    'partition-specs': [...base['partition-specs']],
    'sort-orders': [...base['sort-orders']],
    properties: { ...base.properties },
    snapshots: [...base.snapshots],
    'snapshot-log': [...base['snapshot-log']],
    'metadata-log': [...base['metadata-log']],
    refs: { ...base.refs },
  }
  let lastAddedSchemaId: number | undefined
  let lastAddedSpecId: number | undefined
  let lastAddedOrderId: number | undefined
  let lastUpdatedMs: number | undefined
  const addedSnapshots = new Set<bigint>()

  for (const u of updates) {
    switch (u.action) {
      case 'assign-uuid':
        m['table-uuid'] = u.uuid
        break
      case 'upgrade-format-version':
        if (u['format-version'] < m['format-version'])
          throw new MetadataError(`cannot downgrade format-version ${m['format-version']} to ${u['format-version']}`)
        m['format-version'] = u['format-version']
        if (u['format-version'] === 3) m['next-row-id'] ??= 0n
        break
      case 'add-schema': {
        const existing = m.schemas.find((s) => sameStruct(s, u.schema))
        if (existing) {
          lastAddedSchemaId = existing['schema-id']
          break
        }
        const id = Math.max(-1, ...m.schemas.map((s) => s['schema-id'])) + 1
        m.schemas.push({ ...u.schema, 'schema-id': id })
        m['last-column-id'] = Math.max(m['last-column-id'], u['last-column-id'] ?? 0, highestFieldId(u.schema.fields))
        lastAddedSchemaId = id
        break
      }
      case 'set-current-schema': {
        const id = u['schema-id'] === -1 ? lastAddedSchemaId : u['schema-id']
        if (id === undefined || !m.schemas.some((s) => s['schema-id'] === id)) throw new MetadataError(`no schema ${u['schema-id']} to make current`)
        m['current-schema-id'] = id
        break
      }
      case 'add-spec': {
        const id = Math.max(-1, ...m['partition-specs'].map((s) => s['spec-id'])) + 1
        const spec = {
          ...u.spec,
          'spec-id': u.spec['spec-id'] >= 0 && !m['partition-specs'].some((s) => s['spec-id'] === u.spec['spec-id']) ? u.spec['spec-id'] : id,
        }
        m['partition-specs'].push(spec)
        m['last-partition-id'] = Math.max(m['last-partition-id'], lastAssignedFieldId(spec))
        lastAddedSpecId = spec['spec-id']
        break
      }
      case 'set-default-spec': {
        const id = u['spec-id'] === -1 ? lastAddedSpecId : u['spec-id']
        if (id === undefined || !m['partition-specs'].some((s) => s['spec-id'] === id)) throw new MetadataError(`no partition spec ${u['spec-id']}`)
        m['default-spec-id'] = id
        break
      }
      case 'add-sort-order': {
        const id = Math.max(0, ...m['sort-orders'].map((s) => s['order-id'])) + 1
        const order = u['sort-order'].fields.length === 0 ? { 'order-id': 0, fields: [] } : { ...u['sort-order'], 'order-id': id }
        if (!m['sort-orders'].some((o) => o['order-id'] === order['order-id'])) m['sort-orders'].push(order)
        lastAddedOrderId = order['order-id']
        break
      }
      case 'set-default-sort-order': {
        const id = u['sort-order-id'] === -1 ? lastAddedOrderId : u['sort-order-id']
        if (id === undefined || !m['sort-orders'].some((o) => o['order-id'] === id)) throw new MetadataError(`no sort order ${u['sort-order-id']}`)
        m['default-sort-order-id'] = id
        break
      }
      case 'add-snapshot': {
        const s = u.snapshot
        if (m.snapshots.some((x) => x['snapshot-id'] === s['snapshot-id'])) throw new MetadataError(`snapshot ${s['snapshot-id']} already exists`)
        const seq = s['sequence-number'] ?? 0n
        if (m['format-version'] > 1 && s['parent-snapshot-id'] !== undefined && seq <= m['last-sequence-number']) {
          throw new MetadataError(`snapshot sequence number ${seq} is not above last-sequence-number ${m['last-sequence-number']}`)
        }
        if (m['format-version'] >= 3) {
          const first = s['first-row-id']
          const added = s['added-rows']
          if (first === undefined || added === undefined) throw new MetadataError('a v3 snapshot needs first-row-id and added-rows')
          if (first < (m['next-row-id'] ?? 0n)) throw new MetadataError(`first-row-id ${first} is below next-row-id ${m['next-row-id']}`)
          m['next-row-id'] = first + added
        }
        m.snapshots.push(s)
        if (seq > m['last-sequence-number']) m['last-sequence-number'] = seq
        lastUpdatedMs = s['timestamp-ms']
        addedSnapshots.add(s['snapshot-id'])
        break
      }
      case 'set-snapshot-ref': {
        const { action: _a, 'ref-name': name, ...ref } = u
        const snap = m.snapshots.find((s) => s['snapshot-id'] === ref['snapshot-id'])
        if (!snap) throw new MetadataError(`cannot point ${name} at unknown snapshot ${ref['snapshot-id']}`)
        const previous = m.refs[name]
        m.refs[name] = ref
        if (name === 'main' && previous?.['snapshot-id'] !== ref['snapshot-id']) {
          m['current-snapshot-id'] = ref['snapshot-id']
          const at = addedSnapshots.has(snap['snapshot-id']) ? snap['timestamp-ms'] : now
          m['snapshot-log'].push({ 'timestamp-ms': at, 'snapshot-id': ref['snapshot-id'] })
          if (!addedSnapshots.has(snap['snapshot-id'])) lastUpdatedMs = now
        }
        break
      }
      case 'remove-snapshots': {
        const gone = new Set(u['snapshot-ids'])
        m.snapshots = m.snapshots.filter((s) => !gone.has(s['snapshot-id']))
        for (const [name, ref] of Object.entries(m.refs)) if (gone.has(ref['snapshot-id'])) delete m.refs[name]
        m['snapshot-log'] = m['snapshot-log'].filter((e) => !gone.has(e['snapshot-id']))
        // As Java's removeSnapshots: statistics files of removed snapshots go with them.
        const kept = (s: unknown) => !gone.has((s as { 'snapshot-id'?: bigint })['snapshot-id'] as bigint)
        if (m.statistics) m.statistics = m.statistics.filter(kept)
        if (m['partition-statistics']) m['partition-statistics'] = m['partition-statistics'].filter(kept)
        if (!m.refs.main) delete m['current-snapshot-id']
        break
      }
      case 'remove-snapshot-ref':
        delete m.refs[u['ref-name']]
        if (u['ref-name'] === 'main') delete m['current-snapshot-id']
        break
      case 'set-location':
        m.location = u.location.replace(/\/+$/, '')
        break
      case 'set-properties':
        Object.assign(m.properties, u.updates)
        break
      case 'remove-properties':
        for (const k of u.removals) delete m.properties[k]
        break
      // As Java's removeSchemas and removeSpecs: the unused ones a client's cleanup names, never the current.
      case 'remove-schemas': {
        const gone = new Set(u['schema-ids'])
        if (gone.has(m['current-schema-id'])) throw new MetadataError('Cannot remove the current schema')
        m.schemas = m.schemas.filter((x) => !gone.has(x['schema-id']))
        break
      }
      case 'remove-partition-specs': {
        const gone = new Set(u['spec-ids'])
        if (gone.has(m['default-spec-id'])) throw new MetadataError('Cannot remove the default partition spec')
        m['partition-specs'] = m['partition-specs'].filter((x) => !gone.has(x['spec-id']))
        break
      }
      default:
        throw new MetadataError(`unsupported table update ${(u as { action: string }).action}`)
    }
  }

  if (options.previousMetadataLocation) {
    const entry: MetadataLogEntry = { 'timestamp-ms': base['last-updated-ms'], 'metadata-file': options.previousMetadataLocation }
    m['metadata-log'].push(entry)
    const max = Number(m.properties['write.metadata.previous-versions-max'] ?? 100)
    if (m['metadata-log'].length > max) m['metadata-log'] = m['metadata-log'].slice(-max)
  }
  m['last-updated-ms'] = lastUpdatedMs ?? now
  return m
}
