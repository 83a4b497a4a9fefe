// Snapshot expiry against the stack: a SqlCatalog table on Postgres with its files in versitygw gets
// 30 small appends, is expired back to 20 snapshots in one commit, and loses exactly the files no
// retained snapshot reaches (then, with an orphan pass, every other unreferenced object in its
// folder). PyIceberg still reads every row of the 30 appends. And an append that lands between the
// expiry's planning and its commit survives: the expiry re-plans on the fresh base.
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LoadedTable } from '../../iceberg/catalog/index.ts'
import { SqlCatalog } from '../../iceberg/catalog/sql.ts'
import { fastAppend } from '../../iceberg/transaction/append.ts'
import { parseS3Location, S3FileIO } from '../../iceberg/io/file-io.ts'
import { S3Client } from '../../iceberg/io/s3.ts'
import { DELETED, readManifest, readManifestList } from '../../iceberg/manifest/manifest.ts'
import { branchSnapshotId, currentSchema } from '../../iceberg/spec/metadata.ts'
import { writeDataFile } from '../../iceberg/parquet/data-file.ts'
import { deleteUnreachable, expireSnapshots } from '../../iceberg/maintenance/expire.ts'
import { reachableFiles } from '../../iceberg/maintenance/reachable.ts'
import { ensureVenv, runPython, sqlCatalogArgs, toExact } from '../support/python.ts'
import { stack } from '../support/stack.ts'

const CATALOG = 'maint-expire'
const NS = 'maint_expire'
const FAST = { attempts: 5, minBackoffMs: 5, maxBackoffMs: 20 }
const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`

let pool: pg.Pool
let catalog: SqlCatalog
let s3: S3Client

beforeAll(async () => {
  await ensureVenv()
  pool = new pg.Pool({ connectionString: stack().databaseUrl, max: 4 })
  const { endpoint, region, accessKeyId, secretAccessKey, bucket } = stack().s3
  s3 = new S3Client(stack().s3)
  catalog = new SqlCatalog({
    name: CATALOG,
    sql: pool,
    warehouseLocation: `s3://${bucket}/maint-expire-${run}`,
    io: new S3FileIO({ endpoint, region, accessKeyId, secretAccessKey }),
  })
}, 15 * 60_000)

afterAll(async () => {
  await pool?.end()
})

async function createTable(name: string, properties: Record<string, string> = {}): Promise<LoadedTable> {
  return catalog.createTable([NS], {
    name,
    schema: {
      fields: [
        { id: 1, name: 'id', required: true, type: 'long' },
        { id: 2, name: 'name', required: false, type: 'string' },
      ],
    },
    properties,
  })
}

/** One small append of two rows (ids 2n and 2n+1); returns the table after it. */
async function append(t: LoadedTable, n: number): Promise<LoadedTable> {
  const rows = [0, 1].map((k) => ({ id: BigInt(2 * n + k), name: `row-${2 * n + k}` }))
  const { bytes, metrics: m } = writeDataFile(currentSchema(t.metadata), rows)
  const filePath = `${t.metadata.location}/data/${crypto.randomUUID()}.parquet`
  await t.io.write(filePath, bytes)
  const { table } = await fastAppend(
    catalog,
    t,
    [
      {
        filePath,
        fileFormat: 'PARQUET',
        partition: {},
        recordCount: m.recordCount,
        fileSizeInBytes: m.fileSizeInBytes,
        columnSizes: m.columnSizes,
        valueCounts: m.valueCounts,
        nullValueCounts: m.nullValueCounts,
        nanValueCounts: m.nanValueCounts,
        lowerBounds: m.lowerBounds,
        upperBounds: m.upperBounds,
        splitOffsets: m.splitOffsets,
      },
    ],
    { retry: FAST },
  )
  return table
}

/** Every file the metadata references (live entries), with a HEAD for each: the missing ones. */
async function missingReferenced(t: LoadedTable): Promise<{ checked: number; missing: string[] }> {
  const files = new Set<string>([t.metadataLocation, ...t.metadata['metadata-log'].map((e) => e['metadata-file'])])
  for (const s of t.metadata.snapshots) {
    files.add(s['manifest-list']!)
    for (const m of (await readManifestList(await t.io.read(s['manifest-list']!))).manifests) {
      files.add(m.manifestPath)
      for (const e of (await readManifest(await t.io.read(m.manifestPath))).entries) if (e.status !== DELETED) files.add(e.dataFile.filePath)
    }
  }
  const missing: string[] = []
  for (const f of files) if (!(await s3.head(parseS3Location(f).key))) missing.push(f)
  return { checked: files.size, missing }
}

async function listFolder(t: LoadedTable): Promise<string[]> {
  const out: string[] = []
  for await (const o of s3.list(parseS3Location(t.metadata.location).key + '/')) out.push(`s3://${s3.bucket}/${o.key}`)
  return out
}

describe('expire back to 20 snapshots after 30 appends', () => {
  let table: LoadedTable
  let before: LoadedTable

  it('30 small appends make 30 snapshots', async () => {
    // A short metadata-log, so metadata files fall out of it as the table grows.
    table = await createTable(`t_${run}`, { 'write.metadata.previous-versions-max': '10' })
    for (let i = 0; i < 30; i++) table = await append(table, i)
    expect(table.metadata.snapshots).toHaveLength(30)
    expect(table.metadata['metadata-log']).toHaveLength(10)
    before = table
  }, 180_000)

  it('one commit removes the 10 oldest; the current snapshot stays', async () => {
    const res = await expireSnapshots(catalog, before, { retainLast: 20 })
    expect(res.expired).toEqual(before.metadata.snapshots.slice(0, 10).map((s) => s['snapshot-id']))
    expect(res.table.metadata.snapshots).toHaveLength(20)
    expect(branchSnapshotId(res.table.metadata)).toBe(branchSnapshotId(before.metadata))
    const reloaded = await catalog.loadTable(before.identifier)
    expect(reloaded.metadataLocation).toBe(res.table.metadataLocation)
    expect(reloaded.metadata.snapshots.map((s) => s['snapshot-id'])).toEqual(before.metadata.snapshots.slice(10).map((s) => s['snapshot-id']))
    expect(reloaded.metadata['snapshot-log']).toHaveLength(20)
    expect(res.base).toEqual(before.metadata)
    table = res.table

    const again = await expireSnapshots(catalog, table, { retainLast: 20 })
    expect(again.expired).toEqual([])
    expect(again.table.metadataLocation).toBe(table.metadataLocation) // no commit
  })

  it('the cleanup deletes the expired manifest lists and the metadata file that left the log, nothing referenced', async () => {
    const listed = await listFolder(table)
    const cleaned = await deleteUnreachable(before.metadata, table)
    // Fast appends carry every manifest forward: data files and manifests all stay reachable.
    expect(cleaned.counts).toMatchObject({ 'manifest-list': 10, manifest: 0, data: 0, metadata: 1, orphan: 0 })
    expect(cleaned.deleted.filter((f) => f.includes('/snap-'))).toHaveLength(10)
    expect(cleaned.failed).toEqual([])
    for (const f of cleaned.deleted) expect(listed).toContain(f)
    const check = await missingReferenced(table)
    expect(check.checked).toBeGreaterThan(20 + 30 + 11)
    expect(check.missing).toEqual([])
  })

  it('an orphan pass (age 0) leaves nothing under the table folder that the metadata does not reach', async () => {
    const loc = table.metadata.location
    await table.io.write(`${loc}/data/failed-commit-${crypto.randomUUID()}.parquet`, 'x')
    await table.io.write(`${loc}/metadata/snap-1-0-${crypto.randomUUID()}.avro`, 'x')
    await table.io.write(`${loc}/metadata/99999-${crypto.randomUUID()}.metadata.json`, '{}')
    const sibling = `${loc}-sibling/data/keep.parquet` // same prefix without the slash: another table
    await table.io.write(sibling, 'x')
    await new Promise((r) => setTimeout(r, 1100)) // listings carry whole seconds

    const cleaned = await deleteUnreachable(table.metadata, table, { orphanOlderThanMs: 0 })
    // 3 strays + the metadata files that left metadata-log during the appends (32 files: 1 current, 10 in the log, 1 deleted above)
    expect(cleaned.counts.orphan).toBe(3 + (32 - 11 - 1))
    expect(cleaned.failed).toEqual([])
    const reach = await reachableFiles(table.metadata, table.io, table.metadataLocation)
    const unreferenced = (await listFolder(table)).filter((f) => !reach.has(f))
    expect(unreferenced).toEqual([])
    expect(await s3.head(parseS3Location(sibling).key)).not.toBeNull()
    expect((await missingReferenced(table)).missing).toEqual([])
  })

  it('PyIceberg reads all 60 rows of the 30 appends from the 20 retained snapshots', async () => {
    const args = sqlCatalogArgs({ databaseUrl: stack().databaseUrl, catalogName: CATALOG, s3: stack().s3 })
    const out = toExact(await runPython('pyiceberg_scan.py', [...args, `${NS}.t_${run}`, '--order-by', 'id']))
    expect(out.metadata_location).toBe(table.metadataLocation)
    expect(out.current_snapshot_id).toBe(branchSnapshotId(before.metadata))
    expect(out.snapshots).toHaveLength(20)
    expect(out.row_count).toBe(60n)
    expect(out.rows).toEqual(Array.from({ length: 60 }, (_, i) => ({ id: BigInt(i), name: `row-${i}` })))
  }, 120_000)
})

describe('an append committed between planning and committing the expiry', () => {
  it('makes the expiry re-plan: the new snapshot survives and only the oldest go', async () => {
    let t = await createTable(`race_${run}`)
    for (let i = 0; i < 5; i++) t = await append(t, i)
    const stale = t
    const moved = await append(await catalog.loadTable(t.identifier), 5)
    const newest = branchSnapshotId(moved.metadata)!

    // Planned on the stale table (6 - 1 snapshots), committed after the append: conflict, re-plan.
    const res = await expireSnapshots(catalog, stale, { retainLast: 2, retry: FAST })
    expect(res.expired).toEqual(moved.metadata.snapshots.slice(0, 4).map((s) => s['snapshot-id']))
    expect(res.base.snapshots).toHaveLength(6)
    const after = await catalog.loadTable(t.identifier)
    expect(after.metadata.snapshots.map((s) => s['snapshot-id'])).toEqual(moved.metadata.snapshots.slice(4).map((s) => s['snapshot-id']))
    expect(branchSnapshotId(after.metadata)).toBe(newest)

    const cleaned = await deleteUnreachable(res.base, res.table)
    expect(cleaned.counts['manifest-list']).toBe(4)
    expect((await missingReferenced(after)).missing).toEqual([])
    const args = sqlCatalogArgs({ databaseUrl: stack().databaseUrl, catalogName: CATALOG, s3: stack().s3 })
    const out = toExact(await runPython('pyiceberg_scan.py', [...args, `${NS}.race_${run}`, '--order-by', 'id', '--no-files']))
    expect(out.row_count).toBe(12n)
    expect(out.current_snapshot_id).toBe(newest)
  }, 120_000)
})
