import { gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { writeDataFile } from '../../../iceberg/parquet/data-file.ts'
import { ParquetReadError, readDataFile } from '../../../iceberg/parquet/read-rows.ts'
import { loadZstd } from '../../../iceberg/parquet/zstd.ts'
import type { NestedField, Row, Schema } from '../../../iceberg/spec/types.ts'
import { EVERY_TYPE_FIELDS, wkbPoint } from './every-type.ts'

const struct = (fields: NestedField[], id = 0): Schema => ({ type: 'struct', 'schema-id': id, fields })

// One column of every writable type (the write test's), and two more.
const schema: Schema = struct([
  ...EVERY_TYPE_FIELDS,
  { id: 32, name: 'geog', required: false, type: 'geography' },
  { id: 33, name: 'dec38r', required: true, type: 'decimal(38, 0)' },
])

const MAX = 9223372036854775807n
const MIN = -9223372036854775808n
const DEC38 = 10n ** 38n - 1n // 9999999999999999999999999999.9999999999
const uuid = Uint8Array.from([0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd, 0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7, 0x85, 0xe7])

const rows: Row[] = [
  {
    b: true,
    i: 1,
    l: MAX,
    f: 1.5,
    d: NaN,
    dec38: DEC38,
    dec9: 1230n,
    dec18: -5n,
    dt: 19000,
    t: 3_600_000_000n,
    ts: 1_700_000_000_000_000n,
    tstz: 1_700_000_000_123_456n,
    tsns: 1_700_000_000_123_456_789n,
    tstzns: -1n,
    s: 'abcdefghijklmnopqrstuvwxyz',
    u: uuid,
    fx: Uint8Array.of(1, 2, 3, 4),
    bin: Uint8Array.of(0, 255),
    geo: wkbPoint(1, 2),
    st: { a: 7, z: 'x' },
    tags: [1n, null, 3n],
    attrs: [
      ['k1', 1.25],
      ['k2', null],
    ],
    nothing: null,
    points: [{ x: 1 }, { x: 2 }],
    geog: wkbPoint(-122.5, 37.75),
    dec38r: DEC38,
  },
  {
    b: false,
    i: -2147483648,
    l: MIN,
    f: -0,
    d: 2.5,
    dec38: -DEC38,
    dec9: -99999999n,
    dec18: 999999999999999999n,
    dt: -1,
    t: 0n,
    ts: -1n,
    tstz: 0n,
    tsns: 0n,
    tstzns: 1n,
    s: '',
    u: new Uint8Array(16),
    fx: Uint8Array.of(0, 0, 0, 0),
    bin: new Uint8Array(0),
    geo: null,
    st: null,
    tags: [],
    attrs: [],
    nothing: null,
    points: null,
    geog: null,
    dec38r: -DEC38,
  },
  {
    b: null,
    i: 2147483647,
    l: null,
    f: null,
    d: -Infinity,
    dec38: null,
    dec9: null,
    dec18: null,
    dt: null,
    t: null,
    ts: null,
    tstz: MAX,
    tsns: null,
    tstzns: null,
    s: null,
    u: null,
    fx: null,
    bin: null,
    geo: null,
    st: { a: 0, z: null },
    tags: null,
    attrs: null,
    nothing: null,
    points: [],
    geog: null,
    dec38r: 0n,
  },
  {
    b: true,
    i: 0,
    l: -1n,
    f: Infinity,
    d: -0,
    dec38: 1n,
    dec9: 99999999n,
    dec18: -999999999999999999n,
    dt: 2932896,
    t: 86_399_999_999n,
    ts: MIN,
    tstz: MIN,
    tsns: MAX,
    tstzns: MIN,
    s: '\uFEFFbom, ü, 😀, \u0000 nul',
    u: Uint8Array.from({ length: 16 }, (_, i) => 255 - i),
    fx: Uint8Array.of(255, 254, 253, 252),
    bin: Uint8Array.of(0xef, 0xbb, 0xbf),
    geo: wkbPoint(-0, NaN),
    st: { a: -1, z: '' },
    tags: [null],
    attrs: [['', null]],
    nothing: null,
    points: [{ x: -5 }],
    geog: null,
    dec38r: -(10n ** 37n),
  },
  {
    b: null,
    i: 42,
    l: 0n,
    f: NaN,
    d: Number.MIN_VALUE,
    dec38: -1n,
    dec9: 0n,
    dec18: 0n,
    dt: 0,
    t: 1n,
    ts: 0n,
    tstz: 1n,
    tsns: MIN,
    tstzns: MAX,
    s: 'x'.repeat(300),
    u: uuid,
    fx: Uint8Array.of(0x80, 0, 0, 0),
    bin: Uint8Array.of(0x80),
    geo: wkbPoint(1e300, -1e-300),
    st: null,
    tags: [MIN, MAX, 0n],
    attrs: [
      ['a', NaN],
      ['b', -0],
      ['c', Infinity],
    ],
    nothing: null,
    points: [{ x: 2147483647 }, { x: -2147483648 }, { x: 0 }],
    geog: wkbPoint(0, 0),
    dec38r: 10n ** 37n,
  },
]

describe('readDataFile: every type', async () => {
  const zstd = await loadZstd()

  it('reads back exactly what writeDataFile wrote, over several row groups', async () => {
    for (const rowGroupSize of [1, 2, 3, 1000]) {
      const { bytes } = writeDataFile(schema, rows, { compression: zstd, rowGroupSize })
      const back = await readDataFile(bytes, schema)
      expect(back).toEqual(rows)
    }
  })

  it('keeps NaN, -0.0, ±Infinity and bigints at the int64 and decimal(38) bounds', async () => {
    const back = await readDataFile(writeDataFile(schema, rows, { rowGroupSize: 2 }).bytes, schema)
    expect(Object.is(back[1].f, -0)).toBe(true)
    expect(Object.is(back[3].d, -0)).toBe(true)
    expect(Object.is(back[0].f, 1.5)).toBe(true)
    expect(Number.isNaN(back[0].d)).toBe(true)
    expect(Number.isNaN(back[4].f)).toBe(true)
    expect(Object.is((back[4].attrs as Array<[string, number]>)[1][1], -0)).toBe(true)
    expect(back[3].f).toBe(Infinity)
    expect(back[4].d).toBe(Number.MIN_VALUE)
    expect(back.map((r) => r.l)).toEqual([MAX, MIN, null, -1n, 0n])
    expect(back.map((r) => r.dec38)).toEqual([DEC38, -DEC38, null, 1n, -1n])
    expect(back.map((r) => r.dec18)).toEqual([-5n, 999999999999999999n, null, -999999999999999999n, 0n])
    expect(back.map((r) => r.dec9)).toEqual([1230n, -99999999n, null, 99999999n, 0n])
    expect(back.map((r) => r.tsns)).toEqual([1_700_000_000_123_456_789n, 0n, null, MAX, MIN])
    for (const r of back) {
      for (const k of ['u', 'fx', 'bin', 'geo', 'geog']) expect(r[k] === null || r[k] instanceof Uint8Array).toBe(true)
    }
    expect(back[3].s).toBe('\uFEFFbom, ü, 😀, \u0000 nul') // the BOM stays
    expect(back[3].bin).toEqual(Uint8Array.of(0xef, 0xbb, 0xbf)) // binary is never decoded
  })

  it('reads every codec, and pages small enough to split columns', async () => {
    const gzip = { codec: 'gzip' as const, compress: (b: Uint8Array) => new Uint8Array(gzipSync(b)) }
    for (const compression of ['uncompressed', 'snappy', zstd, gzip] as const) {
      const { bytes } = writeDataFile(schema, rows, { compression, rowGroupSize: 3, pageSize: 16 })
      expect(await readDataFile(bytes, schema)).toEqual(rows)
    }
  })

  it('reads a subset of columns, in schema order, by top-level name', async () => {
    const { bytes } = writeDataFile(schema, rows, { rowGroupSize: 2 })
    const back = await readDataFile(bytes, schema, { columns: ['attrs', 'l', 'points', 'nothing'] })
    expect(back).toEqual(rows.map((r) => ({ l: r.l, attrs: r.attrs, nothing: null, points: r.points })))
    expect(Object.keys(back[0])).toEqual(['l', 'attrs', 'nothing', 'points'])
    await expect(readDataFile(bytes, schema, { columns: ['nope'] })).rejects.toThrow(ParquetReadError)
  })

  it('reads an empty file', async () => {
    expect(await readDataFile(writeDataFile(schema, []).bytes, schema)).toEqual([])
  })

  it('accepts a Uint8Array that is a view into a larger buffer', async () => {
    const { bytes } = writeDataFile(schema, rows)
    const big = new Uint8Array(bytes.length + 10)
    big.set(bytes, 7)
    expect(await readDataFile(big.subarray(7, 7 + bytes.length), schema)).toEqual(rows)
  })
})

// Nesting in every combination the writer supports, nulls at each level.
const nested: Schema = struct([
  { id: 1, name: 'id', required: true, type: 'long' },
  {
    id: 2,
    name: 'll',
    required: false,
    type: {
      type: 'list',
      'element-id': 3,
      'element-required': false,
      element: { type: 'list', 'element-id': 4, 'element-required': false, element: 'string' },
    },
  },
  {
    id: 5,
    name: 'ls',
    required: false,
    type: {
      type: 'list',
      'element-id': 6,
      'element-required': false,
      element: {
        type: 'struct',
        fields: [
          { id: 7, name: 'n', required: false, type: 'long' },
          { id: 8, name: 'vals', required: false, type: { type: 'list', 'element-id': 9, 'element-required': true, element: 'decimal(38, 10)' } },
          {
            id: 10,
            name: 'inner',
            required: false,
            type: {
              type: 'struct',
              fields: [{ id: 11, name: 'b', required: false, type: 'binary' }],
            },
          },
        ],
      },
    },
  },
  {
    id: 12,
    name: 'ms',
    required: false,
    type: {
      type: 'map',
      'key-id': 13,
      key: 'long',
      'value-id': 14,
      'value-required': false,
      value: {
        type: 'struct',
        fields: [
          { id: 15, name: 'q', required: true, type: 'timestamptz' },
          { id: 16, name: 'r', required: false, type: 'uuid' },
        ],
      },
    },
  },
  {
    id: 17,
    name: 'ml',
    required: true,
    type: {
      type: 'map',
      'key-id': 18,
      key: 'binary',
      'value-id': 19,
      'value-required': false,
      value: { type: 'list', 'element-id': 20, 'element-required': false, element: 'int' },
    },
  },
  {
    id: 21,
    name: 'mm',
    required: false,
    type: {
      type: 'map',
      'key-id': 22,
      key: 'string',
      'value-id': 23,
      'value-required': true,
      value: { type: 'map', 'key-id': 24, key: 'int', 'value-id': 25, 'value-required': false, value: 'double' },
    },
  },
  {
    id: 26,
    name: 'deep',
    required: false,
    type: {
      type: 'struct',
      fields: [
        {
          id: 27,
          name: 'mid',
          required: true,
          type: {
            type: 'struct',
            fields: [
              { id: 28, name: 'leaf', required: false, type: 'date' },
              { id: 29, name: 'arr', required: false, type: { type: 'list', 'element-id': 30, 'element-required': false, element: 'boolean' } },
            ],
          },
        },
        { id: 31, name: 'other', required: false, type: 'float' },
      ],
    },
  },
])

const key = (...b: number[]) => Uint8Array.from(b)
const nestedRows: Row[] = [
  {
    id: 0n,
    ll: [['a', null, 'b'], null, [], ['c']],
    ls: [{ n: 1n, vals: [DEC38, -DEC38], inner: { b: key(1) } }, null, { n: null, vals: [], inner: null }, { n: 2n, vals: null, inner: { b: null } }],
    ms: [
      [1n, { q: 5n, r: uuid }],
      [MIN, null],
      [MAX, { q: MIN, r: null }],
    ],
    ml: [
      [key(), [1, null, 2]],
      [key(0, 1), null],
      [key(255), []],
    ],
    mm: [
      [
        'x',
        [
          [1, 1.5],
          [2, null],
        ],
      ],
      ['y', []],
    ],
    deep: { mid: { leaf: 7, arr: [true, null, false] }, other: -0 },
  },
  { id: 1n, ll: null, ls: null, ms: null, ml: [], mm: null, deep: null },
  { id: 2n, ll: [], ls: [], ms: [], ml: [], mm: [], deep: { mid: { leaf: null, arr: null }, other: null } },
  { id: 3n, ll: [null], ls: [null], ms: [[0n, null]], ml: [[key(9), null]], mm: [['', []]], deep: { mid: { leaf: -3, arr: [] }, other: NaN } },
  { id: 4n, ll: [[null]], ls: [{ n: null, vals: null, inner: null }], ms: null, ml: [], mm: [['z', [[0, -Infinity]]]], deep: null },
]

describe('readDataFile: nesting', () => {
  it('tells null from empty at every level of lists, maps and structs', async () => {
    for (const rowGroupSize of [1, 2, 5]) {
      const { bytes } = writeDataFile(nested, nestedRows, { rowGroupSize, compression: 'uncompressed' })
      expect(await readDataFile(bytes, nested)).toEqual(nestedRows)
    }
  })

  it('keeps map entries as [key, value] pairs in file order, with non-string keys', async () => {
    const back = await readDataFile(writeDataFile(nested, nestedRows).bytes, nested, { columns: ['ms', 'ml'] })
    expect(back[0].ms).toEqual([
      [1n, { q: 5n, r: uuid }],
      [MIN, null],
      [MAX, { q: MIN, r: null }],
    ])
    expect((back[0].ml as Array<[Uint8Array, unknown]>).map(([k]) => k)).toEqual([key(), key(0, 1), key(255)])
  })

  it('reads many rows over many pages and row groups', async () => {
    const many: Row[] = Array.from({ length: 3000 }, (_, i) => ({
      id: BigInt(i) * 3_000_000_000_000n - MAX / 2n,
      ll: i % 7 === 0 ? null : Array.from({ length: i % 4 }, (_, j) => (j % 3 === 1 ? null : [`${i}-${j}`, null])),
      ls: i % 5 === 0 ? [] : [{ n: BigInt(i), vals: i % 2 ? [BigInt(i) * 10n ** 28n] : null, inner: i % 3 ? { b: key(i & 255) } : null }],
      ms: i % 3 === 0 ? null : [[BigInt(i), { q: BigInt(-i), r: null }]],
      ml: i % 2 ? [] : [[key(i & 255, i >> 8), [i, i ? -i : 0]]],
      mm: null,
      deep: i % 4 ? { mid: { leaf: i, arr: i % 8 ? [i % 3 === 0] : [] }, other: Math.fround(i / 7) } : null,
    }))
    const { bytes } = writeDataFile(nested, many, { rowGroupSize: 700, pageSize: 512 })
    expect(await readDataFile(bytes, nested)).toEqual(many)
  })
})

describe('readDataFile: schema evolution (columns matched by field id)', () => {
  const v1 = struct([
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'name', required: false, type: 'string' },
    { id: 3, name: 'small', required: false, type: 'int' },
    { id: 4, name: 'ratio', required: false, type: 'float' },
    { id: 5, name: 'price', required: false, type: 'decimal(9, 2)' },
    { id: 6, name: 'st', required: false, type: { type: 'struct', fields: [{ id: 7, name: 'a', required: false, type: 'int' }] } },
    { id: 8, name: 'gone', required: false, type: 'string' },
    {
      id: 9,
      name: 'pts',
      required: false,
      type: {
        type: 'list',
        'element-id': 10,
        'element-required': true,
        element: { type: 'struct', fields: [{ id: 11, name: 'x', required: false, type: 'int' }] },
      },
    },
  ])
  const v1Rows: Row[] = [
    { id: 1n, name: 'one', small: 2147483647, ratio: 0.1, price: -12345n, st: { a: 1 }, gone: 'g', pts: [{ x: 1 }, { x: null }] },
    { id: 2n, name: null, small: null, ratio: null, price: null, st: null, gone: null, pts: null },
    { id: 3n, name: 'three', small: -1, ratio: -0, price: 99999999n, st: { a: null }, gone: 'h', pts: [] },
  ]
  const file = writeDataFile(v1, v1Rows, { rowGroupSize: 2 }).bytes

  it('follows renames and reorders, widens int/float/decimal, skips dropped columns, nulls added ones', async () => {
    const v2 = struct(
      [
        {
          id: 6,
          name: 'renamed_struct',
          required: false,
          type: {
            type: 'struct',
            fields: [
              { id: 40, name: 'added_inner', required: false, type: 'string' },
              { id: 7, name: 'a2', required: false, type: 'int' },
            ],
          },
        },
        { id: 3, name: 'big', required: false, type: 'long' },
        { id: 4, name: 'ratio', required: false, type: 'double' },
        { id: 5, name: 'price', required: false, type: 'decimal(20, 2)' },
        { id: 1, name: 'key', required: true, type: 'long' },
        { id: 2, name: 'label', required: false, type: 'string' },
        { id: 41, name: 'added', required: false, type: 'timestamp' },
        {
          id: 9,
          name: 'pts',
          required: false,
          type: {
            type: 'list',
            'element-id': 10,
            'element-required': true,
            element: { type: 'struct', fields: [{ id: 42, name: 'y', required: false, type: 'int' }] },
          },
        },
      ],
      1,
    )
    const back = await readDataFile(file, v2)
    expect(back).toEqual([
      {
        renamed_struct: { added_inner: null, a2: 1 },
        big: 2147483647n,
        ratio: Math.fround(0.1),
        price: -12345n,
        key: 1n,
        label: 'one',
        added: null,
        pts: [{ y: null }, { y: null }],
      },
      { renamed_struct: null, big: null, ratio: null, price: null, key: 2n, label: null, added: null, pts: null },
      { renamed_struct: { added_inner: null, a2: null }, big: -1n, ratio: -0, price: 99999999n, key: 3n, label: 'three', added: null, pts: [] },
    ])
    expect(Object.is(back[2].ratio, -0)).toBe(true)
  })

  it('fills a field the file lacks with its initial-default', async () => {
    const v2 = struct(
      [
        { id: 1, name: 'id', required: true, type: 'long' },
        { id: 50, name: 'flag', required: true, type: 'boolean', 'initial-default': true },
        { id: 51, name: 'amount', required: false, type: 'decimal(38, 10)', 'initial-default': '12.5' },
        { id: 52, name: 'blob', required: false, type: 'binary', 'initial-default': '0aff' },
        {
          id: 6,
          name: 'st',
          required: false,
          type: { type: 'struct', fields: [{ id: 53, name: 'when', required: false, type: 'date', 'initial-default': '2020-01-02' }] },
        },
      ],
      1,
    )
    const back = await readDataFile(file, v2)
    expect(back).toEqual([
      { id: 1n, flag: true, amount: 125_000_000_000n, blob: Uint8Array.of(10, 255), st: { when: 18263 } },
      { id: 2n, flag: true, amount: 125_000_000_000n, blob: Uint8Array.of(10, 255), st: null },
      { id: 3n, flag: true, amount: 125_000_000_000n, blob: Uint8Array.of(10, 255), st: { when: 18263 } },
    ])
    expect(back[0].blob).not.toBe(back[1].blob) // each row has its own bytes
  })

  it('refuses a required field the file lacks without a default, and a column of another type', async () => {
    const missing = struct([{ id: 60, name: 'must', required: true, type: 'int' }])
    await expect(readDataFile(file, missing)).rejects.toThrow(/lacks required field must/)
    const wrong = struct([{ id: 2, name: 'name', required: false, type: 'long' }])
    await expect(readDataFile(file, wrong)).rejects.toThrow(/cannot be read as long/)
    const narrow = struct([{ id: 5, name: 'price', required: false, type: 'decimal(9, 3)' }])
    await expect(readDataFile(file, narrow)).rejects.toThrow(/scale/)
  })
})
