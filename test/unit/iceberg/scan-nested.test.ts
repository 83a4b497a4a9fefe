// The scanner's nested columns read from the line's bytes (iceberg/ingest/read-nested.ts) against the
// reference (parseLossless + toRow): random values of struct, list and map columns, mostly of forms
// each column takes (-0, exponents, long digits, escapes, integer-like and repeated keys, nulls where
// required, write-defaults) and some anything at all: the same rows, -0 kept apart, and the same rejects.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { BatchUnreadable, parseLine, Scanner } from '../../../iceberg/ingest/scan.ts'
import type { IcebergType, Row, Schema } from '../../../iceberg/spec/types.ts'
import { toRow } from '../../../iceberg/spec/values.ts'
import { columnsToRows } from './column-rows.ts'

const utf8 = new TextEncoder()

describe('nested values read from the bytes (read-nested.ts) ≡ parseLossless + toRow', () => {
  let id = 0
  const field = (name: string, type: IcebergType, required = false, extra: object = {}) => ({ id: ++id, name, type, required, ...extra })
  const schema: Schema = {
    type: 'struct',
    'schema-id': 0,
    fields: [
      field('st', {
        type: 'struct',
        fields: [
          field('name', 'string'),
          field('fw', 'int', true),
          field('loc', { type: 'struct', fields: [field('lat', 'double'), field('lon', 'float')] }),
          field('d', 'decimal(9, 2)'),
          field('ts', 'timestamptz'),
          field('wd', 'int', false, { 'write-default': 7 }),
          field('ok', 'boolean'),
        ],
      }),
      field('tags', { type: 'list', 'element-id': ++id, element: 'string', 'element-required': true }),
      field('nums', { type: 'list', 'element-id': ++id, element: 'long', 'element-required': false }),
      field('attrs', { type: 'map', 'key-id': ++id, key: 'string', 'value-id': ++id, value: 'long', 'value-required': false }),
      field('series', {
        type: 'map',
        'key-id': ++id,
        key: 'string',
        'value-id': ++id,
        value: { type: 'list', 'element-id': ++id, element: 'double', 'element-required': false },
        'value-required': true,
      }),
      field('byInt', { type: 'map', 'key-id': ++id, key: 'int', 'value-id': ++id, value: 'string', 'value-required': false }),
    ],
  }
  const numbers = fc.constantFrom(
    '0',
    '-0',
    '-0.0',
    '1',
    '-7',
    '1.0',
    '2.5',
    '-12.34',
    '1e2',
    '1E-2',
    '0.1',
    '123456789012345',
    '1234567890123456',
    '2147483648',
    '-2147483648',
    '9007199254740993',
    '3.4028236e38',
    '1.7976931348623157e308',
  )
  const strings = fc.constantFrom('"a"', '""', '"é"', '"\\u00e9"', '"tab\\t"', '"dev-1"', '"2026-05-01T00:00:00Z"', '"2026-05-01T00:00:00"', '"12.5"', '"💡"')
  const keys = fc.constantFrom('"k"', '"k2"', '"1"', '"01"', '"__proto__"', '"é"', '"\\u006b"', '""', '"name"', '"fw"', '"loc"', '"lat"', '"zz"')
  const leaf = fc.oneof(numbers, strings, fc.constantFrom('null', 'true', 'false'))
  const json: fc.Arbitrary<string> = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, leaf, tie('array'), tie('object')),
    array: fc.array(tie('value'), { maxLength: 4 }).map((a) => `[${a.join(', ')}]`),
    object: fc.array(fc.tuple(keys, tie('value')), { maxLength: 4 }).map((m) => `{${m.map(([k, v]) => `${k}:${v}`).join(',')}}`),
  })).value as fc.Arbitrary<string>
  // mostly values each column takes (in every form: -0, exponents, escapes, long digits), some anything at all
  const ints = fc.constantFrom('0', '-0', '1', '-7', '2147483647', '-2147483648', '123456')
  const longs = fc.oneof(ints, fc.constantFrom('123456789012345', '1234567890123456', '9007199254740993', '-9223372036854775808'))
  const doubles = fc.oneof(ints, fc.constantFrom('-0.0', '2.5', '-12.34', '1e2', '1E-2', '0.1', '1234567890.12345', '1.7976931348623157e308', '4.9e-324'))
  const mostly = <T>(a: fc.Arbitrary<T>, b: fc.Arbitrary<T>) => fc.oneof({ arbitrary: a, weight: 12 }, { arbitrary: b, weight: 1 })
  const good: Record<string, fc.Arbitrary<string>> = {
    st: fc
      .record(
        {
          name: mostly(strings, numbers),
          fw: mostly(ints, numbers),
          loc: fc.record({ lat: mostly(doubles, strings), lon: mostly(ints, numbers) }, { requiredKeys: [] }).map(obj),
          d: fc.constantFrom('0', '-0', '2.5', '-12.34', '"12.5"', '1e2', '1234567.89'),
          ts: fc.constantFrom('"2026-05-01T00:00:00Z"', '"2026-05-01T00:00:00.123456+02:00"', 'null'),
          wd: mostly(ints, fc.constant('null')),
          ok: fc.constantFrom('true', 'false', 'null'),
        },
        { requiredKeys: ['fw'] },
      )
      .map(obj),
    tags: fc.array(strings, { maxLength: 4 }).map((a) => `[${a.join(',')}]`),
    nums: fc.array(mostly(fc.oneof(longs, fc.constant('null')), numbers), { maxLength: 4 }).map((a) => `[ ${a.join(' , ')} ]`),
    attrs: fc.uniqueArray(fc.tuple(keys, mostly(fc.oneof(longs, fc.constant('null')), numbers)), { maxLength: 4, selector: ([k]) => k }).map(pairsText),
    series: fc
      .uniqueArray(
        fc.tuple(
          keys,
          fc.array(fc.oneof(doubles, fc.constant('null')), { maxLength: 3 }).map((a) => `[${a.join(',')}]`),
        ),
        { maxLength: 3, selector: ([k]) => k },
      )
      .map(pairsText),
    byInt: fc.constantFrom('[{"key": 1, "value": "a"}]', '[]', 'null'),
  }
  function obj(r: Record<string, string | undefined>): string {
    return `{${Object.entries(r)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `"${k}": ${v}`)
      .join(', ')}}`
  }
  function pairsText(ps: Array<[string, string]>): string {
    return `{${ps.map(([k, v]) => `${k}: ${v}`).join(', ')}}`
  }
  const line = fc.record(Object.fromEntries(Object.entries(good).map(([k, g]) => [k, mostly(g, json)])), { requiredKeys: [] }).map(obj)

  it('random values of every nested column: the same rows and the same rejects', { timeout: 120_000 }, () => {
    let accepted = 0
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 20 }), (lines) => {
        const body = utf8.encode(lines.join('\n'))
        // a key twice with different values: lossless-json refuses the line, and the batch is unreadable
        const parses = lines.every((text) => {
          try {
            return parseLine(text) !== undefined
          } catch {
            return false
          }
        })
        if (!parses) {
          expect(() => new Scanner(schema, { formatVersion: 2 }).scan(body)).toThrow(BatchUnreadable)
          return
        }
        const out = new Scanner(schema, { formatVersion: 2 }).scan(body)
        const rows: Row[] = []
        const rejected: Array<{ line: number; rejects: unknown }> = []
        lines.forEach((text, i) => {
          const r = toRow(schema, parseLine(text), { formatVersion: 2 })
          if (r.ok) rows.push(Object.fromEntries(schema.fields.map((f) => [f.name, r.row[f.name] ?? null])))
          else rejected.push({ line: i, rejects: r.rejects })
        })
        expect(out.rejected.map((r) => ({ line: r.line, rejects: r.rejects }))).toEqual(rejected)
        const got = columnsToRows(schema, out.columns)
        expect(got).toEqual(rows)
        // -0 and 0 apart (toEqual does not tell them apart)
        expect(JSON.stringify(got, (_k, v) => (Object.is(v, -0) ? '-0' : typeof v === 'bigint' ? `${v}n` : v))).toBe(
          JSON.stringify(rows, (_k, v) => (Object.is(v, -0) ? '-0' : typeof v === 'bigint' ? `${v}n` : v)),
        )
        accepted += rows.length
      }),
      { numRuns: 800 },
    )
    expect(accepted).toBeGreaterThan(1000)
  })
})
