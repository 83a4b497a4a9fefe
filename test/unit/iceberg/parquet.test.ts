import { parquetMetadata, parquetReadObjects, type FileMetaData, type SchemaElement } from 'hyparquet'
import { describe, expect, it } from 'vitest'
import { parse } from 'lossless-json'
import { decimalRequiredBytes, parquetSchema, writeDataFile } from '../../../iceberg/parquet/data-file.ts'
import { loadZstd, loadZstdDecompress } from '../../../iceberg/parquet/zstd.ts'
import type { Row, Schema } from '../../../iceberg/spec/types.ts'
import { EVERY_TYPE_FIELDS, wkbPoint } from './every-type.ts'

const hex = (b: Uint8Array | undefined) => (b === undefined ? undefined : Array.from(b, (x) => x.toString(16).padStart(2, '0')).join(' '))
const le64 = (v: bigint) => {
  const b = new Uint8Array(8)
  new DataView(b.buffer).setBigInt64(0, v, true)
  return b
}
const le32 = (v: number) => {
  const b = new Uint8Array(4)
  new DataView(b.buffer).setInt32(0, v, true)
  return b
}
const utf8 = (s: string) => new TextEncoder().encode(s)

// One column of every writable type, nested ones included.
const schema: Schema = { type: 'struct', 'schema-id': 0, fields: EVERY_TYPE_FIELDS }

const MAX = 9223372036854775807n
const MIN = -9223372036854775808n
const DEC38 = 10n ** 38n - 1n // 9999999999999999999999999999.9999999999
const uuid = Uint8Array.from([0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd, 0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7, 0x85, 0xe7])
const long26 = 'abcdefghijklmnopqrstuvwxyz'

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
    s: long26,
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
    s: 'abc',
    u: new Uint8Array(16),
    fx: Uint8Array.of(0, 0, 0, 0),
    bin: new Uint8Array(0),
    geo: null,
    st: null,
    tags: [],
    attrs: [],
    nothing: null,
    points: null,
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
  },
]

// Parsers that keep the raw Iceberg values: bigints for temporals, days for dates, bytes for uuid/WKB.
const raw = {
  timestampFromMilliseconds: (v: bigint) => v,
  timestampFromMicroseconds: (v: bigint) => v,
  timestampFromNanoseconds: (v: bigint) => v,
  dateFromDays: (v: number) => v,
  stringFromBytes: (v: Uint8Array) => v && new TextDecoder().decode(v),
  jsonFromBytes: (v: Uint8Array) => v,
  geometryFromBytes: (v: Uint8Array) => v,
  geographyFromBytes: (v: Uint8Array) => v,
  uuidFromBytes: (v: Uint8Array) => v,
}

function element(meta: FileMetaData, name: string, parent?: string): SchemaElement {
  const all = meta.schema
  const start = parent ? all.findIndex((e) => e.name === parent) : 0
  const found = all.slice(start).find((e) => e.name === name)
  if (!found) throw new Error(`no element ${name}`)
  return found
}

describe('writeDataFile', async () => {
  const compression = await loadZstd()
  const { bytes, metrics } = writeDataFile(schema, rows, { compression, rowGroupSize: 2 })
  const file = bytes.slice().buffer as ArrayBuffer
  const meta = parquetMetadata(file)
  const compressors = { ZSTD: await loadZstdDecompress() }

  it('puts a field id on every column, nested children included', () => {
    const ids = meta.schema.map((e) => [e.name, e.field_id ?? null])
    expect(ids).toEqual([
      ['table', null],
      ['b', 1],
      ['i', 2],
      ['l', 3],
      ['f', 4],
      ['d', 5],
      ['dec38', 6],
      ['dec9', 7],
      ['dec18', 8],
      ['dt', 9],
      ['t', 10],
      ['ts', 11],
      ['tstz', 12],
      ['tsns', 13],
      ['tstzns', 14],
      ['s', 15],
      ['u', 16],
      ['fx', 17],
      ['bin', 18],
      ['geo', 19],
      ['st', 20],
      ['a', 21],
      ['z', 22],
      ['tags', 23],
      ['list', null],
      ['element', 24],
      ['attrs', 25],
      ['key_value', null],
      ['key', 26],
      ['value', 27],
      // `nothing` (unknown) is omitted from the data file
      ['points', 29],
      ['list', null],
      ['element', 30],
      ['x', 31],
    ])
  })

  it('maps Iceberg types to Parquet types as Appendix A says', () => {
    const pick = (e: SchemaElement) => ({
      type: e.type,
      len: e.type_length,
      rep: e.repetition_type,
      conv: e.converted_type,
      logical: e.logical_type,
    })
    expect(pick(element(meta, 'b'))).toEqual({ type: 'BOOLEAN', rep: 'OPTIONAL' })
    expect(pick(element(meta, 'i'))).toEqual({ type: 'INT32', rep: 'REQUIRED' })
    expect(pick(element(meta, 'l'))).toEqual({ type: 'INT64', rep: 'OPTIONAL' })
    expect(pick(element(meta, 'f')).type).toBe('FLOAT')
    expect(pick(element(meta, 'd')).type).toBe('DOUBLE')
    expect(pick(element(meta, 'dec38'))).toEqual({
      type: 'FIXED_LEN_BYTE_ARRAY',
      len: 16,
      rep: 'OPTIONAL',
      conv: 'DECIMAL',
      logical: { type: 'DECIMAL', precision: 38, scale: 10 },
    })
    expect(element(meta, 'dec38').precision).toBe(38)
    expect(element(meta, 'dec38').scale).toBe(10)
    expect(pick(element(meta, 'dec9')).type).toBe('INT32')
    expect(pick(element(meta, 'dec18')).type).toBe('INT64')
    expect(pick(element(meta, 'dt'))).toMatchObject({ type: 'INT32', conv: 'DATE', logical: { type: 'DATE' } })
    expect(pick(element(meta, 't'))).toMatchObject({ type: 'INT64', logical: { type: 'TIME', isAdjustedToUTC: false, unit: 'MICROS' } })
    expect(pick(element(meta, 'ts'))).toMatchObject({ type: 'INT64', logical: { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'MICROS' } })
    expect(pick(element(meta, 'tstz'))).toMatchObject({ type: 'INT64', rep: 'REQUIRED', logical: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' } })
    expect(pick(element(meta, 'tsns'))).toMatchObject({ type: 'INT64', logical: { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'NANOS' } })
    expect(pick(element(meta, 'tstzns'))).toMatchObject({ type: 'INT64', logical: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'NANOS' } })
    expect(pick(element(meta, 's'))).toMatchObject({ type: 'BYTE_ARRAY', conv: 'UTF8', logical: { type: 'STRING' } })
    expect(pick(element(meta, 'u'))).toMatchObject({ type: 'FIXED_LEN_BYTE_ARRAY', len: 16, logical: { type: 'UUID' } })
    expect(pick(element(meta, 'fx'))).toEqual({ type: 'FIXED_LEN_BYTE_ARRAY', len: 4, rep: 'OPTIONAL' })
    expect(pick(element(meta, 'bin'))).toEqual({ type: 'BYTE_ARRAY', rep: 'OPTIONAL' })
    expect(pick(element(meta, 'geo'))).toMatchObject({ type: 'BYTE_ARRAY', logical: { type: 'GEOMETRY' } })
    // 3-level list and map
    expect(pick(element(meta, 'tags'))).toMatchObject({ rep: 'OPTIONAL', conv: 'LIST', logical: { type: 'LIST' } })
    expect(pick(element(meta, 'list', 'tags')).rep).toBe('REPEATED')
    expect(pick(element(meta, 'element', 'tags'))).toMatchObject({ type: 'INT64', rep: 'OPTIONAL' })
    expect(pick(element(meta, 'attrs'))).toMatchObject({ conv: 'MAP', logical: { type: 'MAP' } })
    expect(pick(element(meta, 'key_value')).rep).toBe('REPEATED')
    expect(pick(element(meta, 'key'))).toMatchObject({ type: 'BYTE_ARRAY', rep: 'REQUIRED', logical: { type: 'STRING' } })
    expect(pick(element(meta, 'value'))).toMatchObject({ type: 'DOUBLE', rep: 'OPTIONAL' })
    expect(pick(element(meta, 'element', 'points'))).toMatchObject({ rep: 'REQUIRED' })
  })

  it('stores the iceberg.schema key, row groups of the asked size, zstd pages, chosen encodings', () => {
    const kv = meta.key_value_metadata?.find((e) => e.key === 'iceberg.schema')
    expect(parse(kv!.value!)).toEqual(parse(JSON.stringify(schema)))
    expect(meta.row_groups.map((g) => Number(g.num_rows))).toEqual([2, 1])
    expect(Number(meta.num_rows)).toBe(3)
    const chunks = meta.row_groups.flatMap((g) => g.columns.map((c) => c.meta_data!))
    expect(new Set(chunks.map((c) => c.codec))).toEqual(new Set(['ZSTD']))
    const enc = (name: string) => chunks.find((c) => c.path_in_schema.join('.') === name)!.encodings
    expect(enc('l')).toContain('DELTA_BINARY_PACKED')
    expect(enc('tstz')).toContain('DELTA_BINARY_PACKED')
    expect(enc('dt')).toContain('DELTA_BINARY_PACKED')
  })

  it('reads every value back exactly', async () => {
    const read = await parquetReadObjects({ file, compressors, parsers: raw, utf8: false })
    expect(read).toHaveLength(3)
    const [r0, r1, r2] = read
    expect(r0).toMatchObject({
      b: true,
      i: 1,
      l: MAX,
      f: 1.5,
      dec9: 12.3,
      dec18: -0.0005,
      dt: 19000,
      t: 3_600_000_000n,
      ts: 1_700_000_000_000_000n,
      tstz: 1_700_000_000_123_456n,
      tsns: 1_700_000_000_123_456_789n,
      tstzns: -1n,
      s: long26,
      st: { a: 7, z: 'x' },
      tags: [1n, null, 3n],
      attrs: { k1: 1.25, k2: null },
      points: [{ x: 1 }, { x: 2 }],
    })
    expect(Number.isNaN(r0.d)).toBe(true)
    expect(r0.u).toEqual(uuid)
    expect(r0.fx).toEqual(Uint8Array.of(1, 2, 3, 4))
    expect(r0.bin).toEqual(Uint8Array.of(0, 255))
    expect(r0.geo).toEqual(wkbPoint(1, 2))
    expect('nothing' in r0).toBe(false)
    expect(r1).toMatchObject({
      b: false,
      i: -2147483648,
      l: MIN,
      d: 2.5,
      dt: -1,
      t: 0n,
      ts: -1n,
      tstz: 0n,
      s: 'abc',
      st: undefined /* hyparquet reads a null struct as undefined */,
      tags: [],
      attrs: {},
    })
    expect(Object.is(r1.f, -0)).toBe(true)
    expect(r1.bin).toEqual(new Uint8Array(0))
    expect(r2).toMatchObject({ b: null, i: 2147483647, l: null, d: -Infinity, tstz: MAX, st: { a: 0, z: null }, tags: undefined, attrs: undefined, points: [] }) // null list/map: undefined, unlike []
  })

  it('stores decimal(38,10) exactly', async () => {
    // Strip the DECIMAL annotation so the reader hands back the raw 16-byte two's complement.
    const plain = structuredClone(meta)
    const dec = plain.schema.find((e) => e.name === 'dec38')!
    delete dec.converted_type
    delete dec.logical_type
    const read = await parquetReadObjects({ file, metadata: plain, compressors, columns: ['dec38'] })
    const unscaled = (b: Uint8Array) => BigInt.asIntN(128, BigInt('0x' + Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('')))
    expect(read.map((r) => r.dec38 && unscaled(r.dec38))).toEqual([DEC38, -DEC38, null])
  })

  it('counts rows, sizes, values, nulls and NaNs per field id', () => {
    expect(metrics.recordCount).toBe(3)
    expect(metrics.fileSizeInBytes).toBe(bytes.length)
    expect(new Uint8Array(bytes.slice(-4))).toEqual(utf8('PAR1'))
    // every leaf column with an id has a size, the nested ones included; unknown has none
    expect([...metrics.columnSizes.keys()].sort((a, b) => a - b)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 21, 22, 24, 26, 27, 31,
    ])
    const chunkSum = (name: string) =>
      meta.row_groups.reduce((n, g) => n + Number(g.columns.find((c) => c.meta_data!.path_in_schema.join('.') === name)!.meta_data!.total_compressed_size), 0)
    expect(metrics.columnSizes.get(15)).toBe(chunkSum('s'))
    expect(metrics.columnSizes.get(24)).toBe(chunkSum('tags.list.element'))
    expect(metrics.valueCounts.get(3)).toBe(3)
    expect(metrics.nullValueCounts.get(3)).toBe(1)
    expect(metrics.nullValueCounts.get(2)).toBe(0)
    expect(metrics.valueCounts.get(22)).toBe(3) // struct child: the null struct counts as a null value
    expect(metrics.nullValueCounts.get(22)).toBe(2)
    expect(metrics.nullValueCounts.get(19)).toBe(2)
    expect(metrics.nanValueCounts).toEqual(
      new Map([
        [4, 0],
        [5, 1],
      ]),
    )
    // Java keeps only sizes for columns inside lists and maps
    for (const id of [24, 26, 27, 31]) {
      expect(metrics.valueCounts.has(id)).toBe(false)
      expect(metrics.lowerBounds.has(id)).toBe(false)
    }
    expect(metrics.splitOffsets).toEqual(meta.row_groups.map((g) => Number(g.columns[0].file_offset)))
    expect(metrics.splitOffsets[0]).toBe(4)
  })

  it('serializes lower and upper bounds per Appendix D with truncate(16)', () => {
    const lo = (id: number) => hex(metrics.lowerBounds.get(id))
    const hi = (id: number) => hex(metrics.upperBounds.get(id))
    expect(lo(1)).toBe('00')
    expect(hi(1)).toBe('01')
    expect(lo(2)).toBe(hex(le32(-2147483648)))
    expect(hi(2)).toBe(hex(le32(2147483647)))
    expect(lo(3)).toBe('00 00 00 00 00 00 00 80')
    expect(hi(3)).toBe('ff ff ff ff ff ff ff 7f')
    expect(lo(4)).toBe('00 00 00 80') // -0.0 precedes +0.0
    expect(hi(4)).toBe('00 00 c0 3f') // 1.5
    expect(lo(5)).toBe('00 00 00 00 00 00 f0 ff') // -Infinity; NaN is never a bound
    expect(hi(5)).toBe('00 00 00 00 00 00 04 40') // 2.5
    expect(lo(6)).toBe('b4 c4 b3 57 a5 79 3b 85 f6 75 dd c0 00 00 00 01')
    expect(hi(6)).toBe('4b 3b 4c a8 5a 86 c4 7a 09 8a 22 3f ff ff ff ff')
    expect(lo(7)).toBe('fa 0a 1f 01') // -99999999
    expect(hi(7)).toBe('04 ce') // 1230
    expect(lo(8)).toBe('fb') // -5
    expect(hi(8)).toBe('0d e0 b6 b3 a7 63 ff ff') // 999999999999999999
    expect(lo(9)).toBe(hex(le32(-1)))
    expect(hi(9)).toBe(hex(le32(19000)))
    expect(hi(10)).toBe(hex(le64(3_600_000_000n)))
    expect(lo(12)).toBe(hex(le64(0n)))
    expect(hi(12)).toBe(hex(le64(MAX)))
    expect(lo(14)).toBe(hex(le64(-1n)))
    expect(lo(15)).toBe(hex(utf8('abc')))
    expect(hi(15)).toBe(hex(utf8('abcdefghijklmnoq'))) // 26 letters: cut at 16, last one incremented
    expect(lo(16)).toBe(hex(new Uint8Array(16)))
    expect(hi(16)).toBe(hex(uuid))
    expect(lo(17)).toBe('00 00 00 00')
    expect(hi(17)).toBe('01 02 03 04')
    expect(lo(18)).toBe('')
    expect(hi(18)).toBe('00 ff')
    expect(lo(21)).toBe(hex(le32(0))) // struct children get bounds
    expect(hi(21)).toBe(hex(le32(7)))
    expect(hi(22)).toBe(hex(utf8('x')))
    expect(metrics.lowerBounds.has(19)).toBe(false) // geometry: counts only
    expect(metrics.lowerBounds.has(28)).toBe(false)
  })
})

describe('parquetSchema', () => {
  it('sizes fixed decimals by precision', () => {
    expect([1, 9, 10, 18, 19, 38].map(decimalRequiredBytes)).toEqual([1, 4, 5, 8, 9, 16])
  })

  it('drops a struct made only of unknown fields', () => {
    const plan = parquetSchema({
      type: 'struct',
      'schema-id': 0,
      fields: [
        { id: 1, name: 'keep', required: false, type: 'int' },
        { id: 2, name: 'gone', required: false, type: { type: 'struct', fields: [{ id: 3, name: 'u', required: false, type: 'unknown' }] } },
      ],
    })
    expect(plan.elements.map((e) => e.name)).toEqual(['table', 'keep'])
    expect(plan.elements[0].num_children).toBe(1)
  })
})

describe('writeDataFile options', () => {
  const small: Schema = { type: 'struct', 'schema-id': 0, fields: [{ id: 1, name: 'n', required: true, type: 'long' }] }
  const many: Row[] = Array.from({ length: 2500 }, (_, i) => ({ n: BigInt(i) }))

  it('defaults to snappy and one row group', () => {
    const { bytes, metrics } = writeDataFile(small, many)
    const meta = parquetMetadata(bytes.slice().buffer as ArrayBuffer)
    expect(meta.row_groups).toHaveLength(1)
    expect(meta.row_groups[0].columns[0].meta_data!.codec).toBe('SNAPPY')
    expect(metrics.recordCount).toBe(2500)
    expect(hex(metrics.upperBounds.get(1))).toBe(hex(le64(2499n)))
  })

  it('writes uncompressed files, and an empty one', async () => {
    const { bytes } = writeDataFile(small, many, { compression: 'uncompressed', rowGroupSize: 1000 })
    const meta = parquetMetadata(bytes.slice().buffer as ArrayBuffer)
    expect(meta.row_groups.map((g) => g.columns[0].meta_data!.codec)).toEqual(['UNCOMPRESSED', 'UNCOMPRESSED', 'UNCOMPRESSED'])
    const back = await parquetReadObjects({ file: bytes.slice().buffer as ArrayBuffer })
    expect(back.at(-1)).toEqual({ n: 2499n })

    const empty = writeDataFile(small, [])
    expect(empty.metrics.recordCount).toBe(0)
    expect(empty.metrics.lowerBounds.size).toBe(0)
    expect(Number(parquetMetadata(empty.bytes.slice().buffer as ArrayBuffer).num_rows)).toBe(0)
  })
})
