// A log record → one row of the otlp_logs preset, as an NDJSON line the roller converts like any
// other: times as RFC 3339 text in the table's precision, AnyValues as JSON text written here
// (an intValue keeps all its digits), ids as lower-case hex. A record that cannot be a row is
// counted, not stored: the export's partialSuccess.rejectedLogRecords.
import { formatTimestamptzMicros, formatTimestamptzNanos } from '../../iceberg/spec/temporal.ts'
import type { Shape } from './preset.ts'
import type { AnyValue, KeyValue, LogRecord, Scope } from './records.ts'

const base64 = (b: Uint8Array) => btoa(Array.from(b, (x) => String.fromCharCode(x)).join(''))
const HEX = Array.from({ length: 256 }, (_, x) => x.toString(16).padStart(2, '0'))
// A table and a loop: two ids a record, and Array.from with toString(16) was most of a row's cost.
function hex(b: Uint8Array): string {
  let s = ''
  for (let i = 0; i < b.length; i++) s += HEX[b[i]]
  return s
}

/** An AnyValue as JSON text: a kvlist an object (a repeated key: the last wins), bytes base64, NaN and ±Infinity as strings. */
function anyJson(v: AnyValue): string {
  if ('string' in v) return JSON.stringify(v.string)
  if ('bool' in v) return String(v.bool)
  if ('int' in v) return v.int.toString()
  if ('double' in v) return Number.isFinite(v.double) ? JSON.stringify(v.double) : JSON.stringify(String(v.double))
  if ('bytes' in v) return JSON.stringify(base64(v.bytes))
  if ('array' in v) return `[${v.array.map(anyJson).join(',')}]`
  if ('kvlist' in v) return attributesJson(v.kvlist)
  return 'null'
}

function attributesJson(kvs: KeyValue[]): string {
  // The common case, no key repeated, without the Map (each record has two or three of these).
  if (kvs.length > 16 || repeats(kvs)) {
    const last = new Map(kvs.map((kv) => [kv.key, kv.value]))
    return `{${[...last].map(([k, val]) => `${JSON.stringify(k)}:${anyJson(val)}`).join(',')}}`
  }
  let s = '{'
  for (let i = 0; i < kvs.length; i++) s += `${i > 0 ? ',' : ''}${JSON.stringify(kvs[i].key)}:${anyJson(kvs[i].value)}`
  return `${s}}`
}

function repeats(kvs: KeyValue[]): boolean {
  for (let i = 1; i < kvs.length; i++) for (let j = 0; j < i; j++) if (kvs[i].key === kvs[j].key) return true
  return false
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
const NS_MAX = (1n << 63n) - 1n

/** An id of `size` bytes as hex; null when absent (empty or all zeros, OTLP's "invalid id"); undefined when the wrong length. */
function id(b: Uint8Array, size: number): string | null | undefined {
  let zero = true
  for (let i = 0; i < b.length && zero; i++) zero = b[i] === 0
  if (zero) return null
  return b.length === size ? hex(b) : undefined
}

function time(ns: bigint, nanos: boolean): string | null | undefined {
  if (ns === 0n) return null // "unknown or missing" in OTLP
  if (nanos) return ns > NS_MAX ? undefined : formatTimestamptzNanos(ns)
  return formatTimestamptzMicros(ns / 1000n)
}

const q = JSON.stringify

/**
 * The row's resource, scope and service_name as its JSON line writes them (…,"service_name":…), or
 * null when service.name has a lone surrogate. The decoders hand every record of a ScopeLogs the same
 * resource and scope objects, so rowsOf makes this once for them, not once a record.
 */
function sharedPart(resource: KeyValue[], scope: Scope): string | null {
  const service = resource.findLast((kv) => kv.key === 'service.name')?.value
  const serviceName = service && 'string' in service ? service.string : null
  if (serviceName !== null && LONE_SURROGATE.test(serviceName)) return null
  const scopeJson = `{"name":${q(scope.name)},"version":${q(scope.version)},"attributes":${attributesJson(scope.attributes)}}`
  return `"resource":${q(attributesJson(resource))},"scope":${q(scopeJson)},"service_name":${q(serviceName)}`
}

/**
 * The row's NDJSON line (with '\n'), or null for a record that cannot be one. Written as
 * JSON.stringify would write the object {time, observed_time, severity_number, severity_text, body,
 * attributes, resource, scope, service_name, trace_id, span_id}: every value is a string, a small int
 * or null.
 */
function rowLine(r: LogRecord, shape: Shape, shared: string | null): string | null {
  const traceId = id(r.traceId, 16)
  const spanId = id(r.spanId, 8)
  const t = time(r.timeUnixNano, shape.timeNs)
  const observed = time(r.observedTimeUnixNano, shape.observedNs)
  if (shared === null || traceId === undefined || spanId === undefined || t === undefined || observed === undefined) return null
  const severityText = r.severityText || null
  const body = r.body === null || 'empty' in r.body ? null : 'string' in r.body ? r.body.string : anyJson(r.body)
  // A lone surrogate (only OTLP/JSON can carry one) cannot be written as UTF-8; inside the JSON
  // texts JSON.stringify has escaped it, which keeps those columns valid, and the times and ids are
  // ours: only the columns taken as sent are looked at (service_name by sharedPart).
  if ((severityText !== null && LONE_SURROGATE.test(severityText)) || (body !== null && LONE_SURROGATE.test(body))) return null
  return `{"time":${q(t)},"observed_time":${q(observed)},"severity_number":${q(r.severityNumber)},"severity_text":${q(severityText)},"body":${q(body)},"attributes":${q(attributesJson(r.attributes))},${shared},"trace_id":${q(traceId)},"span_id":${q(spanId)}}\n`
}

/** The export's rows as NDJSON, and how many records could not be rows. */
export function rowsOf(records: LogRecord[], shape: Shape): { ndjson: Uint8Array; rows: number; rejected: number } {
  const lines: string[] = []
  let resource: KeyValue[] | undefined
  let scope: Scope | undefined
  let shared: string | null = null
  for (const r of records) {
    if (r.resource !== resource || r.scope !== scope) {
      resource = r.resource
      scope = r.scope
      shared = sharedPart(resource, scope)
    }
    const line = rowLine(r, shape, shared)
    if (line !== null) lines.push(line)
  }
  return { ndjson: new TextEncoder().encode(lines.join('')), rows: lines.length, rejected: records.length - lines.length }
}
