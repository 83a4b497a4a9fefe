// The protobuf wire format (https://protobuf.dev/programming-guides/encoding/), read and written for
// the few OTLP messages the logs route needs. Hand-written rather than a library: the OpenTelemetry JS
// transformer ships an encoder only, and protobufjs's reflection decoders compile code with
// `new Function`, which workerd refuses. 64-bit values stay bigint: nothing is rounded.
import { ApiError } from '../errors.ts'

export const malformed = (why: string) => new ApiError(400, 'invalid_otlp', `the body is not a valid OTLP protobuf message: ${why}`)

/** One field as read: its number, wire type, and its value (varint and fixed as bigint, length-delimited as bytes). */
export type Field = { no: number; wire: 0; value: bigint } | { no: number; wire: 1 | 5; value: bigint } | { no: number; wire: 2; value: Uint8Array }

// The read position of the fields() call under way: a module variable rather than an object passed
// around, which V8 allocated per field (fields() does not recurse, so one position suffices).
let at = 0

/** A varint as a number when it fits 28 bits (keys, lengths, small values: the common case), else as bigint. */
function varintSmall(b: Uint8Array): number | bigint {
  let result = 0
  for (let k = 0; k < 4; k++) {
    if (at + k >= b.length) throw malformed('a varint runs past the end')
    const byte = b[at + k]
    result |= (byte & 0x7f) << (7 * k)
    if ((byte & 0x80) === 0) {
      at += k + 1
      return result
    }
  }
  return varintBig(b)
}

function varintBig(b: Uint8Array): bigint {
  let result = 0n
  for (let shift = 0n; shift < 70n; shift += 7n) {
    if (at >= b.length) throw malformed('a varint runs past the end')
    const byte = b[at++]
    result |= BigInt(byte & 0x7f) << shift
    if ((byte & 0x80) === 0) return BigInt.asUintN(64, result)
  }
  throw malformed('a varint longer than 10 bytes')
}

/** Four bytes little-endian at `i` as an unsigned number (no DataView: one a field cost more than the read). */
const uint32 = (b: Uint8Array, i: number) => (b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24)) >>> 0

function fixed(b: Uint8Array, size: 4 | 8): bigint {
  if (at + size > b.length) throw malformed('a fixed-width value runs past the end')
  const lo = uint32(b, at)
  const value = size === 8 ? (BigInt(uint32(b, at + 4)) << 32n) | BigInt(lo) : BigInt(lo)
  at += size
  return value
}

/** Every field of one message, in order (repeated fields appear once per element; unknown ones too). */
export function fields(b: Uint8Array): Field[] {
  const out: Field[] = []
  at = 0
  while (at < b.length) {
    // A key is at most 32 bits (field numbers < 2^29): exact as a number.
    const key = Number(varintSmall(b))
    const no = Math.floor(key / 8)
    const wire = key % 8
    if (no === 0) throw malformed('field number 0')
    if (wire === 0) {
      const v = varintSmall(b)
      out.push({ no, wire, value: typeof v === 'bigint' ? v : BigInt(v) })
    } else if (wire === 1) out.push({ no, wire, value: fixed(b, 8) })
    else if (wire === 5) out.push({ no, wire, value: fixed(b, 4) })
    else if (wire === 2) {
      const len = Number(varintSmall(b))
      if (at + len > b.length) throw malformed('a length-delimited field runs past the end')
      out.push({ no, wire, value: b.subarray(at, at + len) })
      at += len
    } else throw malformed(`wire type ${wire} (groups are not used by OTLP)`)
  }
  return out
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** Up to this many bytes, an ASCII string is read in JS: a TextDecoder call costs more than the loop for OTLP's short keys and values. */
const SHORT = 256

/** A string field's text; 400 for bytes that are not UTF-8 (proto3 strings must be). */
export function text(f: Field): string {
  if (f.wire !== 2) throw malformed(`field ${f.no} should be a string`)
  const b = f.value
  if (b.length > SHORT) return decodeUtf8(f)
  for (let i = 0; i < b.length; i++) if (b[i] >= 0x80) return decodeUtf8(f)
  // ASCII: each byte is its own UTF-16 unit.
  return String.fromCharCode.apply(null, b as unknown as number[])
}

function decodeUtf8(f: Field & { wire: 2 }): string {
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
