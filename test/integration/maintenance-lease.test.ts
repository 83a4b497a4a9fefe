// The maintenance sweep and the sink's lease, and the retained history (issue 15, defect 7). The sweep
// of a sink's table takes that sink's lease — the one its rolls take — and gives it back after: a sink
// another roller holds (rolling, or sweeping) is skipped that sweep and swept by a later one, a roll
// never leases a sink under a sweep, and the release is no sink.roll. A disabled sink's table is swept
// too; a deleted one's is not. The retained history is "20 snapshots or 168 h", whichever comes
// first: snapshots committed 200 h ago go although the table holds far fewer than 20. Real rollers
// (in process), the stack's edge, Postgres and S3; tables read with PyIceberg.
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Catalog, LoadedTable, TableIdentifier } from '../../iceberg/catalog/index.ts'
import { SqlCatalog } from '../../iceberg/catalog/sql.ts'
import { S3FileIO } from '../../iceberg/io/file-io.ts'
import { writeDataFile } from '../../iceberg/parquet/data-file.ts'
import { loadZstd } from '../../iceberg/parquet/zstd.ts'
import { currentSchema } from '../../iceberg/spec/metadata.ts'
import { fastAppend } from '../../iceberg/transaction/append.ts'
import { loadConfig } from '../../roller/config.ts'
import { jsonLogger } from '../../roller/log.ts'
import { createRoller, type Roller } from '../../roller/loop.ts'
import { RollerMetrics } from '../../roller/metrics.ts'
import { runPython, toExact } from '../support/python.ts'
import { pyCatalogArgs, type PyCatalog, rollerSetup, SETUP_TIMEOUT } from '../support/roller-check.ts'
import { rollerEnv } from '../support/roller.ts'
import { createTable, intakeObjects, newSink, send, uid, type Sink } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

const HOUR = 3600_000
const RETRY = { attempts: 5, minBackoffMs: 20, maxBackoffMs: 100 }
const cols = [
  { name: 'x', type: 'long', required: true },
  { name: 'who', type: 'string' },
]

let db: pg.Client
let pool: pg.Pool
let whId: string
let catalog: SqlCatalog

beforeAll(async () => {
  ;({ db, whId } = await rollerSetup())
  pool = new pg.Pool({ connectionString: stack().databaseUrl, max: 2 })
  const { endpoint, region, accessKeyId, secretAccessKey, bucket } = stack().s3
  catalog = new SqlCatalog({ name: whId, sql: pool, warehouseLocation: `s3://${bucket}`, io: new S3FileIO({ endpoint, region, accessKeyId, secretAccessKey }) })
}, SETUP_TIMEOUT)

afterAll(async () => {
  await db?.end()
  await pool?.end()
})

// ---- helpers -------------------------------------------------------------------------------------

interface InProcess {
  id: string
  roller: Roller
  logs: Array<Record<string, any>>
}

/** A roller in this process, with its own id, its JSON log lines kept. */
function inProcessRoller(env: Record<string, string> = {}, checkpoint: (name: string) => void | Promise<void> = () => {}): InProcess {
  const logs: Array<Record<string, any>> = []
  const config = loadConfig(rollerEnv({ LHBOX_ROLLER_ID: `lease-${uid()}`, ...env }))
  const roller = createRoller(
    config,
    jsonLogger({}, (l) => logs.push(JSON.parse(l))),
    new RollerMetrics(),
    checkpoint,
  )
  return { id: config.rollerId, roller, logs }
}

const errorsOf = (p: InProcess) => JSON.stringify(p.logs.filter((l) => l.level === 'error'))
const tableId = (table: string): TableIdentifier => ({ namespace: [table.split('.')[0]], name: table.split('.')[1] })

async function sendOk(sink: Sink, rows: unknown[]): Promise<void> {
  const res = await send(sink, rows)
  expect(res.status, res.text).toBe(202)
}

async function rollOk(p: InProcess, sink: Sink, rows: unknown[]): Promise<void> {
  await sendOk(sink, rows)
  expect(await p.roller.tick({ sink: sink.id, force: true }), errorsOf(p)).toEqual({ rolled: 1, failed: 0 })
}

/** PyIceberg's view of the table: rows by x, snapshots, the current snapshot's files. */
async function pyScan(c: PyCatalog, table: string): Promise<any> {
  return toExact(await runPython('pyiceberg_scan.py', [...pyCatalogArgs(c), table, '--order-by', 'x']))
}

/** The roller's view of one sink on the edge (state, lease). */
async function rollerView(sinkId: string): Promise<any> {
  const res = await call(`/internal/sinks?sink=${sinkId}`, { key: stack().bootstrapSecret })
  expect(res.status, res.text).toBe(200)
  return res.body.sinks[0]
}

/** GET /v1/sinks/{id}: the sink as its operator sees it. */
async function sinkOf(sinkId: string): Promise<any> {
  const res = await call(`/v1/sinks/${sinkId}`, { key: stack().adminKey })
  expect(res.status, res.text).toBe(200)
  return res.body
}

/** The sweep's own result (its `maintained` log line) in the report's names. */
function reported(p: InProcess): Record<string, number> {
  const done = p.logs.find((l) => l.msg === 'maintained')
  expect(done, errorsOf(p)).toBeDefined()
  return {
    snapshots_expired: done!.snapshotsExpired,
    files_compacted: done!.filesCompacted,
    bytes_compacted: done!.bytesCompacted,
    manifests_rewritten: done!.manifestsRewritten,
    manifests_created: done!.manifestsCreated,
    files_deleted: done!.filesDeleted,
    bytes_deleted: done!.bytesDeleted,
    seconds: done!.seconds,
    // The same sweep deletes rejects files past their retention (none here: these sinks reject nothing).
    rejects_deleted: 0,
    rejects_bytes_deleted: 0,
  }
}

/** at ≤ `to` and ≥ `from`; next_at `hours` after it; the sink's next_at is the report's. */
function expectSweptBetween(maintenance: any, from: number, to: number, hours: number): void {
  const at = Date.parse(maintenance.last.at)
  expect(at).toBeGreaterThanOrEqual(from)
  expect(at).toBeLessThanOrEqual(to)
  expect(Date.parse(maintenance.last.next_at) - at).toBe(hours * HOUR)
  expect(maintenance.next_at).toBe(maintenance.last.next_at)
}

/** The sink's audit events, oldest first. */
async function auditOf(sinkId: string): Promise<Array<{ action: string; actor: string }>> {
  return (await db.query('select action, actor from audit_events where subject = $1 order by id', [sinkId])).rows
}

const batchKeys = async (sinkId: string) => (await intakeObjects(sinkId)).filter((k) => !k.includes('/rejects/') && !k.includes('/committed/'))
const pairs = (rows: Array<Record<string, any>>) => rows.map((r) => [Number(r.x), r.who])

/** A tenant's own append of one small file, committed at `timestampMs`. */
async function ownAppend(cat: Catalog, table: LoadedTable, rows: Array<Record<string, unknown>>, timestampMs: number): Promise<LoadedTable> {
  const { bytes, metrics } = writeDataFile(currentSchema(table.metadata), rows as any, { compression: await loadZstd() })
  const filePath = `${table.metadata.location}/data/tenant-${crypto.randomUUID()}.parquet`
  await table.io.write(filePath, bytes)
  return (await fastAppend(cat, table, [{ filePath, fileFormat: 'PARQUET', partition: {}, ...metrics }], { retry: RETRY, timestampMs })).table
}

// ---- the lease -------------------------------------------------------------------------------------

describe('the sweep takes the sink’s lease', () => {
  it('a disabled sink’s table is swept under its lease, given back after; its waiting batch stays; no sink.roll', { timeout: 180_000 }, async () => {
    const sink = await newSink(stack().adminKey, { tableSpec: { columns: cols }, sink: { key: ['x'] } })
    const r = inProcessRoller()
    try {
      await rollOk(r, sink, [
        { x: 1, who: 'v1' },
        { x: 2, who: 'v1' },
      ])
      for (const x of [3, 4, 5]) await rollOk(r, sink, [{ x, who: 'v1' }])
    } finally {
      await r.roller.close()
    }
    // Key 2 again: the first file is partly replaced, its rewrite past a 10-byte limit: disabled.
    const d = inProcessRoller({ LHBOX_UPSERT_MAX_REWRITE_BYTES: '10' })
    try {
      await sendOk(sink, [{ x: 2, who: 'v2' }])
      await d.roller.tick({ sink: sink.id, force: true })
    } finally {
      await d.roller.close()
    }
    expect(await rollerView(sink.id)).toMatchObject({ state: 'disabled', lease: null })
    const before = await pyScan({ sql: whId }, sink.table)
    expect(before.snapshots).toHaveLength(4)
    expect(before.files).toHaveLength(4)
    const audited = await auditOf(sink.id)
    expect((await sinkOf(sink.id)).maintenance).toEqual({ last: null, next_at: null })

    const m = inProcessRoller({ LHBOX_MAINTENANCE_RETAIN_SNAPSHOTS: '2', LHBOX_MAINTENANCE_ORPHAN_HOURS: '0' })
    const sweptFrom = Date.now()
    try {
      expect(await m.roller.maintain({ sink: sink.id }), errorsOf(m)).toEqual({ maintained: 1, failed: 0, skipped: 0 })
    } finally {
      await m.roller.close()
    }
    const after = await pyScan({ sql: whId }, sink.table)
    // GET /v1/sinks/{id} shows the sweep as the roller did it, the next due 6 h (the default) after.
    const shown = (await sinkOf(sink.id)).maintenance
    expect(shown.last).toEqual({ at: expect.any(String), next_at: expect.any(String), ...reported(m) })
    expectSweptBetween(shown, sweptFrom, Date.now(), 6)
    const kept = new Set(after.snapshots.map((s: any) => s.snapshot_id))
    expect(shown.last).toMatchObject({
      files_compacted: before.files.length,
      snapshots_expired: before.snapshots.filter((s: any) => !kept.has(s.snapshot_id)).length,
    })
    expect(pairs(after.rows)).toEqual(pairs(before.rows))
    expect(pairs(after.rows)).toEqual([
      [1, 'v1'],
      [2, 'v1'],
      [3, 'v1'],
      [4, 'v1'],
      [5, 'v1'],
    ])
    expect(after.files).toHaveLength(1) // compacted
    expect(after.snapshots.length).toBeLessThanOrEqual(2) // expired back to 2
    // Still disabled, its batch still waiting, the lease given back, and the sweep is no roll.
    expect(await rollerView(sink.id)).toMatchObject({ state: 'disabled', lease: null })
    expect(await batchKeys(sink.id)).toHaveLength(1)
    expect(await auditOf(sink.id)).toEqual(audited)
  })

  it('while roller A rolls the sink, roller B’s sweep skips it (nothing committed); once A is done, B sweeps it', { timeout: 180_000 }, async () => {
    const sink = await newSink(stack().adminKey, { tableSpec: { columns: cols } })
    const setup = inProcessRoller()
    try {
      for (let x = 0; x < 3; x++) await rollOk(setup, sink, [{ x, who: 'setup' }])
    } finally {
      await setup.roller.close()
    }
    // A stops at its roll's data-file checkpoint (the file written, nothing committed) until let go.
    let reached!: () => void
    let letGo!: () => void
    const atDataFile = new Promise<void>((resolve) => (reached = resolve))
    const go = new Promise<void>((resolve) => (letGo = resolve))
    const a = inProcessRoller({}, async (name) => {
      if (name !== 'data-file') return
      reached()
      await go
    })
    const b = inProcessRoller({ LHBOX_MAINTENANCE_ORPHAN_HOURS: '0' })
    try {
      await sendOk(sink, [{ x: 3, who: 'a' }])
      const rolling = a.roller.tick({ sink: sink.id, force: true })
      await atDataFile
      expect((await rollerView(sink.id)).lease.owner).toBe(a.id)
      const held = await catalog.loadTable(tableId(sink.table))

      expect(await b.roller.maintain({ sink: sink.id }), errorsOf(b)).toEqual({ maintained: 0, failed: 0, skipped: 1 })
      expect(b.logs.find((l) => l.msg === 'maintenance skipped this sweep: another roller holds the sink')).toMatchObject({ sink_id: sink.id })
      expect((await catalog.loadTable(tableId(sink.table))).metadataLocation).toBe(held.metadataLocation)
      expect((await rollerView(sink.id)).lease.owner).toBe(a.id) // B's skip left A's lease alone

      letGo()
      expect(await rolling, errorsOf(a)).toEqual({ rolled: 1, failed: 0 })
      expect((await rollerView(sink.id)).lease).toBeNull()
      expect(await b.roller.maintain({ sink: sink.id }), errorsOf(b)).toEqual({ maintained: 1, failed: 0, skipped: 0 })
    } finally {
      letGo()
      await a.roller.close()
      await b.roller.close()
    }
    const s = await pyScan({ sql: whId }, sink.table)
    expect(pairs(s.rows)).toEqual([
      [0, 'setup'],
      [1, 'setup'],
      [2, 'setup'],
      [3, 'a'],
    ])
    expect(s.files).toHaveLength(1)
    expect(s.snapshots.find((x: any) => x.snapshot_id === s.current_snapshot_id).operation).toBe('replace')
    expect((await rollerView(sink.id)).lease).toBeNull()
  })

  it('under a sweep’s lease no roller rolls or sweeps the sink; its release is no roll; a deleted sink is never leased for a sweep', {
    timeout: 180_000,
  }, async () => {
    const secret = stack().bootstrapSecret
    const sink = await newSink(stack().adminKey, { tableSpec: { columns: cols } })
    const sweeper = `sweeper-${uid()}`
    // Not due (one batch, seconds old): a roll lease needs `force`, a sweep's does not.
    await sendOk(sink, [{ x: 1, who: 'waiting' }])
    expect((await call(`/internal/sinks?roller=${sweeper}&sink=${sink.id}`, { key: secret })).body.sinks).toEqual([])
    const leased = await call(`/internal/sinks?roller=${sweeper}&sink=${sink.id}&purpose=maintenance`, { key: secret })
    expect(leased.status, leased.text).toBe(200)
    expect(leased.body.sinks.map((s: any) => [s.id, s.lease.owner])).toEqual([[sink.id, sweeper]])

    const a = inProcessRoller()
    const c = inProcessRoller()
    try {
      expect(await a.roller.tick({ sink: sink.id, force: true }), errorsOf(a)).toEqual({ rolled: 0, failed: 0 })
      expect(await c.roller.maintain({ sink: sink.id }), errorsOf(c)).toEqual({ maintained: 0, failed: 0, skipped: 1 })
      expect(await batchKeys(sink.id)).toHaveLength(1)

      // A sweep's report releases only: anything a roll reports is refused.
      const bad = await call(`/internal/sinks/${sink.id}/roll`, {
        key: secret,
        json: { roller: sweeper, roll_id: 'sweep-1', purpose: 'maintenance', consumed: [{ batch_ids: ['b'], snapshot_id: null }] },
      })
      expect([bad.status, bad.body?.error?.code]).toEqual([400, 'invalid_request'])
      // What a sweep did comes only with a sweep's report, and well formed; a refused report keeps the lease.
      const sweep = {
        at: '2026-12-02T14:00:00.000Z',
        next_at: '2026-12-02T20:00:00.000Z',
        snapshots_expired: 3,
        files_compacted: 2,
        bytes_compacted: 2048,
        manifests_rewritten: 2,
        manifests_created: 1,
        files_deleted: 7,
        bytes_deleted: 9000,
        seconds: 0.5,
      }
      const asRoll = await call(`/internal/sinks/${sink.id}/roll`, { key: secret, json: { roller: sweeper, roll_id: 'roll-1', maintenance: sweep } })
      expect([asRoll.status, asRoll.body?.error?.code]).toEqual([400, 'invalid_request'])
      const malformed = await call(`/internal/sinks/${sink.id}/roll`, {
        key: secret,
        json: { roller: sweeper, roll_id: 'sweep-1', purpose: 'maintenance', maintenance: { ...sweep, at: 'just now' } },
      })
      expect([malformed.status, malformed.body?.error?.code]).toEqual([400, 'invalid_request'])
      expect((await rollerView(sink.id)).lease.owner).toBe(sweeper)
      expect((await sinkOf(sink.id)).maintenance).toEqual({ last: null, next_at: null })

      const released = await call(`/internal/sinks/${sink.id}/roll`, {
        key: secret,
        json: { roller: sweeper, roll_id: 'sweep-1', purpose: 'maintenance', maintenance: sweep },
      })
      expect(released.status, released.text).toBe(200)
      expect((await rollerView(sink.id)).lease).toBeNull()
      expect((await auditOf(sink.id)).filter((e) => e.action === 'sink.roll')).toEqual([])
      expect((await sinkOf(sink.id)).maintenance).toEqual({ last: sweep, next_at: sweep.next_at })

      // Released: the roll goes ahead, and is audited as one.
      expect(await a.roller.tick({ sink: sink.id, force: true }), errorsOf(a)).toEqual({ rolled: 1, failed: 0 })
      expect((await auditOf(sink.id)).filter((e) => e.action === 'sink.roll').map((e) => e.actor)).toEqual([`roller:${a.id}`])
      expect((await sinkOf(sink.id)).maintenance.last).toEqual(sweep) // a roll's report leaves the sweep's alone

      // Deleted: no sweep lease, and the sweep passes it by.
      expect((await call(`/v1/sinks/${sink.id}`, { method: 'DELETE', key: stack().adminKey })).status).toBe(202)
      expect((await call(`/internal/sinks?roller=${sweeper}&sink=${sink.id}&purpose=maintenance`, { key: secret })).body.sinks).toEqual([])
      expect(await c.roller.maintain({ sink: sink.id }), errorsOf(c)).toEqual({ maintained: 0, failed: 0, skipped: 0 })
      // Its last sweep is still shown; none is due.
      expect((await sinkOf(sink.id)).maintenance).toEqual({ last: expect.objectContaining({ at: sweep.at }), next_at: null })
    } finally {
      await a.roller.close()
      await c.roller.close()
    }
  })

  it('a sweep that fails part way reports why and what its finished steps did, and gives its lease back; the next one clears it', {
    timeout: 180_000,
  }, async () => {
    const sink = await newSink(stack().adminKey, { tableSpec: { columns: cols } })
    const r = inProcessRoller()
    try {
      for (const x of [1, 2, 3]) await rollOk(r, sink, [{ x, who: 'v1' }])
    } finally {
      await r.roller.close()
    }
    // Stopped right after its compaction committed: the manifests, the expiry and the clean-up never run.
    const f = inProcessRoller({ LHBOX_MAINTENANCE_HOURS: '2', LHBOX_MAINTENANCE_RETAIN_SNAPSHOTS: '1' }, (name) => {
      if (name === 'compact-commit') throw new Error('injected: the sweep stops after its compaction')
    })
    const sweptFrom = Date.now()
    try {
      expect(await f.roller.maintain({ sink: sink.id })).toEqual({ maintained: 0, failed: 1, skipped: 0 })
    } finally {
      await f.roller.close()
    }
    const failed = (await sinkOf(sink.id)).maintenance
    expect(failed.last).toMatchObject({
      error: 'injected: the sweep stops after its compaction',
      files_compacted: 3,
      manifests_rewritten: 0,
      snapshots_expired: 0,
      files_deleted: 0,
    })
    expect(failed.last.bytes_compacted).toBeGreaterThan(0)
    expectSweptBetween(failed, sweptFrom, Date.now(), 2)
    expect((await rollerView(sink.id)).lease).toBeNull()
    const stopped = await pyScan({ sql: whId }, sink.table)
    expect(stopped.files).toHaveLength(1) // the compaction stands
    expect(stopped.snapshots).toHaveLength(4)

    const ok = inProcessRoller({ LHBOX_MAINTENANCE_RETAIN_SNAPSHOTS: '1' })
    try {
      expect(await ok.roller.maintain({ sink: sink.id }), errorsOf(ok)).toEqual({ maintained: 1, failed: 0, skipped: 0 })
    } finally {
      await ok.roller.close()
    }
    const cleared = (await sinkOf(sink.id)).maintenance
    expect(cleared.last).toEqual({ at: expect.any(String), next_at: expect.any(String), ...reported(ok) })
    expect(cleared.last.snapshots_expired).toBeGreaterThanOrEqual(3)
    expect(Date.parse(cleared.last.at)).toBeGreaterThan(Date.parse(failed.last.at))
  })
})

// ---- retention -------------------------------------------------------------------------------------

describe('retention: 20 snapshots or 168 h, whichever comes first', () => {
  it('snapshots committed 200 h ago are expired though the table holds fewer than 20; the current one never; LHBOX_MAINTENANCE_RETAIN_HOURS sets the age', {
    timeout: 180_000,
  }, async () => {
    const table = await createTable(stack().adminKey, { columns: cols })
    // Three commits of the tenant's own, a little over a week ago.
    const old = Date.now() - 200 * HOUR
    let t = await catalog.loadTable(tableId(table))
    for (let i = 0; i < 3; i++) t = await ownAppend(catalog, t, [{ x: BigInt(100 + i), who: 'old' }], old + i * 1000)
    const oldIds = t.metadata.snapshots.map((s) => s['snapshot-id'])
    expect(oldIds).toHaveLength(3)

    const sink = await newSink(stack().adminKey, { table })
    const r = inProcessRoller()
    try {
      for (const x of [1, 2]) await rollOk(r, sink, [{ x, who: 'roll' }])
    } finally {
      await r.roller.close()
    }
    const before = await pyScan({ sql: whId }, table)
    expect(before.snapshots).toHaveLength(5)
    expect(before.snapshots.filter((s: any) => s.timestamp_ms < Date.now() - 168 * HOUR).map((s: any) => s.snapshot_id)).toEqual(oldIds)

    // A 1000 h limit: nothing is that old, and 5 (+ the sweep's own 2) are under 20: nothing expires.
    const patient = inProcessRoller({ LHBOX_MAINTENANCE_RETAIN_HOURS: '1000' })
    try {
      expect(await patient.roller.maintain({ sink: sink.id }), errorsOf(patient)).toEqual({ maintained: 1, failed: 0, skipped: 0 })
      expect(patient.logs.find((l) => l.msg === 'maintained')).toMatchObject({ snapshotsExpired: 0 })
    } finally {
      await patient.roller.close()
    }
    const kept = await pyScan({ sql: whId }, table)
    expect(kept.snapshots.map((s: any) => s.snapshot_id).slice(0, 3)).toEqual(oldIds)

    // The default, 168 h: the three old snapshots go, the rest stay.
    const sweep = inProcessRoller()
    try {
      expect(await sweep.roller.maintain({ sink: sink.id }), errorsOf(sweep)).toEqual({ maintained: 1, failed: 0, skipped: 0 })
      expect(sweep.logs.find((l) => l.msg === 'maintained')).toMatchObject({ snapshotsExpired: 3 })
    } finally {
      await sweep.roller.close()
    }
    const after = await pyScan({ sql: whId }, table)
    expect(after.snapshots.map((s: any) => s.snapshot_id)).toEqual(kept.snapshots.slice(3).map((s: any) => s.snapshot_id))
    expect(after.snapshots.every((s: any) => s.timestamp_ms >= Date.now() - 168 * HOUR)).toBe(true)
    expect(pairs(after.rows)).toEqual([
      [1, 'roll'],
      [2, 'roll'],
      [100, 'old'],
      [101, 'old'],
      [102, 'old'],
    ])
  })
})
