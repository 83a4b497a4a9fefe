// ExportLogsServiceRequest in OTLP/JSON (the proto3 JSON mapping with OTLP's exceptions: trace and
// span ids as hex, enums as integers) → log records. Parsed with lossless-json, never JSON.parse:
// timeUnixNano and intValue pass 2^53. Field names in lowerCamelCase, the proto names also taken
// (proto3 JSON parsers accept both); unknown fields are ignored, as the OTLP spec asks.
import { parse } from 'lossless-json'
import { ApiError } from '../errors.ts'
import type { AnyValue, KeyValue, LogRecord, Scope } from './records.ts'

const invalid = (why: string) => new ApiError(400, 'invalid_otlp', `the body is not a valid OTLP/JSON ExportLogsServiceRequest: ${why}`)

type Obj = Record<string, unknown>

const SNAKE = new Map<string, string>()
const snake = (camel: string) => {
  let name = SNAKE.get(camel)
  if (name === undefined) SNAKE.set(camel, (name = camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)))
  return name
}

/** A JSON number's text as sent (lossless-json's own LosslessNumber checks each one again; the scanner has). */
class NumberText {
  constructor(readonly value: string) {}
}
const isNumber = (v: unknown): v is NumberText => v instanceof NumberText

/** A member by its JSON name or its proto name; null is absent. */
function member(o: Obj, name: string): unknown {
  const v = Object.hasOwn(o, name) ? o[name] : o[snake(name)]
  return v === null ? undefined : v
}

function object(v: unknown, where: string): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v) || isNumber(v)) throw invalid(`${where} should be an object`)
  return v as Obj
}

function list(o: Obj, name: string, where: string): unknown[] {
  const v = member(o, name)
  if (v === undefined) return []
  if (!Array.isArray(v)) throw invalid(`${where}.${name} should be an array`)
  return v
}

function str(o: Obj, name: string, where: string): string {
  const v = member(o, name)
  if (v === undefined) return ''
  if (typeof v !== 'string') throw invalid(`${where}.${name} should be a string`)
  return v
}

/** A 64-bit integer as proto3 JSON writes it: a number or a decimal string; exact. */
function int64(o: Obj, name: string, where: string, unsigned: boolean): bigint {
  const v = member(o, name)
  if (v === undefined) return 0n
  const t = isNumber(v) ? v.value : typeof v === 'string' ? v : null
  if (t === null || !/^-?\d+$/.test(t)) throw invalid(`${where}.${name} should be an integer (a number or a decimal string)`)
  const n = BigInt(t)
  if (unsigned ? BigInt.asUintN(64, n) !== n : BigInt.asIntN(64, n) !== n) throw invalid(`${where}.${name} is out of range`)
  return n
}

const LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL']

/** SeverityNumber: an integer, or the enum's name (SEVERITY_NUMBER_INFO2), which proto3 JSON also allows. */
function severity(o: Obj, where: string): number {
  const v = member(o, 'severityNumber')
  if (typeof v === 'string' && /^SEVERITY_NUMBER_/.test(v)) {
    if (v === 'SEVERITY_NUMBER_UNSPECIFIED') return 0
    const m = /^SEVERITY_NUMBER_([A-Z]+)([234])?$/.exec(v)
    const level = m ? LEVELS.indexOf(m[1]) : -1
    if (level < 0) throw invalid(`${where}.severityNumber ${v} is no SeverityNumber`)
    return level * 4 + Number(m![2] ?? 1)
  }
  const n = int64(o, 'severityNumber', where, false)
  if (BigInt.asIntN(32, n) !== n) throw invalid(`${where}.severityNumber is out of range`)
  return Number(n)
}

function hexId(o: Obj, name: string, where: string): Uint8Array {
  const v = str(o, name, where)
  if (!/^([0-9a-fA-F]{2})*$/.test(v)) throw invalid(`${where}.${name} should be hex`)
  return Uint8Array.from(v.match(/../g) ?? [], (h) => Number.parseInt(h, 16))
}

function base64(v: unknown, where: string): Uint8Array {
  if (typeof v !== 'string') throw invalid(`${where} should be a base64 string`)
  try {
    // proto3 JSON accepts the URL-safe alphabet too.
    return Uint8Array.from(atob(v.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0))
  } catch {
    throw invalid(`${where} is not base64`)
  }
}

const DOUBLES: Record<string, number> = { NaN: Number.NaN, Infinity: Number.POSITIVE_INFINITY, '-Infinity': Number.NEGATIVE_INFINITY }

/** How deep arrays and kvlists may nest: deeper is refused (400) before the stack runs out. */
const MAX_DEPTH = 64

function anyValue(v: unknown, where: string, depth: number): AnyValue {
  if (depth > MAX_DEPTH) throw invalid(`AnyValues nested deeper than ${MAX_DEPTH} levels`)
  const o = object(v, where)
  let out: AnyValue = { empty: true }
  // A oneof: exactly one is set by a well-behaved sender; the last one read wins otherwise.
  if (member(o, 'stringValue') !== undefined) out = { string: str(o, 'stringValue', where) }
  if (member(o, 'boolValue') !== undefined) {
    const b = member(o, 'boolValue')
    if (typeof b !== 'boolean') throw invalid(`${where}.boolValue should be true or false`)
    out = { bool: b }
  }
  if (member(o, 'intValue') !== undefined) out = { int: int64(o, 'intValue', where, false) }
  if (member(o, 'doubleValue') !== undefined) {
    const d = member(o, 'doubleValue')
    const x = isNumber(d) ? Number(d.value) : typeof d === 'string' && Object.hasOwn(DOUBLES, d) ? DOUBLES[d] : typeof d === 'string' ? Number(d) : Number.NaN
    if (Number.isNaN(x) && !(typeof d === 'string' && d === 'NaN')) throw invalid(`${where}.doubleValue should be a number`)
    out = { double: x }
  }
  if (member(o, 'arrayValue') !== undefined)
    out = {
      array: list(object(member(o, 'arrayValue'), `${where}.arrayValue`), 'values', `${where}.arrayValue`).map((x, i) =>
        anyValue(x, `${where}.arrayValue.values[${i}]`, depth + 1),
      ),
    }
  if (member(o, 'kvlistValue') !== undefined)
    out = { kvlist: keyValues(object(member(o, 'kvlistValue'), `${where}.kvlistValue`), 'values', `${where}.kvlistValue`, depth + 1) }
  if (member(o, 'bytesValue') !== undefined) out = { bytes: base64(member(o, 'bytesValue'), `${where}.bytesValue`) }
  return out
}

function keyValues(o: Obj, name: string, where: string, depth = 0): KeyValue[] {
  return list(o, name, where).map((kv, i) => {
    const at = `${where}.${name}[${i}]`
    const k = object(kv, at)
    const value = member(k, 'value')
    return { key: str(k, 'key', at), value: value === undefined ? { empty: true } : anyValue(value, `${at}.value`, depth) }
  })
}

function logRecord(v: unknown, where: string, resource: KeyValue[], scope: Scope): LogRecord {
  const o = object(v, where)
  const body = member(o, 'body')
  return {
    timeUnixNano: int64(o, 'timeUnixNano', where, true),
    observedTimeUnixNano: int64(o, 'observedTimeUnixNano', where, true),
    severityNumber: severity(o, where),
    severityText: str(o, 'severityText', where),
    body: body === undefined ? null : anyValue(body, `${where}.body`, 0),
    attributes: keyValues(o, 'attributes', where),
    traceId: hexId(o, 'traceId', where),
    spanId: hexId(o, 'spanId', where),
    resource,
    scope,
  }
}

export function decodeJson(body: Uint8Array): LogRecord[] {
  let root: unknown
  try {
    root = parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(body), null, (text) => new NumberText(text))
  } catch (err) {
    throw new ApiError(400, 'malformed_json', `malformed JSON: ${(err as Error).message}`)
  }
  const out: LogRecord[] = []
  list(object(root, 'the body'), 'resourceLogs', 'the body').forEach((rl, i) => {
    const at = `resourceLogs[${i}]`
    const r = object(rl, at)
    const res = member(r, 'resource')
    const resource = res === undefined ? [] : keyValues(object(res, `${at}.resource`), 'attributes', `${at}.resource`)
    list(r, 'scopeLogs', at).forEach((sl, j) => {
      const sat = `${at}.scopeLogs[${j}]`
      const s = object(sl, sat)
      const sc = member(s, 'scope')
      const so = sc === undefined ? {} : object(sc, `${sat}.scope`)
      const scope: Scope = {
        name: str(so, 'name', `${sat}.scope`),
        version: str(so, 'version', `${sat}.scope`),
        attributes: keyValues(so, 'attributes', `${sat}.scope`),
      }
      list(s, 'logRecords', sat).forEach((lr, k) => out.push(logRecord(lr, `${sat}.logRecords[${k}]`, resource, scope)))
    })
  })
  return out
}
