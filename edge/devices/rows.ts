// A device payload → the NDJSON the intake stores: require drops the messages the sink does not
// want, strip removes members, and the mapping builds each row from the payload's own bytes
// (a value a pointer selects is copied as sent; the conversions are epoch → RFC 3339, JSON → text,
// and a form's strings typed by their column).
import { stringifyLossless } from '../../iceberg/spec/json.ts'
import { formatTimestampMicros, formatTimestamptzMicros } from '../../iceberg/spec/temporal.ts'
import type { Compiled, CompiledColumn } from './compile.ts'
import { bytesOf, decodeString, parseJson, pointerTokens, select, type JsonNode } from './json-span.ts'
import type { Payload } from './payload.ts'

/** Stands where the intake's clock goes; the same length as every received_at the ledger answers. */
export const RECEIVED_PLACEHOLDER = '0000-00-00T00:00:00.000000Z'

export interface DeviceRows {
  /** One line per stored row, in order, each ending with '\n'; `received` columns hold the placeholder. */
  lines: Uint8Array[]
  /** Byte offsets (into the joined lines) of the placeholders' first character. */
  receivedAt: number[]
  accepted: number
  acceptedBytes: number
  reasons: Array<{ index: number; reason: 'not_an_object' }>
  /** Why messages were dropped by require, when every one was. */
  ignored: string | null
}

const enc = new TextEncoder()
const dec = new TextDecoder()
const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/

const text = (bytes: Uint8Array, node: JsonNode) => dec.decode(bytesOf(bytes, node))

/** Newlines can only be whitespace in valid JSON text: folded, the value stays on its line. */
function oneLine(b: Uint8Array): Uint8Array {
  if (!b.includes(0x0a) && !b.includes(0x0d)) return b
  return b.map((c) => (c === 0x0a || c === 0x0d ? 0x20 : c))
}

/** JSON text without the whitespace between tokens: the same value, every token's bytes as sent. */
function compact(b: Uint8Array): string {
  const out: number[] = []
  let inString = false
  for (let i = 0; i < b.length; i++) {
    const c = b[i]
    if (inString) {
      out.push(c)
      if (c === 0x5c) out.push(b[++i])
      else if (c === 0x22) inString = false
    } else if (c === 0x22) {
      inString = true
      out.push(c)
    } else if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) out.push(c)
  }
  return dec.decode(new Uint8Array(out))
}

/**
 * The require check of one message: null when it passes, or why not. A string matches a string; a
 * number, boolean or null matches its own JSON kind (2 is not "2") except in a form or query, whose
 * values are all strings.
 */
function unmet(bytes: Uint8Array, doc: JsonNode, require: Compiled['require'], fromParameters: boolean): string | null {
  for (const [pointer, want] of Object.entries(require)) {
    const node = select(doc, pointerTokens(pointer) ?? [])
    const wants = Array.isArray(want) ? want : [want]
    const isString = node?.kind === 'string'
    const got = node === undefined ? undefined : isString ? decodeString(bytes, node) : text(bytes, node)
    const matches = (w: unknown) => {
      if (got === undefined) return false
      if (typeof w === 'string' || fromParameters) return isString && got === String(w)
      if (typeof w === 'number') return node?.kind === 'number' && Number(got) === w
      return !isString && got === String(w)
    }
    if (!wants.some(matches))
      return `${pointer} is ${got === undefined ? 'absent' : isString ? JSON.stringify(got) : got}, not ${wants.map((w) => JSON.stringify(w)).join(' or ')}`
  }
  return null
}

/** The message's JSON with the stripped members left out; members' bytes otherwise as sent. */
function stripped(bytes: Uint8Array, doc: JsonNode, paths: string[][]): string {
  if (paths.length === 0 || (doc.kind !== 'object' && doc.kind !== 'array')) return text(bytes, doc)
  if (paths.some((p) => p.length === 0)) return ''
  const under = (token: string) => paths.filter((p) => p[0] === token).map((p) => p.slice(1))
  if (doc.kind === 'object') {
    const parts: string[] = []
    for (const m of doc.members) {
      const sub = under(m.key)
      if (sub.some((p) => p.length === 0)) continue
      parts.push(`${text(bytes, { ...m.keySpan, kind: 'string' })}:${stripped(bytes, m.value, sub)}`)
    }
    return `{${parts.join(',')}}`
  }
  const items = doc.items.flatMap((item, i) => {
    const sub = under(String(i))
    return sub.some((p) => p.length === 0) ? [] : [stripped(bytes, item, sub)]
  })
  return `[${items.join(',')}]`
}

/** An epoch number (text) in seconds or milliseconds → microseconds, exactly (no float on the way). */
function epochMicros(number: string, unit: 'epoch_s' | 'epoch_ms'): bigint | null {
  const m = JSON_NUMBER.exec(number)
  if (!m) return null
  const [int, frac = ''] = number
    .replace(/[eE].*$/, '')
    .replace('-', '')
    .split('.')
  const exp = Number(/[eE]([+-]?\d+)$/.exec(number)?.[1] ?? 0) + (unit === 'epoch_s' ? 6 : 3)
  if (Math.abs(exp) > 30) return null
  const digits = int + frac
  const shift = exp - frac.length
  const micros = shift >= 0 ? BigInt(digits) * 10n ** BigInt(shift) : BigInt(digits) / 10n ** BigInt(-shift)
  return number.startsWith('-') ? -micros : micros
}

/** One column's value as JSON text, or undefined for none (the column is then null). */
function columnValue(
  bytes: Uint8Array,
  doc: JsonNode,
  col: CompiledColumn,
  ctx: { deviceId: string; fromParameters: boolean; raw: string },
): string | undefined {
  const s = col.source
  if (typeof s === 'object') {
    if ('const' in s) return stringifyLossless(s.const) // a LosslessNumber as its digits
    if ('device' in s) return JSON.stringify(ctx.deviceId)
    if ('received' in s) return `"${RECEIVED_PLACEHOLDER}"`
    if ('raw' in s) return JSON.stringify(ctx.raw)
  }
  const node = select(doc, pointerTokens(typeof s === 'string' ? s : s.pointer) ?? [])
  if (!node || node.kind === 'null') return undefined
  const asText = node.kind === 'string' ? decodeString(bytes, node) : null
  if (typeof s === 'object' && 'as' in s) {
    if (s.as === 'json') return JSON.stringify(compact(bytesOf(bytes, node)))
    const micros = node.kind === 'number' ? epochMicros(text(bytes, node), s.as) : asText !== null ? epochMicros(asText.trim(), s.as) : null
    if (micros !== null && micros >= -(10n ** 17n) && micros <= 10n ** 17n)
      return JSON.stringify(col.target === 'timestamp' ? formatTimestampMicros(micros) : formatTimestamptzMicros(micros))
    return text(bytes, node) // not an epoch: as sent (an RFC 3339 string passes; anything else is the roller's reject)
  }
  // A form's or query's strings have no types of their own: they take their column's.
  if (ctx.fromParameters && asText !== null) {
    if (col.target === 'number' && JSON_NUMBER.test(asText)) return asText
    if (col.target === 'boolean' && (asText === 'true' || asText === 'false')) return asText
  }
  return text(bytes, node)
}

function geometry(bytes: Uint8Array, doc: JsonNode, compiled: Compiled, fromParameters: boolean): Array<[string, string]> {
  const out: Array<[string, string]> = []
  if (compiled.point) {
    const coord = (p: string) => {
      const n = select(doc, pointerTokens(p) ?? [])
      if (n?.kind === 'number') return text(bytes, n)
      const s = n?.kind === 'string' && fromParameters ? decodeString(bytes, n) : null
      return s !== null && JSON_NUMBER.test(s) ? s : undefined
    }
    const lon = coord(compiled.point.lon)
    const lat = coord(compiled.point.lat)
    if (lon !== undefined && lat !== undefined) out.push([compiled.point.column, `{"type":"Point","coordinates":[${lon},${lat}]}`])
  }
  if (compiled.shape) {
    const n = select(doc, pointerTokens(compiled.shape.geojson) ?? [])
    if (n && n.kind !== 'null') out.push([compiled.shape.column, text(bytes, n)])
  }
  return out
}

/** The rows of one payload under the sink's compiled device settings (null: stored as sent). */
export function deviceRows(payload: Payload, compiled: Compiled | null, deviceId: string): DeviceRows {
  const { bytes, docs, fromParameters } = payload
  const out: DeviceRows = { lines: [], receivedAt: [], accepted: 0, acceptedBytes: 0, reasons: [], ignored: null }
  const strip = (compiled?.strip ?? []).map((p) => pointerTokens(p) ?? [])
  let offset = 0
  let ignored: string | null = null
  // The element's place in what the device sent (the answer's not_an_object index), dropped ones counted.
  let index = -1
  for (const doc of docs) {
    index++
    let line: string | Uint8Array
    if (doc.kind !== 'object') {
      out.reasons.push({ index, reason: 'not_an_object' })
      line = oneLine(bytesOf(bytes, doc))
    } else {
      const why = compiled ? unmet(bytes, doc, compiled.require, fromParameters) : null
      if (why) {
        ignored ??= why
        continue
      }
      // Stripped first: what a stripped member held is gone for the mapping too, not only for raw.
      const raw = strip.length > 0 ? stripped(bytes, doc, strip) || '{}' : null
      const src = raw === null ? bytes : enc.encode(raw)
      const msg = raw === null ? doc : parseJson(src)
      if (!compiled || (compiled.columns.length === 0 && !compiled.point && !compiled.shape)) {
        line = raw ?? oneLine(bytesOf(bytes, doc))
      } else {
        const ctx = { deviceId, fromParameters, raw: raw ?? text(bytes, doc) }
        const members: string[] = []
        for (const col of compiled.columns) {
          const value = columnValue(src, msg, col, ctx)
          if (value === undefined) continue
          const member = `${JSON.stringify(col.name)}:${value}`
          const at = member.indexOf(RECEIVED_PLACEHOLDER)
          if (typeof col.source === 'object' && 'received' in col.source && at >= 0) {
            // Offsets in bytes: everything before the placeholder in this line, UTF-8 encoded.
            const before = `{${members.join(',')}${members.length ? ',' : ''}`
            out.receivedAt.push(offset + enc.encode(before).length + enc.encode(member.slice(0, at)).length)
          }
          members.push(member)
        }
        for (const [column, value] of geometry(src, msg, compiled, fromParameters)) members.push(`${JSON.stringify(column)}:${value}`)
        line = `{${members.join(',')}}`
      }
      out.accepted++
    }
    const b = typeof line === 'string' ? enc.encode(line.replace(/[\n\r]/g, ' ')) : line
    out.lines.push(b, NEWLINE)
    if (doc.kind === 'object') out.acceptedBytes += b.length + 1
    offset += b.length + 1
  }
  out.ignored = out.lines.length === 0 ? (ignored ?? 'the payload holds no message (no body and no query parameters, or [])') : null
  return out
}

const NEWLINE = new Uint8Array([0x0a])
