// ExportLogsServiceRequest in protobuf (opentelemetry-proto, collector/logs/v1 and logs/v1) → log
// records. Field numbers as the official .proto files have them; unknown fields are skipped, as
// protobuf parsers do (OTLP adds fields over time).
import type { AnyValue, KeyValue, LogRecord, Scope } from './records.ts'
import { bytes, fields, int, malformed, text, type Field } from './wire.ts'

/** How deep arrays and kvlists may nest: deeper is refused (400) before the stack runs out. */
const MAX_DEPTH = 64

/** AnyValue: string_value 1, bool_value 2, int_value 3, double_value 4, array_value 5, kvlist_value 6, bytes_value 7 (a oneof: the last wins). */
function anyValue(b: Uint8Array, depth: number): AnyValue {
  if (depth > MAX_DEPTH) throw malformed(`AnyValues nested deeper than ${MAX_DEPTH} levels`)
  let v: AnyValue = { empty: true }
  for (const f of fields(b)) {
    if (f.no === 1) v = { string: text(f) }
    else if (f.no === 2) v = { bool: int(f, 0) !== 0n }
    else if (f.no === 3) v = { int: BigInt.asIntN(64, int(f, 0)) }
    else if (f.no === 4) {
      const raw = int(f, 1)
      const view = new DataView(new ArrayBuffer(8))
      view.setBigUint64(0, raw, true)
      v = { double: view.getFloat64(0, true) }
    } else if (f.no === 5)
      v = {
        array: fields(bytes(f))
          .filter((x) => x.no === 1)
          .map((x) => anyValue(bytes(x), depth + 1)),
      }
    else if (f.no === 6) v = { kvlist: keyValues(fields(bytes(f)), 1, depth + 1) }
    else if (f.no === 7) v = { bytes: bytes(f) }
  }
  return v
}

/** The KeyValues (key 1, value 2) among `all` with field number `no`. */
function keyValues(all: Field[], no: number, depth = 0): KeyValue[] {
  return all
    .filter((f) => f.no === no)
    .map((f) => {
      let key = ''
      let value: AnyValue = { empty: true }
      for (const g of fields(bytes(f))) {
        if (g.no === 1) key = text(g)
        else if (g.no === 2) value = anyValue(bytes(g), depth)
      }
      return { key, value }
    })
}

/** LogRecord: time 1 (fixed64), severity_number 2, severity_text 3, body 5, attributes 6, trace_id 9, span_id 10, observed_time 11 (fixed64). */
function logRecord(b: Uint8Array, resource: KeyValue[], scope: Scope): LogRecord {
  const all = fields(b)
  const r: LogRecord = {
    timeUnixNano: 0n,
    observedTimeUnixNano: 0n,
    severityNumber: 0,
    severityText: '',
    body: null,
    attributes: keyValues(all, 6),
    traceId: new Uint8Array(0),
    spanId: new Uint8Array(0),
    resource,
    scope,
  }
  for (const f of all) {
    if (f.no === 1) r.timeUnixNano = int(f, 1)
    else if (f.no === 11) r.observedTimeUnixNano = int(f, 1)
    // An enum is an int32 on the wire (a negative one sign-extended to 64 bits).
    else if (f.no === 2) r.severityNumber = Number(BigInt.asIntN(32, int(f, 0)))
    else if (f.no === 3) r.severityText = text(f)
    else if (f.no === 5) r.body = anyValue(bytes(f), 0)
    else if (f.no === 9) r.traceId = bytes(f)
    else if (f.no === 10) r.spanId = bytes(f)
  }
  return r
}

/** InstrumentationScope: name 1, version 2, attributes 3. */
function scopeOf(b: Uint8Array): Scope {
  const all = fields(b)
  const s: Scope = { name: '', version: '', attributes: keyValues(all, 3) }
  for (const f of all) {
    if (f.no === 1) s.name = text(f)
    else if (f.no === 2) s.version = text(f)
  }
  return s
}

/** ExportLogsServiceRequest: resource_logs 1 → ResourceLogs: resource 1 (attributes 1), scope_logs 2 → ScopeLogs: scope 1, log_records 2. */
export function decodeProto(body: Uint8Array): LogRecord[] {
  const out: LogRecord[] = []
  for (const rl of fields(body)) {
    if (rl.no !== 1) continue
    const parts = fields(bytes(rl))
    const res = parts.findLast((f) => f.no === 1)
    const resource = res ? keyValues(fields(bytes(res)), 1) : []
    for (const sl of parts) {
      if (sl.no !== 2) continue
      const inner = fields(bytes(sl))
      const sc = inner.findLast((f) => f.no === 1)
      const scope = sc ? scopeOf(bytes(sc)) : { name: '', version: '', attributes: [] }
      for (const lr of inner) if (lr.no === 2) out.push(logRecord(bytes(lr), resource, scope))
    }
  }
  return out
}
