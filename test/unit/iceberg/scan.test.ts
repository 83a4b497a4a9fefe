// The ingest scanner against the reference (parseLossless + toRow, as the roller checked rows before):
// on generated batches of every type — valid, edge and bad values, odd whitespace, key order,
// unknown and duplicate members, escapes, blank lines, broken JSON — the scanner accepts exactly the
// rows toRow accepts, with exactly toRow's values, and rejects the others with toRow's rejects.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { BatchUnreadable, parseLine, Scanner } from '../../../iceberg/ingest/scan.ts'
import type { Row, Schema, Value } from '../../../iceberg/spec/types.ts'
import { toRow, type Reject } from '../../../iceberg/spec/values.ts'
import { columnsToRows } from './column-rows.ts'

const INGEST = '__ingest_ts'
const RECEIVED = 1_764_547_200_123_456n

function schemaFor(formatVersion: 2 | 3): Schema {
  let id = 0
  const f = (name: string, type: Schema['fields'][number]['type'], required = false, extra: object = {}) => ({ id: ++id, name, type, required, ...extra })
  const fields = [
    f('b', 'boolean'),
    f('i', 'int'),
    f('l', 'long'),
    f('req', 'long', true),
    f('fl', 'float'),
    f('d', 'double'),
    f('dec9', 'decimal(9, 2)'),
    f('dec18', 'decimal(18, 4)'),
    f('dec38', 'decimal(38, 10)'),
    f('dec0', 'decimal(3, 0)'),
    f('dt', 'date'),
    f('tm', 'time'),
    f('ts', 'timestamp'),
    f('tstz', 'timestamptz'),
    f('s', 'string'),
    f('u', 'uuid'),
    f('fx', 'fixed[3]'),
    f('bin', 'binary'),
    f('st', {
      type: 'struct',
      fields: [
        { id: 100, name: 'a', type: 'int', required: true },
        { id: 101, name: 'b', type: 'string', required: false },
      ],
    }),
    f('li', { type: 'list', 'element-id': 102, element: 'long', 'element-required': false }),
    f('m', { type: 'map', 'key-id': 103, key: 'string', 'value-id': 104, value: 'int', 'value-required': true }),
    f('wd', 'int', false, { 'write-default': 42 }),
    f('geo', 'geography'),
    f(INGEST, 'timestamptz'),
  ]
  if (formatVersion === 3) fields.push(f('tsns', 'timestamp_ns'), f('tstzns', 'timestamptz_ns'), f('g', 'geometry'), f('unk', 'unknown'))
  else fields.push(f('tsns', 'timestamp_ns'))
  return { type: 'struct', 'schema-id': 0, fields }
}

// ---- generated producer text ----

const pad2 = (n: number) => String(n).padStart(2, '0')
const numberTexts = fc.oneof(
  fc.integer().map(String),
  fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((x) => JSON.stringify(x)),
  fc.constantFrom(
    '0',
    '-0',
    '7.0',
    '7e0',
    '7E+2',
    '1.5',
    '-12.34',
    '0.001',
    '12.3456',
    '123.45',
    '1e400',
    '-1e-400',
    '2147483647',
    '2147483648',
    '-2147483648',
    '-2147483649',
    '9223372036854775807',
    '9223372036854775808',
    '-9223372036854775808',
    '-9223372036854775809',
    '999999999999999',
    '1000000000000000',
    '12345678901234567890123',
    '9999999.99',
    '10000000.00',
    '0.00',
    '3.4028235e38',
    '3.5e38',
  ),
)
const timestampTexts = fc
  .record({
    y: fc.integer({ min: 0, max: 9999 }),
    mo: fc.integer({ min: 0, max: 13 }),
    d: fc.integer({ min: 0, max: 32 }),
    h: fc.integer({ min: 0, max: 24 }),
    mi: fc.integer({ min: 0, max: 60 }),
    s: fc.integer({ min: 0, max: 60 }),
    sep: fc.constantFrom('T', 't', ' ', 'x'),
    frac: fc.constantFrom('', '.1', '.123456', '.1234567', '.1234560', '.123456789', '.1234567890', '.1234567891', '.'),
    zone: fc.constantFrom('', 'Z', 'z', '+02:00', '-05:30', '+24:00', '+0200', '-00:00'),
  })
  .map((t) => `"${String(t.y).padStart(4, '0')}-${pad2(t.mo)}-${pad2(t.d)}${t.sep}${pad2(t.h)}:${pad2(t.mi)}:${pad2(t.s)}${t.frac}${t.zone}"`)
const dateTexts = fc
  .record({ y: fc.integer({ min: 0, max: 9999 }), mo: fc.integer({ min: 0, max: 13 }), d: fc.integer({ min: 0, max: 32 }) })
  .map((t) => `"${String(t.y).padStart(4, '0')}-${pad2(t.mo)}-${pad2(t.d)}"`)
const stringTexts = fc.oneof(
  fc.string({ unit: 'grapheme' }).map((s) => JSON.stringify(s)),
  fc.string({ unit: 'binary' }).map((s) => JSON.stringify(s)),
  fc.constantFrom(
    '""',
    '"plain"',
    '"ünïcödé ✓"',
    '"tab\\there"',
    '"quote\\"d"',
    '"\\u00e9"',
    '"\\ud800"',
    '"\\ud83d\\ude00"',
    '"\\/"',
    '"bad\\x"',
    '"12:30:00"',
    '"12:30:00.123456"',
    '"24:00:00"',
    '"550e8400-e29b-41d4-a716-446655440000"',
    '"550E8400-E29B-41D4-A716-446655440000"',
    '"550e8400e29b41d4a716446655440000"',
    '"AAEC"',
    '"AAECAw=="',
    '"AAECAw"',
    '"AAE="',
    '"!!"',
    '"12.30"',
    '"+1.5"',
    '".5"',
    '"5."',
    '"1e3"',
    '"NaN"',
    '"Infinity"',
    '"-Infinity"',
    '"2026-02-29"',
    '"2024-02-29"',
    '"2026-11-30T12:00:00Z"',
    '"2026-11-30T12:00:00"',
  ),
)
// Times and uuids as the fast readers see them, edges included (24:00, a 7th fraction digit, hex case, a misplaced hyphen).
const timeTexts = fc
  .record({
    h: fc.integer({ min: 0, max: 25 }),
    mi: fc.integer({ min: 0, max: 60 }),
    s: fc.integer({ min: 0, max: 61 }),
    frac: fc.constantFrom('', '.', '.5', '.123456', '.1234560', '.1234567', '.000000000', '.12a', 'Z'),
  })
  .map((t) => `"${pad2(t.h)}:${pad2(t.mi)}:${pad2(t.s)}${t.frac}"`)
/** Good values nine times in ten, the rest from `edges` (good or bad): a good line stays mostly good. */
const mostly = (good: fc.Arbitrary<string>, edges: fc.Arbitrary<string>, weight = 9) => fc.oneof({ weight, arbitrary: good }, { weight: 1, arbitrary: edges })
const validTime = fc
  .record({
    h: fc.integer({ min: 0, max: 23 }),
    mi: fc.integer({ min: 0, max: 59 }),
    s: fc.integer({ min: 0, max: 59 }),
    frac: fc.constantFrom('', '.5', '.123456', '.000001'),
  })
  .map((t) => `"${pad2(t.h)}:${pad2(t.mi)}:${pad2(t.s)}${t.frac}"`)
/** A timestamptz text without its zone: a timestamp's. */
const unzoned = (t: string) => t.replace(/([Zz]|[+-]\d\d:\d\d)"$/, '"')
const uuidTexts = fc.tuple(fc.uint8Array({ minLength: 16, maxLength: 16 }), fc.constantFrom('lower', 'upper', 'shifted', 'bad')).map(([bytes, form]) => {
  const h = Buffer.from(bytes).toString('hex')
  let u = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
  if (form === 'upper') u = u.toUpperCase()
  if (form === 'shifted') u = `${h.slice(0, 9)}-${h.slice(9, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
  if (form === 'bad') u = `${u.slice(0, 35)}g`
  return `"${u}"`
})
const nestedTexts = fc.oneof(
  fc.json({ maxDepth: 2 }),
  fc.constantFrom(
    '{"a": 1, "b": "x"}',
    '{"a": 1}',
    '{"b": "x"}',
    '{"a": 1, "c": 2}',
    '[1, 2, null]',
    '[1, "x"]',
    '[]',
    '{"k": 1, "j": 2}',
    '{"k": null}',
    '{"type": "Point", "coordinates": [1.5, 2.5]}',
    '{"type": "Point", "coordinates": [1]}',
    '{"a": 1, "a": 1}',
    '{"a": 1, "a": 2}',
  ),
)
const anyValue = fc.oneof(
  { weight: 3, arbitrary: numberTexts },
  { weight: 1, arbitrary: numberTexts.map((n) => `"${n}"`) },
  { weight: 3, arbitrary: stringTexts },
  { weight: 1, arbitrary: timeTexts },
  { weight: 1, arbitrary: uuidTexts },
  { weight: 2, arbitrary: timestampTexts },
  { weight: 1, arbitrary: dateTexts },
  { weight: 1, arbitrary: nestedTexts },
  { weight: 2, arbitrary: fc.constantFrom('true', 'false', 'null') },
)
const ws = fc.constantFrom('', '', '', ' ', '  ', '\t', '\r', ' \t ')
const names = schemaFor(3).fields.map((f) => f.name)

/** One line: members in any order, sometimes an unknown or duplicate one, odd whitespace, rarely broken. */
const lineText = fc
  .record({
    members: fc.shuffledSubarray(names).chain((chosen) => fc.tuple(...chosen.map((n) => fc.tuple(fc.constant(n), anyValue, ws, ws)))),
    extra: fc.option(fc.tuple(fc.constantFrom('zzz', 'b', 's', 'req', 'st', INGEST, 'B'), anyValue), { freq: 8 }),
    lead: ws,
    trail: ws,
    shape: fc.constantFrom(
      'object',
      'object',
      'object',
      'object',
      'object',
      'object',
      'object',
      'object',
      'object',
      'array',
      'number',
      'blank',
      'broken',
      'bom',
    ),
  })
  .map(({ members, extra, lead, trail, shape }) => {
    const parts = members.map(([n, v, a, b]) => `${a}${JSON.stringify(n)}${b}:${a}${v}${b}`)
    if (extra) parts.splice(Math.floor(parts.length / 2), 0, `${JSON.stringify(extra[0])}:${extra[1]}`)
    const obj = `{${parts.join(',')}}`
    switch (shape) {
      case 'array':
        return `${lead}[${obj}]${trail}`
      case 'number':
        return '42'
      case 'blank':
        return lead + trail
      case 'broken':
        return obj.slice(0, Math.max(1, obj.length - 2))
      case 'bom':
        return `\uFEFF${obj}`
      default:
        return `${lead}${obj}${trail}`
    }
  })

const validTimestamp = fc
  .record({
    ms: fc.integer({ min: -62_135_596_800_000, max: 253_402_300_799_000 }),
    frac: fc.constantFrom('', '.5', '.123456', '.120', '.123456000'),
    zone: fc.constantFrom('Z', '+01:00', '-09:30', 'z'),
    sep: fc.constantFrom('T', ' '),
  })
  .map(({ ms, frac, zone, sep }) => `"${new Date(ms).toISOString().slice(0, 19).replace('T', sep)}${frac}${zone}"`)
const validDate = fc.integer({ min: -719_162, max: 2_932_896 }).map((d) => `"${new Date(d * 86_400_000).toISOString().slice(0, 10)}"`)

/** Rows that fit more often: every member from its own kind of value. */
const goodLine = fc
  .record(
    {
      b: fc.boolean().map(String),
      i: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }).map(String),
      l: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String),
      req: fc.integer().map(String),
      d: fc.double({ noNaN: true, noDefaultInfinity: true }).map((x) => JSON.stringify(x)),
      fl: fc.float({ noNaN: true, noDefaultInfinity: true }).map((x) => JSON.stringify(x)),
      dec18: fc
        .bigInt({ min: -(10n ** 14n), max: 10n ** 14n })
        .map((v) => `${v / 10000n}.${String((v < 0n ? -v : v) % 10000n).padStart(4, '0')}`)
        .map((t) => t.replace(/^0\./, '0.'))
        .chain((t) => fc.constantFrom(t, `"${t}"`)),
      // A decimal sent as a string, a time, a uuid, a timestamp without a zone: read by their own fast readers.
      dec38: mostly(
        fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).chain((v) => {
          const t = `${v / 10n ** 10n}.${String((v < 0n ? -v : v) % 10n ** 10n).padStart(10, '0')}`
          return fc.constantFrom(t, `"${t}"`)
        }),
        numberTexts.map((n) => `"${n}"`),
      ),
      // Nested values, read by read-json.ts for their converter: good ones, and the odd ones (keys twice, escapes, -0).
      st: mostly(
        fc.record({ a: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), b: fc.option(fc.string(), { nil: undefined }) }).map((v) => JSON.stringify(v)),
        fc.oneof(nestedTexts, fc.constantFrom('{"a": 1, "a": 2}', '{"a": 1, "a": 1}', '{"a": -0}', '{"\\u0061": 1}', '{"a": 1, "b": "\\ud800"}')),
        19,
      ),
      li: mostly(
        fc.array(fc.oneof(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String), fc.constant('null'))).map((a) => `[${a.join(', ')}]`),
        nestedTexts,
        19,
      ),
      m: mostly(
        fc.dictionary(fc.string(), fc.integer()).map((d) => JSON.stringify(d)),
        fc.oneof(nestedTexts, fc.constantFrom('{"k": 1, "k": 2}', '{"__proto__": 1}', '{"k": 1.0}', '{"k": -0}')),
        19,
      ),
      tm: mostly(validTime, timeTexts),
      u: mostly(
        uuidTexts.filter((u) => /^"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"$/i.test(u)),
        uuidTexts,
      ),
      ts: mostly(validTimestamp.map(unzoned), timestampTexts),
      dec9: fc.integer({ min: -9_999_999, max: 9_999_999 }).map((v) => (v / 100).toFixed(2)),
      tstz: fc.oneof(validTimestamp, validTimestamp, timestampTexts),
      dt: fc.oneof(validDate, dateTexts),
      s: stringTexts,
    },
    { requiredKeys: ['req'] },
  )
  .map(
    (r) =>
      `{${Object.entries(r)
        .map(([k, v]) => `"${k}": ${v}`)
        .join(', ')}}`,
  )

/** Mostly none; sometimes a byte or two replaced (positions as fractions of the body's length). */
const mutations = fc.oneof(
  { weight: 6, arbitrary: fc.constant([] as Array<[number, number]>) },
  {
    weight: 1,
    arbitrary: fc.array(
      fc.tuple(
        fc.double({ min: 0, max: 0.999, noNaN: true }),
        fc.constantFrom(0x80, 0xbf, 0xc0, 0xc3, 0xe2, 0xed, 0xf0, 0xf4, 0xf8, 0xff, 0x00, 0x22, 0x5c, 0x7d, 0x0a),
      ),
      { minLength: 1, maxLength: 2 },
    ),
  },
)

// ---- the reference: what the roller did before the scanner ----

type Reference =
  | { unreadable: string; lines: number | null }
  | { rows: Row[]; rejected: Array<{ line: number; text: string; rejects: Reject[] }>; lines: number }

function reference(body: Uint8Array, schema: Schema, formatVersion: 2 | 3): Reference {
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(body)
  } catch {
    return { unreadable: 'the batch is not UTF-8 text', lines: null }
  }
  const lines = text.split('\n').filter((l) => l.trim() !== '')
  const parsed: unknown[] = []
  try {
    // parseLine: parseLossless, except that a non-object line may hold repeated members (not_an_object anyway)
    for (const line of lines) parsed.push(parseLine(line))
  } catch (err) {
    return { unreadable: (err as Error).message, lines: lines.length }
  }
  const rows: Row[] = []
  const rejected: Array<{ line: number; text: string; rejects: Reject[] }> = []
  parsed.forEach((value, index) => {
    if (value && typeof value === 'object' && !Array.isArray(value)) delete (value as Record<string, unknown>)[INGEST]
    const r = toRow(schema, value, { formatVersion })
    if (r.ok) rows.push({ ...r.row, [INGEST]: RECEIVED })
    else rejected.push({ line: index, text: lines[index], rejects: r.rejects })
  })
  return { rows, rejected, lines: lines.length }
}

const seen = { lines: 0, slow: 0 }

function scanned(body: Uint8Array, schema: Schema, formatVersion: 2 | 3): Reference {
  const scanner = new Scanner(schema, { formatVersion, constants: [INGEST] })
  try {
    const out = scanner.scan(body, { [INGEST]: RECEIVED })
    seen.lines += out.lines
    seen.slow += out.slowLines
    return { rows: columnsToRows(schema, out.columns), rejected: out.rejected, lines: out.lines }
  } catch (err) {
    if (!(err instanceof BatchUnreadable)) throw err
    return { unreadable: err.message, lines: err.lines }
  }
}

/** Row values with every field present (toRow fills absent ones with null). */
function normalise(r: Reference, schema: Schema): Reference {
  if ('unreadable' in r) return r
  const rows = r.rows.map((row) => Object.fromEntries(schema.fields.map((f) => [f.name, (row[f.name] ?? null) as Value])))
  return { ...r, rows }
}

const utf8 = new TextEncoder()

describe('the ingest scanner ≡ parseLossless + toRow', () => {
  for (const formatVersion of [2, 3] as const) {
    const schema = schemaFor(formatVersion)
    it(`every type, good, edge and bad values (v${formatVersion})`, { timeout: 60_000 }, () => {
      seen.lines = seen.slow = 0
      fc.assert(
        fc.property(
          fc.array(fc.oneof(lineText, goodLine, goodLine, goodLine), { minLength: 1, maxLength: 12 }),
          fc.constantFrom('\n', '\r\n', '\n\n'),
          mutations,
          (lines, nl, mutate) => {
            const body = utf8.encode(lines.join(nl) + (lines.length % 2 ? nl : ''))
            // a few bytes changed at random: invalid UTF-8 and broken tokens anywhere
            for (const [at, byte] of mutate) body[Math.floor(at * body.length)] = byte
            expect(normalise(scanned(body, schema, formatVersion), schema)).toEqual(normalise(reference(body, schema, formatVersion), schema))
          },
        ),
        { numRuns: Number(process.env.SCAN_RUNS ?? 2000) },
      )
      // the comparison means something only if the fast path took a good share of the rows
      console.log(`fast path: ${seen.lines - seen.slow} of ${seen.lines} lines`)
      expect(seen.slow / seen.lines).toBeLessThan(0.75)
      expect(seen.lines - seen.slow).toBeGreaterThan(1000)
    })
  }

  // fast-check's counterexample (seed -1139903321): a timestamptz_ns of year 0 wrapped past 64 bits
  // on the fast path; both paths now refuse it, and keep the edges of the range.
  it('refuses a nanosecond timestamp past 64 bits on both paths, and keeps the range’s edges', () => {
    const schema = schemaFor(3)
    const body = utf8.encode(
      [
        '{"req":0,"tstzns":"0000-01-01T00:00:00Z"}',
        '{"req":0,"tstzns":"2262-04-11T23:47:16.854775808Z"}',
        '{"req":0,"tstzns":"2262-04-11T23:47:16.854775807Z"}',
        '{"req":0,"tstzns":"1677-09-21T00:12:43.145224192Z"}',
      ].join('\n'),
    )
    const got = normalise(scanned(body, schema, 3), schema)
    expect(got).toEqual(normalise(reference(body, schema, 3), schema))
    if ('unreadable' in got) throw new Error(got.unreadable)
    expect(got.rejected.map((r) => r.line)).toEqual([0, 1])
    expect(got.rows.map((r) => r.tstzns)).toEqual([9223372036854775807n, -9223372036854775808n])
  })

  it('accepts well-formed rows on the fast path with the exact values', () => {
    const schema = schemaFor(3)
    const body = utf8.encode(
      [
        '{"req": 9223372036854775807, "l": -9223372036854775808, "i": -2147483648, "dec9": -99999.99, "dec18": 12345678901234.5678, "dec38": 9999999999999999999999999999.9999999999,',
        ' "tstz": "2026-11-30T23:59:59.999999+01:00", "ts": "1970-01-01 00:00:00", "dt": "2024-02-29", "s": "ünï \\"q\\"", "d": -0, "fl": 0.1, "b": false}',
      ].join('') + '\n{"req": 1}\n',
    )
    const r = scanned(body, schema, 3)
    expect(r).toMatchObject({ lines: 2, rejected: [] })
    const rows = (r as { rows: Row[] }).rows
    expect(rows[0]).toMatchObject({
      req: 9223372036854775807n,
      l: -9223372036854775808n,
      i: -2147483648,
      dec9: -9999999n,
      dec18: 123456789012345678n,
      dec38: 99999999999999999999999999999999999999n,
      tstz: 1_796_079_599_999_999n,
      ts: 0n,
      dt: 19782,
      s: 'ünï "q"',
      fl: Math.fround(0.1),
      b: false,
      wd: 42,
      [INGEST]: RECEIVED,
    })
    expect(Object.is(rows[0].d, -0)).toBe(true)
    expect(rows[1]).toMatchObject({ req: 1n, l: null, s: null, wd: 42 })
  })

  it('fixed-width values of 9 to 15 bytes (decimal(19..37), fixed[n]) in batches of any row count', () => {
    const field = (id: number, name: string, type: string) => ({ id, name, type, required: false })
    const schema: Schema = {
      type: 'struct',
      'schema-id': 0,
      fields: [field(1, 'd24', 'decimal(24, 4)'), field(2, 'd30', 'decimal(30, 8)'), field(3, 'fx11', 'fixed[11]'), field(4, INGEST, 'timestamptz')],
    }
    for (const n of [1, 3, 5]) {
      const body = utf8.encode(
        Array.from({ length: n }, (_, i) => `{"d24": "-${i}12345678901234567.1234", "d30": ${i}.5, "fx11": "aGVsbG8gd29ybGQ="}`).join('\n'),
      )
      expect(scanned(body, schema, 2)).toEqual(reference(body, schema, 2))
      expect(scanned(body, schema, 2)).toMatchObject({ lines: n, rejected: [] })
    }
  })

  it('a rejected row leaves nothing in the columns', () => {
    const schema = schemaFor(2)
    const body = utf8.encode('{"req": 1, "s": "a"}\n{"s": "b", "l": 5}\n{"req": 2, "s": "c", "zzz": 1}\n{"req": 3}\n')
    const scanner = new Scanner(schema, { formatVersion: 2, constants: [INGEST] })
    const out = scanner.scan(body, { [INGEST]: RECEIVED })
    expect(out.columns.rows).toBe(2)
    expect(out.rejected.map((r) => [r.line, r.rejects.map((x) => x.reason)])).toEqual([
      [1, ['missing_required']],
      [2, ['unknown_field']],
    ])
    const s = out.columns.columns.get(schema.fields.find((f) => f.name === 's')!.id)!
    expect(s.kind === 'flat' && s.count).toBe(1)
    expect(columnsToRows(schema, out.columns).map((r) => [r.req, r.s, r.l])).toEqual([
      [1n, 'a', null],
      [3n, null, null],
    ])
  })

  it('a batch that is not UTF-8, or has a line that is not JSON, is unreadable as a whole', () => {
    const schema = schemaFor(2)
    const scanner = new Scanner(schema, { formatVersion: 2 })
    expect(() => scanner.scan(new Uint8Array([0x7b, 0xff, 0x7d]))).toThrow(BatchUnreadable)
    const body = utf8.encode('{"req": 1}\n{"req": 2,}\n\n{"req": 3}\n')
    expect(scanned(body, schema, 2)).toEqual(reference(body, schema, 2))
    expect(scanned(body, schema, 2)).toMatchObject({ lines: 3 })
  })
})
