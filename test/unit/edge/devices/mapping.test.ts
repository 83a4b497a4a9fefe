// The device route's pieces without HTTP: payloads in every form, the mapping's sources and
// conversions, require and strip, the batch ids, and the checks a mapping passes when it is set.
import { describe, expect, it } from 'vitest'
import { deviceBatchId, requestDigest } from '../../../../edge/devices/batch-id.ts'
import { compileDevice, type MappingInput } from '../../../../edge/devices/compile.ts'
import { parseJson, pointerTokens, select } from '../../../../edge/devices/json-span.ts'
import { readPayload } from '../../../../edge/devices/payload.ts'
import { PRESETS } from '../../../../edge/devices/presets/index.ts'
import { deviceRows, RECEIVED_PLACEHOLDER } from '../../../../edge/devices/rows.ts'
import type { Require } from '../../../../edge/devices/types.ts'
import { tableFor } from './table.ts'

const enc = (s: string) => new TextEncoder().encode(s)
const TABLE = tableFor({
  id: 'long',
  name: 'string',
  at: 'timestamptz',
  ts: 'timestamp',
  n: 'double',
  ok: 'boolean',
  raw: 'string',
  where: 'geometry',
  dev: 'string',
})

function run(body: string, mapping: MappingInput | null, opts: { require?: Require; strip?: string[]; type?: string; query?: string } = {}) {
  const compiled = compileDevice({ mapping, require: opts.require ?? null, strip: opts.strip ?? null }, TABLE)
  const payload = readPayload(enc(body), opts.type, new URLSearchParams(opts.query ?? ''))
  const rows = deviceRows(payload, compiled, 'dev-1')
  const text = new TextDecoder().decode(new Uint8Array(rows.lines.flatMap((l) => [...l])))
  return { rows, text, lines: text.split('\n').filter(Boolean) }
}

describe('payloads', () => {
  it('a JSON object, an array, a form, query parameters only, with or without Content-Type', () => {
    expect(readPayload(enc('{"a":1}'), undefined, new URLSearchParams()).docs).toHaveLength(1)
    expect(readPayload(enc(' [{"a":1},{"a":2}]'), 'text/plain', new URLSearchParams()).docs).toHaveLength(2)
    const form = readPayload(enc('a=1&b=x%20y'), 'application/x-www-form-urlencoded', new URLSearchParams('a=0&c=3'))
    expect(form.fromParameters).toBe(true)
    expect(new TextDecoder().decode(form.bytes)).toBe('{"a":"1","c":"3","b":"x y"}')
    const query = readPayload(new Uint8Array(0), undefined, new URLSearchParams('lat=1&lon=2'))
    expect(new TextDecoder().decode(query.bytes)).toBe('{"lat":"1","lon":"2"}')
  })

  it('refuses a JSON scalar and malformed JSON with its offset', () => {
    const code = (body: string, type?: string) => {
      try {
        readPayload(enc(body), type, new URLSearchParams())
        return 'accepted'
      } catch (err) {
        return `${(err as { code: string }).code}${(err as { details: { offset?: number } }).details.offset !== undefined ? `@${(err as { details: { offset: number } }).details.offset}` : ''}`
      }
    }
    expect(code('')).toBe('accepted')
    expect(code('42', 'application/json')).toBe('invalid_payload')
    expect(code('[]')).toBe('accepted') // no message: ignored, as an empty body is
    expect(code('{"a": tru}')).toBe('malformed_json@9')
    expect(code('<xml/>', 'application/xml')).toBe('invalid_payload')
  })
})

describe('JSON spans', () => {
  it('select follows RFC 6901, escapes included, and keeps bytes as sent', () => {
    const bytes = enc('{"a/b": {"m~n": [10, 1.50e2, "x\\u00e9"]}, "big": 9223372036854775807}')
    const doc = parseJson(bytes)
    const at = (p: string) => {
      const n = select(doc, pointerTokens(p)!)
      return n && new TextDecoder().decode(bytes.subarray(n.start, n.end))
    }
    expect(at('/a~1b/m~0n/1')).toBe('1.50e2')
    expect(at('/a~1b/m~0n/2')).toBe('"x\\u00e9"')
    expect(at('/big')).toBe('9223372036854775807')
    expect(at('/a~1b/m~0n/3')).toBeUndefined()
    expect(pointerTokens('a')).toBeNull()
    expect(pointerTokens('/a~2')).toBeNull()
  })
})

describe('the mapping', () => {
  it('copies pointed values byte-exact, and fills const, device, received and raw', () => {
    const { lines, rows } = run('{"v": {"id": 9223372036854775807, "n": 1.50e2}, "name": "n\\u00e9"}', {
      columns: { id: '/v/id', n: '/v/n', name: '/name', ok: { const: true }, dev: { device: true }, at: { received: true }, raw: { raw: true } },
    })
    expect(lines).toEqual([
      `{"id":9223372036854775807,"n":1.50e2,"name":"n\\u00e9","ok":true,"dev":"dev-1","at":"${RECEIVED_PLACEHOLDER}","raw":"{\\"v\\": {\\"id\\": 9223372036854775807, \\"n\\": 1.50e2}, \\"name\\": \\"n\\\\u00e9\\"}"}`,
    ])
    // The placeholder's offset is where the route writes the ledger's received_at.
    const joined = new TextDecoder().decode(new Uint8Array(rows.lines.flatMap((l) => [...l])))
    expect(rows.receivedAt.map((o) => joined.slice(o, o + RECEIVED_PLACEHOLDER.length))).toEqual([RECEIVED_PLACEHOLDER])
    expect(rows.accepted).toBe(1)
  })

  it('an empty request stores nothing and is ignored (OwnTracks may POST an empty body)', () => {
    const r = run('', { columns: { name: '/name' } })
    expect([r.lines, r.rows.ignored]).toEqual([[], 'the payload holds no message (no body and no query parameters, or [])'])
  })

  it('drops unmapped fields; an absent or null value leaves the column out', () => {
    expect(run('{"name": null, "extra": 1}', { columns: { name: '/name', n: '/missing' } }).lines).toEqual(['{}'])
  })

  it('epoch seconds and milliseconds → RFC 3339 exactly (timestamptz with Z, timestamp without); strings as sent', () => {
    const m: MappingInput = { columns: { at: { pointer: '/s', as: 'epoch_s' }, ts: { pointer: '/ms', as: 'epoch_ms' } } }
    expect(run('{"s": 1700000000.123456, "ms": 1700000000123}', m).lines).toEqual(['{"at":"2023-11-14T22:13:20.123456Z","ts":"2023-11-14T22:13:20.123000"}'])
    expect(run('{"s": -1.5, "ms": "2024-01-01T00:00:00"}', m).lines).toEqual(['{"at":"1969-12-31T23:59:58.500000Z","ts":"2024-01-01T00:00:00"}'])
    expect(run('{"s": 1.7e9}', m).lines).toEqual(['{"at":"2023-11-14T22:13:20.000000Z"}'])
  })

  it('types a form’s strings by their column: numbers and booleans for numeric and boolean columns, strings stay strings', () => {
    const m: MappingInput = { columns: { n: '/n', ok: '/ok', name: '/n', id: '/bad' }, point: { column: 'where', lon: '/lon', lat: '/lat' } }
    expect(run('n=12.5&ok=true&bad=1x&lon=13.4&lat=52.5', m, { type: 'application/x-www-form-urlencoded' }).lines).toEqual([
      '{"n":12.5,"ok":true,"name":"12.5","id":"1x","where":{"type":"Point","coordinates":[13.4,52.5]}}',
    ])
    // JSON keeps its own types: a string stays a string (the roller rejects it into the rejects file).
    expect(run('{"n": "12.5"}', m).lines).toEqual(['{"n":"12.5","name":"12.5"}'])
  })

  it('point from two numbers, shape from a GeoJSON geometry; a point with a coordinate missing is left out', () => {
    expect(run('{"lon": 1, "lat": 2}', { columns: {}, point: { column: 'where', lon: '/lon', lat: '/lat' } }).lines).toEqual([
      '{"where":{"type":"Point","coordinates":[1,2]}}',
    ])
    expect(run('{"lon": 1}', { columns: {}, point: { column: 'where', lon: '/lon', lat: '/lat' } }).lines).toEqual(['{}'])
    expect(run('{"g": {"type": "LineString", "coordinates": [[0, 0], [1, 1]]}}', { columns: {}, shape: { column: 'where', geojson: '/g' } }).lines).toEqual([
      '{"where":{"type": "LineString", "coordinates": [[0, 0], [1, 1]]}}',
    ])
  })

  it('device_require drops what does not match (one value or any of several); all dropped is ignored with the reason', () => {
    const r1 = run('{"_type": "lwt", "id": 1}', null, { require: { '/_type': 'location' } })
    expect(r1.rows.ignored).toBe('/_type is "lwt", not "location"')
    expect(r1.lines).toEqual([])
    expect(run('{"_type": "transition"}', null, { require: { '/_type': ['location', 'transition'] } }).rows.ignored).toBeNull()
    expect(run('{"port": 2}', null, { require: { '/port': 2 } }).rows.ignored).toBeNull()
    expect(run('{"port": "2"}', null, { require: { '/port': 2 } }).rows.ignored).toBe('/port is "2", not 2')
    expect(run('{}', null, { require: { '/_type': 'location' } }).rows.ignored).toBe('/_type is absent, not "location"')
    const some = run('[{"t": "b", "id": 2}, 42, {"t": "a", "id": 1}]', null, { require: { '/t': 'a' } })
    expect([some.rows.ignored, some.lines]).toEqual([null, ['42', '{"t": "a", "id": 1}']])
    // The answer's index is the element's place in what was sent, the dropped ones counted.
    expect(some.rows.reasons).toEqual([{ index: 1, reason: 'not_an_object' }])
  })

  it('device_strip removes members (nested ones and array elements too), before the mapping and with none', () => {
    expect(run('{"a": 1, "_http": {"h": 1}, "b": {"c": [1, 2, 3], "d": 4}}', null, { strip: ['/_http', '/b/c/1', '/b/d'] }).lines).toEqual([
      '{"a":1,"b":{"c":[1,3]}}',
    ])
    expect(run('{"name": "x", "secret": "s"}', { columns: { raw: { raw: true } } }, { strip: ['/secret'] }).lines).toEqual(['{"raw":"{\\"name\\":\\"x\\"}"}'])
    // A column pointing at a stripped member is null: the mapping sees the stripped message.
    expect(run('{"name": "x", "n": 1}', { columns: { name: '/name', n: '/n' } }, { strip: ['/name'] }).lines).toEqual(['{"n":1}'])
  })

  it('with no mapping, a payload is stored as sent, one line per object; non-objects in an array are not_an_object', () => {
    const r = run('[{"a":\n1}, 7, {"b": 2}]', null)
    expect(r.lines).toEqual(['{"a": 1}', '7', '{"b": 2}'])
    expect(r.rows.reasons).toEqual([{ index: 1, reason: 'not_an_object' }])
    expect([r.rows.accepted, r.rows.acceptedBytes]).toEqual([2, 9 + 9])
  })
})

describe('the checks when a mapping is set (400 mapping_invalid naming the column)', () => {
  const refusal = (mapping: MappingInput, meta = TABLE) => {
    try {
      compileDevice({ mapping, require: null, strip: null }, meta)
      return 'accepted'
    } catch (err) {
      const e = err as { status: number; code: string; details: { column?: string } }
      return `${e.status} ${e.code} ${e.details.column ?? ''}`.trim()
    }
  }
  it('each column exists and can hold its source', () => {
    expect(refusal({ columns: { nope: '/x' } })).toBe('400 mapping_invalid nope')
    expect(refusal({ columns: { id: { device: true } } })).toBe('400 mapping_invalid id')
    expect(refusal({ columns: { id: { const: 'x' } } })).toBe('400 mapping_invalid id')
    expect(refusal({ columns: { id: { const: '9223372036854775807' } } })).toBe('400 mapping_invalid id')
    expect(refusal({ columns: { id: { const: 7 }, ok: { const: false } } })).toBe('accepted')
    expect(refusal({ columns: { n: { pointer: '/t', as: 'epoch_s' } } })).toBe('400 mapping_invalid n')
    expect(refusal({ columns: { n: { received: true } } })).toBe('400 mapping_invalid n')
    expect(refusal({ columns: { id: { raw: true } } })).toBe('400 mapping_invalid id')
    expect(refusal({ columns: { name: 'no-slash' } })).toBe('400 mapping_invalid name')
    expect(refusal({ columns: {}, point: { column: 'name', lon: '/a', lat: '/b' } })).toBe('400 mapping_invalid name')
    expect(refusal({ columns: { where: '/w' }, point: { column: 'where', lon: '/a', lat: '/b' } })).toBe('400 mapping_invalid where')
    expect(refusal({ columns: { __ingest_ts: { received: true } } })).toBe('400 mapping_invalid __ingest_ts')
    expect(refusal({ preset: 'nope' })).toBe('400 mapping_invalid')
  })

  it('a required column the mapping does not fill is refused (every row would be rejected)', () => {
    const meta = tableFor({ id: 'long', name: 'string' })
    meta.schemas[0].fields[0].required = true
    expect(refusal({ columns: { name: '/n' } }, meta)).toBe('400 mapping_invalid id')
    expect(refusal({ columns: { name: '/n', id: '/id' } }, meta)).toBe('accepted')
  })

  it('a geometry(EPSG:4326) column takes a point; geometry with another CRS does not', () => {
    expect(refusal({ columns: {}, point: { column: 'g', lon: '/a', lat: '/b' } }, tableFor({ g: 'geometry(EPSG:4326)' }))).toBe('accepted')
    expect(refusal({ columns: {}, point: { column: 'g', lon: '/a', lat: '/b' } }, tableFor({ g: 'geometry(EPSG:3857)' }))).toBe('400 mapping_invalid g')
  })
})

describe('batch ids', () => {
  const owntracks = compileDevice({ mapping: { preset: 'owntracks' }, require: null, strip: null }, tableFor(PRESETS.owntracks.columns))
  const payload = (body: string) => readPayload(enc(body), undefined, new URLSearchParams())

  it('the header wins; then the preset’s natural id; then a digest of device, body and sorted query', async () => {
    const p = payload('{"_type":"location","tst":1700000000,"tid":"ph"}')
    expect(await deviceBatchId('mine-1', owntracks, p, 'd', 'f'.repeat(64))).toEqual({ id: 'mine-1', source: 'header' })
    expect(await deviceBatchId(undefined, owntracks, p, 'd', 'f'.repeat(64))).toEqual({ id: 'owntracks:d:1700000000:ph', source: 'natural' })
    // A message without its natural id's values: the digest, never one shared id.
    expect(await deviceBatchId(undefined, owntracks, payload('{"_type":"location"}'), 'd', 'f'.repeat(64))).toEqual({
      id: `dev:d:${'f'.repeat(32)}`,
      source: 'derived',
    })
    const long = await deviceBatchId(undefined, owntracks, payload(`{"tst":1,"tid":"${'x'.repeat(200)}"}`), 'd', 'f'.repeat(64))
    expect(long.id).toMatch(/^owntracks:d:h[0-9a-f]{32}$/)
  })

  it('the digest ignores parameter order, never the device, the body or a value', async () => {
    const d = (dev: string, body: string, q: string) => requestDigest(dev, enc(body), new URLSearchParams(q))
    expect(await d('a', '', 'x=1&y=2')).toBe(await d('a', '', 'y=2&x=1'))
    expect(await d('a', '', 'x=1')).not.toBe(await d('b', '', 'x=1'))
    expect(await d('a', '', 'x=1')).not.toBe(await d('a', '', 'x=2'))
    expect(await d('a', '{}', '')).not.toBe(await d('a', '{ }', ''))
  })
})
