// Maintenance and the roller together (issue 7, "Done when"): 100 in-process rolls then the sweep
// (≤ 20 snapshots, the small files compacted, every row identical for PyIceberg, every referenced
// file present, nothing unreferenced in the table folder); rolls and compactions racing each other,
// free-running and forced in both orders; a roller killed before its marker delete, the roll's
// snapshot expired by maintenance, then the roller restarted (the marker keeps the batches
// consumed); and the per-warehouse switch `maintenance: off`. Tables are read with PyIceberg.
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Catalog, LoadedTable, TableIdentifier } from '../../iceberg/catalog/index.ts'
import { SqlCatalog } from '../../iceberg/catalog/sql.ts'
import { fastAppend } from '../../iceberg/transaction/append.ts'
import { S3FileIO, parseS3Location } from '../../iceberg/io/file-io.ts'
import { parseLossless } from '../../iceberg/spec/json.ts'
import { compactTable, type CompactResult } from '../../iceberg/maintenance/compact.ts'
import { locationKey, reachableFiles } from '../../iceberg/maintenance/reachable.ts'
import { currentSchema } from '../../iceberg/spec/metadata.ts'
import { writeDataFile } from '../../iceberg/parquet/data-file.ts'
import { loadZstd } from '../../iceberg/parquet/zstd.ts'
import { loadConfig } from '../../roller/config.ts'
import { jsonLogger } from '../../roller/log.ts'
import { createRoller, type Roller } from '../../roller/loop.ts'
import { RollerMetrics } from '../../roller/metrics.ts'
import { runPython, toExact } from '../support/python.ts'
import {
  expectExactlyOnce,
  ledgerStates,
  proxiedWarehouse,
  pyCatalogArgs,
  sinkSnapshots,
  type PyCatalog,
  rollerSetup,
  SETUP_TIMEOUT,
} from '../support/roller-check.ts'
import { rollerEnv, rollerTick, tickInProcess } from '../support/roller.ts'
import { bucket, createTable, intakeKey, intakeObjects, newSink, send, uid, type Sink } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

const RETRY = { attempts: 5, minBackoffMs: 20, maxBackoffMs: 100 }

let db: pg.Client
let whId: string
let pool: pg.Pool
const catalogs = new Map<string, SqlCatalog>()

beforeAll(async () => {
  ;({ db, whId } = await rollerSetup())
  pool = new pg.Pool({ connectionString: stack().databaseUrl, max: 4 })
}, SETUP_TIMEOUT)

afterAll(async () => {
  await db?.end()
  await pool?.end()
})

// ---- helpers -------------------------------------------------------------------------------------

/** Our SQL catalog of a warehouse (catalog_name = the warehouse id), on the stack's S3. */
function catalogOf(warehouse: string): SqlCatalog {
  let c = catalogs.get(warehouse)
  if (!c) {
    const { endpoint, region, accessKeyId, secretAccessKey, bucket: b } = stack().s3
    c = new SqlCatalog({ name: warehouse, sql: pool, warehouseLocation: `s3://${b}`, io: new S3FileIO({ endpoint, region, accessKeyId, secretAccessKey }) })
    catalogs.set(warehouse, c)
  }
  return c
}

const tableId = (table: string): TableIdentifier => ({ namespace: [table.split('.')[0]], name: table.split('.')[1] })

interface InProcess {
  roller: Roller
  logs: Array<Record<string, any>>
}

/** The roller in this process (a fresh pool and clients), with its JSON log lines kept. */
function inProcessRoller(env: Record<string, string> = {}, checkpoint: (name: string) => void | Promise<void> = () => {}): InProcess {
  const logs: Array<Record<string, any>> = []
  const config = loadConfig(rollerEnv({ LHBOX_ROLLER_ID: `inproc-${uid()}`, ...env }))
  const roller = createRoller(
    config,
    jsonLogger({}, (l) => logs.push(JSON.parse(l))),
    new RollerMetrics(),
    checkpoint,
  )
  return { roller, logs }
}

const errorsOf = (logs: Array<Record<string, any>>) => logs.filter((l) => l.level === 'error')

/** GET /v1/sinks/{id}'s maintenance: the last sweep and the next. */
async function maintenanceOf(sinkId: string): Promise<any> {
  const res = await call(`/v1/sinks/${sinkId}`, { key: stack().adminKey })
  expect(res.status, res.text).toBe(200)
  return res.body.maintenance
}

async function tickOk(p: InProcess, sinkId: string): Promise<void> {
  const r = await p.roller.tick({ sink: sinkId, force: true })
  expect(r, JSON.stringify(errorsOf(p.logs))).toEqual({ rolled: 1, failed: 0 })
}

async function sendOk(sink: Sink, rows: unknown[], batchId = `b-${uid()}`): Promise<string> {
  const res = await send(sink, rows, { batchId })
  expect(res.status, res.text).toBe(202)
  return batchId
}

/** PyIceberg's view of a table, with the current snapshot's live files. */
async function pyScan(catalog: PyCatalog, table: string): Promise<any> {
  return toExact(
    await runPython('pyiceberg_scan.py', [...pyCatalogArgs(catalog), table, '--order-by', 'x', '--order-by', '__ingest_ts'], undefined, { timeoutMs: 180_000 }),
  )
}

/** x → how many rows hold it. */
function countsByX(rows: Array<Record<string, any>>): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const r of rows) counts[String(r.x)] = (counts[String(r.x)] ?? 0) + 1
  return counts
}

const once = (xs: number[]) => Object.fromEntries(xs.map((x) => [String(x), 1]))
const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i)
const batchKeys = async (sinkId: string) => (await intakeObjects(sinkId)).filter((k) => !k.includes('/rejects/') && !k.includes('/committed/'))
const markerKeys = async (sinkId: string) => (await intakeObjects(sinkId)).filter((k) => k.includes('/committed/'))

/** Appends one small file of rows through our own fastAppend (a tenant's write, not the sink's). */
async function ownAppend(catalog: Catalog, table: LoadedTable, rows: Array<Record<string, unknown>>): Promise<LoadedTable> {
  const schema = currentSchema(table.metadata)
  const { bytes, metrics } = writeDataFile(schema, rows as any, { compression: await loadZstd() })
  const filePath = `${table.metadata.location}/data/tenant-${crypto.randomUUID()}.parquet`
  await table.io.write(filePath, bytes)
  return (await fastAppend(catalog, table, [{ filePath, fileFormat: 'PARQUET', partition: {}, ...metrics }], { retry: RETRY })).table
}

/** Every object under the table folder, as s3:// locations. */
async function tableFolder(table: LoadedTable): Promise<string[]> {
  const { bucket: b, key } = parseS3Location(table.metadata.location.replace(/\/+$/, '') + '/')
  const out: string[] = []
  for await (const o of bucket().list(key)) out.push(`s3://${b}/${o.key}`)
  return out
}

// ---- after 100 rolls plus maintenance --------------------------------------------------------------

describe('after 100 rolls plus maintenance', () => {
  const ROLLS = 100
  let sink: Sink
  let before: any
  let after: any
  let maintained: LoadedTable

  it('100 rolls (in process, one small send each): 100 appends, 100 small files', { timeout: 180_000 }, async () => {
    sink = await newSink(stack().adminKey)
    const p = inProcessRoller()
    try {
      for (let i = 0; i < ROLLS; i++) {
        await sendOk(sink, [{ x: 2 * i, who: `r${2 * i}` }, { x: 2 * i + 1 }])
        await tickOk(p, sink.id)
      }
    } finally {
      await p.roller.close()
    }
    before = await pyScan({ sql: whId }, sink.table)
    expect(before.rows).toHaveLength(2 * ROLLS)
    expect(countsByX(before.rows)).toEqual(once(range(0, 2 * ROLLS)))
    expect(sinkSnapshots(before, sink.id)).toHaveLength(ROLLS)
    expect(before.snapshots).toHaveLength(ROLLS)
    expect(before.files).toHaveLength(ROLLS)
  })

  it('maintain (orphans of any age): every row identical for PyIceberg, __ingest_ts included; one data file', { timeout: 120_000 }, async () => {
    expect(before).toBeDefined()
    const p = inProcessRoller({ LHBOX_MAINTENANCE_ORPHAN_HOURS: '0' })
    try {
      const r = await p.roller.maintain({ sink: sink.id })
      expect(r, JSON.stringify(errorsOf(p.logs))).toEqual({ maintained: 1, failed: 0, skipped: 0 })
      const done = p.logs.find((l) => l.msg === 'maintained')!
      // compaction first (its replace is the 101st snapshot), the manifest rewrite (the 102nd), then back to 20
      expect(done).toMatchObject({ snapshotsExpired: ROLLS + 2 - 20, filesCompacted: ROLLS })
      // The sink shows the same sweep, and the next one due LHBOX_MAINTENANCE_HOURS (6) after it.
      const shown = await maintenanceOf(sink.id)
      expect(shown.last).toEqual({
        at: expect.any(String),
        next_at: expect.any(String),
        snapshots_expired: ROLLS + 2 - 20,
        files_compacted: ROLLS,
        bytes_compacted: done.bytesCompacted,
        manifests_rewritten: done.manifestsRewritten,
        manifests_created: done.manifestsCreated,
        files_deleted: done.filesDeleted,
        bytes_deleted: done.bytesDeleted,
        seconds: done.seconds,
        rejects_deleted: 0, // no rejects files: every row fits
        rejects_bytes_deleted: 0,
      })
      expect(shown.last.manifests_rewritten).toBeGreaterThan(0)
      expect(shown.last.files_deleted).toBeGreaterThanOrEqual(ROLLS + 2 - 20) // the expired snapshots' manifest lists, at least
      expect(Date.parse(shown.last.next_at) - Date.parse(shown.last.at)).toBe(6 * 3600_000)
      expect(shown.next_at).toBe(shown.last.next_at)
    } finally {
      await p.roller.close()
    }
    after = await pyScan({ sql: whId }, sink.table)
    expect(after.rows).toHaveLength(before.rows.length)
    for (let i = 0; i < before.rows.length; i++) expect(after.rows[i], `row ${i}`).toEqual(before.rows[i])
    expect(after.rows.every((r: any) => typeof r.__ingest_ts === 'string')).toBe(true)
    // the small files compacted: one data file for the unpartitioned table, in the replace snapshot
    expect(after.files).toHaveLength(1)
    expect(after.files[0].record_count).toBe(BigInt(2 * ROLLS))
    const current = after.snapshots.find((s: any) => s.snapshot_id === after.current_snapshot_id)
    expect(current.operation).toBe('replace')
    expect(current.summary).not.toHaveProperty('lakehousebox.sink.id')
    maintained = await catalogOf(whId).loadTable(tableId(sink.table))
    expect(maintained.metadata['current-snapshot-id']).toBe(after.current_snapshot_id)
  })

  it('every file the metadata references exists (manifest lists, manifests, data files, metadata log)', async () => {
    expect(maintained).toBeDefined()
    const reached = [...(await reachableFiles(maintained.metadata, maintained.io, maintained.metadataLocation))]
    // the walk covers every retained snapshot: their manifest lists, the 100 roll files and the compacted one
    expect(reached.filter((l) => l.endsWith('.parquet')).length).toBeGreaterThanOrEqual(21)
    expect(reached.filter((l) => /\/snap-[^/]*\.avro$/.test(l))).toHaveLength(maintained.metadata.snapshots.length)
    const missing: string[] = []
    await Promise.all(
      reached.map(async (location) => {
        const { bucket: b, key } = parseS3Location(location)
        expect(b).toBe(stack().s3.bucket)
        if (!(await bucket().head(key))) missing.push(location)
      }),
    )
    expect(missing).toEqual([])
  })

  it('no object under the table folder is unreferenced beyond the retained history', async () => {
    expect(maintained).toBeDefined()
    const reached = new Set([...(await reachableFiles(maintained.metadata, maintained.io, maintained.metadataLocation))].map(locationKey))
    const listed = await tableFolder(maintained)
    const unreferenced = listed.filter((l) => !reached.has(locationKey(l)))
    expect(unreferenced).toEqual([])
    // and the walk names nothing outside the folder
    expect(listed.length).toBe(reached.size)
  })

  it('≤ 20 snapshots after the sweep, the replace snapshot counted within', async () => {
    expect(after).toBeDefined()
    expect(after.snapshots.length).toBeLessThanOrEqual(20)
  })

  it('a second sweep: the manifests left without a live file by the first compaction are dropped', { timeout: 120_000 }, async () => {
    expect(after).toBeDefined()
    const firstReplace = after.current_snapshot_id
    const deadBefore = after.manifests.filter((m: any) => m.added_files_count + m.existing_files_count === 0n)
    expect(deadBefore).toEqual([]) // the compaction's record of what it removed, dropped by the sweep's manifest rewrite
    expect(after.manifests).toHaveLength(1)
    const p = inProcessRoller({ LHBOX_MAINTENANCE_ORPHAN_HOURS: '0' })
    try {
      for (let i = 0; i < 3; i++) {
        await sendOk(sink, [{ x: 1000 + i }])
        await tickOk(p, sink.id)
      }
      expect(await p.roller.maintain({ sink: sink.id }), JSON.stringify(errorsOf(p.logs))).toEqual({ maintained: 1, failed: 0, skipped: 0 })
    } finally {
      await p.roller.close()
    }
    const second = await pyScan({ sql: whId }, sink.table)
    expect(second.files).toHaveLength(1)
    expect(countsByX(second.rows)).toEqual(once([...range(0, 2 * ROLLS), 1000, 1001, 1002]))
    // Only manifests with live files, or the ones the current (second) replace wrote, remain.
    const carriedDead = second.manifests.filter(
      (m: any) => m.added_files_count + m.existing_files_count === 0n && m.added_snapshot_id !== second.current_snapshot_id,
    )
    expect(carriedDead.map((m: any) => m.added_snapshot_id)).not.toContain(firstReplace)
    expect(carriedDead).toEqual([])
  })
})

// ---- rolls and compactions racing --------------------------------------------------------------

describe('a roll racing a compaction, a compaction racing a roll', () => {
  it('tick and maintain at once, five rounds with new batches in between: one waits for the other, nothing fails, every row once, nothing pending', {
    timeout: 180_000,
  }, async () => {
    const sink = await newSink(stack().adminKey)
    // retain 3 so that the expiry races too (the orphan guard stays at its default: files in flight are safe)
    const p = inProcessRoller({ LHBOX_MAINTENANCE_RETAIN_SNAPSHOTS: '3' })
    const batches: string[] = []
    let x = 0
    try {
      for (let i = 0; i < 2; i++) {
        batches.push(await sendOk(sink, [{ x: x++ }, { x: x++ }]))
        await tickOk(p, sink.id)
      }
      for (let round = 0; round < 5; round++) {
        for (let i = 0; i < 2; i++) batches.push(await sendOk(sink, [{ x: x++ }, { x: x++ }]))
        const [t, m] = await Promise.all([p.roller.tick({ sink: sink.id, force: true }), p.roller.maintain({ sink: sink.id })])
        // One roller never rolls and sweeps one table at once (roller/loop.ts `busy`): whichever
        // took the sink first runs, the other leaves it for its next turn. Neither fails.
        const rolledIt = t.rolled === 1 && m.skipped === 1 && m.maintained === 0
        const sweptIt = t.rolled === 0 && m.maintained === 1 && m.skipped === 0
        expect({ round, failed: t.failed + m.failed, oneOfThem: rolledIt || sweptIt }, JSON.stringify({ t, m, errors: errorsOf(p.logs) })).toEqual({
          round,
          failed: 0,
          oneOfThem: true,
        })
      }
      // What a swept round left waiting is rolled now; and a sweep after the rolls.
      await tickOk(p, sink.id)
      expect(await p.roller.maintain({ sink: sink.id })).toEqual({ maintained: 1, failed: 0, skipped: 0 })
    } finally {
      await p.roller.close()
    }
    const s = await pyScan({ sql: whId }, sink.table)
    expect(countsByX(s.rows)).toEqual(once(range(0, x)))
    expect(await batchKeys(sink.id)).toEqual([])
    expect(await markerKeys(sink.id)).toEqual([])
    const states = await ledgerStates(db, sink.id)
    expect(Object.keys(states).sort()).toEqual([...batches].sort())
    expect(new Set(Object.values(states))).toEqual(new Set(['committed']))
    // maintenance did run: compactions in the history, at most 3 retained + the last replace
    expect(s.snapshots.some((sn: any) => sn.operation === 'replace')).toBe(true)
  })

  it('a compaction whose commit finds a roll just committed: it re-applies on the fresh base, both succeed', { timeout: 120_000 }, async () => {
    const sink = await newSink(stack().adminKey)
    const p = inProcessRoller()
    const catalog = catalogOf(whId)
    try {
      for (let i = 0; i < 3; i++) {
        await sendOk(sink, [{ x: 2 * i }, { x: 2 * i + 1 }])
        await tickOk(p, sink.id)
      }
      const racing = await sendOk(sink, [{ x: 100 }, { x: 101 }])
      let rolledFirst: { rolled: number; failed: number } | undefined
      let commits = 0
      // The compaction's first commitTable runs a roll to completion first: its base is then stale.
      const wrapped: Catalog = Object.create(catalog, {
        commitTable: {
          value: async (t: LoadedTable, req: any, upd: any) => {
            if (commits++ === 0) rolledFirst = await p.roller.tick({ sink: sink.id, force: true })
            return catalog.commitTable(t, req, upd)
          },
        },
      })
      const result = await compactTable(wrapped, await catalog.loadTable(tableId(sink.table)), { retry: RETRY })
      expect(rolledFirst, JSON.stringify(errorsOf(p.logs))).toEqual({ rolled: 1, failed: 0 })
      expect(commits).toBeGreaterThanOrEqual(2) // the first attempt conflicted
      expect(result).toMatchObject({ rewrittenFiles: 3, addedFiles: 1 })

      const s = await pyScan({ sql: whId }, sink.table)
      expect(countsByX(s.rows)).toEqual(once([0, 1, 2, 3, 4, 5, 100, 101]))
      const current = s.snapshots.find((sn: any) => sn.snapshot_id === s.current_snapshot_id)
      expect(current).toMatchObject({ snapshot_id: result!.snapshotId, operation: 'replace' })
      const roll = sinkSnapshots(s, sink.id).at(-1)!
      expect(roll.summary['lakehousebox.sink.batches']).toBe(racing)
      expect(current.parent).toBe(roll.snapshot_id)
      expect(s.files).toHaveLength(2) // the merged file and the roll's file
      expect(await batchKeys(sink.id)).toEqual([])
      expect((await ledgerStates(db, sink.id))[racing]).toBe('committed')
    } finally {
      await p.roller.close()
    }
  })

  it('a roll whose commit finds a compaction just committed: it re-commits on the new base, both succeed', { timeout: 120_000 }, async () => {
    const sink = await newSink(stack().adminKey)
    const catalog = catalogOf(whId)
    let compaction: CompactResult | null | undefined
    let armed = false
    // At the roll's data-file checkpoint (the file uploaded, the append not committed), a compaction commits.
    const p = inProcessRoller({}, async (name) => {
      if (name === 'data-file' && armed && compaction === undefined) {
        compaction = await compactTable(catalog, await catalog.loadTable(tableId(sink.table)), { retry: RETRY })
      }
    })
    try {
      for (let i = 0; i < 3; i++) {
        await sendOk(sink, [{ x: 2 * i }, { x: 2 * i + 1 }])
        await tickOk(p, sink.id)
      }
      const racing = await sendOk(sink, [{ x: 100 }, { x: 101 }])
      armed = true
      await tickOk(p, sink.id)
      expect(compaction).toMatchObject({ rewrittenFiles: 3, addedFiles: 1 })

      const s = await pyScan({ sql: whId }, sink.table)
      expect(countsByX(s.rows)).toEqual(once([0, 1, 2, 3, 4, 5, 100, 101]))
      const current = s.snapshots.find((sn: any) => sn.snapshot_id === s.current_snapshot_id)
      expect(current.summary['lakehousebox.sink.batches']).toBe(racing)
      expect(current.parent).toBe(compaction!.snapshotId)
      expect(s.snapshots.find((sn: any) => sn.snapshot_id === compaction!.snapshotId).operation).toBe('replace')
      expect(s.files).toHaveLength(2)
      expect(await batchKeys(sink.id)).toEqual([])
      expect(await markerKeys(sink.id)).toEqual([])
      expect((await ledgerStates(db, sink.id))[racing]).toBe('committed')
    } finally {
      await p.roller.close()
    }
  })
})

// ---- a roller stopped before its marker delete; maintenance expires the roll; restart ---------------

describe('a roller stopped before its marker was deleted', () => {
  it('maintenance expires the roll’s snapshot, then the restarted roller appends nothing again', { timeout: 240_000 }, async () => {
    const sink = await newSink(stack().adminKey)
    // 12 batches; killed after the commit and its marker, and 5 batches deleted by hand: the store
    // applied the roll's DeleteObjects in part, so some are still in the intake.
    const batches: string[] = []
    for (let i = 0; i < 12; i++) batches.push(await sendOk(sink, [{ x: 2 * i }, { x: 2 * i + 1 }], `m${i}-${uid()}`))
    const rollerId = `marker-${uid()}`
    const killed = await rollerTick({ sink: sink.id, killAt: 'marker', rollerId })
    expect(killed.signal, killed.stdout + killed.stderr).toBe('SIGKILL')
    for (const batchId of batches.slice(0, 5)) await bucket().delete(intakeKey(sink.id, batchId))

    const left = await batchKeys(sink.id)
    expect(left.length).toBeGreaterThan(0)
    expect(left.length).toBeLessThan(12)
    const [marker] = await markerKeys(sink.id)
    expect(marker).toBeDefined()
    const body = parseLossless(Buffer.from((await bucket().get(marker))!.body).toString('utf8')) as any
    expect([...body.batch_ids].sort()).toEqual([...batches].sort())
    const rolled = await pyScan({ sql: whId }, sink.table)
    expect(sinkSnapshots(rolled, sink.id)).toHaveLength(1)

    // 21 appends of the tenant's own: the roll's snapshot falls out of the newest 20.
    const catalog = catalogOf(whId)
    let table = await catalog.loadTable(tableId(sink.table))
    for (let i = 0; i < 21; i++) table = await ownAppend(catalog, table, [{ x: BigInt(1000 + i), who: 'tenant', __ingest_ts: null }])

    // The sweep under the killed roller's id: its lease is still in place, and another roller's sweep
    // would skip the sink until it expires (maintenance-lease.test.ts).
    const p = inProcessRoller({ LHBOX_ROLLER_ID: rollerId })
    try {
      expect(await p.roller.maintain({ sink: sink.id }), JSON.stringify(errorsOf(p.logs))).toEqual({ maintained: 1, failed: 0, skipped: 0 })
    } finally {
      await p.roller.close()
    }
    const expired = await pyScan({ sql: whId }, sink.table)
    expect(sinkSnapshots(expired, sink.id)).toEqual([])
    const named = new Set(expired.snapshots.flatMap((s: any) => String(s.summary['lakehousebox.sink.batches'] ?? '').split(',')))
    expect(batches.filter((b) => named.has(b))).toEqual([])
    expect(expired.snapshots.length).toBeLessThanOrEqual(20)
    expect(await bucket().head(marker)).not.toBeNull()
    expect(await batchKeys(sink.id)).toEqual(left)
    const expected = [...range(0, 24), ...range(1000, 21)]
    expect(countsByX(expired.rows)).toEqual(once(expected))

    // The restart, in this process (same roller id: the killed one's lease is still in place).
    const restarted = await tickInProcess({ sink: sink.id, rollerId })
    expect({ code: restarted.code, signal: restarted.signal }, restarted.stdout + restarted.stderr).toEqual({ code: 0, signal: null })
    expect(restarted.logs.filter((l) => l.msg === 'repaired a consumed batch' && l.source === 'marker')).toHaveLength(left.length)

    const s = await pyScan({ sql: whId }, sink.table)
    expectExactlyOnce(s, expected)
    expect(s.snapshots.filter((sn: any) => sn.summary['lakehousebox.sink.id'] === sink.id)).toEqual([])
    expect(await batchKeys(sink.id)).toEqual([])
    expect(await markerKeys(sink.id)).toEqual([])
    const states = await ledgerStates(db, sink.id)
    expect(Object.keys(states).sort()).toEqual([...batches].sort())
    expect(new Set(Object.values(states))).toEqual(new Set(['committed']))
  })
})

// ---- the per-warehouse switch ------------------------------------------------------------------------

describe('maintenance: off on a warehouse', () => {
  it('its sink’s table is untouched by maintain(); the same sweep does act on a `roller` warehouse', { timeout: 120_000 }, async () => {
    const key = stack().adminKey
    const off = await proxiedWarehouse(stack().s3.endpoint, { maintenance: 'off' })
    const table = await createTable(key, { warehouse: off.name })
    const offSink = await newSink(key, { table, sink: { warehouse: off.name } })
    const onSink = await newSink(key)
    const env = { LHBOX_MAINTENANCE_RETAIN_SNAPSHOTS: '2', LHBOX_MAINTENANCE_ORPHAN_HOURS: '0' }
    const p = inProcessRoller(env)
    try {
      for (let i = 0; i < 4; i++) {
        for (const s of [offSink, onSink]) {
          await sendOk(s, [{ x: i }])
          await tickOk(p, s.id)
        }
      }
      const offCatalog = catalogOf(off.id)
      const beforeOff = await offCatalog.loadTable(tableId(offSink.table))
      const folderBefore = (await tableFolder(beforeOff)).sort()
      expect(beforeOff.metadata.snapshots).toHaveLength(4)

      expect(await p.roller.maintain({ sink: offSink.id })).toEqual({ maintained: 0, failed: 0, skipped: 0 })
      expect(await maintenanceOf(offSink.id)).toEqual({ last: null, next_at: null })
      const afterOff = await offCatalog.loadTable(tableId(offSink.table))
      expect(afterOff.metadataLocation).toBe(beforeOff.metadataLocation)
      expect(afterOff.metadata.snapshots).toHaveLength(4)
      expect((await tableFolder(afterOff)).sort()).toEqual(folderBefore)
      const pyOff = await pyScan({ sql: off.id }, offSink.table)
      expect(pyOff.files).toHaveLength(4)
      expect(countsByX(pyOff.rows)).toEqual(once([0, 1, 2, 3]))

      // the control: the same configuration on the stack's (roller) warehouse expires and compacts
      expect(await p.roller.maintain({ sink: onSink.id }), JSON.stringify(errorsOf(p.logs))).toEqual({ maintained: 1, failed: 0, skipped: 0 })
      expect((await maintenanceOf(onSink.id)).last).toMatchObject({ files_compacted: 4 })
      const pyOn = await pyScan({ sql: whId }, onSink.table)
      expect(pyOn.files).toHaveLength(1)
      expect(pyOn.snapshots.length).toBeLessThanOrEqual(3)
      expect(countsByX(pyOn.rows)).toEqual(once([0, 1, 2, 3]))
    } finally {
      await p.roller.close()
    }
  })
})
