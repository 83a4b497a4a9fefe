// The roll's CPU fast paths (issue 29), each against the slow way it replaces: wide decimals from their
// digit bytes (decimal-digits.ts) against BigInt and twosComplement; the scanner's decimal columns of
// 16 to 38 digits against parseLossless + toRow on edge values; the converters' number shortcuts
// (int, long, float, double) against the same number's text; and the nested columns' Dremel levels
// (dremel.ts) against hyparquet-writer's encodeNestedValues.
import fc from 'fast-check'
import type { SchemaTree } from 'hyparquet'
import { encodeNestedValues } from 'hyparquet-writer/src/dremel.js'
import { schemaPathResolver } from 'hyparquet-writer/src/schema.js'
import { describe, expect, it } from 'vitest'
import { parseLine, Scanner } from '../../../iceberg/ingest/scan.ts'
import { twosComplement } from '../../../iceberg/parquet/builders.ts'
import { parquetSchema } from '../../../iceberg/parquet/data-file.ts'
import { decimalDigitsToFixed, decimalDigitsToInt64 } from '../../../iceberg/parquet/decimal-digits.ts'
import { shredValues } from '../../../iceberg/parquet/dremel.ts'
import { LosslessNumber } from '../../../iceberg/spec/json.ts'
import type { IcebergType, Row, Schema } from '../../../iceberg/spec/types.ts'
import { toRow, valueConverter } from '../../../iceberg/spec/values.ts'
import { columnsToRows } from './column-rows.ts'

const utf8 = new TextEncoder()

describe('decimal digits to two’s complement', () => {
  // "<sign><int>.<frac>" with `zeros` more to the scale, as the scanner hands them over
  function viaDigits(text: string, zeros: number, width: number): { fixed: Uint8Array; int64: bigint } {
    const negative = text.startsWith('-')
    const body = negative ? text.slice(1) : text
    const dot = body.indexOf('.')
    const buf = utf8.encode(body)
    const intEnd = dot < 0 ? buf.length : dot
    const fracStart = dot < 0 ? buf.length : dot + 1
    const fixed = new Uint8Array(width + 2).fill(0xaa) // a byte either side must stay as it was
    decimalDigitsToFixed(fixed, 1, width, buf, 0, intEnd, fracStart, buf.length, zeros, negative)
    expect([fixed[0], fixed[width + 1]]).toEqual([0xaa, 0xaa])
    const words = new Int32Array(4).fill(-1)
    decimalDigitsToInt64(words, 1, buf, 0, intEnd, fracStart, buf.length, zeros, negative)
    expect([words[0], words[3]]).toEqual([-1, -1])
    return { fixed: fixed.subarray(1, width + 1), int64: new BigInt64Array(words.buffer.slice(4, 12))[0] }
  }
  const unscaled = (text: string, zeros: number) => BigInt(text.replace('.', '') + '0'.repeat(zeros))

  it('edge values: the largest of decimal(38, s), -0, zeros, leading zeros, padding to the scale', () => {
    const cases: Array<[string, number]> = [
      ['99999999999999999999999999999999999999', 0],
      ['-99999999999999999999999999999999999999', 0],
      ['9999999999999999999999999999.9999999999', 0],
      ['-0.99999999999999999999999999999999999999', 0],
      ['-0', 0],
      ['-0.000', 5],
      ['0', 38],
      ['000000001.5', 9],
      ['-1', 37],
      ['170141183460469231731687303715884105727', 0], // 2^127 - 1: the top of 16 bytes
      ['-170141183460469231731687303715884105728', 0],
      ['9223372036854775807', 0],
      ['-9223372036854775808', 0],
      ['-922337203685477.5808', 0],
      ['1234567890123456', 2],
    ]
    for (const [text, zeros] of cases) {
      const v = unscaled(text, zeros)
      const got = viaDigits(text, zeros, 16)
      expect(Array.from(got.fixed), text).toEqual(Array.from(twosComplement(v, 16)))
      expect(got.int64, text).toBe(BigInt.asIntN(64, v))
    }
  })

  it('any value of up to 38 digits, any scale split and width that holds it', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 38n) + 1n, max: 10n ** 38n - 1n }), fc.nat(40), fc.nat(12), (v, split, zeros) => {
        const digits = (v < 0n ? -v : v).toString()
        if (digits.length + zeros > 38) return
        const at = Math.max(1, digits.length - Math.min(split, digits.length))
        const text = `${v < 0n ? '-' : ''}${digits.slice(0, at)}${at < digits.length ? `.${digits.slice(at)}` : ''}`
        const value = unscaled(text, zeros)
        let width = 1
        while (value >= 1n << BigInt(8 * width - 1) || value < -(1n << BigInt(8 * width - 1))) width++
        for (const w of new Set([width, 16])) expect(Array.from(viaDigits(text, zeros, w).fixed)).toEqual(Array.from(twosComplement(value, w)))
        if (value === BigInt.asIntN(64, value)) expect(viaDigits(text, zeros, 8).int64).toBe(value)
      }),
      { numRuns: 3000 },
    )
  })
})

describe('the scanner’s decimal columns ≡ parseLossless + toRow', () => {
  const TYPES = [
    'decimal(16, 0)',
    'decimal(18, 2)',
    'decimal(18, 18)',
    'decimal(19, 3)',
    'decimal(24, 6)',
    'decimal(28, 10)',
    'decimal(38, 0)',
    'decimal(38, 10)',
    'decimal(38, 38)',
  ]
  const schema: Schema = { type: 'struct', 'schema-id': 0, fields: TYPES.map((type, i) => ({ id: i + 1, name: `d${i}`, type, required: false })) }
  const scale = (t: string) => Number(/, (\d+)\)/.exec(t)![1])
  const precision = (t: string) => Number(/\((\d+),/.exec(t)![1])

  function check(lines: string[]): { rows: Row[]; rejected: number[] } {
    const body = utf8.encode(lines.join('\n'))
    const out = new Scanner(schema, { formatVersion: 2 }).scan(body)
    const rows: Row[] = []
    const rejected: number[] = []
    lines.forEach((line, i) => {
      const r = toRow(schema, parseLine(line), { formatVersion: 2 })
      if (r.ok) rows.push(Object.fromEntries(schema.fields.map((f) => [f.name, r.row[f.name] ?? null])))
      else rejected.push(i)
    })
    expect(out.rejected.map((r) => r.line)).toEqual(rejected)
    expect(columnsToRows(schema, out.columns)).toEqual(rows)
    return { rows, rejected }
  }

  it('edge values: max precision, -0, exponents, strings with escapes, leading zeros, nulls, too many digits', () => {
    const values = (t: string): string[] => {
      const p = precision(t)
      const s = scale(t)
      const nines = `${'9'.repeat(p - s) || '0'}${s ? `.${'9'.repeat(s)}` : ''}`
      return [
        nines,
        `-${nines}`,
        `"${nines}"`,
        `"-${nines}"`,
        `9${nines}`, // one digit too many: rejected
        '-0',
        `"-0${s ? `.${'0'.repeat(s)}` : ''}"`,
        '0',
        '1e1',
        '-2.5E-1',
        '"1e1"',
        '"\\u0031\\u0032"', // an escaped string: the converter's way
        '"007"',
        '1'.repeat(Math.min(p - s, 17)) || '0',
        `-${'1'.repeat(Math.min(p - s, 16)) || '0'}.5`,
        'null',
        '"12.3.4"',
        '"+5"',
        'true',
      ]
    }
    const lines: string[] = []
    const columns = TYPES.map(values)
    for (let k = 0; k < columns[0].length; k++) lines.push(`{${TYPES.map((_, i) => `"d${i}":${columns[i][k]}`).join(',')}}`)
    // one column at a time too, so a rejected neighbour hides nothing
    TYPES.forEach((t, i) => {
      for (const v of values(t)) lines.push(`{"d${i}":${v}}`)
    })
    const { rows, rejected } = check(lines)
    expect(rows.length).toBeGreaterThan(100)
    expect(rejected.length).toBeGreaterThan(20)
    // the largest decimal(38, 0), exactly
    expect(rows.some((r) => r.d6 === 10n ** 38n - 1n) && rows.some((r) => r.d6 === -(10n ** 38n) + 1n)).toBe(true)
  })

  it('random digits of every length up to and past the precision, as numbers and as strings', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(TYPES.length - 1), fc.nat(40), fc.nat(40), fc.boolean(), fc.boolean(), fc.bigInt({ min: 0n, max: 10n ** 40n })), {
          minLength: 1,
          maxLength: 30,
        }),
        (cells) => {
          const lines = cells.map(([col, intDigits, fracDigits, negative, quoted, seed]) => {
            const s = scale(TYPES[col])
            const digits = seed.toString().padStart(41, '7')
            const int = digits.slice(0, Math.min(intDigits, precision(TYPES[col]) - s + 1)) || '0'
            const frac = digits.slice(0, Math.min(fracDigits, s + 1))
            const text = `${negative ? '-' : ''}${int.replace(/^0+(?=\d)/, '')}${frac ? `.${frac}` : ''}`
            return `{"d${col}":${quoted ? `"${text}"` : text}}`
          })
          check(lines)
        },
      ),
      { numRuns: 400 },
    )
  })
})

describe('the converters’ number shortcuts ≡ the number’s text', () => {
  const numbers = fc.oneof(
    fc.integer(),
    fc.maxSafeInteger(),
    fc.double({ noNaN: true }),
    fc.constantFrom(0, -0, 2147483647, 2147483648, -2147483648, -2147483649, 2 ** 53 - 1, -(2 ** 53) + 1, 2 ** 53, 3.5e38, -3.5e38, 1e-50, -1e-50, 1e21, 0.1),
  )
  for (const type of ['int', 'long', 'float', 'double'] as const) {
    it(type, () => {
      const convert = valueConverter(type as IcebergType, 2)
      fc.assert(
        fc.property(numbers, (x) => {
          const got = convert(x)
          // the slow way: the number's digits, as numberText gives them
          const want = Number.isFinite(x) ? convert(new LosslessNumber(String(x))) : undefined
          expect(Object.is(got, want), `${String(got)} vs ${String(want)}`).toBe(true)
        }),
        { numRuns: 3000 },
      )
    })
  }
})

describe('nested columns’ Dremel levels ≡ hyparquet-writer’s encodeNestedValues', () => {
  let id = 0
  const field = (name: string, type: IcebergType, required = false) => ({ id: ++id, name, type, required })
  const schema: Schema = {
    type: 'struct',
    'schema-id': 0,
    fields: [
      field('st', { type: 'struct', fields: [field('a', 'int', true), field('b', 'string'), field('in', { type: 'struct', fields: [field('x', 'double')] })] }),
      field('li', { type: 'list', 'element-id': ++id, element: 'long', 'element-required': false }),
      field('lr', { type: 'list', 'element-id': ++id, element: 'int', 'element-required': true }, true),
      field('ls', {
        type: 'list',
        'element-id': ++id,
        element: {
          type: 'struct',
          fields: [field('k', 'string', true), field('v', { type: 'list', 'element-id': ++id, element: 'int', 'element-required': false })],
        },
        'element-required': false,
      }),
      field('m', { type: 'map', 'key-id': ++id, key: 'string', 'value-id': ++id, value: 'long', 'value-required': false }),
      field('ml', {
        type: 'map',
        'key-id': ++id,
        key: 'string',
        'value-id': ++id,
        value: { type: 'list', 'element-id': ++id, element: 'int', 'element-required': true },
        'value-required': true,
      }),
    ],
  }
  const maybe = <T>(a: fc.Arbitrary<T>) => fc.option(a, { freq: 4, nil: null })
  const ints = fc.array(fc.integer({ min: -5, max: 5 }), { maxLength: 4 })
  const pairs = <V>(v: fc.Arbitrary<V>) => fc.array(fc.tuple(fc.string({ maxLength: 3 }), v), { maxLength: 4 })
  const values: Record<string, fc.Arbitrary<unknown>> = {
    st: maybe(fc.record({ a: fc.integer(), b: maybe(fc.string()), in: maybe(fc.record({ x: maybe(fc.double()) })) })),
    li: maybe(fc.array(maybe(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })), { maxLength: 5 })),
    lr: ints,
    ls: maybe(fc.array(maybe(fc.record({ k: fc.string(), v: maybe(fc.array(maybe(fc.integer()), { maxLength: 3 })) })), { maxLength: 3 })),
    // a map as [key, value] pairs (the Value form), as {key, value} objects, as a Map or a plain object
    m: maybe(
      fc.oneof(
        pairs(maybe(fc.bigInt({ min: -5n, max: 5n }))),
        pairs(maybe(fc.bigInt({ min: -5n, max: 5n }))).map((ps) => ps.map(([key, value]) => ({ key, value }))),
        pairs(maybe(fc.bigInt({ min: -5n, max: 5n }))).map((ps) => new Map(ps)),
        pairs(maybe(fc.bigInt({ min: -5n, max: 5n }))).map((ps) => Object.fromEntries(ps)),
      ),
    ),
    ml: maybe(pairs(ints)),
  }
  const plan = parquetSchema(schema)
  const resolve = schemaPathResolver(plan.elements)
  const leaves = (path: SchemaTree[]): SchemaTree[][] => {
    const node = path[path.length - 1]
    return node.children.length ? node.children.flatMap((c) => leaves([...path, c])) : [path]
  }
  const outcome = (f: () => unknown) => {
    try {
      return f()
    } catch (err) {
      return { threw: (err as Error).message }
    }
  }

  for (const f of schema.fields) {
    it(f.name, () => {
      const paths = leaves(resolve([f.name]))
      fc.assert(
        fc.property(fc.array(values[f.name], { maxLength: 8 }), (rows) => {
          for (const path of paths) expect(outcome(() => shredValues(path, rows))).toEqual(outcome(() => encodeNestedValues(path, rows as never)))
        }),
        { numRuns: 500 },
      )
    })
  }

  it('refuses what the library refuses: a null where required, a list that is not an array, a bad map entry', () => {
    const bad: Record<string, unknown[]> = { lr: [null, [1], 5], st: [[1], 'x'], m: [[[1, 2, 3]], [null], 7, [{ key: 'a' }]], ls: [[{ k: null, v: null }]] }
    for (const [name, rows] of Object.entries(bad)) {
      for (const path of leaves(resolve([name]))) {
        for (const row of rows) {
          const want = outcome(() => encodeNestedValues(path, [row] as never))
          expect(
            outcome(() => shredValues(path, [row])),
            `${name} ${JSON.stringify(row)}`,
          ).toEqual(want)
        }
      }
    }
  })
})
