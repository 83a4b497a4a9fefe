// Metadata-only changes (schema, docs, properties), built on a base for commitWithRetry: no snapshot,
// no manifest, so the edge's bundle can use them.
import { currentSchema, type TableMetadata } from '../spec/metadata.ts'
import type { NestedField } from '../spec/types.ts'
import type { TableRequirement, TableUpdate } from '../spec/updates.ts'
import type { Change } from './transact.ts'

/** Adds optional columns (fresh ids after last-column-id) as a new current schema. */
export function addColumnsChange(base: TableMetadata, columns: Array<Omit<NestedField, 'id' | 'required'>>): Change {
  const schema = currentSchema(base)
  let lastId = base['last-column-id']
  const fields = [...schema.fields, ...columns.map((c) => ({ ...c, id: ++lastId, required: false }))]
  const schemaId = Math.max(...base.schemas.map((s) => s['schema-id'])) + 1
  return {
    requirements: [
      { type: 'assert-table-uuid', uuid: base['table-uuid'] },
      { type: 'assert-current-schema-id', 'current-schema-id': schema['schema-id'] },
      { type: 'assert-last-assigned-field-id', 'last-assigned-field-id': base['last-column-id'] },
    ],
    updates: [
      { action: 'add-schema', schema: { ...schema, 'schema-id': schemaId, fields }, 'last-column-id': lastId },
      { action: 'set-current-schema', 'schema-id': -1 },
    ],
  }
}

/** Sets column docs (by top-level name) as a new current schema; the table doc is the `comment` property. */
export function documentChange(base: TableMetadata, docs: { table?: string; columns?: Record<string, string> }): Change {
  const schema = currentSchema(base)
  const updates: TableUpdate[] = []
  const requirements: TableRequirement[] = [{ type: 'assert-table-uuid', uuid: base['table-uuid'] }]
  const columns = docs.columns ?? {}
  if (Object.keys(columns).length > 0) {
    const fields = schema.fields.map((f) => (f.name in columns ? { ...f, doc: columns[f.name] } : f))
    const schemaId = Math.max(...base.schemas.map((s) => s['schema-id'])) + 1
    requirements.push({ type: 'assert-current-schema-id', 'current-schema-id': schema['schema-id'] })
    updates.push(
      { action: 'add-schema', schema: { ...schema, 'schema-id': schemaId, fields }, 'last-column-id': base['last-column-id'] },
      { action: 'set-current-schema', 'schema-id': -1 },
    )
  }
  if (docs.table !== undefined) updates.push({ action: 'set-properties', updates: { comment: docs.table } })
  return { requirements, updates }
}

export function setPropertiesChange(base: TableMetadata, properties: Record<string, string>): Change {
  return { requirements: [{ type: 'assert-table-uuid', uuid: base['table-uuid'] }], updates: [{ action: 'set-properties', updates: properties }] }
}
