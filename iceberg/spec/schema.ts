// Checks on a schema a person wrote (a table create): every type known, v3-only types only on
// format-version 3, names unique per struct.
import { isPrimitive, parsePrimitive, UnknownTypeError, type IcebergType, type NestedField } from './types.ts'

const V3_ONLY = new Set(['timestamp_ns', 'timestamptz_ns', 'geometry', 'geography', 'variant', 'unknown'])

function typeProblem(t: IcebergType, path: string, formatVersion: number): string | null {
  if (isPrimitive(t)) {
    try {
      const p = parsePrimitive(t)
      if (formatVersion < 3 && V3_ONLY.has(p.kind)) return `${path}: ${t} needs format-version 3`
      return null
    } catch (err) {
      if (err instanceof UnknownTypeError) return `${path}: unknown type ${t}`
      throw err
    }
  }
  if (t.type === 'struct') return fieldsProblem(t.fields, `${path}.`, formatVersion)
  if (t.type === 'list') return typeProblem(t.element, `${path}.element`, formatVersion)
  if (t.type === 'map') return typeProblem(t.key, `${path}.key`, formatVersion) ?? typeProblem(t.value, `${path}.value`, formatVersion)
  return `${path}: unknown type ${JSON.stringify(t)}`
}

function fieldsProblem(fields: NestedField[], prefix: string, formatVersion: number): string | null {
  const seen = new Set<string>()
  for (const f of fields) {
    if (!f.name) return `${prefix}: a field has no name`
    if (seen.has(f.name)) return `${prefix}${f.name}: the name appears twice`
    seen.add(f.name)
    const p = typeProblem(f.type, `${prefix}${f.name}`, formatVersion)
    if (p) return p
  }
  return null
}

/** Why these fields cannot make a table of this format version, or null when they can. */
export function schemaProblem(fields: NestedField[], formatVersion: 2 | 3): string | null {
  if (fields.length === 0) return 'a table needs at least one column'
  return fieldsProblem(fields, '', formatVersion)
}
