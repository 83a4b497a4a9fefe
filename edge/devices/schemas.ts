// The device fields of POST/PATCH /v1/sinks as valibot schemas (they also feed /openapi.json).
// The shapes only: what a mapping means for the table is compile.ts's to check.
import * as v from 'valibot'
import { record, text } from '../validate.ts'

const Pointer = v.pipe(text(), v.maxLength(512), v.description('A JSON pointer (RFC 6901) into the payload: "" is all of it, "/a/0/b" a member'))

const Source = v.union([
  Pointer,
  v.strictObject({ pointer: Pointer, as: v.picklist(['epoch_s', 'epoch_ms', 'json']) }),
  v.strictObject({ const: v.unknown() }),
  v.strictObject({ device: v.literal(true) }),
  v.strictObject({ received: v.literal(true) }),
  v.strictObject({ raw: v.literal(true) }),
])

export const Mapping = v.union([
  v.strictObject({ preset: v.pipe(text(), v.maxLength(64)) }),
  v.strictObject({
    columns: record(v.pipe(text(), v.minLength(1), v.maxLength(255)), Source),
    point: v.optional(v.strictObject({ column: text(), lon: Pointer, lat: Pointer })),
    shape: v.optional(v.strictObject({ column: text(), geojson: Pointer })),
  }),
])

const Scalar = v.union([v.string(), v.number(), v.boolean(), v.null()])
export const DeviceRequire = v.pipe(
  record(Pointer, v.union([Scalar, v.array(Scalar)])),
  v.description('Each pointer’s value must be the value, or one of the values'),
)
export const DeviceStrip = v.pipe(v.array(Pointer), v.maxLength(64), v.description('Members removed from the payload before it is mapped or stored'))
