import { parquetMetadata, parquetReadObjects, type FileMetaData } from 'hyparquet'
import { describe, expect, it } from 'vitest'
import { decimalBytes, toSingleValueBytes } from '../../../iceberg/spec/bounds.ts'
import type { DataFile } from '../../../iceberg/manifest/manifest.ts'
import { concatParquet, mergeKey, NotMergeable, readFooter } from '../../../iceberg/parquet/concat-files.ts'
import { decodeBound, mergeMetrics, primitiveTypes } from '../../../iceberg/maintenance/merge-metrics.ts'
import { readThriftStruct, writeThriftStruct } from '../../../iceberg/parquet/thrift.ts'
import { writeDataFile } from '../../../iceberg/parquet/data-file.ts'
import { replaceSummary } from '../../../iceberg/transaction/replace.ts'
import type { Row, Schema } from '../../../iceberg/spec/types.ts'
import { loadZstd, loadZstdDecompress } from '../../../iceberg/parquet/zstd.ts'

const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'b', required: false, type: 'boolean' },
    { id: 3, name: 'i', required: false, type: 'int' },
    { id: 4, name: 'f', required: false, type: 'float' },
    { id: 5, name: 'd', required: false, type: 'double' },
    { id: 6, name: 'dec38', required: false, type: 'decimal(38, 10)' },
    { id: 7, name: 'dec9', required: false, type: 'decimal(9, 2)' },
    { id: 8, name: 'dt', required: false, type: 'date' },
    { id: 9, name: 't', required: false, type: 'time' },
    { id: 10, name: 'ts', required: false, type: 'timestamptz' },
    { id: 11, name: 'tsns', required: false, type: 'timestamp_ns' },
    { id: 12, name: 's', required: false, type: 'string' },
    { id: 13, name: 'u', required: false, type: 'uuid' },
    { id: 14, name: 'fx', required: false, type: 'fixed[4]' },
    { id: 15, name: 'bin', required: false, type: 'binary' },
    {
      id: 16,
      name: 'st',
      required: false,
      type: {
        type: 'struct',
        fields: [
          { id: 17, name: 'a', required: true, type: 'int' },
          { id: 18, name: 'z', required: false, type: 'string' },
        ],
      },
    },
    { id: 19, name: 'tags', required: false, type: { type: 'list', 'element-id': 20, element: 'long', 'element-required': false } },
    {
      id: 21,
      name: 'attrs',
      required: false,
      type: { type: 'map', 'key-id': 22, key: 'string', 'value-id': 23, value: 'decimal(38, 10)', 'value-required': false },
    },
    { id: 24, name: '__ingest_ts', required: false, type: 'timestamptz' },
  ],
}

const MAX = 9223372036854775807n
const MIN = -9223372036854775808n
const DEC38 = 10n ** 38n - 1n

function row(n: number): Row {
  const k = BigInt(n)
  const edge = n % 3
  return {
    id: edge === 0 ? MAX - k : edge === 1 ? MIN + k : k,
    b: n % 2 === 0 ? true : n % 5 === 0 ? null : false,
    i: edge === 0 ? 2147483647 - n : -2147483648 + n,
    f: n % 7 === 0 ? NaN : n % 11 === 0 ? -0 : n / 3,
    d: n % 13 === 0 ? -Infinity : n % 4 === 0 ? null : n * 0.1,
    dec38: n % 6 === 0 ? null : edge === 0 ? DEC38 - k : -DEC38 + k,
    dec9: BigInt(n * 101 - 5000),
    dt: n - 50,
    t: k * 1_000_000n,
    ts: 1_700_000_000_000_000n + k * 3_600_000_000n,
    tsns: -1n - k,
    s: n % 9 === 0 ? null : `row ${n} ✓ 𝄞 ${'x'.repeat(n % 20)}`,
    u: Uint8Array.from({ length: 16 }, (_, j) => (j * 17 + n) & 0xff),
    fx: Uint8Array.of(n & 0xff, 0, 255, n % 3),
    bin: new Uint8Array(n % 4).fill(n & 0xff),
    st: n % 8 === 0 ? null : { a: n, z: n % 3 ? `z${n}` : null },
    tags: n % 5 === 0 ? null : [k, null, MAX - k],
    attrs:
      n % 4 === 0
        ? []
        : [
            [`k${n}`, DEC38 - k],
            ['n', null],
          ],
    __ingest_ts: 1_790_000_000_000_000n + k,
  }
}

const rows = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => row(from + i))

// Readers that keep raw values: bigints for temporals, days for dates, bytes for uuids.
const raw = {
  timestampFromMilliseconds: (v: bigint) => v,
  timestampFromMicroseconds: (v: bigint) => v,
  timestampFromNanoseconds: (v: bigint) => v,
  dateFromDays: (v: number) => v,
  uuidFromBytes: (v: Uint8Array) => v,
}

/** Every row of a file, decimals as their raw two's complement / unscaled ints (no lossy number). */
async function readAll(bytes: Uint8Array, compressors: any): Promise<Record<string, unknown>[]> {
  const file = bytes.slice().buffer as ArrayBuffer
  const meta: FileMetaData = structuredClone(parquetMetadata(file))
  for (const e of meta.schema) {
    if (e.converted_type === 'DECIMAL' || e.logical_type?.type === 'DECIMAL') {
      delete e.converted_type
      delete e.logical_type
    }
  }
  return parquetReadObjects({ file, metadata: meta, compressors, parsers: raw, utf8: false })
}

describe('concatParquet', async () => {
  const zstd = await loadZstd()
  const compressors = { ZSTD: await loadZstdDecompress() }
  const inputs = [rows(0, 7), rows(7, 30), rows(30, 33)].map((r, i) => writeDataFile(schema, r, { compression: zstd, rowGroupSize: i === 1 ? 10 : 1000 }))

  it('parses and re-serializes a footer byte for byte', () => {
    const bytes = inputs[1].bytes
    const len = new DataView(bytes.buffer, bytes.byteOffset).getUint32(bytes.length - 8, true)
    const footer = bytes.subarray(bytes.length - 8 - len, bytes.length - 8)
    const { struct, end } = readThriftStruct(footer)
    expect(end).toBe(footer.length)
    expect(writeThriftStruct(struct)).toEqual(footer)
  })

  it('keeps every row and value of 3 files, in order, in one file', async () => {
    const merged = concatParquet(inputs.map((f) => ({ bytes: f.bytes })))
    expect(merged.rowCount).toBe(33n)
    const expected = (await Promise.all(inputs.map((f) => readAll(f.bytes, compressors)))).flat()
    const got = await readAll(merged.bytes, compressors)
    expect(got).toHaveLength(33)
    expect(got).toEqual(expected)
    // the values are the ones written, not just the same reading of them
    expect(got.map((r) => r.id)).toEqual(rows(0, 33).map((r) => r.id))
    expect(got.map((r) => r.__ingest_ts)).toEqual(rows(0, 33).map((r) => r.__ingest_ts))
    const unscaled = (b: Uint8Array | null | undefined) => (b ? BigInt.asIntN(128, BigInt('0x' + Buffer.from(b).toString('hex'))) : null)
    expect(got.map((r) => unscaled(r.dec38 as Uint8Array))).toEqual(rows(0, 33).map((r) => r.dec38))
  })

  it('writes a footer with the inputs row groups, field ids and iceberg.schema, offsets shifted', () => {
    const merged = concatParquet(inputs.map((f) => ({ bytes: f.bytes })))
    const meta = parquetMetadata(merged.bytes.slice().buffer as ArrayBuffer)
    const first = parquetMetadata(inputs[0].bytes.slice().buffer as ArrayBuffer)
    expect(meta.schema).toEqual(first.schema)
    expect(meta.key_value_metadata).toEqual(first.key_value_metadata)
    expect(meta.row_groups.map((g) => Number(g.num_rows))).toEqual([7, 10, 10, 3, 3])
    expect(merged.splitOffsets).toEqual(
      meta.row_groups.map((g) => Number(g.columns[0].meta_data!.dictionary_page_offset ?? g.columns[0].meta_data!.data_page_offset)),
    )
    expect(merged.splitOffsets[0]).toBe(4)
    // the chunk bytes are the inputs' bytes
    const inRg = parquetMetadata(inputs[2].bytes.slice().buffer as ArrayBuffer).row_groups[0].columns[0].meta_data!
    const outRg = meta.row_groups[4].columns[0].meta_data!
    const slice = (b: Uint8Array, m: typeof inRg) => {
      const start = Number(m.dictionary_page_offset ?? m.data_page_offset)
      return b.subarray(start, start + Number(m.total_compressed_size))
    }
    expect(slice(merged.bytes, outRg)).toEqual(slice(inputs[2].bytes, inRg))
    expect(outRg.statistics).toEqual(inRg.statistics)
  })

  it('adds v3 row lineage columns: first_row_id + position and the data sequence number', async () => {
    const merged = concatParquet(
      [
        { bytes: inputs[0].bytes, lineage: { firstRowId: 100n, sequenceNumber: 3n } },
        { bytes: inputs[2].bytes, lineage: { firstRowId: 5000n, sequenceNumber: 9n } },
      ],
      { lineage: true },
    )
    const got = await readAll(merged.bytes, compressors)
    expect(got.map((r) => r._row_id)).toEqual([100n, 101n, 102n, 103n, 104n, 105n, 106n, 5000n, 5001n, 5002n])
    expect(got.map((r) => r._last_updated_sequence_number)).toEqual([...Array(7).fill(3n), ...Array(3).fill(9n)])
    expect(got.map((r) => r.id)).toEqual([...rows(0, 7), ...rows(30, 33)].map((r) => r.id))
    const meta = parquetMetadata(merged.bytes.slice().buffer as ArrayBuffer)
    expect(meta.schema.slice(-2).map((e) => [e.name, e.field_id])).toEqual([
      ['_row_id', 2147483540],
      ['_last_updated_sequence_number', 2147483539],
    ])
    // a file that already carries them is merged again with them kept
    const again = concatParquet([{ bytes: merged.bytes }, { bytes: inputs[1].bytes, lineage: { firstRowId: 7n, sequenceNumber: 4n } }], { lineage: true })
    const back = await readAll(again.bytes, compressors)
    expect(back.map((r) => r._row_id)).toEqual([...got.map((r) => r._row_id), ...Array.from({ length: 23 }, (_, i) => 7n + BigInt(i))])
    expect(mergeKey(readFooter(merged.bytes), true)).toBe(mergeKey(readFooter(inputs[1].bytes), true))
  })

  it('refuses files whose schemas differ', () => {
    const other = writeDataFile({ ...schema, fields: schema.fields.slice(0, 3) }, [{ id: 1n, b: true, i: 1 }])
    expect(mergeKey(readFooter(other.bytes), false)).not.toBe(mergeKey(readFooter(inputs[0].bytes), false))
    expect(() => concatParquet([{ bytes: inputs[0].bytes }, { bytes: other.bytes }])).toThrow(NotMergeable)
    expect(() => readFooter(new Uint8Array(20))).toThrow(NotMergeable)
  })
})

describe('mergeMetrics', () => {
  const types = primitiveTypes([schema])
  const parts = [rows(0, 7), rows(7, 30), rows(30, 33)]
  const asFile = (m: ReturnType<typeof writeDataFile>['metrics'], path: string): DataFile => ({ filePath: path, partition: {}, ...m })
  const files = parts.map((r, i) => asFile(writeDataFile(schema, r).metrics, `f${i}`))
  const whole = writeDataFile(schema, rows(0, 33)).metrics

  it('sums the counts and sizes and takes the min/max bounds per Iceberg type', () => {
    const m = mergeMetrics(files, types)
    expect(m.recordCount).toBe(33n)
    const num = (x: Map<number, number | bigint> | null | undefined) => new Map([...(x ?? [])].map(([k, v]) => [k, Number(v)]))
    expect(num(m.valueCounts)).toEqual(whole.valueCounts)
    expect(num(m.nullValueCounts)).toEqual(whole.nullValueCounts)
    expect(num(m.nanValueCounts)).toEqual(whole.nanValueCounts)
    const sizes = new Map([...whole.columnSizes.keys()].map((id) => [id, files.reduce((n, f) => n + Number(f.columnSizes!.get(id)), 0)]))
    expect(num(m.columnSizes)).toEqual(sizes)
    expect(m.lowerBounds).toEqual(whole.lowerBounds)
    expect(m.upperBounds).toEqual(whole.upperBounds)
    expect(m.lowerBounds!.get(1)).toEqual(toSingleValueBytes({ kind: 'long' }, MIN + 1n)) // row 1
    expect(m.upperBounds!.get(1)).toEqual(toSingleValueBytes({ kind: 'long' }, MAX))
    expect(m.upperBounds!.get(6)).toEqual(decimalBytes(DEC38 - 3n)) // row 3 (row 0's is null)
  })

  it('compares as the type orders, not as bytes', () => {
    const long = (v: bigint) => toSingleValueBytes({ kind: 'long' }, v)
    const f = (lo: Uint8Array, hi: Uint8Array, path: string): DataFile => ({
      filePath: path,
      partition: {},
      recordCount: 1,
      fileSizeInBytes: 1,
      lowerBounds: new Map([[1, lo]]),
      upperBounds: new Map([[1, hi]]),
      valueCounts: new Map([[1, 1]]),
      nullValueCounts: new Map([[1, 0]]),
    })
    const m = mergeMetrics([f(long(-1n), long(-1n), 'a'), f(long(256n), long(256n), 'b')], types)
    expect(m.lowerBounds!.get(1)).toEqual(long(-1n))
    expect(m.upperBounds!.get(1)).toEqual(long(256n))
    const dec = mergeMetrics(
      [f(decimalBytes(-5n), decimalBytes(-5n), 'a'), f(decimalBytes(300n), decimalBytes(300n), 'b')],
      new Map([[1, { kind: 'decimal', precision: 38, scale: 10 }]]),
    )
    expect(decodeBound({ kind: 'decimal', precision: 38, scale: 10 }, dec.lowerBounds!.get(1)!)).toBe(-5n)
    expect(decodeBound({ kind: 'decimal', precision: 38, scale: 10 }, dec.upperBounds!.get(1)!)).toBe(300n)
  })

  it('drops a bound an input lacks unless that input holds only nulls there', () => {
    const long = (v: bigint) => toSingleValueBytes({ kind: 'long' }, v)
    const withBound: DataFile = {
      filePath: 'a',
      partition: {},
      recordCount: 2,
      fileSizeInBytes: 1,
      valueCounts: new Map([[1, 2]]),
      nullValueCounts: new Map([[1, 0]]),
      lowerBounds: new Map([[1, long(5n)]]),
      upperBounds: new Map([[1, long(9n)]]),
    }
    const allNull: DataFile = {
      filePath: 'b',
      partition: {},
      recordCount: 3,
      fileSizeInBytes: 1,
      valueCounts: new Map([[1, 3]]),
      nullValueCounts: new Map([[1, 3]]),
      lowerBounds: new Map(),
      upperBounds: new Map(),
    }
    const unknown: DataFile = { ...allNull, filePath: 'c', nullValueCounts: new Map([[1, 1]]) }
    expect(mergeMetrics([withBound, allNull], types).lowerBounds!.get(1)).toEqual(long(5n))
    expect(mergeMetrics([withBound, unknown], types).lowerBounds!.has(1)).toBe(false)
    expect(mergeMetrics([withBound, allNull], types).nullValueCounts!.get(1)).toBe(3n)
  })
})

describe('replaceSummary', () => {
  it('counts the added and deleted files and moves the totals', () => {
    const file = (p: string, rows: number, size: number): DataFile => ({ filePath: p, partition: { d: 1 }, recordCount: rows, fileSizeInBytes: size })
    const parent: any = {
      summary: {
        operation: 'append',
        'total-records': '10',
        'total-files-size': '500',
        'total-data-files': '4',
        'total-delete-files': '0',
        'total-position-deletes': '0',
        'total-equality-deletes': '0',
      },
    }
    const manifest: any = { partitionSpecId: 0 }
    const s = replaceSummary(
      parent,
      [{ specId: 0, dataFile: file('m', 6, 200) }],
      [
        { manifest, entry: { status: 1, snapshotId: 1n, sequenceNumber: 1n, fileSequenceNumber: 1n, dataFile: file('a', 2, 120) } },
        { manifest, entry: { status: 1, snapshotId: 1n, sequenceNumber: 1n, fileSequenceNumber: 1n, dataFile: file('b', 4, 130) } },
      ],
    )
    expect(s).toEqual({
      operation: 'replace',
      'added-data-files': '1',
      'deleted-data-files': '2',
      'added-records': '6',
      'deleted-records': '6',
      'added-files-size': '200',
      'removed-files-size': '250',
      'changed-partition-count': '1',
      'total-records': '10',
      'total-files-size': '450',
      'total-data-files': '3',
      'total-delete-files': '0',
      'total-position-deletes': '0',
      'total-equality-deletes': '0',
    })
  })
})
