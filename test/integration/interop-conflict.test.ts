// The conflict path against a real concurrent writer: our code creates a v2 day(ts) table in the
// SqlCatalog and appends; PyIceberg (pyiceberg_append.py, its own SqlCatalog on the same Postgres)
// appends next; then our fastAppend is handed the STALE LoadedTable from before PyIceberg's commit.
// Its first commit must fail the ref requirement (CommitConflict), and the retry must re-apply on
// the refreshed base: all three appends present once, the snapshot chain S1 ← S2 (PyIceberg) ← S3.
import { afterAll, beforeAll, expect, it } from 'vitest'
import pg from 'pg'
import { CommitConflict, type Catalog, type LoadedTable } from '../../iceberg/catalog/index.ts'
import { SqlCatalog } from '../../iceberg/catalog/sql.ts'
import { fastAppend } from '../../iceberg/transaction/append.ts'
import { S3FileIO } from '../../iceberg/io/file-io.ts'
import { parseLossless, stringifyLossless } from '../../iceberg/spec/json.ts'
import type { DataFile } from '../../iceberg/manifest/manifest.ts'
import { currentSchema, defaultSpec } from '../../iceberg/spec/metadata.ts'
import { writeDataFile } from '../../iceberg/parquet/data-file.ts'
import { bindSpec, partitionPath, partitionRecord } from '../../iceberg/spec/partition.ts'
import type { Row } from '../../iceberg/spec/types.ts'
import { toRow } from '../../iceberg/spec/values.ts'
import { loadZstd } from '../../iceberg/parquet/zstd.ts'
import { ensureVenv, runPython, s3Args, sqlCatalogArgs, toExact } from '../support/python.ts'
import { stack } from '../support/stack.ts'

const CATALOG = 'interop'
const NS = `conflict_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`
const TABLE = `${NS}.events`
const RETRY = { attempts: 5, minBackoffMs: 10, maxBackoffMs: 50 }

let pool: pg.Pool
let catalog: SqlCatalog
const s3 = () => stack().gateway
const catalogArgs = () => sqlCatalogArgs({ databaseUrl: stack().databaseUrl, catalogName: CATALOG, s3: s3() })

/** The catalog, with every commit attempt and its outcome recorded. */
function recording(inner: Catalog) {
  const attempts: Array<{ base: string; error?: unknown }> = []
  const loads: string[] = []
  const wrapped: Catalog = {
    name: inner.name,
    listNamespaces: () => inner.listNamespaces(),
    ensureNamespace: (ns) => inner.ensureNamespace(ns),
    listTables: (ns) => inner.listTables(ns),
    createTable: (ns, req) => inner.createTable(ns, req),
    loadTable: async (id) => {
      const t = await inner.loadTable(id)
      loads.push(t.metadataLocation)
      return t
    },
    commitTable: async (table, requirements, updates) => {
      const attempt: { base: string; error?: unknown } = { base: table.metadataLocation }
      attempts.push(attempt)
      try {
        return await inner.commitTable(table, requirements, updates)
      } catch (err) {
        attempt.error = err
        throw err
      }
    },
  }
  return { catalog: wrapped, attempts, loads }
}

/** NDJSON → parseLossless → toRow → one zstd Parquet file per day(ts) partition (the roller's path). */
async function dataFiles(table: LoadedTable, ndjson: string[]): Promise<DataFile[]> {
  const schema = currentSchema(table.metadata)
  const bound = bindSpec(defaultSpec(table.metadata), schema)
  const groups = new Map<string, { partition: ReturnType<typeof partitionRecord>; rows: Row[] }>()
  for (const line of ndjson) {
    const r = toRow(schema, parseLossless(line))
    if (!r.ok) throw new Error(JSON.stringify(r.rejects))
    const partition = partitionRecord(bound, r.row)
    const key = partitionPath(bound, partition)
    groups.set(key, { partition, rows: [...(groups.get(key)?.rows ?? []), r.row] })
  }
  const compression = await loadZstd()
  const files: DataFile[] = []
  for (const [key, g] of groups) {
    const { bytes, metrics: m } = writeDataFile(schema, g.rows, { compression })
    const filePath = `${table.metadata.location}/data/${key}/${crypto.randomUUID()}.parquet`
    await table.io.write(filePath, bytes)
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
    })
  }
  return files
}

const ours1 = [
  '{"id": 9223372036854775807, "name": "ours-1a", "ts": "2026-03-01T10:00:00.123456Z"}',
  '{"id": 2, "name": "ours-1b", "ts": "2026-03-02T00:00:00Z"}',
]
const theirs = [
  { id: 10n, name: 'pyiceberg-a', ts: '2026-03-01T11:00:00.000001+00:00' },
  { id: 11n, name: 'pyiceberg-b', ts: '2026-03-03T12:00:00+00:00' },
]
const ours2 = [
  '{"id": -9223372036854775808, "name": "ours-2a", "ts": "2026-03-03T23:59:59.999999+00:00"}',
  '{"id": 20, "name": null, "ts": "2026-03-04T01:00:00+01:00"}',
]
const expected = [
  { id: -9223372036854775808n, name: 'ours-2a', ts: '2026-03-03T23:59:59.999999+00:00' },
  { id: 2n, name: 'ours-1b', ts: '2026-03-02T00:00:00.000000+00:00' },
  { id: 10n, name: 'pyiceberg-a', ts: '2026-03-01T11:00:00.000001+00:00' },
  { id: 11n, name: 'pyiceberg-b', ts: '2026-03-03T12:00:00.000000+00:00' },
  { id: 20n, name: null, ts: '2026-03-04T00:00:00.000000+00:00' },
  { id: 9223372036854775807n, name: 'ours-1a', ts: '2026-03-01T10:00:00.123456+00:00' },
]

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

it('PyIceberg appends between our load and our commit: we retry on the fresh base, nothing lost or doubled', async () => {
  const created = await catalog.createTable([NS], {
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
  const first = await fastAppend(catalog, created, await dataFiles(created, ours1), { retry: RETRY })
  const s1 = first.snapshotId

  // our next roll loads the table and writes its files ...
  const stale = await catalog.loadTable(created.identifier)
  const files = await dataFiles(stale, ours2)

  // ... while PyIceberg commits an append of its own
  const py = toExact(await runPython('pyiceberg_append.py', [...catalogArgs(), TABLE], undefined, { input: stringifyLossless(theirs) }))
  expect(py).toMatchObject({ created: false, appended: 2n, format_version: 2n })
  const s2: bigint = py.snapshot_id
  expect(s2).not.toBe(s1)

  // our append given the stale table: attempt 1 conflicts, attempt 2 lands on PyIceberg's snapshot
  const rec = recording(catalog)
  const { table, snapshotId: s3id } = await fastAppend(rec.catalog, stale, files, { retry: RETRY, properties: { 'lhbox.test': 'conflict' } })
  expect(rec.attempts).toHaveLength(2)
  expect(rec.attempts[0].base).toBe(stale.metadataLocation)
  expect(rec.attempts[0].error).toBeInstanceOf(CommitConflict)
  expect(rec.attempts[1].base).toBe(py.metadata_location)
  expect(rec.attempts[1].error).toBeUndefined()
  expect(rec.loads).toEqual([py.metadata_location])
  const mine = table.metadata.snapshots.find((s) => s['snapshot-id'] === s3id)!
  expect(mine['parent-snapshot-id']).toBe(s2)
  expect(mine['sequence-number']).toBe(3n)

  // PyIceberg sees all six rows once, and the chain S1 <- S2 <- S3
  const out = toExact(await runPython('pyiceberg_scan.py', [...catalogArgs(), TABLE, '--order-by', 'id']))
  expect(out.metadata_location).toBe(table.metadataLocation)
  expect(out.current_snapshot_id).toBe(s3id)
  expect(out.rows).toEqual(expected)
  expect(out.snapshots.map((s: any) => [s.snapshot_id, s.parent, s.sequence_number, s.operation])).toEqual([
    [s1, null, 1n, 'append'],
    [s2, s1, 2n, 'append'],
    [s3id, s2, 3n, 'append'],
  ])
  expect(out.snapshots[2].summary).toMatchObject({
    'added-records': '2',
    'total-records': '6',
    'total-data-files': String(out.files.length),
    'lhbox.test': 'conflict',
  })
  const paths = out.files.map((f: any) => f.file_path)
  expect(new Set(paths).size).toBe(paths.length)
  expect(out.files.reduce((n: bigint, f: any) => n + f.record_count, 0n)).toBe(6n)
  expect(new Set(out.files.map((f: any) => f.snapshot_id))).toEqual(new Set([s1, s2, s3id]))
  for (const f of files) expect(paths).toContain(f.filePath)
  const manifests = out.manifests.map((m: any) => m.manifest_path)
  expect(new Set(manifests).size).toBe(manifests.length)
  expect(out.manifests.map((m: any) => m.added_snapshot_id).sort()).toEqual([s1, s2, s3id].sort())

  // DuckDB agrees
  const duck = toExact(await runPython('duckdb_scan.py', [...s3Args(s3()), '--metadata', table.metadataLocation, '--order-by', 'id']))
  expect(duck.rows).toEqual(expected)
  expect(duck.snapshots.map((s: any) => s.snapshot_id)).toEqual([s1, s2, s3id])
})
