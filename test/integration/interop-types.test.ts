// Our writer, read by other engines: tables created and appended by OUR code (SqlCatalog on the
// stack's Postgres, data in versitygw) — v2 and v3, unpartitioned, day(ts) and hour(ts) — holding one
// column of every writable type, are read back by PyIceberg's SqlCatalog and DuckDB's iceberg_scan.
// Rows go the roller's way: NDJSON text → parseLossless → toRow → writeDataFile(zstd), one file per
// partition (partitionRecord), one fastAppend. Every case runs twice: through the row writer
// (writeDataFile) and through the column writer (ColumnFileWriter, fed column buffers built from the
// same rows: flat buffers for primitives, Values for nested and geometry columns). The expected
// output is built from the input JSON alone, in interop_common.py's encoding, without our library.
//
// What the readers cannot do (asserted, so a fix upstream shows up here):
// - PyIceberg 0.12 refuses a geometry column (ResolveError "Cannot promote an binary to geometry");
//   it reads the WKB bytes when the column is projected as binary (parquet_stats.py --rows-binary-geometry).
// - PyIceberg 0.12 reads a null map whose values are structs as an empty map (its projection rebuilds
//   the MapArray from the offsets without the validity bitmap); pyarrow and DuckDB read null.
// - DuckDB 1.5.5's iceberg extension refuses any table with a timestamptz_ns or an unknown column
//   ("Unrecognized primitive type"); PyIceberg reads both.
// - interop_common.py prints DuckDB booleans as 1/0 (arrow_lossless_conversion makes them arrow.bool8,
//   whose int8 storage is encoded): normalized below until the harness encodes bool8 as true/false.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pg from 'pg'
import { SqlCatalog } from '../../iceberg/catalog/sql.ts'
import { fastAppend } from '../../iceberg/transaction/append.ts'
import { S3FileIO } from '../../iceberg/io/file-io.ts'
import { isLosslessNumber, parseLossless } from '../../iceberg/spec/json.ts'
import type { DataFile } from '../../iceberg/manifest/manifest.ts'
import { currentSchema, defaultSpec } from '../../iceberg/spec/metadata.ts'
import { writeDataFile } from '../../iceberg/parquet/data-file.ts'
import { ColumnFileWriter } from '../../iceberg/parquet/write.ts'
import { bindSpec, partitionPath, partitionRecord } from '../../iceberg/spec/partition.ts'
import type { IcebergType, NestedField, Row } from '../../iceberg/spec/types.ts'
import { toRow } from '../../iceberg/spec/values.ts'
import { loadZstd } from '../../iceberg/parquet/zstd.ts'
import { ensureVenv, PythonError, runPython, s3Args, sqlCatalogArgs, toExact } from '../support/python.ts'
import { stack } from '../support/stack.ts'
import { rowsToBatch } from '../unit/iceberg/column-batch.ts'

const CATALOG = 'interop'
const NS = `types_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`

let nextId = 1000 // placeholders: the catalog assigns fresh ids
const f = (name: string, type: IcebergType, required = false): NestedField => ({ id: nextId++, name, type, required })
const list = (element: IcebergType): IcebergType => ({ type: 'list', 'element-id': nextId++, element, 'element-required': false })
const map = (key: IcebergType, value: IcebergType): IcebergType => ({
  type: 'map',
  'key-id': nextId++,
  key,
  'value-id': nextId++,
  value,
  'value-required': false,
})

const V2_FIELDS: NestedField[] = [
  f('id', 'long', true),
  f('b', 'boolean'),
  f('i', 'int'),
  f('l', 'long'),
  f('f', 'float'),
  f('d', 'double'),
  f('dec', 'decimal(38, 10)'),
  f('dec2', 'decimal(9, 2)'),
  f('dt', 'date'),
  f('tm', 'time'),
  f('tsl', 'timestamp'),
  f('ts', 'timestamptz'),
  f('s', 'string'),
  f('u', 'uuid'),
  f('fx', 'fixed[4]'),
  f('bin', 'binary'),
  f('st', { type: 'struct', fields: [f('a', 'int'), f('b', 'string'), f('inner', { type: 'struct', fields: [f('x', 'double')] })] }),
  f('lst', list('long')),
  f('mp', map('string', 'decimal(38, 10)')),
  f('mp2', map('int', { type: 'struct', fields: [f('z', 'string')] })),
]
const V3_FIELDS = [...V2_FIELDS, f('tsn', 'timestamp_ns'), f('geo', 'geometry')]

// The producer rows. ts spans 3 days-or-null and 5 hours-or-null; row 2 is the last microsecond before the epoch.
const NDJSON = String.raw`
{"id": 1, "b": true, "i": 2147483647, "l": 9223372036854775807, "f": 0.1, "d": 0.1, "dec": "9999999999999999999999999999.9999999999", "dec2": 1234567.89, "dt": "2026-09-21", "tm": "23:59:59.999999", "tsl": "2026-09-21T14:34:56.123456", "ts": "2026-09-21T14:34:56.123456+02:00", "s": "héllo \"world\" ✓ 𝄞 longer than sixteen", "u": "F79C3E09-677C-4D79-9F6E-8E7E1F4C9D0A", "fx": "AAEC/w==", "bin": "AAECAwQFBgcICQoLDA0ODxAREhM=", "st": {"a": 1, "b": "x", "inner": {"x": 1.5}}, "lst": [1, null, 9223372036854775807], "mp": {"k1": "1.5", "k2": null}, "mp2": [{"key": 1, "value": {"z": "one"}}, {"key": -2, "value": null}], "tsn": "2026-09-21T14:34:56.123456789", "tsnz": "2026-09-21T14:34:56.123456789-01:30", "geo": {"type": "Point", "coordinates": [13.4, 52.5]}}
{"id": 2, "b": false, "i": -2147483648, "l": -9223372036854775808, "f": "NaN", "d": "NaN", "dec": "-9999999999999999999999999999.9999999999", "dec2": "-0.01", "dt": "1969-12-31", "tm": "00:00:00", "tsl": "1969-12-31T23:59:59.999999", "ts": "1969-12-31T23:59:59.999999Z", "s": "", "u": "00000000-0000-0000-0000-000000000000", "fx": "/////w==", "bin": "", "st": {"a": null, "b": null, "inner": null}, "lst": [], "mp": {}, "mp2": [], "tsn": "1969-12-31T23:59:59.999999999", "tsnz": "1969-12-31T23:59:59.999999999Z", "geo": "LINESTRING (30 10, 10 30, 40 40)", "unk": null}
{"id": 3, "f": "-Infinity", "d": 1e308, "dec": "0.0000000001", "ts": "2026-09-21T14:59:00Z", "l": 0, "st": {"inner": {"x": "Infinity"}}, "lst": [-9223372036854775808]}
{"id": 4, "f": 3.4028234663852886e38, "d": -5e-324, "dec": -12.5, "ts": "2026-09-21T15:00:00+00:00", "s": "a", "lst": null, "geo": null, "mp": {"z": "-0.0000000001"}}
{"id": 5, "i": 0, "d": "-Infinity"}
`
  .trim()
  .split('\n')

// ---- the expected output, from the input JSON and the schema (interop_common.py's encoding) ----

const num = (v: unknown) => (isLosslessNumber(v) ? v.value : String(v))
const pad = (s: string, n: number) => (s + '0'.repeat(n)).slice(0, n)

function timestamp(text: string, digits: number, utc: boolean): string {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})?$/.exec(text)!
  const frac = pad(m[3] ?? '', digits)
  if (!utc) return `${m[1]}T${m[2]}.${frac}`
  const zone = m[4] === 'Z' || !m[4] ? 0 : (m[4][0] === '-' ? -1 : 1) * (Number(m[4].slice(1, 3)) * 60 + Number(m[4].slice(4)))
  const t = new Date(Date.parse(`${m[1]}T${m[2]}Z`) - zone * 60_000).toISOString()
  return `${t.slice(0, 19)}.${frac}+00:00`
}

function decimal(text: string, scale: number): string {
  const [int, frac = ''] = text.split('.')
  return `${int}.${pad(frac, scale)}`
}

function wkbHex(code: number, coords: number[][]): string {
  const buf = Buffer.alloc(5 + (code === 1 ? 0 : 4) + coords.length * 16)
  buf.writeUInt8(1, 0)
  buf.writeUInt32LE(code, 1)
  let at = 5
  if (code !== 1) at = buf.writeUInt32LE(coords.length, at)
  for (const [x, y] of coords) at = buf.writeDoubleLE(y, buf.writeDoubleLE(x, at))
  return buf.toString('hex')
}

function geometry(v: any): string {
  if (typeof v !== 'string') return wkbHex(1, [v.coordinates.map(Number)])
  const pts = /^LINESTRING \((.*)\)$/
    .exec(v)![1]
    .split(',')
    .map((p) => p.trim().split(' ').map(Number))
  return wkbHex(2, pts)
}

function expectedValue(type: IcebergType, v: any): any {
  if (v === null || v === undefined) return null
  if (typeof type !== 'string') {
    if (type.type === 'struct') return Object.fromEntries(type.fields.map((fl) => [fl.name, expectedValue(fl.type, v[fl.name])]))
    if (type.type === 'list') return v.map((e: unknown) => expectedValue(type.element, e))
    const pairs: Array<[unknown, unknown]> = Array.isArray(v) ? v.map((e: any) => [e.key, e.value]) : Object.entries(v)
    return pairs.map(([k, x]) => [expectedValue(type.key, k), expectedValue(type.value, x)])
  }
  const dec = /^decimal\(\d+, (\d+)\)$/.exec(type)
  if (dec) return decimal(num(v), Number(dec[1]))
  switch (type) {
    case 'int':
    case 'long':
      return BigInt(num(v))
    case 'float':
      return typeof v === 'string' ? v : Math.fround(Number(num(v)))
    case 'double':
      return typeof v === 'string' ? v : Number(num(v))
    case 'time':
      return `${v.slice(0, 8)}.${pad(v.slice(9), 6)}`
    case 'timestamp':
      return timestamp(v, 6, false)
    case 'timestamptz':
      return timestamp(v, 6, true)
    case 'timestamp_ns':
      return timestamp(v, 9, false)
    case 'timestamptz_ns':
      return timestamp(v, 9, true)
    case 'uuid':
      return v.toLowerCase()
    case 'geometry':
      return geometry(v)
    case 'unknown':
      return null
    default:
      return v // boolean, string, date, fixed/binary (already canonical base64)
  }
}

const inputsFor = (fields: NestedField[]) => {
  const names = new Set(fields.map((x) => x.name))
  return NDJSON.map((line) => {
    const o = parseLossless(line) as Record<string, unknown>
    for (const k of Object.keys(o)) if (!names.has(k)) delete o[k]
    return o
  })
}
const expectedRows = (fields: NestedField[]) => inputsFor(fields).map((o) => Object.fromEntries(fields.map((x) => [x.name, expectedValue(x.type, o[x.name])])))

// ---- writing through our library ----

interface Written {
  table: string
  metadataLocation: string
  snapshotId: bigint
  files: Array<DataFile & { ids: bigint[] }>
  fieldIds: Map<string, number>
}

let pool: pg.Pool
let catalog: SqlCatalog
const s3 = () => stack().gateway
const catalogArgs = () => sqlCatalogArgs({ databaseUrl: stack().databaseUrl, catalogName: CATALOG, s3: s3() })

type Writer = 'rows' | 'columns'

async function writeTable(name: string, version: 2 | 3, fields: NestedField[], transform?: 'day' | 'hour', writer: Writer = 'rows'): Promise<Written> {
  const created = await catalog.createTable([NS], {
    name,
    schema: { fields },
    formatVersion: version,
    partition: transform ? [{ source: 'ts', transform }] : [],
  })
  const schema = currentSchema(created.metadata)
  const bound = bindSpec(defaultSpec(created.metadata), schema)
  const groups = new Map<string, { partition: ReturnType<typeof partitionRecord>; rows: Row[]; ids: bigint[] }>()
  for (const input of inputsFor(fields)) {
    const r = toRow(schema, input, { formatVersion: version })
    if (!r.ok) throw new Error(`toRow refused ${JSON.stringify(r.rejects)}`)
    const partition = partitionRecord(bound, r.row)
    const key = partitionPath(bound, partition)
    const g = groups.get(key) ?? { partition, rows: [], ids: [] }
    g.rows.push(r.row)
    g.ids.push(r.row.id as bigint)
    groups.set(key, g)
  }
  const zstd = await loadZstd()
  const files: Written['files'] = []
  for (const [key, g] of groups) {
    const { bytes, metrics: m } = writer === 'rows' ? writeDataFile(schema, g.rows, { compression: zstd }) : writeColumns(schema, g.rows, zstd)
    const filePath = `${created.metadata.location}/data/${key ? `${key}/` : ''}${crypto.randomUUID()}.parquet`
    await created.io.write(filePath, bytes)
    files.push({
      filePath,
      fileFormat: 'PARQUET',
      partition: g.partition,
      recordCount: m.recordCount,
      fileSizeInBytes: m.fileSizeInBytes,
      columnSizes: m.columnSizes,
      valueCounts: m.valueCounts,
      nullValueCounts: m.nullValueCounts,
      nanValueCounts: m.nanValueCounts,
      lowerBounds: m.lowerBounds,
      upperBounds: m.upperBounds,
      splitOffsets: m.splitOffsets,
      ids: g.ids,
    })
  }
  const { table, snapshotId } = await fastAppend(catalog, created, files)
  const fieldIds = new Map<string, number>()
  const walk = (fs: NestedField[], prefix: string) =>
    fs.forEach((x) => {
      fieldIds.set(prefix + x.name, x.id)
      if (typeof x.type !== 'string' && x.type.type === 'struct') walk(x.type.fields, `${prefix}${x.name}.`)
    })
  walk(schema.fields, '')
  return { table: `${NS}.${name}`, metadataLocation: table.metadataLocation, snapshotId, files, fieldIds }
}

/** The same rows through ColumnFileWriter: two batches in one row group, then a row group of the rest. */
function writeColumns(schema: ReturnType<typeof currentSchema>, rows: Row[], compression: Awaited<ReturnType<typeof loadZstd>>) {
  const w = new ColumnFileWriter(schema, { compression })
  const cut = Math.ceil(rows.length / 2)
  w.writeRowGroup([rowsToBatch(schema, rows.slice(0, 1)), rowsToBatch(schema, rows.slice(1, cut))])
  w.writeRowGroup([rowsToBatch(schema, rows.slice(cut))])
  return w.finish()
}

const pairs = (m: Map<number, number> | null | undefined) => [...(m ?? new Map()).entries()].sort((a, b) => a[0] - b[0]).map(([k, v]) => [BigInt(k), BigInt(v)])
const b64 = (m: Map<number, Uint8Array> | null | undefined) =>
  [...(m ?? new Map()).entries()].sort((a, b) => a[0] - b[0]).map(([k, v]) => [BigInt(k), Buffer.from(v).toString('base64')])
const asMap = (p: any[] | null): Map<bigint, unknown> => new Map((p ?? []).map(([k, v]) => [k, v]))

/** DuckDB's booleans come out as 1/0 through the harness (see the top of the file). */
const duckBooleans = (rows: any[]) => rows.map((r) => ({ ...r, b: r.b === 1n ? true : r.b === 0n ? false : r.b }))
/** PyIceberg 0.12 reads a null map<int, struct> as [] (see the top of the file). */
const pyicebergMaps = (rows: any[]) => rows.map((r) => ({ ...r, mp2: r.mp2 ?? [] }))

beforeAll(async () => {
  await ensureVenv()
  pool = new pg.Pool({ connectionString: stack().databaseUrl, max: 4 })
  const { endpoint, region, accessKeyId, secretAccessKey } = s3()
  catalog = new SqlCatalog({
    name: CATALOG,
    sql: pool,
    warehouseLocation: `s3://${s3().bucket}/interop`,
    io: new S3FileIO({ endpoint, region, accessKeyId, secretAccessKey }),
  })
}, 15 * 60_000)

afterAll(async () => {
  await pool?.end()
})

const cases: Array<[string, 2 | 3, 'day' | 'hour' | undefined, number, Writer]> = (['rows', 'columns'] as const).flatMap(
  (writer) =>
    [
      [`v2 unpartitioned (${writer})`, 2, undefined, 1, writer],
      [`v2 day(ts) (${writer})`, 2, 'day', 3, writer],
      [`v2 hour(ts) (${writer})`, 2, 'hour', 5, writer],
      [`v3 unpartitioned (${writer})`, 3, undefined, 1, writer],
      [`v3 day(ts) (${writer})`, 3, 'day', 3, writer],
      [`v3 hour(ts) (${writer})`, 3, 'hour', 5, writer],
    ] as Array<[string, 2 | 3, 'day' | 'hour' | undefined, number, Writer]>,
)

describe.each(cases)('%s: every writable type, read by PyIceberg and DuckDB', (label, version, transform, fileCount, writer) => {
  const fields = version === 3 ? V3_FIELDS : V2_FIELDS
  const expected = expectedRows(fields)
  const noGeo = fields.filter((x) => x.name !== 'geo').flatMap((x) => ['--select', x.name])
  const withoutGeo = (rows: any[]) => rows.map(({ geo: _, ...r }) => r)
  let w: Written

  it('our writer commits one data file per partition', async () => {
    w = await writeTable(label.replace(/[^a-z0-9]+/g, '_'), version, fields, transform, writer)
    expect(w.files).toHaveLength(fileCount)
    expect(w.files.flatMap((x) => x.ids).sort()).toEqual([1n, 2n, 3n, 4n, 5n])
  })

  it('PyIceberg SqlCatalog loads it and reads every value exactly', async () => {
    const out = toExact(await runPython('pyiceberg_scan.py', [...catalogArgs(), w.table, '--order-by', 'id', ...(version === 3 ? noGeo : [])]))
    expect(out).toMatchObject({ format_version: BigInt(version), metadata_location: w.metadataLocation, current_snapshot_id: w.snapshotId, row_count: 5n })
    expect(out.rows).toEqual(pyicebergMaps(version === 3 ? withoutGeo(expected) : expected))
    expect(out.snapshots).toHaveLength(1)
    expect(out.snapshots[0].summary).toMatchObject({ operation: 'append', 'added-records': '5', 'added-data-files': String(fileCount), 'total-records': '5' })
    if (version === 3) {
      const geo: any = await runPython('pyiceberg_scan.py', [...catalogArgs(), w.table, '--no-files']).catch((e) => e)
      expect(geo).toBeInstanceOf(PythonError)
      expect(geo.stderr).toMatch(/ResolveError: Cannot promote an binary to geometry/)
      const wkb = toExact(await runPython('parquet_stats.py', [...catalogArgs(), w.table, '--order-by', 'id', '--rows-binary-geometry']))
      expect(wkb.rows).toEqual(pyicebergMaps(expected))
    }
  })

  it('DuckDB iceberg_scan on the metadata location reads the same values', async () => {
    const out = toExact(await runPython('duckdb_scan.py', [...s3Args(s3()), '--metadata', w.metadataLocation, '--order-by', 'id']))
    expect(out.row_count).toBe(5n)
    expect(duckBooleans(out.rows)).toEqual(expected)
    expect(out.snapshots.map((s: any) => s.snapshot_id)).toEqual([w.snapshotId])
  })

  it('manifests: PyIceberg reads back our metrics, bounds and partitions, and its own Parquet statistics agree', async () => {
    const scan = toExact(await runPython('pyiceberg_scan.py', [...catalogArgs(), w.table, '--no-rows']))
    const stats = toExact(await runPython('parquet_stats.py', [...catalogArgs(), w.table]))
    expect(scan.files).toHaveLength(fileCount)
    const id = (name: string) => BigInt(w.fieldIds.get(name)!)
    const counts = new Set<bigint>(stats.counts_only) // nanosecond columns PyIceberg cannot bound
    expect(stats.counts_only).toEqual(version === 3 ? [id('tsn')] : [])
    const nestedLeaves = new Set<bigint>() // list/map children: PyIceberg counts them, Java (and we) do not
    const structChildren = new Set(['st.a', 'st.b', 'st.inner.x'].map(id)) // Java bounds them, PyIceberg does not
    for (const x of stats.files[0].value_counts) if (!scan.files[0].value_counts.some(([k]: any) => k === x[0])) nestedLeaves.add(x[0])
    expect(nestedLeaves.size).toBe(5) // lst.element, mp.key, mp.value, mp2.key, mp2.value.z

    for (const ours of w.files) {
      const read = scan.files.find((x: any) => x.file_path === ours.filePath)
      // 1. PyIceberg's reading of our manifest is exactly what we wrote
      expect(read).toMatchObject({
        status: 'ADDED',
        content: 'DATA',
        file_format: 'PARQUET',
        snapshot_id: w.snapshotId,
        sequence_number: 1n,
        record_count: BigInt(ours.recordCount),
        file_size_in_bytes: BigInt(ours.fileSizeInBytes),
        column_sizes: pairs(ours.columnSizes as any),
        value_counts: pairs(ours.valueCounts as any),
        null_value_counts: pairs(ours.nullValueCounts as any),
        nan_value_counts: pairs(ours.nanValueCounts as any),
        lower_bounds: b64(ours.lowerBounds),
        upper_bounds: b64(ours.upperBounds),
        split_offsets: (ours.splitOffsets ?? []).map(BigInt),
      })
      // counts and bounds agree with the expected rows of this file
      const rows = expected.filter((r) => ours.ids.includes(r.id))
      const nulls = (name: string) => BigInt(rows.filter((r) => r[name] === null).length)
      const nans = (name: string) => BigInt(rows.filter((r) => r[name] === 'NaN').length)
      expect(asMap(read.null_value_counts).get(id('ts'))).toBe(nulls('ts'))
      expect(asMap(read.nan_value_counts).get(id('f'))).toBe(nans('f'))
      expect(asMap(read.nan_value_counts).get(id('d'))).toBe(nans('d'))
      const ids = rows.map((r) => r.id as bigint)
      expect(read.readable_bounds.id).toEqual({ lower_bound: ids.reduce((a, b) => (a < b ? a : b)), upper_bound: ids.reduce((a, b) => (a > b ? a : b)) })
      const tss = rows
        .map((r) => r.ts)
        .filter((t): t is string => t !== null)
        .sort()
      expect(read.readable_bounds.ts ?? null).toEqual(tss.length ? { lower_bound: tss[0], upper_bound: tss.at(-1) } : null)
      if (version === 3) {
        const tsn = rows
          .map((r) => r.tsn)
          .filter((t): t is string => t !== null)
          .sort()
        expect(read.readable_bounds.tsn ?? null).toEqual(tsn.length ? { lower_bound: tsn[0], upper_bound: tsn.at(-1) } : null)
      }
      if (ids.includes(1n) && ids.includes(2n)) {
        expect(read.readable_bounds.l).toEqual({ lower_bound: -9223372036854775808n, upper_bound: 9223372036854775807n })
        expect(read.readable_bounds.dec).toEqual({
          lower_bound: '-9999999999999999999999999999.9999999999',
          upper_bound: '9999999999999999999999999999.9999999999',
        })
      }
      // the partition tuple, as PyIceberg decodes it, is the partition of this file's rows
      const key = transform === 'day' ? 'ts_day' : 'ts_hour'
      if (transform) {
        const hours = tss.map((t) => BigInt(Math.floor(Date.parse(t.slice(0, 19) + 'Z') / 3_600_000)))
        expect(read.partition[key]).toEqual(tss.length === 0 ? null : transform === 'day' ? tss[0].slice(0, 10) : hours[0])
        expect(new Set<unknown>(transform === 'day' ? tss.map((t) => t.slice(0, 10)) : hours).size).toBeLessThanOrEqual(1)
      } else expect(read.partition).toEqual({})

      // 2. PyIceberg's own statistics of our Parquet footer: the same where both define a metric
      const computed = stats.files.find((x: any) => x.file_path === ours.filePath)
      expect(computed.record_count).toBe(BigInt(ours.recordCount))
      expect(computed.split_offsets).toEqual(read.split_offsets)
      expect(computed.column_sizes).toEqual(read.column_sizes)
      if (transform) expect(computed.partition).toEqual(read.partition)
      for (const metric of ['value_counts', 'null_value_counts'] as const) {
        expect(computed[metric].filter(([k]: any) => !nestedLeaves.has(k))).toEqual(read[metric])
      }
      expect(computed.nan_value_counts).toEqual([]) // PyIceberg takes no NaN counts from a footer
      for (const metric of ['lower_bounds', 'upper_bounds'] as const) {
        const theirs = asMap(computed[metric])
        for (const [k, v] of asMap(read[metric])) {
          if (structChildren.has(k)) continue
          if (counts.has(k)) continue
          if (k === id('s') && rows.some((r) => [...(r.s ?? '')].length > 16)) {
            // truncate(16): we cut at 16 code points as Java does; PyIceberg cuts the footer's min/max,
            // which hyparquet-writer already cut at 16 bytes. Both are bounds of the column.
            const long = 'héllo "world" ✓ 𝄞 longer than sixteen'
            const [ourText, theirText] = [v as string, theirs.get(k) as string].map((x) => Buffer.from(x, 'base64').toString())
            const isMin = rows.every((r) => r.s === null || r.s >= long)
            if (metric === 'lower_bounds' && isMin) expect([ourText, theirText]).toEqual(['héllo "world" ✓ ', 'héllo "world" '])
            else if (metric === 'upper_bounds') expect([ourText, theirText]).toEqual(['héllo "world" ✓!', 'héllo "world"!'])
            else expect(theirText).toBe(ourText)
            continue
          }
          expect([k, theirs.get(k)]).toEqual([k, v])
        }
        expect([...theirs.keys()].filter((k) => !asMap(read[metric]).has(k))).toEqual([])
        for (const k of counts) expect(asMap(read[metric]).has(k)).toBe(rows.some((r) => r.tsn !== null)) // ours bounds them
      }
    }
  })
})

describe('v3 types DuckDB 1.5.5 cannot read: timestamptz_ns and unknown', () => {
  it.each([
    ['tsnz', 'timestamptz_ns', 'rows'],
    ['unk', 'unknown', 'rows'],
    ['tsnz', 'timestamptz_ns', 'columns'],
    ['unk', 'unknown', 'columns'],
  ] as const)('%s (%s), %s writer: PyIceberg reads it exactly, DuckDB refuses the table', async (name, type, writer) => {
    const fields = [V2_FIELDS[0], V2_FIELDS[11], f(name, type)]
    const w = await writeTable(`only_${name}_${writer}`, 3, fields, undefined, writer)
    const out = toExact(await runPython('pyiceberg_scan.py', [...catalogArgs(), w.table, '--order-by', 'id', '--no-files']))
    const expected = expectedRows(fields)
    expect(out.rows).toEqual(expected)
    if (name === 'tsnz') expect(out.rows[0].tsnz).toBe('2026-09-21T16:04:56.123456789+00:00')
    const duck: any = await runPython('duckdb_scan.py', [...s3Args(s3()), '--metadata', w.metadataLocation]).catch((e) => e)
    expect(duck).toBeInstanceOf(PythonError)
    expect(duck.stderr).toContain(`Unrecognized primitive type: ${type}`)
  })
})
