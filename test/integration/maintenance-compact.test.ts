// Compaction on real tables: our SqlCatalog on the stack's Postgres, data in the stack's S3. Ten
// small appends (v2 unpartitioned, v3 day(ts)) are compacted into one file per partition as one
// `replace` snapshot; PyIceberg and DuckDB read every row identical before and after. Nothing to
// merge commits nothing. A fast append committed between the compaction's plan and its commit makes
// it re-apply on the fresh base: the new rows and the compacted rows are each present once.
import { parquetReadObjects } from 'hyparquet'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Catalog, LoadedTable } from '../../iceberg/catalog/index.ts'
import { SqlCatalog } from '../../iceberg/catalog/sql.ts'
import { fastAppend } from '../../iceberg/transaction/append.ts'
import { S3FileIO } from '../../iceberg/io/file-io.ts'
import { compactTable } from '../../iceberg/maintenance/compact.ts'
import type { DataFile } from '../../iceberg/manifest/manifest.ts'
import { currentSchema, currentSnapshot, defaultSpec } from '../../iceberg/spec/metadata.ts'
import { writeDataFile } from '../../iceberg/parquet/data-file.ts'
import { bindSpec, partitionPath, partitionRecord } from '../../iceberg/spec/partition.ts'
import { readLiveFiles } from '../../iceberg/read/live-files.ts'
import type { NestedField, Row } from '../../iceberg/spec/types.ts'
import { loadZstd, loadZstdDecompress } from '../../iceberg/parquet/zstd.ts'
import { ensureVenv, runPython, s3Args, sqlCatalogArgs, toExact } from '../support/python.ts'
import { stack } from '../support/stack.ts'

const CATALOG = 'maintenance-compact'
const NS = `compact_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`
const MAX = 9223372036854775807n
const MIN = -9223372036854775808n
const DEC38 = 10n ** 38n - 1n
const DAY = 86_400_000_000n
const T0 = 1_790_000_000_000_000n // 2026-09-21 (micros)

const fields: NestedField[] = [
  { id: 1, name: 'id', required: true, type: 'long' },
  { id: 2, name: 'big', required: false, type: 'long' },
  { id: 3, name: 'amount', required: false, type: 'decimal(38, 10)' },
  { id: 4, name: 'ts', required: false, type: 'timestamptz' },
  { id: 5, name: 'name', required: false, type: 'string' },
  { id: 6, name: 'd', required: false, type: 'double' },
  {
    id: 7,
    name: 'nested',
    required: false,
    type: {
      type: 'struct',
      fields: [
        { id: 8, name: 'tags', required: false, type: { type: 'list', 'element-id': 9, element: 'long', 'element-required': false } },
        {
          id: 10,
          name: 'counts',
          required: false,
          type: { type: 'map', 'key-id': 11, key: 'string', 'value-id': 12, value: 'decimal(38, 10)', 'value-required': false },
        },
      ],
    },
  },
  { id: 13, name: '__ingest_ts', required: false, type: 'timestamptz' },
]

function row(n: number): Row {
  const k = BigInt(n)
  return {
    id: k,
    big: n % 3 === 0 ? MAX - k : n % 3 === 1 ? MIN + k : null,
    amount: n % 4 === 0 ? DEC38 - k : n % 4 === 1 ? -DEC38 + k : n % 4 === 2 ? 1n : null,
    ts: n % 5 === 4 ? null : T0 + BigInt(n % 3) * DAY + k * 1_000_001n, // 3 days and null
    name: n % 6 === 0 ? null : `name ${n} ✓`,
    d: n % 7 === 0 ? NaN : n / 10,
    nested:
      n % 8 === 0
        ? null
        : {
            tags: [k, null, MAX],
            counts: [
              ['k', DEC38 - k],
              ['n', null],
            ],
          },
    __ingest_ts: 1_800_000_000_000_000n + k,
  }
}

let pool: pg.Pool
let catalog: SqlCatalog
const s3 = () => stack().s3
const catalogArgs = () => sqlCatalogArgs({ databaseUrl: stack().databaseUrl, catalogName: CATALOG, s3: s3() })

async function append(cat: Catalog, table: LoadedTable, rows: Row[]): Promise<LoadedTable> {
  const schema = currentSchema(table.metadata)
  const bound = bindSpec(defaultSpec(table.metadata), schema)
  const groups = new Map<string, { partition: ReturnType<typeof partitionRecord>; rows: Row[] }>()
  for (const r of rows) {
    const partition = partitionRecord(bound, r)
    const key = partitionPath(bound, partition)
    const g = groups.get(key) ?? { partition, rows: [] }
    g.rows.push(r)
    groups.set(key, g)
  }
  const zstd = await loadZstd()
  const files: DataFile[] = []
  for (const [key, g] of groups) {
    const { bytes, metrics } = writeDataFile(schema, g.rows, { compression: zstd })
    const filePath = `${table.metadata.location}/data/${key ? `${key}/` : ''}${crypto.randomUUID()}.parquet`
    await table.io.write(filePath, bytes)
    files.push({ filePath, fileFormat: 'PARQUET', partition: g.partition, ...metrics })
  }
  return (await fastAppend(cat, table, files)).table
}

async function create(name: string, version: 2 | 3, partitioned: boolean, appends: number): Promise<LoadedTable> {
  let table = await catalog.createTable([NS], {
    name,
    schema: { fields },
    formatVersion: version,
    partition: partitioned ? [{ source: 'ts', transform: 'day' }] : [],
  })
  for (let i = 0; i < appends; i++)
    table = await append(
      catalog,
      table,
      [0, 1, 2, 3, 4].map((j) => row(i * 5 + j)),
    )
  return table
}

const pyScan = async (table: string, extra: string[] = []) =>
  toExact(await runPython('pyiceberg_scan.py', [...catalogArgs(), `${NS}.${table}`, '--order-by', 'id', ...extra]))
const duckScan = async (metadata: string) =>
  toExact(await runPython('duckdb_scan.py', [...s3Args(s3()), '--metadata', metadata, '--order-by', 'id', '--no-snapshots']))

beforeAll(async () => {
  await ensureVenv()
  pool = new pg.Pool({ connectionString: stack().databaseUrl, max: 4 })
  const { endpoint, region, accessKeyId, secretAccessKey } = s3()
  catalog = new SqlCatalog({
    name: CATALOG,
    sql: pool,
    warehouseLocation: `s3://${s3().bucket}/${CATALOG}`,
    io: new S3FileIO({ endpoint, region, accessKeyId, secretAccessKey }),
  })
}, 15 * 60_000)

afterAll(async () => {
  await pool?.end()
})

const cases: Array<[string, 2 | 3, boolean, number]> = [
  ['v2 unpartitioned', 2, false, 1],
  ['v3 day(ts)', 3, true, 4],
]

describe.each(cases)('%s: 10 small appends compacted', (label, version, partitioned, partitions) => {
  const name = label.replace(/[^a-z0-9]+/g, '_')
  let table: LoadedTable
  let before: any
  let duckBefore: any

  it('compacts to one file per partition in one replace snapshot, every row identical for PyIceberg and DuckDB', async () => {
    table = await create(name, version, partitioned, 10)
    before = await pyScan(name)
    duckBefore = await duckScan(table.metadataLocation)
    expect(before.row_count).toBe(50n)
    expect(before.files).toHaveLength(10 * partitions)
    expect(duckBefore.rows).toHaveLength(50)

    const result = await compactTable(catalog, table, { retry: { attempts: 3, minBackoffMs: 50, maxBackoffMs: 200 } })
    expect(result).not.toBeNull()
    table = result!.table
    expect(result!).toMatchObject({ rewrittenFiles: 10 * partitions, addedFiles: partitions })
    expect(result!.bytesCompacted).toBe(before.files.reduce((n: number, f: any) => n + Number(f.file_size_in_bytes), 0))

    const after = await pyScan(name)
    expect(after.rows).toEqual(before.rows)
    expect(after.files).toHaveLength(partitions)
    expect(after.files.map((f: any) => f.record_count).reduce((a: bigint, b: bigint) => a + b, 0n)).toBe(50n)
    const snap = after.snapshots.at(-1)
    expect(snap).toMatchObject({ snapshot_id: result!.snapshotId, operation: 'replace', parent: before.current_snapshot_id })
    expect(snap.summary).toMatchObject({
      operation: 'replace',
      'added-data-files': String(partitions),
      'deleted-data-files': String(10 * partitions),
      'added-records': '50',
      'deleted-records': '50',
      'total-records': '50',
      'total-data-files': String(partitions),
      'changed-partition-count': String(partitions),
      'total-delete-files': '0',
    })
    const size = after.files.reduce((n: bigint, f: any) => n + f.file_size_in_bytes, 0n)
    expect(snap.summary['total-files-size']).toBe(String(size))
    expect(snap.summary['added-files-size']).toBe(String(size))
    // the merged entries: ADDED in the replace snapshot, bounds covering every input
    for (const f of after.files) expect(f).toMatchObject({ status: 'ADDED', snapshot_id: result!.snapshotId })
    if (!partitioned) {
      expect(after.files[0].readable_bounds.id).toEqual({ lower_bound: 0n, upper_bound: 49n })
      expect(after.files[0].readable_bounds.big).toEqual({ lower_bound: MIN + 1n, upper_bound: MAX })
      expect(after.files[0].readable_bounds.amount).toEqual({
        lower_bound: '-9999999999999999999999999999.9999999998',
        upper_bound: '9999999999999999999999999999.9999999999',
      }) // rows 1 and 0
    }
    // a filtered scan still prunes and finds rows through the merged bounds
    const filtered = await pyScan(name, ['--row-filter', 'id >= 45', '--no-files'])
    expect(filtered.rows).toEqual(before.rows.filter((r: any) => r.id >= 45n))

    const duckAfter = await duckScan(result!.table.metadataLocation)
    expect(duckAfter.rows).toEqual(duckBefore.rows)
  })

  it('nothing left to merge: null and no commit', async () => {
    const again = await compactTable(catalog, table)
    expect(again).toBeNull()
    const reloaded = await catalog.loadTable(table.identifier)
    expect(reloaded.metadataLocation).toBe(table.metadataLocation)
  })

  it.runIf(version === 3)('v3: the merged files keep every row id and last-updated sequence number', async () => {
    const files = await readLiveFiles(table)
    const decompress = { ZSTD: await loadZstdDecompress() }
    const ids: bigint[] = []
    for (const { entry } of files.data) {
      const bytes = await table.io.read(entry.dataFile.filePath)
      const rows = await parquetReadObjects({
        file: bytes.slice().buffer as ArrayBuffer,
        compressors: decompress,
        columns: ['id', '_row_id', '_last_updated_sequence_number'],
      })
      for (const r of rows) {
        ids.push(r._row_id)
        // append i (sequence number i + 1) wrote ids 5i..5i+4
        expect(r._last_updated_sequence_number).toBe(r.id / 5n + 1n)
      }
    }
    // before compaction, rows got ids 0..49 in append order (partition files in write order)
    expect(ids.sort((a, b) => (a < b ? -1 : 1))).toEqual(Array.from({ length: 50 }, (_, i) => BigInt(i)))
    expect(table.metadata['next-row-id']).toBeGreaterThanOrEqual(100n)
  })
})

describe('racing a fast append', () => {
  it('re-applies on the fresh base: the appended rows and the compacted rows are each there once', async () => {
    const table = await create('race', 2, false, 4)
    let raced = false
    let racingSnapshot: bigint | undefined
    // A catalog whose first commit finds a roll committed just before it.
    const racing: Catalog = Object.create(catalog, {
      commitTable: {
        value: async (t: LoadedTable, req: any, upd: any) => {
          if (!raced) {
            raced = true
            const fresh = await catalog.loadTable(t.identifier)
            const appended = await append(catalog, fresh, [row(100), row(101)])
            racingSnapshot = currentSnapshot(appended.metadata)!['snapshot-id']
          }
          return catalog.commitTable(t, req, upd)
        },
      },
    })
    const result = await compactTable(racing, table, { retry: { attempts: 3, minBackoffMs: 50, maxBackoffMs: 200 } })
    expect(raced).toBe(true)
    expect(result).toMatchObject({ rewrittenFiles: 4, addedFiles: 1 })
    const out = await pyScan('race')
    expect(out.rows.map((r: any) => r.id)).toEqual([...Array.from({ length: 20 }, (_, i) => BigInt(i)), 100n, 101n])
    expect(out.files).toHaveLength(2) // the merged file and the racing roll's file
    const snap = out.snapshots.at(-1)
    expect(snap).toMatchObject({ operation: 'replace', parent: racingSnapshot })
    expect(snap.summary).toMatchObject({ 'total-records': '22', 'total-data-files': '2', 'deleted-data-files': '4' })
    const duck = await duckScan(result!.table.metadataLocation)
    expect(duck.rows.map((r: any) => r.id)).toEqual(out.rows.map((r: any) => r.id))
  })

  it('plans again from scratch when an input was compacted away meanwhile', async () => {
    const table = await create('race2', 2, false, 3)
    let raced = false
    const racing: Catalog = Object.create(catalog, {
      commitTable: {
        value: async (t: LoadedTable, req: any, upd: any) => {
          if (!raced) {
            raced = true
            await compactTable(catalog, await catalog.loadTable(t.identifier)) // another compactor wins
            await append(catalog, await catalog.loadTable(t.identifier), [row(200)])
          }
          return catalog.commitTable(t, req, upd)
        },
      },
    })
    const result = await compactTable(racing, table, { retry: { attempts: 3, minBackoffMs: 50, maxBackoffMs: 200 } })
    // re-planned on the new base: the winner's merged file and the new roll's file merge again
    expect(result).toMatchObject({ rewrittenFiles: 2, addedFiles: 1 })
    const out = await pyScan('race2')
    expect(out.rows.map((r: any) => r.id)).toEqual([...Array.from({ length: 15 }, (_, i) => BigInt(i)), 200n])
    expect(out.files).toHaveLength(1)
  })
})
