// The log records of one export, whatever encoding they came in: what decode-json.ts and
// decode-proto.ts both produce and row.ts maps. Integers that may pass 2^53 stay bigint.

/** OTLP's AnyValue; `empty` is a value with none of the oneof set. */
export type AnyValue =
  | { string: string }
  | { bool: boolean }
  | { int: bigint }
  | { double: number }
  | { bytes: Uint8Array }
  | { array: AnyValue[] }
  | { kvlist: KeyValue[] }
  | { empty: true }

export interface KeyValue {
  key: string
  value: AnyValue
}

export interface Scope {
  name: string
  version: string
  attributes: KeyValue[]
}

export interface LogRecord {
  /** Nanoseconds since the epoch; 0 is "unknown" in OTLP. */
  timeUnixNano: bigint
  observedTimeUnixNano: bigint
  severityNumber: number
  severityText: string
  body: AnyValue | null
  attributes: KeyValue[]
  /** As sent: 16 and 8 bytes when set; empty when not. */
  traceId: Uint8Array
  spanId: Uint8Array
  resource: KeyValue[]
  scope: Scope
}
