// The protobuf wire format (https://protobuf.dev/programming-guides/encoding/), read and written for
// the few OTLP messages the logs route needs. Hand-written rather than a library: the OpenTelemetry JS
// transformer ships an encoder only, and protobufjs's reflection decoders compile code with
// `new Function`, which workerd refuses. 64-bit values stay bigint: nothing is rounded.
import { ApiError } from '../errors.ts'

export const malformed = (why: string) => new ApiError(400, 'invalid_otlp', `the body is not a valid OTLP protobuf message: ${why}`)

/** One field as read: its number, wire type, and its value (varint and fixed as bigint, length-delimited as bytes). */
export type Field = { no: number; wire: 0; value: bigint } | { no: number; wire: 1 | 5; value: bigint } | { no: number; wire: 2; value: Uint8Array }

/** A varint as a number when it fits 28 bits (keys, lengths, small values: the common case), else as bigint. */
function varintSmall(b: Uint8Array, at: { i: number }): number | bigint {
  let result = 0
  for (let k = 0; k < 4; k++) {
    if (at.i + k >= b.length) throw malformed('a varint runs past the end')
    const byte = b[at.i + k]
    result |= (byte & 0x7f) << (7 * k)
    if ((byte & 0x80) === 0) {
      at.i += k + 1
      return result
    }
  }
  return varintBig(b, at)
}

function varintBig(b: Uint8Array, at: { i: number }): bigint {
  let result = 0n
  for (let shift = 0n; shift < 70n; shift += 7n) {
    if (at.i >= b.length) throw malformed('a varint runs past the end')
    const byte = b[at.i++]
    result |= BigInt(byte & 0x7f) << shift
    if ((byte & 0x80) === 0) return BigInt.asUintN(64, result)
  }
  throw malformed('a varint longer than 10 bytes')
}

function fixed(b: Uint8Array, at: { i: number }, size: 4 | 8): bigint {
  if (at.i + size > b.length) throw malformed('a fixed-width value runs past the end')
  const view = new DataView(b.buffer, b.byteOffset + at.i, size)
  at.i += size
  return size === 8 ? view.getBigUint64(0, true) : BigInt(view.getUint32(0, true))
}

/** Every field of one message, in order (repeated fields appear once per element; unknown ones too). */
export function fields(b: Uint8Array): Field[] {
  const out: Field[] = []
  const at = { i: 0 }
  while (at.i < b.length) {
    // A key is at most 32 bits (field numbers < 2^29): exact as a number.
    const key = Number(varintSmall(b, at))
    const no = Math.floor(key / 8)
    const wire = key % 8
    if (no === 0) throw malformed('field number 0')
    if (wire === 0) {
      const v = varintSmall(b, at)
      out.push({ no, wire, value: typeof v === 'bigint' ? v : BigInt(v) })
    } else if (wire === 1) out.push({ no, wire, value: fixed(b, at, 8) })
    else if (wire === 5) out.push({ no, wire, value: fixed(b, at, 4) })
    else if (wire === 2) {
      const len = Number(varintSmall(b, at))
      if (at.i + len > b.length) throw malformed('a length-delimited field runs past the end')
      out.push({ no, wire, value: b.subarray(at.i, at.i + len) })
      at.i += len
    } else throw malformed(`wire type ${wire} (groups are not used by OTLP)`)
  }
  return out
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** A string field's text; 400 for bytes that are not UTF-8 (proto3 strings must be). */
export function text(f: Field): string {
  if (f.wire !== 2) throw malformed(`field ${f.no} should be a string`)
  try {
    return utf8.decode(f.value)
  } catch {
    throw malformed(`field ${f.no} is not UTF-8`)
  }
}

export function bytes(f: Field): Uint8Array {
  if (f.wire !== 2) throw malformed(`field ${f.no} should be bytes or a message`)
  return f.value
}

export function int(f: Field, wire: 0 | 1 | 5): bigint {
  if (f.wire !== wire) throw malformed(`field ${f.no} has wire type ${f.wire}, not ${wire}`)
  return f.value
}

// ---- writing: the two small answers (ExportLogsServiceResponse, google.rpc.Status) ----

function writeVarint(n: bigint, out: number[]): void {
  let v = BigInt.asUintN(64, n)
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80)
    v >>= 7n
  }
  out.push(Number(v))
}

/** One message from varint and string fields (zero and empty values left out, as proto3 does). */
export function message(parts: Array<[number, bigint | string | Uint8Array]>): Uint8Array<ArrayBuffer> {
  const out: number[] = []
  for (const [no, value] of parts) {
    if (typeof value === 'bigint') {
      if (value === 0n) continue
      writeVarint(BigInt(no << 3), out)
      writeVarint(value, out)
    } else {
      const b = typeof value === 'string' ? new TextEncoder().encode(value) : value
      if (b.length === 0) continue
      writeVarint(BigInt((no << 3) | 2), out)
      writeVarint(BigInt(b.length), out)
      out.push(...b)
    }
  }
  return Uint8Array.from(out)
}
