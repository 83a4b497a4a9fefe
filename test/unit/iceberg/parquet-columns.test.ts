// ColumnFileWriter (iceberg/parquet/write.ts): Parquet from column buffers. Every flat type, required
// and optional, over several row groups and pages, read back exactly by our reader, with the same
// metrics (and the same footer statistics) as the row writer writeDataFile gives on the same rows;
// nested and geometry columns mixed in; several batches per row group.
import { gzipSync } from 'node:zlib'
import { parquetMetadata, type FileMetaData } from 'hyparquet'
import { describe, expect, it, vi } from 'vitest'
import type { DataFileMetrics } from '../../../iceberg/parquet/metrics.ts'
import { writeDataFile } from '../../../iceberg/parquet/data-file.ts'
import { readDataFile } from '../../../iceberg/parquet/read-rows.ts'
import { ColumnDataError, ColumnFileWriter } from '../../../iceberg/parquet/write.ts'
import type { NestedField, Row, Schema, Value } from '../../../iceberg/spec/types.ts'
import { loadZstd } from '../../../iceberg/parquet/zstd.ts'
import { rowsToBatch, sliceRows, type BatchOptions } from './column-batch.ts'
import { EVERY_TYPE_FIELDS, wkbPoint } from './every-type.ts'
import { prng } from './prng.ts'

// the row writer these tests compare with takes seconds on a busy machine
vi.setConfig({ testTimeout: 120_000 })

const MAX = 9223372036854775807n
const MIN = -9223372036854775808n
const INT_MAX = 2147483647
const INT_MIN = -2147483648

// ---- deterministic data ----

const { rnd, int32, int64 } = prng(42)
const bigBelow = (max: bigint) => {
  let v = 0n
  for (let i = 0; i < 5; i++) v = (v << 32n) | BigInt(int32() >>> 0)
  return (v % (2n * max + 1n)) - max
}
const bytesOf = (n: number) => Uint8Array.from({ length: n }, () => int32() & 0xff)
const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)]

const WORDS = [
  '',
  'a',
  'ü',
  '😀',
  '\u0000',
  'abcdefghijklmnopqrstuvwxyz',
  'x'.repeat(100),
  'héllo ✓ 𝄞 longer than sixteen',
  '\uFEFFbom',
  'zzzz\u{10FFFF}\u{10FFFF}',
  'ÿ'.repeat(20),
]

/** Edge values first (in this order), then random ones. */
const GEN: Record<string, { type: string; edges: Value[]; random: () => Value }> = {
  boolean: { type: 'boolean', edges: [true, false], random: () => rnd() < 0.5 },
  int: { type: 'int', edges: [INT_MIN, INT_MAX, 0, -1], random: int32 },
  long: { type: 'long', edges: [MIN, MAX, 0n, -1n, 4294967296n, -4294967296n], random: int64 },
  float: {
    type: 'float',
    edges: [NaN, Infinity, -Infinity, -0, 0, 3.4028234663852886e38, -3.4028234663852886e38, 1.401298464324817e-45],
    random: () => Math.fround((rnd() - 0.5) * 1e6),
  },
  double: {
    type: 'double',
    edges: [NaN, -Infinity, Infinity, -0, 0, Number.MAX_VALUE, Number.MIN_VALUE, -Number.MAX_VALUE],
    random: () => (rnd() - 0.5) * 1e12,
  },
  dec9: { type: 'decimal(9, 2)', edges: [999999999n, -999999999n, 0n, -1n], random: () => bigBelow(999999999n) },
  dec18: { type: 'decimal(18, 4)', edges: [10n ** 18n - 1n, 1n - 10n ** 18n, 0n, 1n], random: () => bigBelow(10n ** 18n - 1n) },
  dec38: { type: 'decimal(38, 10)', edges: [10n ** 38n - 1n, 1n - 10n ** 38n, 0n, -1n, 128n, -129n], random: () => bigBelow(10n ** 38n - 1n) },
  date: { type: 'date', edges: [INT_MIN, INT_MAX, 0, -1], random: () => int32() % 1_000_000 },
  time: { type: 'time', edges: [0n, 86_399_999_999n], random: () => BigInt(Math.floor(rnd() * 86_400_000_000)) },
  ts: { type: 'timestamp', edges: [MIN, MAX, 0n, -1n], random: () => 1_700_000_000_000_000n + BigInt(Math.floor(rnd() * 1e12)) },
  tstz: { type: 'timestamptz', edges: [0n, -1n, MAX], random: int64 },
  tsns: { type: 'timestamp_ns', edges: [MAX, MIN], random: int64 },
  tstzns: { type: 'timestamptz_ns', edges: [1n, MIN], random: () => 1_700_000_000_000_000_000n + BigInt(int32()) },
  s: { type: 'string', edges: [...WORDS], random: () => pick(WORDS) + String(int32()) + (rnd() < 0.1 ? pick(WORDS) : '') },
  u: { type: 'uuid', edges: [new Uint8Array(16), new Uint8Array(16).fill(255)], random: () => bytesOf(16) },
  fx: { type: 'fixed[3]', edges: [Uint8Array.of(0, 0, 0), Uint8Array.of(255, 255, 255), Uint8Array.of(128, 0, 0)], random: () => bytesOf(3) },
  bin: {
    type: 'binary',
    edges: [new Uint8Array(0), new Uint8Array(40).fill(255), Uint8Array.of(0xef, 0xbb, 0xbf), bytesOf(200)],
    random: () => bytesOf(Math.floor(rnd() * 80)),
  },
}

// required r_<name> and optional o_<name> for every flat type; ids out of field order on purpose
const FLAT_FIELDS: NestedField[] = Object.entries(GEN).flatMap(([name, g], i) => [
  { id: 200 + i, name: `r_${name}`, required: true, type: g.type },
  { id: 100 + i, name: `o_${name}`, required: false, type: g.type },
])
const flatSchema: Schema = { type: 'struct', 'schema-id': 0, fields: FLAT_FIELDS }

function flatRows(n: number, nullRate: number): Row[] {
  const rows: Row[] = []
  for (let r = 0; r < n; r++) {
    const row: Row = {}
    for (const [name, g] of Object.entries(GEN)) {
      row[`r_${name}`] = r < g.edges.length ? g.edges[r] : g.random()
      const o = (r + 3) % (g.edges.length + 5)
      row[`o_${name}`] = rnd() < nullRate ? null : o < g.edges.length && r < 50 ? g.edges[o] : g.random()
    }
    rows.push(row)
  }
  return rows
}

// ---- writing ----

interface WriteOpts extends BatchOptions {
  compression?: ConstructorParameters<typeof ColumnFileWriter>[1] extends infer O ? (O extends { compression?: infer C } ? C : never) : never
  pageSize?: number
  delta?: boolean
}

/** Writes `groups` (each one row group, itself split into batches of `batchSizes`) through ColumnFileWriter. */
function writeColumns(schema: Schema, groups: Row[][], opts: WriteOpts = {}, batchSizes: number[] = []) {
  const w = new ColumnFileWriter(schema, { compression: opts.compression, pageSize: opts.pageSize, delta: opts.delta })
  for (const g of groups) w.writeRowGroup(sliceRows(g, batchSizes).map((rows) => rowsToBatch(schema, rows, opts)))
  expect(w.rowCount).toBe(groups.reduce((n, g) => n + g.length, 0))
  return w.finish()
}

function groupsOf(rows: Row[], size: number): Row[][] {
  const out: Row[][] = []
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size))
  return out
}

/** Metrics without the parts that depend on the encoding (sizes and offsets). */
function encodingFree(m: DataFileMetrics) {
  const { columnSizes, fileSizeInBytes, splitOffsets, ...rest } = m
  return { ...rest, columnSizeIds: [...columnSizes.keys()].sort((a, b) => a - b), rowGroups: splitOffsets.length }
}

function footer(bytes: Uint8Array): FileMetaData {
  return parquetMetadata(bytes.slice().buffer as ArrayBuffer)
}

/** The file's own sizes and offsets agree with its metrics. */
function checkSelfConsistent(bytes: Uint8Array, m: DataFileMetrics, leaves: number) {
  const meta = footer(bytes)
  expect(m.fileSizeInBytes).toBe(bytes.length)
  expect(m.splitOffsets).toEqual(meta.row_groups.map((g) => Number(g.columns[0].file_offset)))
  for (const g of meta.row_groups) {
    expect(g.columns).toHaveLength(leaves)
    expect(Number(g.file_offset)).toBe(Number(g.columns[0].file_offset))
  }
  expect([...m.columnSizes.values()].reduce((a, b) => a + b, 0)).toBe(
    meta.row_groups.flatMap((g) => g.columns).reduce((n, c) => n + Number(c.meta_data!.total_compressed_size), 0),
  )
}

describe('ColumnFileWriter: every flat type', async () => {
  const zstd = await loadZstd()
  const rows = flatRows(3000, 0.2)

  it("reads back exactly, over several row groups and pages, with the row writer's metrics and footer statistics", async () => {
    const { bytes, metrics } = writeColumns(flatSchema, groupsOf(rows, 1000), { compression: zstd, pageSize: 1024 })
    expect(await readDataFile(bytes, flatSchema)).toEqual(rows)

    const old = writeDataFile(flatSchema, rows, { compression: zstd, rowGroupSize: 1000 })
    expect(encodingFree(metrics)).toEqual(encodingFree(old.metrics))
    checkSelfConsistent(bytes, metrics, FLAT_FIELDS.length)

    const [ours, theirs] = [footer(bytes), footer(old.bytes)]
    expect(ours.schema).toEqual(theirs.schema)
    expect(ours.key_value_metadata).toEqual(theirs.key_value_metadata)
    expect(ours.num_rows).toBe(3000n)
    ours.row_groups.forEach((g, i) => {
      const oldGroup = theirs.row_groups[i]
      expect(g.num_rows).toBe(oldGroup.num_rows)
      g.columns.forEach((c, j) => {
        const o = oldGroup.columns[j].meta_data!
        expect(c.meta_data!.path_in_schema).toEqual(o.path_in_schema)
        expect(c.meta_data!.num_values).toBe(o.num_values)
        expect([c.meta_data!.path_in_schema[0], c.meta_data!.statistics]).toEqual([o.path_in_schema[0], o.statistics])
      })
    })
    // v1 pages, several per chunk (an offset index says where)
    const chunk = ours.row_groups[0].columns.find((c) => c.meta_data!.path_in_schema[0] === 'r_s')!
    expect(chunk.offset_index_length).toBeGreaterThan(0)
    expect(chunk.meta_data!.encoding_stats?.every((s) => s.page_type === 'DATA_PAGE')).toBe(true)
  })

  it('row groups of odd sizes, several batches each, any codec, with and without delta', async () => {
    const gzip = { codec: 'gzip' as const, compress: (b: Uint8Array) => new Uint8Array(gzipSync(b)) }
    const some = rows.slice(0, 1200)
    const old = writeDataFile(flatSchema, some)
    const groups = [some.slice(0, 1), some.slice(1, 700), some.slice(700)]
    for (const [compression, delta] of [
      ['uncompressed', true],
      ['snappy', false],
      [zstd, true],
      [gzip, false],
    ] as const) {
      const { bytes, metrics } = writeColumns(flatSchema, groups, { compression, pageSize: 700, delta, alwaysPresent: true }, [0, 1, 499, 3])
      expect(await readDataFile(bytes, flatSchema)).toEqual(some)
      expect({ ...encodingFree(metrics), rowGroups: 0 }).toEqual({ ...encodingFree(old.metrics), rowGroups: 0 })
      expect(metrics.splitOffsets).toHaveLength(3)
      checkSelfConsistent(bytes, metrics, FLAT_FIELDS.length)
      const encodings = new Set(footer(bytes).row_groups.flatMap((g) => g.columns.flatMap((c) => c.meta_data!.encodings)))
      expect(encodings.has('DELTA_BINARY_PACKED')).toBe(delta)
    }
  })

  it('keeps the exact values: NaN, -0, ±Infinity, int64 and decimal(38) extremes, multi-byte strings', async () => {
    const back = await readDataFile(writeColumns(flatSchema, [rows.slice(0, 20)], { compression: zstd }).bytes, flatSchema)
    expect(back.map((r) => r.r_long).slice(0, 6)).toEqual([MIN, MAX, 0n, -1n, 4294967296n, -4294967296n])
    expect(back.map((r) => r.r_dec38).slice(0, 2)).toEqual([10n ** 38n - 1n, 1n - 10n ** 38n])
    expect(Number.isNaN(back[0].r_float)).toBe(true)
    expect(Object.is(back[3].r_float, -0)).toBe(true)
    expect(Object.is(back[4].r_double, 0)).toBe(true)
    expect(back.slice(0, WORDS.length).map((r) => r.r_s)).toEqual(WORDS)
  })

  it('all-null and no-null optional columns; a column a batch lacks is null there', async () => {
    const nulls = flatRows(300, 1)
    const full = flatRows(300, 0)
    for (const [data, opts] of [
      [nulls, {}],
      [full, {}],
      [full, { alwaysPresent: true }],
    ] as const) {
      const { bytes, metrics } = writeColumns(flatSchema, [data], { ...opts, compression: zstd, pageSize: 128 })
      expect(await readDataFile(bytes, flatSchema)).toEqual(data)
      expect(encodingFree(metrics)).toEqual(encodingFree(writeDataFile(flatSchema, data, { compression: zstd }).metrics))
    }
    // the second batch has no o_s and no o_long column
    const a = rowsToBatch(flatSchema, full.slice(0, 10))
    const b = rowsToBatch(flatSchema, full.slice(10, 20))
    b.columns.delete(FLAT_FIELDS.find((f) => f.name === 'o_s')!.id)
    b.columns.delete(FLAT_FIELDS.find((f) => f.name === 'o_long')!.id)
    const w = new ColumnFileWriter(flatSchema, { compression: zstd })
    w.writeRowGroup([a, b])
    const expected = full.slice(0, 20).map((r, i) => (i < 10 ? r : { ...r, o_s: null, o_long: null }))
    const { bytes, metrics } = w.finish()
    expect(await readDataFile(bytes, flatSchema)).toEqual(expected)
    expect(encodingFree(metrics)).toEqual(encodingFree(writeDataFile(flatSchema, expected).metrics))
  })

  it('primitive columns handed over as values take the general path and read back the same', async () => {
    const some = rows.slice(0, 500)
    const asValues = FLAT_FIELDS.filter((_, i) => i % 3 === 0).map((f) => f.name)
    const { bytes, metrics } = writeColumns(flatSchema, groupsOf(some, 200), { compression: zstd, asValues, pageSize: 512 })
    expect(await readDataFile(bytes, flatSchema)).toEqual(some)
    expect(encodingFree(metrics)).toEqual(encodingFree(writeDataFile(flatSchema, some, { rowGroupSize: 200 }).metrics))
  })

  it('refuses buffers that do not fit the schema, and such a row group leaves the file as it was', async () => {
    const one = flatRows(5, 0)
    const w = new ColumnFileWriter(flatSchema)
    const batch = rowsToBatch(flatSchema, one)
    const id = (name: string) => FLAT_FIELDS.find((f) => f.name === name)!.id
    const bad = (name: string, data: any) => ({ rows: 5, columns: new Map([...batch.columns, [id(name), data]]) })
    expect(() => w.writeRowGroup([bad('r_long', { kind: 'flat', present: null, count: 5, data: { physical: 'INT32', values: new Int32Array(5) } })])).toThrow(
      ColumnDataError,
    )
    expect(() =>
      w.writeRowGroup([
        bad('r_long', { kind: 'flat', present: Uint8Array.of(1, 0, 1, 1, 1), count: 4, data: { physical: 'INT64', values: new BigInt64Array(4) } }),
      ]),
    ).toThrow(/required/)
    expect(() =>
      w.writeRowGroup([bad('o_long', { kind: 'flat', present: null, count: 4, data: { physical: 'INT64', values: new BigInt64Array(4) } })]),
    ).toThrow(ColumnDataError)
    expect(() =>
      w.writeRowGroup([
        bad('o_fx', { kind: 'flat', present: null, count: 5, data: { physical: 'FIXED_LEN_BYTE_ARRAY', width: 4, bytes: new Uint8Array(20) } }),
      ]),
    ).toThrow(/width/)
    const missing = { rows: 5, columns: new Map([...batch.columns].filter(([k]) => k !== id('r_int'))) }
    expect(() => w.writeRowGroup([missing])).toThrow(/required and missing/)
    const nested = { rows: 5, columns: new Map([...batch.columns, [id('r_s'), { kind: 'values' as const, values: [] }]]) }
    expect(() => w.writeRowGroup([nested])).toThrow(/0 values for 5 rows/)
    // each refused row group left nothing behind
    w.writeRowGroup([batch])
    expect(w.rowCount).toBe(5)
    const { bytes, metrics } = w.finish()
    expect(await readDataFile(bytes, flatSchema)).toEqual(one)
    expect(encodingFree(metrics)).toEqual(encodingFree(writeDataFile(flatSchema, one).metrics))
    expect(() => w.finish()).toThrow(/twice/)
  })
})

// ---- nested and geometry columns mixed with flat ones ----

const everySchema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    ...EVERY_TYPE_FIELDS,
    { id: 32, name: 'geog', required: false, type: 'geography(OGC:CRS84, karney)' },
    { id: 33, name: 'geo2', required: false, type: 'geometry(EPSG:3857)' },
  ],
}
const uuid = Uint8Array.from([0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd, 0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7, 0x85, 0xe7])
const everyRows: Row[] = Array.from({ length: 400 }, (_, i): Row => {
  const n = i % 7 === 3
  return {
    b: n ? null : i % 2 === 0,
    i: i - 200,
    l: n ? null : BigInt(i) * 1_000_000_007n - MAX / 2n,
    f: n ? null : Math.fround(i / 3),
    d: i === 5 ? NaN : i === 6 ? -0 : n ? null : i * 1.5,
    dec38: n ? null : BigInt(i) * 10n ** 30n - 7n,
    dec9: n ? null : BigInt(i - 100),
    dec18: n ? null : BigInt(i) * 10n ** 15n,
    dt: n ? null : 19000 + i,
    t: n ? null : BigInt(i) * 1_000_000n,
    ts: n ? null : 1_700_000_000_000_000n + BigInt(i),
    tstz: BigInt(i) * 3_600_000_000n,
    tsns: n ? null : BigInt(i) - 5n,
    tstzns: n ? null : -BigInt(i),
    s: n ? null : `row ${i} ${'ü'.repeat(i % 20)}`,
    u: n ? null : i % 2 ? uuid : new Uint8Array(16).fill(i),
    fx: n ? null : Uint8Array.of(i, 0, 0, 255 - i),
    bin: n ? null : bytesOf(i % 30),
    geo: n ? null : wkbPoint(i, -i),
    st: i % 5 === 0 ? null : { a: i, z: i % 3 ? `z${i}` : null },
    tags: i % 4 === 0 ? null : i % 4 === 1 ? [] : [BigInt(i), null, MAX],
    attrs:
      i % 6 === 0
        ? null
        : [
            ['k', i * 0.5],
            [`k${i}`, null],
          ],
    nothing: null,
    points: i % 9 === 0 ? null : Array.from({ length: i % 4 }, (_, x) => ({ x: x - i })),
    geog: n ? null : wkbPoint(-122.5, 37.75),
    geo2: i % 2 ? wkbPoint(i, i) : null,
  }
})

describe('ColumnFileWriter: nested and geometry columns mixed with flat ones', async () => {
  const zstd = await loadZstd()

  it('writes them through hyparquet-writer in schema leaf order; same rows, metrics, schema and geospatial annotation', async () => {
    const { bytes, metrics } = writeColumns(everySchema, groupsOf(everyRows, 150), { compression: zstd, pageSize: 256 }, [40, 1, 50])
    expect(await readDataFile(bytes, everySchema)).toEqual(everyRows)
    const old = writeDataFile(everySchema, everyRows, { compression: zstd, rowGroupSize: 150 })
    expect(encodingFree(metrics)).toEqual(encodingFree(old.metrics))
    const [ours, theirs] = [footer(bytes), footer(old.bytes)]
    checkSelfConsistent(bytes, metrics, theirs.row_groups[0].columns.length)
    expect(ours.schema).toEqual(theirs.schema) // field ids everywhere, 3-level lists, GEOMETRY/GEOGRAPHY with crs and algorithm
    expect(ours.schema.find((e) => e.name === 'geo2')!.logical_type).toEqual({ type: 'GEOMETRY', crs: 'EPSG:3857' })
    ours.row_groups.forEach((g, i) => {
      expect(g.columns.map((c) => c.meta_data!.path_in_schema)).toEqual(theirs.row_groups[i].columns.map((c) => c.meta_data!.path_in_schema))
      g.columns.forEach((c, j) => expect(c.meta_data!.statistics).toEqual(theirs.row_groups[i].columns[j].meta_data!.statistics))
    })
    const geoStats = ours.row_groups[0].columns.find((c) => c.meta_data!.path_in_schema[0] === 'geo')!.meta_data!.statistics
    expect(geoStats).toEqual({ null_count: expect.any(BigInt) })
  })

  it('geometry handed over as a flat WKB buffer: same file contents, no bounds', async () => {
    const batch = rowsToBatch(everySchema, everyRows)
    const geo = everyRows.map((r) => r.geo as Uint8Array | null)
    const given = geo.filter((g): g is Uint8Array => g !== null)
    const offsets = new Int32Array(given.length + 1)
    given.forEach((g, i) => (offsets[i + 1] = offsets[i] + g.length))
    const bytesAll = new Uint8Array(offsets[given.length])
    given.forEach((g, i) => bytesAll.set(g, offsets[i]))
    batch.columns.set(19, {
      kind: 'flat',
      present: Uint8Array.from(geo, (g) => (g ? 1 : 0)),
      count: given.length,
      data: { physical: 'BYTE_ARRAY', offsets, bytes: bytesAll },
    })
    const w = new ColumnFileWriter(everySchema, { compression: zstd })
    w.writeRowGroup([batch])
    const { bytes, metrics } = w.finish()
    expect(await readDataFile(bytes, everySchema)).toEqual(everyRows)
    expect(encodingFree(metrics)).toEqual(encodingFree(writeDataFile(everySchema, everyRows).metrics))
    expect(metrics.lowerBounds.has(19)).toBe(false)
  })

  it('an empty file, and a schema of only unknown columns', async () => {
    const empty = new ColumnFileWriter(everySchema).finish()
    expect(await readDataFile(empty.bytes, everySchema)).toEqual([])
    expect(empty.metrics.recordCount).toBe(0)
    const unknownOnly: Schema = { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'u', required: false, type: 'unknown' }] }
    const w = new ColumnFileWriter(unknownOnly)
    w.writeRowGroup([{ rows: 3, columns: new Map() }])
    const { bytes, metrics } = w.finish()
    expect(encodingFree(metrics)).toEqual(encodingFree(writeDataFile(unknownOnly, [{ u: null }, { u: null }, { u: null }]).metrics))
    expect(metrics.recordCount).toBe(3)
    expect(await readDataFile(bytes, unknownOnly)).toEqual([]) // as the row writer: no column, no row group
  })
})
