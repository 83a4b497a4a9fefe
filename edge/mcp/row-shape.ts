// What a valid row of a table looks like, for describe_sink: per column the JSON value the roller
// takes (iceberg/spec/values.ts is the rule; this says it in words) and an example value that fits.
import { parsePrimitive, type IcebergType, type NestedField, type Primitive } from '../../iceberg/spec/types.ts'
import { typeName } from '../../iceberg/spec/describe.ts'

type Json = null | boolean | number | string | Json[] | { [k: string]: Json }

interface Shape {
  /** The JSON the column takes, in words. */
  json: string
  example: Json
}

/** A decimal's example: digits that fit precision and scale, as a string (exact; a JSON number is taken too). */
function decimalExample(precision: number, scale: number): string {
  const whole = precision > scale ? '1' : '0'
  return scale > 0 ? `${whole}.${'5'.padEnd(scale, '0')}` : whole
}

function primitiveShape(p: Primitive): Shape {
  switch (p.kind) {
    case 'boolean':
      return { json: 'true or false', example: true }
    case 'int':
      return { json: 'an integer from -2147483648 to 2147483647 (a JSON number)', example: 42 }
    case 'long':
      return { json: 'an integer of 64 bits (a JSON number; written exactly, beyond 2^53 too)', example: 42 }
    case 'float':
    case 'double':
      return { json: 'a JSON number, or "NaN", "Infinity", "-Infinity"', example: 1.5 }
    case 'decimal':
      return {
        json: `a number with at most ${p.scale} digits after the point and ${p.precision} in all, as a JSON number or a string`,
        example: decimalExample(p.precision, p.scale),
      }
    case 'date':
      return { json: 'a string YYYY-MM-DD', example: '2026-01-02' }
    case 'time':
      return { json: 'a string HH:MM:SS[.ffffff]', example: '12:34:56.789' }
    case 'timestamp':
    case 'timestamp_ns':
      return { json: 'an RFC 3339 date-time string with no UTC offset (a wall-clock time)', example: '2026-01-02T03:04:05.123456' }
    case 'timestamptz':
    case 'timestamptz_ns':
      return { json: 'an RFC 3339 date-time string with a UTC offset (Z or ±HH:MM)', example: '2026-01-02T03:04:05.123456Z' }
    case 'string':
      return { json: 'a string', example: 'text' }
    case 'uuid':
      return { json: 'a canonical UUID string', example: '123e4567-e89b-12d3-a456-426614174000' }
    case 'binary':
      return { json: 'base64 text', example: 'aGVsbG8=' }
    case 'fixed':
      return { json: `base64 text of exactly ${p.length} bytes`, example: btoa('\0'.repeat(p.length)) }
    case 'geometry':
      return { json: 'WKT text or a GeoJSON geometry, longitude first', example: 'POINT (13.4 52.5)' }
    default:
      // unknown holds nulls only; variant and geography are refused at sink create.
      return { json: 'null', example: null }
  }
}

function shapeOf(t: IcebergType): Shape {
  if (typeof t === 'string') return primitiveShape(parsePrimitive(t))
  switch (t.type) {
    case 'struct':
      return { json: 'a JSON object with the struct’s fields', example: exampleRow(t.fields) }
    case 'list':
      return { json: `a JSON array of ${typeName(t.element)}`, example: [shapeOf(t.element).example] }
    case 'map': {
      const key = shapeOf(t.key)
      const value = shapeOf(t.value).example
      return t.key === 'string'
        ? { json: 'a JSON object (string keys)', example: { key: value } }
        : { json: 'a JSON array of {"key", "value"} objects', example: [{ key: key.example, value }] }
    }
  }
}

/** One example row: every column a value that fits it. */
export function exampleRow(fields: NestedField[]): { [k: string]: Json } {
  return Object.fromEntries(fields.map((f) => [f.name, shapeOf(f.type).example]))
}

/** Per column: its type, whether it is required, its doc, and the JSON it takes. */
export function columnShapes(fields: NestedField[]) {
  return fields.map((f) => ({ name: f.name, type: typeName(f.type), required: f.required, doc: f.doc ?? null, json: shapeOf(f.type).json }))
}
