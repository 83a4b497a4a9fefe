// readColumns (iceberg/parquet/read-columns.ts) against readDataFile (parquet/read-rows.ts) on our files:
// every type (nested ones included), files of the row writer (hyparquet-writer: dictionary pages)
// and of ColumnFileWriter (PLAIN and DELTA_BINARY_PACKED v1 pages), every codec, many pages and row
// groups, nulls in every run shape, a column subset, a field the file lacks. Then the pieces a keyed
// roll builds on it: the BigInt-free INT64 delta decoder against hyparquet's, dropRows against a row
// filter, and KeySet against the Value keys. pyarrow's and PyIceberg's files:
// test/integration/parquet-read-columns-pyarrow.test.ts.
import { gzipSync } from 'node:zlib'
import { deltaBinaryUnpack } from 'hyparquet/src/delta.js'
import { describe, expect, it, vi } from 'vitest'
import { buildersFor, finishBatch } from '../../../iceberg/parquet/builders.ts'
import { writeDataFile } from '../../../iceberg/parquet/data-file.ts'
import { readDataFile } from '../../../iceberg/parquet/read-rows.ts'
import type { ColumnBatch } from '../../../iceberg/parquet/columns.ts'
import { dropRows } from '../../../iceberg/parquet/drop-rows.ts'
import { KeySet } from '../../../iceberg/parquet/key-set.ts'
import { readColumns } from '../../../iceberg/parquet/read-columns.ts'
import { deltaInt64 } from '../../../iceberg/parquet/read-delta.ts'
import { ColumnFileWriter } from '../../../iceberg/parquet/write.ts'
import type { NestedField, Row, Schema, Value } from '../../../iceberg/spec/types.ts'
import { loadZstd } from '../../../iceberg/parquet/zstd.ts'
import { keyOf } from '../../../roller/upsert.ts'
import { rowsToBatch } from './column-batch.ts'
import { columnsToRows } from './column-rows.ts'
import { EVERY_TYPE_FIELDS, wkbPoint } from './every-type.ts'
import { prng } from './prng.ts'

vi.setConfig({ testTimeout: 120_000 })

const MAX = 2n ** 63n - 1n
const MIN = -(2n ** 63n)

const { rnd, int32, int64 } = prng(7)
const bytesOf = (n: number) => Uint8Array.from({ length: n }, () => int32() & 0xff)
const WORDS = ['', 'a', 'ü', '😀', '\u0000', 'x'.repeat(100), '\uFEFFbom', 'héllo ✓ 𝄞']

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [...EVERY_TYPE_FIELDS, { id: 40, name: 'dec18b', required: false, type: 'decimal(18, 0)' }, { id: 41, name: 'k', required: true, type: 'long' }],
}

/** Row r: edge values in the first rows, nulls in runs and alone, repeats (for dictionaries). */
function row(r: number): Row {
  const nul = (rate: number) => rnd() < rate || (r % 97 >= 40 && r % 97 < 60)
  const opt = <T extends Value>(v: T, rate = 0.15): T | null => (nul(rate) ? null : v)
  return {
    b: opt(rnd() < 0.5),
    i: r < 2 ? [-2147483648, 2147483647][r] : int32(),
    l: opt(r < 3 ? [MIN, MAX, -1n][r] : int64()),
    f: opt([NaN, -0, Infinity, Math.fround(rnd())][r % 4]),
    d: opt([NaN, -0, -Infinity, rnd() * 1e12][r % 4]),
    dec38: opt(r % 5 === 0 ? 10n ** 38n - 1n : BigInt(int32()) * 10n ** 20n),
    dec9: opt(BigInt(int32() % 999999999)),
    dec18: opt(r % 7 === 0 ? 1n - 10n ** 18n : int64() % 10n ** 18n),
    dt: opt(int32() % 3_000_000),
    t: opt(BigInt(r) * 1_000_000n),
    ts: opt(1_700_000_000_000_000n + BigInt(r) * 1_000_003n),
    tstz: r % 11 === 0 ? MIN : int64(),
    tsns: opt(int64()),
    tstzns: opt(BigInt(r) - 5n),
    s: opt(WORDS[r % WORDS.length] + (r % 3 ? String(r % 50) : '')),
    u: opt(bytesOf(16)),
    fx: opt(bytesOf(4)),
    bin: opt(bytesOf(r % 70)),
    geo: opt(wkbPoint(r, -r), 0.5),
    st: opt({ a: r, z: opt('z' + r) }),
    tags: opt([int64(), null]),
    attrs: opt([['k' + (r % 4), opt(rnd())]]),
    nothing: null,
    points: opt([{ x: r }]),
    dec18b: opt(BigInt(r % 13) - 6n),
    k: BigInt(r % 500),
  }
}
const ROWS = Array.from({ length: 2500 }, (_, r) => row(r))

function columnWriterFile(rows: Row[], groups: number[], opts: { delta?: boolean; pageSize?: number; compression?: any } = {}): Uint8Array {
  const w = new ColumnFileWriter(schema, opts)
  let at = 0
  for (const n of groups) {
    w.writeRowGroup([rowsToBatch(schema, rows.slice(at, at + n))])
    at += n
  }
  return w.finish().bytes
}

async function expectSameAsRows(bytes: Uint8Array, s: Schema = schema, columns?: string[]): Promise<ColumnBatch[]> {
  const batches = await readColumns(bytes, s, { columns })
  const expected = await readDataFile(bytes, s, { columns })
  const fields = columns ? s.fields.filter((f) => columns.includes(f.name)) : s.fields
  const got = batches.flatMap((b) => columnsToRows({ ...s, fields }, b))
  expect(got).toEqual(expected)
  return batches
}

describe('readColumns: the same rows as readDataFile', async () => {
  const zstd = await loadZstd()
  const gzip = { codec: 'gzip' as const, compress: (b: Uint8Array) => new Uint8Array(gzipSync(b)) }

  it('row writer files (dictionary pages), every codec, row groups of 1 to all rows', async () => {
    for (const [compression, rowGroupSize] of [
      ['uncompressed', 1],
      ['snappy', 7],
      [zstd, 1000],
      [gzip, 5000],
    ] as const) {
      const rows = rowGroupSize === 1 ? ROWS.slice(0, 30) : ROWS
      const bytes = writeDataFile(schema, rows, { compression, rowGroupSize, pageSize: 512 }).bytes
      const batches = await expectSameAsRows(bytes)
      expect(batches.map((b) => b.rows)).toEqual(
        Array.from({ length: Math.ceil(rows.length / rowGroupSize) }, (_, i) => Math.min(rowGroupSize, rows.length - i * rowGroupSize)),
      )
    }
    const back = await readColumns(writeDataFile(schema, ROWS).bytes, schema)
    expect(back[0].columns.get(19)!.kind).toBe('values') // geometry stays Values
    expect(back[0].columns.get(3)!.kind).toBe('flat')
  })

  it('ColumnFileWriter files (PLAIN and delta pages), with the exact original rows', async () => {
    for (const [delta, compression] of [
      [true, zstd],
      [false, 'snappy'],
      [true, 'uncompressed'],
    ] as const) {
      const bytes = columnWriterFile(ROWS, [1, 999, 1500], { delta, compression, pageSize: 700 })
      await expectSameAsRows(bytes)
      expect((await readColumns(bytes, schema)).flatMap((b) => columnsToRows(schema, b))).toEqual(ROWS)
    }
  })

  it('a column subset; a field the file lacks reads as null (or its initial-default)', async () => {
    const bytes = columnWriterFile(ROWS, [2500])
    await expectSameAsRows(bytes, schema, ['k', 's', 'attrs'])
    const evolved: Schema = {
      ...schema,
      fields: [
        ...schema.fields,
        { id: 50, name: 'added', required: false, type: 'string' },
        { id: 51, name: 'dflt', required: false, type: 'long', 'initial-default': 42 } as NestedField,
      ],
    }
    const [b] = await expectSameAsRows(bytes, evolved, ['k', 'added', 'dflt'])
    expect(columnsToRows({ ...evolved, fields: evolved.fields.slice(-3) }, b)[0]).toEqual({ k: 0n, added: null, dflt: 42n })
  })

  it('an empty file, and a view into a larger buffer', async () => {
    expect(await readColumns(writeDataFile(schema, []).bytes, schema)).toEqual([])
    const bytes = columnWriterFile(ROWS.slice(0, 100), [100])
    const big = new Uint8Array(bytes.length + 9)
    big.set(bytes, 5)
    await expectSameAsRows(big.subarray(5, 5 + bytes.length))
  })
})

/** A DELTA_BINARY_PACKED INT64 page, the reference way (BigInt): blocks of 128, 4 miniblocks, any width up to 64. */
function encodeDelta64(values: bigint[]): Uint8Array {
  const out: number[] = []
  const varint = (v: bigint) => {
    do {
      const b = Number(v & 0x7fn)
      v >>= 7n
      out.push(v ? b | 0x80 : b)
    } while (v)
  }
  const zigzag = (v: bigint) => varint(BigInt.asUintN(64, (v << 1n) ^ (v >> 63n)))
  varint(128n)
  varint(4n)
  varint(BigInt(values.length))
  zigzag(values[0] ?? 0n)
  for (let b = 1; b < values.length; b += 128) {
    const deltas = values.slice(b, b + 128).map((v, i) => BigInt.asIntN(64, v - values[b + i - 1]))
    const min = deltas.reduce((a, d) => (d < a ? d : a))
    const res = deltas.map((d) => BigInt.asUintN(64, d - min))
    zigzag(min)
    const widths = [0, 1, 2, 3].map((m) => res.slice(m * 32, m * 32 + 32).reduce((w, r) => Math.max(w, r.toString(2).length * (r ? 1 : 0)), 0))
    out.push(...widths)
    for (let m = 0; m * 32 < res.length; m++) {
      let acc = 0n
      for (let j = 0; j < 32; j++) acc |= (res[m * 32 + j] ?? 0n) << BigInt(j * widths[m])
      for (let k = 0; k < widths[m] * 4; k++) out.push(Number((acc >> BigInt(8 * k)) & 0xffn))
    }
  }
  return Uint8Array.from(out)
}

describe('deltaInt64: the same values as hyparquet, without BigInt', () => {
  it('any width to 64, wrapping deltas, partial blocks, a single value', () => {
    const cases: bigint[][] = [
      [5n],
      Array.from({ length: 300 }, (_, i) => 1_700_000_000_000_000n + BigInt(i) * 1_000_000n),
      Array.from({ length: 257 }, (_, i) => (i % 2 ? MAX : MIN)),
      Array.from({ length: 1000 }, () => int64()),
      Array.from({ length: 129 }, (_, i) => BigInt(i % 7) * 2n ** 40n - 3n),
    ]
    for (const values of cases) {
      const page = encodeDelta64(values)
      const ours = new Int32Array(values.length * 2)
      deltaInt64({ view: new DataView(page.buffer), offset: 0 }, values.length, ours)
      const theirs = new BigInt64Array(values.length)
      deltaBinaryUnpack({ view: new DataView(page.buffer), offset: 0 }, values.length, theirs)
      expect([...new BigInt64Array(ours.buffer)]).toEqual(values)
      expect([...theirs]).toEqual(values)
    }
  })
})

describe('dropRows and KeySet', async () => {
  const bytes = columnWriterFile(ROWS, [1000, 1500], { pageSize: 900 })
  const rows = await readDataFile(bytes, schema)

  it('dropRows keeps exactly the other rows, every column, over row groups', async () => {
    for (const drop of [(r: number) => r % 3 === 0, (r: number) => r >= 10, () => false, () => true, (r: number) => r % 97 < 50]) {
      const mask = Uint8Array.from(rows, (_r, i) => (drop(i) ? 1 : 0))
      let from = 0
      const kept: Row[] = []
      for (const b of await readColumns(bytes, schema)) {
        const d = dropRows(b, mask, from)
        kept.push(...columnsToRows(schema, d))
        from += b.rows
      }
      expect(kept).toEqual(rows.filter((_r, i) => !drop(i)))
    }
  })

  const keyCases: Array<{ key: string[]; pick: (r: Row, i: number) => boolean }> = [
    { key: ['k'], pick: (_r, i) => i % 7 === 0 },
    { key: ['s'], pick: (_r, i) => i % 11 === 1 },
    { key: ['dt', 'u'], pick: (_r, i) => i % 5 === 2 },
    { key: ['b', 'dec38', 'tstz'], pick: (_r, i) => i % 3 === 0 },
    { key: ['dec9', 'dec18', 'fx'], pick: (_r, i) => i % 13 === 0 },
  ]
  for (const { key, pick } of keyCases) {
    it(`KeySet marks the rows with one of the keys (${key.join(', ')}), never one with a null part`, async () => {
      const fields = key.map((k) => schema.fields.find((f) => f.name === k)!)
      const chosen = rows.filter((r, i) => pick(r, i) && key.every((k) => r[k] !== null))
      // the keys as a roll has them: Values appended to builders
      const builders = buildersFor(fields, chosen.length)
      for (const r of chosen) fields.forEach((f, i) => builders[i].appendValue(r[f.name]))
      const set = new KeySet(
        fields.map((f) => f.id),
        finishBatch(fields, builders, chosen.length),
      )
      const wanted = new Set(chosen.map((r) => keyOf(r, key)))
      const mask = new Uint8Array(rows.length)
      let from = 0
      let marked = 0
      for (const b of await readColumns(bytes, schema, { columns: key })) {
        marked += set.mark(b, mask, from)
        from += b.rows
      }
      const expected = rows.map((r) => (key.every((k) => r[k] !== null) && wanted.has(keyOf(r, key)) ? 1 : 0))
      expect([...mask]).toEqual(expected)
      expect(marked).toBe(expected.filter(Boolean).length)
      expect(marked).toBeGreaterThan(0)
    })
  }
})
