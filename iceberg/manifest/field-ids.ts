// Columns of manifests and manifest lists found by `field-id` (names differ between writers and
// versions): reading only, apart from the writers' schemas (schemas.ts).

import type { AvroSchema } from '../avro/schema.ts'

/** Maps field id → field name of a record schema, so files from other writers are read by id, not by name. */
export function fieldNamesById(record: AvroSchema): Map<number, string> {
  const out = new Map<number, string>()
  if (typeof record === 'object' && !Array.isArray(record) && Array.isArray(record.fields)) {
    for (const f of record.fields as { name: string; 'field-id'?: unknown }[]) {
      if (typeof f['field-id'] === 'number') out.set(f['field-id'], f.name)
    }
  }
  return out
}

/** The record schema inside a field's type (unwrapping ["null", record]). */
export function recordOf(record: AvroSchema, fieldId: number): AvroSchema | undefined {
  if (typeof record !== 'object' || Array.isArray(record)) return undefined
  const f = (record.fields as { type: AvroSchema; 'field-id'?: number }[]).find((x) => x['field-id'] === fieldId)
  if (!f) return undefined
  const t = Array.isArray(f.type) ? f.type.find((b) => b !== 'null') : f.type
  return t
}
