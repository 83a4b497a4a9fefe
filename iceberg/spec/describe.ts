// How a reject names what was sent and what the schema expects: a JSON value briefly, and an
// Iceberg type as the spec writes it.

import { numberText } from './json.ts'
import { isPrimitive, type IcebergType } from './types.ts'

// Long enough for any decimal(38, S) or nanosecond timestamp in full; short enough for a reject line.
function shorten(text: string, max = 64): string {
  return text.length > max ? `${text.slice(0, max)}…` : text
}

/** What a JSON value is, briefly, for a reject's `got`. */
export function describe(v: unknown): string {
  if (v === null || v === undefined) return 'null'
  if (typeof v === 'boolean') return `boolean ${v}`
  if (typeof v === 'string') return `string ${JSON.stringify(shorten(v))}`
  const text = numberText(v)
  if (text !== undefined) return `number ${shorten(text)}`
  if (Array.isArray(v)) return `array of ${v.length}`
  if (typeof v === 'object') return 'object'
  return typeof v
}

/** A type as the spec writes it; nested types in the usual `list<…>` / `map<…, …>` / `struct<…>` form. */
export function typeName(t: IcebergType): string {
  if (isPrimitive(t)) return t.trim()
  switch (t.type) {
    case 'struct':
      return `struct<${t.fields.map((f) => `${f.name}: ${typeName(f.type)}`).join(', ')}>`
    case 'list':
      return `list<${typeName(t.element)}>`
    case 'map':
      return `map<${typeName(t.key)}, ${typeName(t.value)}>`
  }
}
