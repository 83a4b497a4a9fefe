// A log record → one row of the otlp_logs preset, as an NDJSON line the roller converts like any
// other: times as RFC 3339 text in the table's precision, AnyValues as JSON text written here
// (an intValue keeps all its digits), ids as lower-case hex. A record that cannot be a row is
// counted, not stored: the export's partialSuccess.rejectedLogRecords.
import { formatTimestamptzMicros, formatTimestamptzNanos } from '../../iceberg/spec/temporal.ts'
import type { Shape } from './preset.ts'
import type { AnyValue, KeyValue, LogRecord } from './records.ts'

const base64 = (b: Uint8Array) => btoa(Array.from(b, (x) => String.fromCharCode(x)).join(''))
const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('')

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
  const last = new Map(kvs.map((kv) => [kv.key, kv.value]))
  return `{${[...last].map(([k, val]) => `${JSON.stringify(k)}:${anyJson(val)}`).join(',')}}`
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
const NS_MAX = (1n << 63n) - 1n

/** An id of `size` bytes as hex; null when absent (empty or all zeros, OTLP's "invalid id"); undefined when the wrong length. */
function id(b: Uint8Array, size: number): string | null | undefined {
  if (b.length === 0 || b.every((x) => x === 0)) return null
  return b.length === size ? hex(b) : undefined
}

function time(ns: bigint, nanos: boolean): string | null | undefined {
  if (ns === 0n) return null // "unknown or missing" in OTLP
  if (nanos) return ns > NS_MAX ? undefined : formatTimestamptzNanos(ns)
  return formatTimestamptzMicros(ns / 1000n)
}

/** The row's NDJSON line (with '\n'), or null for a record that cannot be one. */
function rowLine(r: LogRecord, shape: Shape): string | null {
  const traceId = id(r.traceId, 16)
  const spanId = id(r.spanId, 8)
  const t = time(r.timeUnixNano, shape.timeNs)
  const observed = time(r.observedTimeUnixNano, shape.observedNs)
  if (traceId === undefined || spanId === undefined || t === undefined || observed === undefined) return null
  const service = r.resource.findLast((kv) => kv.key === 'service.name')?.value
  const row = {
    time: t,
    observed_time: observed,
    severity_number: r.severityNumber,
    severity_text: r.severityText || null,
    body: r.body === null || 'empty' in r.body ? null : 'string' in r.body ? r.body.string : anyJson(r.body),
    attributes: attributesJson(r.attributes),
    resource: attributesJson(r.resource),
    scope: `{"name":${JSON.stringify(r.scope.name)},"version":${JSON.stringify(r.scope.version)},"attributes":${attributesJson(r.scope.attributes)}}`,
    service_name: service && 'string' in service ? service.string : null,
    trace_id: traceId,
    span_id: spanId,
  }
  // A lone surrogate (only OTLP/JSON can carry one) cannot be written as UTF-8; inside the JSON
  // texts JSON.stringify has escaped it, which keeps those columns valid.
  if (Object.values(row).some((v) => typeof v === 'string' && LONE_SURROGATE.test(v))) return null
  // Every value is a string, a small int or null, so JSON.stringify writes the row exactly.
  return `${JSON.stringify(row)}\n`
}

/** The export's rows as NDJSON, and how many records could not be rows. */
export function rowsOf(records: LogRecord[], shape: Shape): { ndjson: Uint8Array; rows: number; rejected: number } {
  const lines: string[] = []
  for (const r of records) {
    const line = rowLine(r, shape)
    if (line !== null) lines.push(line)
  }
  return { ndjson: new TextEncoder().encode(lines.join('')), rows: lines.length, rejected: records.length - lines.length }
}
