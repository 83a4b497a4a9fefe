// A table's first metadata from the updates of a create transaction (a REST createTable with
// stage-create, committed with assert-create): the updates apply to an empty table, as Java's
// TableMetadata.buildFromEmpty() does, and what they leave out is filled in or refused.
import { MetadataError, type TableMetadata } from './metadata.ts'
import { PARTITION_FIELD_ID_START } from './partition.ts'
import { applyUpdates, type TableUpdate } from './updates.ts'

/** Nothing yet: format-version 2 (the builder's default), no schema, spec or sort order. */
function empty(now: number): TableMetadata {
  return {
    'format-version': 2,
    'table-uuid': '',
    location: '',
    'last-sequence-number': 0n,
    'last-updated-ms': now,
    'last-column-id': 0,
    schemas: [],
    'current-schema-id': -1,
    'partition-specs': [],
    'default-spec-id': -1,
    'last-partition-id': PARTITION_FIELD_ID_START - 1,
    properties: {},
    snapshots: [],
    'snapshot-log': [],
    'metadata-log': [],
    'sort-orders': [],
    'default-sort-order-id': -1,
    refs: {},
  }
}

export interface FromUpdatesOptions {
  /** Where the table goes when no set-location names a place. */
  location: string
  now?: number
}

/**
 * Applies `updates` to an empty table. A missing uuid is assigned, a missing partition spec or sort
 * order is the unpartitioned / unsorted one; a missing schema, or defaults that name nothing, throw
 * MetadataError (the request is incomplete).
 */
export function metadataFromUpdates(updates: TableUpdate[], options: FromUpdatesOptions): TableMetadata {
  const now = options.now ?? Date.now()
  const m = applyUpdates(empty(now), updates, { now })
  if (m.schemas.length === 0 || !m.schemas.some((s) => s['schema-id'] === m['current-schema-id'])) {
    throw new MetadataError('a new table needs add-schema and set-current-schema')
  }
  if (m['partition-specs'].length === 0) {
    m['partition-specs'] = [{ 'spec-id': 0, fields: [] }]
    m['default-spec-id'] = 0
  }
  if (!m['partition-specs'].some((s) => s['spec-id'] === m['default-spec-id'])) throw new MetadataError('the default partition spec is not among the specs')
  if (m['sort-orders'].length === 0) {
    m['sort-orders'] = [{ 'order-id': 0, fields: [] }]
    m['default-sort-order-id'] = 0
  }
  if (!m['sort-orders'].some((o) => o['order-id'] === m['default-sort-order-id'])) throw new MetadataError('the default sort order is not among the orders')
  if (!m['table-uuid']) m['table-uuid'] = crypto.randomUUID()
  if (!m.location) m.location = options.location.replace(/\/+$/, '')
  return m
}
