// The device route's vocabulary: a mapping (payload → the table's columns), device_require,
// device_strip, and the presets that bundle them for common devices. Data only; no behaviour.

/** A JSON pointer (RFC 6901) into the device's payload: "" is the whole payload, "/a/0/b" a member. */
export type Pointer = string

/** Where one column's value comes from. */
export type Source =
  /** The value at the pointer, its bytes copied as the device sent them (absent: the column is null). */
  | Pointer
  /**
   * The value at the pointer, converted. `epoch_s` / `epoch_ms`: an epoch number (or a numeric
   * string) in seconds or milliseconds → an RFC 3339 UTC timestamp with microseconds (a string is
   * copied as it is). `json`: the value's JSON text as a string (for a string column holding JSON).
   */
  | { pointer: Pointer; as: 'epoch_s' | 'epoch_ms' | 'json' }
  /** A constant JSON value, written as given. */
  | { const: unknown }
  /** The device id of the route's path, as a string. */
  | { device: true }
  /** The intake's clock (the batch's x-amz-meta-received), RFC 3339 with microseconds. */
  | { received: true }
  /** The whole payload (after device_strip) as a JSON string. */
  | { raw: true }

export interface Mapping {
  columns: Record<string, Source>
  /** A GeoJSON Point built from two numbers, written to a geometry column (WKB in the table). */
  point?: { column: string; lon: Pointer; lat: Pointer }
  /** A GeoJSON geometry taken whole from the payload, written to a geometry column. */
  shape?: { column: string; geojson: Pointer }
}

/** device_require: each pointer's value must equal the value (or one of the values) given. */
export type Require = Record<Pointer, unknown>

export interface Preset {
  name: string
  /** One line for the README and the OpenAPI document. */
  summary: string
  /** The vendor's documentation the mapping and the fixtures follow. */
  docs: string[]
  mapping: Mapping
  /** Every column the mapping fills and the Iceberg type the table needs for it. */
  columns: Record<string, string>
  /** Checked before the sink's own device_require (which wins on the same pointer). */
  require?: Require
  /**
   * Pointers whose values, with the device id, identify one message: a device that sends it again
   * (a retry) is stored once. Without it the route derives the id from the payload's bytes.
   */
  naturalId?: Pointer[]
  /** The 200 answer the device expects; without it the route answers as the send route does (202). */
  answer?: { contentType: string; body: string }
}
