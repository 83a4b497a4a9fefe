// A log record → one row of the otlp_logs preset, as an NDJSON line the roller converts like any
// other: times as RFC 3339 text in the table's precision, AnyValues as JSON text written here
// (an intValue keeps all its digits), ids as lower-case hex. A record that cannot be a row is
// counted in the export's partialSuccess.rejectedLogRecords and still stored as a line, written so
// the roller refuses it into the sink's rejects file (type_mismatch on the column at fault), as the
// send route stores an element that is not an object: the rejects keep every record sent.
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

const q = JSON.stringify
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
const NS_MAX = (1n << 63n) - 1n

/** A column's value as the line writes it (JSON), and whether the roller will refuse it. */
type Written = { json: string; refused: boolean }
const NULL: Written = { json: 'null', refused: false }

/**
 * An id of `size` bytes as hex; null when absent (empty or all zeros, OTLP's "invalid id"). One of
 * the wrong length is written as its bytes, an array: the roller refuses it for the string column,
 * its reject saying `got: array of <n>`, the length that was wrong.
 */
function id(b: Uint8Array, size: number): Written {
  let zero = true
  for (let i = 0; i < b.length && zero; i++) zero = b[i] === 0
  if (zero) return NULL
  return b.length === size ? { json: `"${hex(b)}"`, refused: false } : { json: `[${b.join(',')}]`, refused: true }
}

function time(ns: bigint, nanos: boolean): Written {
  if (ns === 0n) return NULL // "unknown or missing" in OTLP
  if (!nanos) return { json: `"${formatTimestamptzMicros(ns / 1000n)}"`, refused: false }
  if (ns <= NS_MAX) return { json: `"${formatTimestamptzNanos(ns)}"`, refused: false }
  // Past 2262: written all the same, to the nanosecond; the roller refuses it as out of range.
  const micros = formatTimestamptzMicros(ns / 1000n)
  return { json: `"${micros.slice(0, -1)}${String(ns % 1000n).padStart(3, '0')}Z"`, refused: true }
}

/** A string taken as sent: a lone surrogate (only OTLP/JSON can carry one) cannot be UTF-8, and the roller refuses it. */
const sent = (v: string | null): Written => (v === null ? NULL : { json: q(v), refused: LONE_SURROGATE.test(v) })

/**
 * The row's resource, scope and service_name as its JSON line writes them (…,"service_name":…). The
 * decoders hand every record of a ScopeLogs the same resource and scope objects, so rowsOf makes this
 * once for them, not once a record.
 */
function sharedPart(resource: KeyValue[], scope: Scope): Written {
  const service = resource.findLast((kv) => kv.key === 'service.name')?.value
  const serviceName = sent(service && 'string' in service ? service.string : null)
  const scopeJson = `{"name":${q(scope.name)},"version":${q(scope.version)},"attributes":${attributesJson(scope.attributes)}}`
  return { json: `"resource":${q(attributesJson(resource))},"scope":${q(scopeJson)},"service_name":${serviceName.json}`, refused: serviceName.refused }
}

/**
 * The row's NDJSON line (with '\n'), written as JSON.stringify would write the object {time,
 * observed_time, severity_number, severity_text, body, attributes, resource, scope, service_name,
 * trace_id, span_id}, and whether the roller will refuse it. Inside the JSON text columns
 * JSON.stringify has escaped any lone surrogate, which keeps them valid; the times and ids are ours.
 */
function rowLine(r: LogRecord, shape: Shape, shared: Written): Written {
  const traceId = id(r.traceId, 16)
  const spanId = id(r.spanId, 8)
  const t = time(r.timeUnixNano, shape.timeNs)
  const observed = time(r.observedTimeUnixNano, shape.observedNs)
  const severityText = sent(r.severityText || null)
  const body = sent(r.body === null || 'empty' in r.body ? null : 'string' in r.body ? r.body.string : anyJson(r.body))
  const refused = [traceId, spanId, t, observed, severityText, body, shared].some((w) => w.refused)
  return {
    json: `{"time":${t.json},"observed_time":${observed.json},"severity_number":${q(r.severityNumber)},"severity_text":${severityText.json},"body":${body.json},"attributes":${q(attributesJson(r.attributes))},${shared.json},"trace_id":${traceId.json},"span_id":${spanId.json}}\n`,
    refused,
  }
}

/**
 * The export's NDJSON, a line per record in order (line i is record i), how many are rows the table
 * takes, how many the roller will refuse, and the rows' bytes (what ingest_bytes counts, as the send
 * route counts only its objects).
 */
export function rowsOf(records: LogRecord[], shape: Shape): { ndjson: Uint8Array; rows: number; rejected: number; rowBytes: number } {
  const lines: string[] = []
  let rejected = 0
  let refusedBytes = 0
  let resource: KeyValue[] | undefined
  let scope: Scope | undefined
  let shared: Written = NULL
  for (const r of records) {
    if (r.resource !== resource || r.scope !== scope) {
      resource = r.resource
      scope = r.scope
      shared = sharedPart(resource, scope)
    }
    const line = rowLine(r, shape, shared)
    lines.push(line.json)
    if (line.refused) {
      rejected++
      refusedBytes += new TextEncoder().encode(line.json).length
    }
  }
  const ndjson = new TextEncoder().encode(lines.join(''))
  return { ndjson, rows: records.length - rejected, rejected, rowBytes: ndjson.length - refusedBytes }
}
