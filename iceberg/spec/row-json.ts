// A row (types.ts's Value representation) as JSON text, losslessly, in the form a producer sends it
// (spec "How to send values"): longs as JSON integers written from their digits (never through a
// double), decimals as strings, dates, times and timestamps as RFC 3339 text (nanoseconds kept),
// uuids in their 8-4-4-4-12 form, binary, fixed and geometry (WKB) as base64, structs as objects,
// lists as arrays, maps as objects when their keys are strings and as [key, value] pairs otherwise.
// Non-finite floats, which JSON cannot hold, are the strings "NaN", "Infinity" and "-Infinity".
import { humanString } from './partition.ts'
import { isPrimitive, parsePrimitive, type IcebergType, type Row, type StructType, type Value } from './types.ts'

const IDENTITY = { kind: 'identity' } as const

export function rowJson(struct: StructType, row: Row): string {
  return `{${struct.fields.map((f) => `${JSON.stringify(f.name)}:${valueJson(f.type, row[f.name] ?? null)}`).join(',')}}`
}

export function valueJson(type: IcebergType, v: Value): string {
  if (v === null || v === undefined) return 'null'
  if (!isPrimitive(type)) {
    if (type.type === 'struct') return rowJson(type, v as Row)
    if (type.type === 'list') return `[${(v as Value[]).map((e) => valueJson(type.element, e)).join(',')}]`
    const entries = v as Array<[Value, Value]>
    if (type.key === 'string') return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${valueJson(type.value, x)}`).join(',')}}`
    return `[${entries.map(([k, x]) => `[${valueJson(type.key, k)},${valueJson(type.value, x)}]`).join(',')}]`
  }
  const p = parsePrimitive(type)
  switch (p.kind) {
    case 'boolean':
      return v ? 'true' : 'false'
    case 'int':
    case 'long':
      return String(v)
    case 'float':
    case 'double':
      return numberJson(v as number, p.kind === 'float')
    case 'string':
      return JSON.stringify(v)
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return JSON.stringify(nanosString(v as bigint, p.kind === 'timestamptz_ns'))
    case 'geometry':
    case 'geography':
      return JSON.stringify(humanString(IDENTITY, 'binary', v))
    case 'unknown':
      return 'null'
    default:
      return JSON.stringify(humanString(IDENTITY, type, v))
  }
}

/** A nanosecond timestamp as RFC 3339 text: the microsecond form, then the last three digits. */
function nanosString(nanos: bigint, zone: boolean): string {
  const micros = nanos >= 0n ? nanos / 1000n : -((-nanos + 999n) / 1000n)
  const rest = nanos - micros * 1000n
  const text = humanString(IDENTITY, zone ? 'timestamptz' : 'timestamp', micros)
  if (rest === 0n) return text
  const [clock, offset] = zone ? [text.slice(0, -'+00:00'.length), '+00:00'] : [text, '']
  return `${clock.includes('.') ? clock : `${clock}.000000`}${rest.toString().padStart(3, '0')}${offset}`
}

/**
 * A float or double as JSON: -0 keeps its sign (JSON.stringify writes 0); a float (32-bit) as the
 * shortest decimal that reads back as the same float (0.1, not the double 0.10000000149011612).
 */
function numberJson(x: number, single: boolean): string {
  if (!Number.isFinite(x)) return JSON.stringify(String(x))
  if (Object.is(x, -0)) return '-0'
  if (single) {
    for (let digits = 1; digits < 9; digits++) {
      const shortest = Number(x.toPrecision(digits))
      if (Math.fround(shortest) === x) return String(shortest)
    }
  }
  return String(x)
}
