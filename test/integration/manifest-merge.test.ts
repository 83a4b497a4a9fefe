// Merged and rewritten manifests read by other engines: a day(ts)-partitioned v2 table on the SQL
// catalog (Postgres + the stack's S3) gets 120 one-row appends through appendFiles (the roller's
// append): the 100th merges the 100 manifests into one (the default min-count), so the current
// snapshot lists 21. PyIceberg and DuckDB read every row exactly, and PyIceberg sees each carried
// file EXISTING with the snapshot id and sequence numbers it was added with. PyIceberg appends after
// our merge; then the maintenance manifest rewrite folds everything (PyIceberg's manifest included)
// into one manifest, PyIceberg appends again, and both engines still read every row exactly.
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LoadedTable } from '../../iceberg/catalog/index.ts'
import { SqlCatalog } from '../../iceberg/catalog/sql.ts'
import { S3FileIO } from '../../iceberg/io/file-io.ts'
import { parseLossless, stringifyLossless } from '../../iceberg/spec/json.ts'
import type { DataFile } from '../../iceberg/manifest/manifest.ts'
import { currentSchema, defaultSpec } from '../../iceberg/spec/metadata.ts'
import { rewriteManifests } from '../../iceberg/maintenance/rewrite-manifests.ts'
import { writeDataFile } from '../../iceberg/parquet/data-file.ts'
import { bindSpec, partitionRecord } from '../../iceberg/spec/partition.ts'
import { appendFiles } from '../../iceberg/transaction/merge-append.ts'
import { toRow } from '../../iceberg/spec/values.ts'
import { ensureVenv, runPython, s3Args, sqlCatalogArgs, toExact } from '../support/python.ts'
import { stack } from '../support/stack.ts'

const CATALOG = 'manifest-merge'
const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`
const NS = `merge_${run}`
const TABLE = `${NS}.events`
const RETRY = { attempts: 5, minBackoffMs: 10, maxBackoffMs: 50 }
const APPENDS = 120

let pool: pg.Pool
let catalog: SqlCatalog
const catalogArgs = () => sqlCatalogArgs({ databaseUrl: stack().databaseUrl, catalogName: CATALOG, s3: stack().s3 })

beforeAll(async () => {
  await ensureVenv()
  pool = new pg.Pool({ connectionString: stack().databaseUrl, max: 4 })
  const { endpoint, region, accessKeyId, secretAccessKey, bucket } = stack().s3
  catalog = new SqlCatalog({
    name: CATALOG,
    sql: pool,
    warehouseLocation: `s3://${bucket}/manifest-merge-${run}`,
    io: new S3FileIO({ endpoint, region, accessKeyId, secretAccessKey }),
  })
}, 15 * 60_000)

afterAll(async () => {
  await pool?.end()
})

/** Row i: its day cycles over 5 days, so the table has 5 partitions. */
function rowOf(i: number) {
  const day = 1 + (i % 5)
  const ts = `2026-05-0${day}T10:00:${String(i % 60).padStart(2, '0')}.${String(i).padStart(6, '0')}Z`
  return { json: `{"id": ${i}, "name": "row-${i}", "ts": "${ts}"}`, expected: { id: BigInt(i), name: `row-${i}`, ts: ts.replace('Z', '+00:00') } }
}

async function oneRowFile(table: LoadedTable, i: number): Promise<DataFile> {
  const schema = currentSchema(table.metadata)
  const r = toRow(schema, parseLossless(rowOf(i).json))
  if (!r.ok) throw new Error(JSON.stringify(r.rejects))
  const { bytes, metrics: m } = writeDataFile(schema, [r.row])
  const filePath = `${table.metadata.location}/data/${crypto.randomUUID()}.parquet`
  await table.io.write(filePath, bytes)
  return {
    filePath,
    fileFormat: 'PARQUET',
    partition: partitionRecord(bindSpec(defaultSpec(table.metadata), schema), r.row),
    recordCount: m.recordCount,
    fileSizeInBytes: m.fileSizeInBytes,
    columnSizes: m.columnSizes,
    valueCounts: m.valueCounts,
    nullValueCounts: m.nullValueCounts,
    nanValueCounts: m.nanValueCounts,
    lowerBounds: m.lowerBounds,
    upperBounds: m.upperBounds,
    splitOffsets: m.splitOffsets,
  }
}

const pyScan = async () => toExact(await runPython('pyiceberg_scan.py', [...catalogArgs(), TABLE, '--order-by', 'id'], undefined, { timeoutMs: 300_000 }))
const duckScan = async (metadata: string) =>
  toExact(await runPython('duckdb_scan.py', [...s3Args(stack().s3), '--metadata', metadata, '--order-by', 'id', '--no-snapshots']))
const pyAppend = async (rows: unknown[]) =>
  toExact(await runPython('pyiceberg_append.py', [...catalogArgs(), TABLE], undefined, { input: stringifyLossless(rows) }))

describe('120 merging appends, then PyIceberg, then the manifest rewrite', () => {
  let table: LoadedTable
  const expected: any[] = []
  /** file path → the snapshot that added it and its sequence number. */
  const added = new Map<string, { snapshotId: bigint; seq: bigint }>()

  it('120 one-row appends through appendFiles: merged at the 100th, 21 manifests for PyIceberg', { timeout: 300_000 }, async () => {
    table = await catalog.createTable([NS], {
      name: 'events',
      formatVersion: 2,
      schema: {
        fields: [
          { id: 1, name: 'id', type: 'long', required: true },
          { id: 2, name: 'name', type: 'string', required: false },
          { id: 3, name: 'ts', type: 'timestamptz', required: true },
        ],
      },
      partition: [{ source: 'ts', transform: 'day' }],
    })
    for (let i = 0; i < APPENDS; i++) {
      const file = await oneRowFile(table, i)
      const res = await appendFiles(catalog, table, [file], { retry: RETRY })
      table = res.table
      added.set(file.filePath, { snapshotId: res.snapshotId, seq: BigInt(i + 1) })
      expected.push(rowOf(i).expected)
    }

    const out = await pyScan()
    expect(out.metadata_location).toBe(table.metadataLocation)
    expect(out.rows).toEqual(expected)
    // len(table.current_snapshot().manifests(table.io))
    expect(out.manifests).toHaveLength(21)
    const merged = out.manifests.at(-1)
    expect(merged).toMatchObject({ added_files_count: 1n, existing_files_count: 99n, deleted_files_count: 0n, min_sequence_number: 1n, sequence_number: 100n })
    expect(out.manifests.slice(0, 20).every((m: any) => m.added_files_count === 1n && m.existing_files_count === 0n)).toBe(true)
    expect(out.files).toHaveLength(APPENDS)
    for (const f of out.files) {
      const a = added.get(f.file_path)!
      expect(f.snapshot_id, f.file_path).toBe(a.snapshotId)
      expect(f.sequence_number).toBe(a.seq)
      expect(f.file_sequence_number).toBe(a.seq)
      expect(f.status).toBe(a.seq <= 99n ? 'EXISTING' : 'ADDED') // the 100th was ADDED in the merged manifest, then carried
    }
    expect(out.snapshots.at(-1)).toMatchObject({ operation: 'append' })
    expect(out.snapshots.at(-1).summary).toMatchObject({ 'added-data-files': '1', 'total-data-files': String(APPENDS), 'total-records': String(APPENDS) })

    const duck = await duckScan(table.metadataLocation)
    expect(duck.rows).toEqual(expected)
  })

  it('PyIceberg appends after our merge and reads everything', { timeout: 180_000 }, async () => {
    expect(table).toBeDefined()
    const theirs = [
      { id: 1000n, name: 'py-a', ts: '2026-05-02T12:00:00.000001+00:00' },
      { id: 1001n, name: null, ts: '2026-05-09T00:00:00.000000+00:00' },
    ]
    const py = await pyAppend(theirs)
    expect(py).toMatchObject({ created: false, appended: 2n })
    expected.push(...theirs)
    table = await catalog.loadTable(table.identifier)
    expect(table.metadataLocation).toBe(py.metadata_location)

    // and our next append carries PyIceberg's manifest
    const file = await oneRowFile(table, APPENDS)
    table = (await appendFiles(catalog, table, [file], { retry: RETRY })).table
    expected.push(rowOf(APPENDS).expected)
    expected.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))

    const out = await pyScan()
    expect(out.rows).toEqual(expected)
    expect(out.manifests).toHaveLength(23)
  })

  it('the manifest rewrite leaves one manifest; PyIceberg appends on it; both engines read every row', { timeout: 180_000 }, async () => {
    expect(table).toBeDefined()
    const res = (await rewriteManifests(catalog, table, { retry: RETRY }))!
    expect(res).toMatchObject({ created: 1, replaced: 23, kept: 0, entries: APPENDS + 3 })
    table = res.table

    let out = await pyScan()
    expect(out.rows).toEqual(expected)
    expect(out.manifests).toHaveLength(1)
    expect(out.manifests[0]).toMatchObject({
      added_files_count: 0n,
      existing_files_count: BigInt(APPENDS + 3),
      added_snapshot_id: res.snapshotId,
      min_sequence_number: 1n,
    })
    expect(out.files.every((f: any) => f.status === 'EXISTING')).toBe(true)
    for (const f of out.files) {
      const a = added.get(f.file_path)
      if (a) expect([f.snapshot_id, f.sequence_number, f.file_sequence_number]).toEqual([a.snapshotId, a.seq, a.seq])
    }
    const current = out.snapshots.at(-1)
    expect(current.operation).toBe('replace')
    expect(current.summary).toMatchObject({
      'manifests-created': '1',
      'manifests-replaced': '23',
      'total-data-files': String(APPENDS + 3),
      'total-records': String(APPENDS + 3),
    })

    const theirs = [{ id: 2000n, name: 'py-after-rewrite', ts: '2026-05-03T00:00:00.000000+00:00' }]
    await pyAppend(theirs)
    expected.push(...theirs)
    out = await pyScan()
    expect(out.rows).toEqual(expected)
    expect(out.manifests).toHaveLength(2)
    const duck = await duckScan(out.metadata_location)
    expect(duck.rows).toEqual(expected)
  })
})
