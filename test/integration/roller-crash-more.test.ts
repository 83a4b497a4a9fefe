// Every crash point (issue 15), beyond the roll's own steps (roller-crash.test.ts, keyed-crash.test.ts):
// the roller, a child process, killed with SIGKILL (LHBOX_ROLLER_KILL_AT) after its report (before the
// settled markers go, before the rejects sweep), inside a dedupe (its files written; its commit made,
// not reported), inside the maintenance sweep (after the compaction commit, the manifest rewrite, the
// expiry — before the clean-up — and the clean-up), and between the batches of a v3 roll recorded one
// by one; and a SIGTERM during a roll of `roller run`. Then restarted (same roller id, as a restarted
// service), and the table read back with PyIceberg (DuckDB where PyIceberg cannot load the metadata).
//
// The v3 one-by-one path: the only input our writer refuses after the row checks is a schema it cannot
// write (a `variant` column an engine added while batches wait; test/integration/delete-files.test.ts).
// It refuses every batch that has a row, so in that path each batch is recorded by its own empty-roll
// marker and no batch is ever committed: 'marker:2' is reachable, 'commit:2' is not (no such input).
import pg from 'pg'
import { spawn } from 'node:child_process'
import { afterAll, beforeAll, describe, it } from 'vitest'
import { rollerCommand } from '../../dev/roller.ts'
import type { TableIdentifier } from '../../iceberg/catalog/index.ts'
import { SqlCatalog } from '../../iceberg/catalog/sql.ts'
import { parseS3Location, S3FileIO } from '../../iceberg/io/file-io.ts'
import { locationKey, reachableFiles } from '../../iceberg/maintenance/reachable.ts'
import { parseLossless } from '../../iceberg/spec/json.ts'
import { addColumnsChange } from '../../iceberg/transaction/changes.ts'
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts'
import { runPython, s3Args, toExact } from '../support/python.ts'
import { expectExactlyOnce, ledgerStates, proxiedWarehouse, scan, sinkSnapshots, type Scan, rollerSetup, SETUP_TIMEOUT } from '../support/roller-check.ts'
import { holdSink, inProcessRoller, killThenRestart, rollerEnv, rollerMaintain, rollerTick, tickInProcess } from '../support/roller.ts'
import { bucket, createTable, intakeObjects, newSink, poll, send, uid, type Sink } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

let db: pg.Client
let pool: pg.Pool
let whId: string
let catalog: SqlCatalog

beforeAll(async () => {
  ;({ db, whId } = await rollerSetup())
  pool = new pg.Pool({ connectionString: stack().databaseUrl, max: 4 })
  const { endpoint, region, accessKeyId, secretAccessKey, bucket: b } = stack().s3
  catalog = new SqlCatalog({ name: whId, sql: pool, warehouseLocation: `s3://${b}`, io: new S3FileIO({ endpoint, region, accessKeyId, secretAccessKey }) })
}, SETUP_TIMEOUT)

afterAll(async () => {
  await db?.end()
  await pool?.end()
})

// ---- helpers -------------------------------------------------------------------------------------

/** The killed and restarted rollers' processes: no scan threads (a second less to start, nothing else changes). */
const ENV = { LHBOX_ROLLER_SCAN_THREADS: '0' }

const tableId = (table: string): TableIdentifier => ({ namespace: [table.split('.')[0]], name: table.split('.')[1] })
/** GET /v1/sinks/{id}: lag, rejects, dedupe. */
const publicView = async (sinkId: string) => (await call(`/v1/sinks/${sinkId}`, { key: stack().adminKey })).body
/** The roller's view of the sink (no lease taken): its lease. */
const rollerView = async (sinkId: string) => (await call(`/internal/sinks?sink=${sinkId}`, { key: stack().bootstrapSecret })).body.sinks[0]
const batchKeys = async (sinkId: string) => (await intakeObjects(sinkId)).filter((k) => !k.includes('/rejects/') && !k.includes('/committed/'))
const markerKeys = async (sinkId: string) => (await intakeObjects(sinkId)).filter((k) => k.includes('/committed/'))
const rejectKeys = (sinkId: string, batches: string[]) => batches.map((b) => `_sink/${sinkId}/rejects/${b}.ndjson`).sort()
const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i)
const pairs = (s: Scan) => s.rows.map((r) => [Number(r.x), r.who])

async function sendOk(sink: Sink, body: string | unknown[], batchId = `b-${uid()}`): Promise<string> {
  const res = await send(sink, body, { batchId })
  if (res.status !== 202) throw new Error(`send: ${res.status} ${res.text}`)
  return batchId
}

/** A roll the test only needs done (the roller in this process, under `rollerId`). */
async function tickOk(sinkId: string, rollerId: string): Promise<void> {
  const p = inProcessRoller({ LHBOX_ROLLER_ID: rollerId })
  try {
    const r = await p.roller.tick({ sink: sinkId, force: true })
    if (r.rolled !== 1 || r.failed !== 0) throw new Error(`tick: ${JSON.stringify(r)}\n${JSON.stringify(p.logs)}`)
  } finally {
    await p.roller.close()
  }
}

/** A sweep of the sink's table (roller.maintain, as `roller maintain --sink` runs it) in this process, under `rollerId`. */
async function sweepOk(sinkId: string, rollerId: string, env: Record<string, string>): Promise<void> {
  const p = inProcessRoller({ LHBOX_ROLLER_ID: rollerId, ...env })
  try {
    const r = await p.roller.maintain({ sink: sinkId })
    if (r.maintained !== 1) throw new Error(`maintain: ${JSON.stringify(r)}\n${JSON.stringify(p.logs)}`)
  } finally {
    await p.roller.close()
  }
}

/** The rows of a batch's rejects file: [index, reason] each. */
async function rejectsOf(sinkId: string, batchId: string): Promise<Array<[number, string]>> {
  const got = await bucket().get(`_sink/${sinkId}/rejects/${batchId}.ndjson`)
  if (!got) throw new Error(`no rejects file for ${batchId}`)
  const lines = Buffer.from(got.body).toString('utf8').split('\n').filter(Boolean)
  return lines.map((l) => toExact(parseLossless(l))).map((r: any) => [Number(r.index), r.reason] as [number, string])
}

/** The ledger: every batch committed, with the snapshot id given (null: an empty roll's). */
async function expectCommitted(expect: import('vitest').ExpectStatic, sinkId: string, batches: Record<string, string | null>): Promise<void> {
  const { rows } = await db.query('select batch_id, state, snapshot_id from batches where sink_id = $1', [sinkId])
  expect(Object.fromEntries(rows.map((r) => [r.batch_id, [r.state, r.snapshot_id === null ? null : String(r.snapshot_id)]]))).toEqual(
    Object.fromEntries(Object.entries(batches).map(([b, snap]) => [b, ['committed', snap]])),
  )
  expect((await publicView(sinkId)).lag).toEqual({ batches_waiting: 0, bytes_waiting: 0, oldest_waiting_at: null, seconds_behind: 0 })
}

// ---- after the report --------------------------------------------------------------------------

/**
 * [case, roll kind, the kills in order, the markers they leave, the rejected rows the sink counts]. The
 * kills all come after a report: the batches are out of the intake and committed in the ledger before
 * the restart. A roll killed after its report has counted its rejects once, and the restart counts
 * nothing again. (A repair is reported without the rejects of the roll that died before its report:
 * that case does not check the count.)
 */
const REPORT_CASES: Array<[string, 'append' | 'empty', string[], number, number | null]> = [
  ['an append roll at after-report', 'append', ['after-report'], 0, 3],
  ['an append roll at settled-marker-delete', 'append', ['settled-marker-delete'], 0, 3],
  ['a repair at after-report (killed at marker first): its settled marker still there', 'append', ['marker', 'after-report'], 1, null],
  ['an empty roll at after-report: its marker still there', 'empty', ['after-report'], 1, 6],
  ['an empty roll at settled-marker-delete', 'empty', ['settled-marker-delete'], 0, 6],
]

describe.concurrent('killed after the report', () => {
  it.concurrent.for(REPORT_CASES)(
    '%s, then restarted: every good row once, no marker, nothing in the intake, the ledger committed, lag 0',
    { timeout: 150_000 },
    async ([, kind, kills, markersLeft, rejectsCounted], { expect }) => {
      const sink = await newSink(stack().adminKey)
      const batches: string[] = []
      for (const i of [1, 2, 3]) {
        const body = kind === 'append' ? `[{"x": ${i * 10 + 1}}, {"x": ${i * 10 + 2}, "who": "w${i}"}, {"x": "bad"}]` : `[{"x": "bad ${i}"}, {"who": "no x"}]`
        batches.push(await sendOk(sink, body, `r${i}-${uid()}`))
      }
      await killThenRestart(sink.id, batches, kills, 0, expect, {
        env: ENV,
        afterKills: async () => {
          expect(await batchKeys(sink.id)).toEqual([])
          expect(await markerKeys(sink.id)).toHaveLength(markersLeft)
          expect(Object.values(await ledgerStates(db, sink.id))).toEqual(['committed', 'committed', 'committed'])
        },
      })

      const s = await scan({ sql: whId }, sink.table)
      if (kind === 'append') {
        expectExactlyOnce(s, [11, 12, 21, 22, 31, 32])
        expect(s.rows.map((r) => r.who)).toEqual([null, 'w1', null, 'w2', null, 'w3'])
        const [snap, ...more] = sinkSnapshots(s, sink.id)
        expect(more).toEqual([])
        expect(snap.summary['lakehousebox.sink.batches'].split(',').sort()).toEqual([...batches].sort())
        await expectCommitted(expect, sink.id, Object.fromEntries(batches.map((b) => [b, String(snap.snapshot_id)])))
      } else {
        expect(s.snapshots).toEqual([])
        expect(s.rows).toEqual([])
        await expectCommitted(expect, sink.id, Object.fromEntries(batches.map((b) => [b, null])))
      }
      // Nothing left but the rejects files: no batch, no marker.
      expect(await intakeObjects(sink.id)).toEqual(rejectKeys(sink.id, batches))
      if (rejectsCounted !== null) expect((await publicView(sink.id)).rejects.rows_total).toBe(rejectsCounted)
    },
  )
})

// ---- inside a dedupe ---------------------------------------------------------------------------

/** [the kill, dedupe snapshots the killed tick left] */
const DEDUPE_CASES: Array<[string, number]> = [
  ['dedupe-files', 0],
  ['dedupe-commit', 1],
]

describe.concurrent('a dedupe killed', () => {
  it.concurrent.for(DEDUPE_CASES)(
    'at %s, then restarted: the dedupe done once (one row per key, the latest), dedupe.last set, the lease released',
    { timeout: 150_000 },
    async ([killAt, leftByKill], { expect }) => {
      const sink = await newSink(stack().adminKey)
      const rollerId = `dcrash-${uid()}`
      const wh = { sql: whId }
      // Unkeyed: two appends store key 1 twice. Then keyed: the killed tick's roll replaces 2, which
      // rewrites the first file (1/a1 and 4/a kept), and its dedupe then rewrites that file without 1/a1.
      const early = [
        await sendOk(sink, [
          { x: 1, who: 'a1' },
          { x: 2, who: 'a' },
          { x: 4, who: 'a' },
        ]),
      ]
      await tickOk(sink.id, rollerId)
      early.push(
        await sendOk(sink, [
          { x: 1, who: 'b' },
          { x: 3, who: 'b' },
        ]),
      )
      await tickOk(sink.id, rollerId)
      const patched = await call(`/v1/sinks/${sink.id}`, { method: 'PATCH', key: stack().adminKey, json: { key: ['x'] } })
      expect(patched.status, patched.text).toBe(200)
      const late = await sendOk(sink, [{ x: 2, who: 'c' }])
      const asked = await call(`/v1/sinks/${sink.id}/dedupe`, { method: 'POST', key: stack().adminKey })
      expect(asked.status, asked.text).toBe(202)

      const killed = await rollerTick({ sink: sink.id, killAt, rollerId, env: ENV })
      expect(killed.signal, killed.stdout + killed.stderr).toBe('SIGKILL')
      const dedupes = (s: Scan) => s.snapshots.filter((x) => x.summary['lakehousebox.dedupe.sink'] === sink.id)
      const mid = await scan(wh, sink.table)
      expect(dedupes(mid)).toHaveLength(leftByKill)
      expect((await publicView(sink.id)).dedupe).toMatchObject({ requested_at: asked.body.dedupe.requested_at, last: null })
      expect((await rollerView(sink.id)).lease?.owner).toBe(rollerId) // the dead roller's: the restart's own id takes it

      for (const n of [1, 2]) {
        const t = await tickInProcess({ sink: sink.id, rollerId, env: ENV })
        expect({ n, code: t.code, signal: t.signal }, t.stdout + t.stderr).toEqual({ n, code: 0, signal: null })
      }
      const s = await scan(wh, sink.table)
      expect(pairs(s)).toEqual([
        [1, 'b'],
        [2, 'c'],
        [3, 'b'],
        [4, 'a'],
      ])
      const [done, ...again] = dedupes(s)
      expect(again).toEqual([])
      expect(done.summary).toMatchObject({ 'lakehousebox.dedupe.rows_removed': '1' })
      expect(s.snapshots.at(-1)!.snapshot_id).toBe(done.snapshot_id)
      const v = await publicView(sink.id)
      expect(v.dedupe).toEqual({
        requested_at: null,
        last: { at: expect.any(String), rows_removed: 1, files_rewritten: 1, files_dropped: 0, snapshot_id: String(done.snapshot_id) },
      })
      expect((await rollerView(sink.id)).lease).toBeNull()
      expect(Object.values(await ledgerStates(db, sink.id))).toEqual([...early, late].map(() => 'committed'))
      expect(await intakeObjects(sink.id)).toEqual([])
    },
  )
})

// ---- inside the maintenance sweep --------------------------------------------------------------

/** Every object under the table's folder (data/ and metadata/), and what its retained snapshots reach. */
async function tableFolder(table: string): Promise<{ listed: Set<string>; reached: Set<string>; manifestLists: Map<bigint, string> }> {
  const t = await catalog.loadTable(tableId(table))
  const reached = new Set([...(await reachableFiles(t.metadata, t.io, t.metadataLocation))].map(locationKey))
  const { bucket: b, key } = parseS3Location(t.metadata.location.replace(/\/+$/, '') + '/')
  const listed = new Set<string>()
  for await (const o of bucket().list(key)) listed.add(locationKey(`s3://${b}/${o.key}`))
  const manifestLists = new Map(t.metadata.snapshots.map((s) => [s['snapshot-id'], locationKey(s['manifest-list'] ?? '')]))
  return { listed, reached, manifestLists }
}

/** [the kill, whether the files of the snapshots it expired are still there after the next regular sweep] */
const SWEEP_CASES: Array<[string, boolean]> = [
  ['compact-commit', false],
  ['manifest-rewrite', false],
  ['expire', true], // the expiry committed, its clean-up never ran: the next sweep no longer knows those files
  ['cleanup', false],
]

describe.concurrent('the maintenance sweep killed', () => {
  it.concurrent.for(SWEEP_CASES)(
    'at %s, then swept again: every row once, every referenced file there; a sweep with orphans of any age leaves nothing unreferenced',
    { timeout: 180_000 },
    async ([killAt, leftAfterNextSweep], { expect }) => {
      const sink = await newSink(stack().adminKey)
      const rollerId = `scrash-${uid()}`
      // Three rolls: three snapshots, three small files. Two snapshots retained: every sweep expires some.
      for (let i = 0; i < 3; i++) {
        await sendOk(sink, [{ x: 2 * i }, { x: 2 * i + 1, who: `w${i}` }])
        await tickOk(sink.id, rollerId)
      }
      const env = { LHBOX_MAINTENANCE_RETAIN_SNAPSHOTS: '2' }
      const before = await tableFolder(sink.table)

      // `roller maintain --sink` killed; the next sweep under the same id (the dead one's lease is still held).
      const killed = await rollerMaintain({ sink: sink.id, killAt, rollerId, env: { ...ENV, ...env } })
      expect(killed.signal, killed.stdout + killed.stderr).toBe('SIGKILL')
      await sweepOk(sink.id, rollerId, env)

      // PyIceberg reads every row of the current snapshot (a missing file would fail the read), each once.
      expectExactlyOnce(await scan({ sql: whId }, sink.table), range(0, 6))
      const swept = await tableFolder(sink.table)
      expect([...swept.reached].filter((f) => !swept.listed.has(f))).toEqual([])
      // The snapshots gone since the first roll: their manifest lists are left only by a sweep killed
      // between its expiry and its clean-up.
      const expiredLists = [...before.manifestLists].filter(([id]) => !swept.manifestLists.has(id)).map(([, list]) => list)
      expect(expiredLists).toHaveLength(3)
      expect(expiredLists.filter((l) => swept.listed.has(l))).toEqual(leftAfterNextSweep ? expiredLists : [])

      // The table still takes rolls.
      await sendOk(sink, [{ x: 6 }])
      await tickOk(sink.id, rollerId)

      // Orphans of any age: the sweep deletes whatever no retained snapshot reaches.
      await sweepOk(sink.id, rollerId, { ...env, LHBOX_MAINTENANCE_ORPHAN_HOURS: '0' })
      const clean = await tableFolder(sink.table)
      expect([...clean.listed].filter((f) => !clean.reached.has(f))).toEqual([])
      expect([...clean.reached].filter((f) => !clean.listed.has(f))).toEqual([])
      expect(expiredLists.filter((l) => clean.listed.has(l))).toEqual([])
      expectExactlyOnce(await scan({ sql: whId }, sink.table), range(0, 7))
      expect((await rollerView(sink.id)).lease).toBeNull()
    },
  )
})

// ---- between the batches of a v3 roll recorded one by one ---------------------------------------

/** DuckDB's read of the table's current metadata (PyIceberg 0.12 cannot load metadata that has a variant). */
async function duckXs(table: string): Promise<number[]> {
  const { rows } = await db.query('select metadata_location from iceberg_tables where catalog_name = $1 and table_namespace = $2 and table_name = $3', [
    whId,
    ...table.split('.'),
  ])
  const out = toExact(await runPython('duckdb_scan.py', [...s3Args(stack().s3), '--metadata', rows[0].metadata_location, '--select', 'x', '--order-by', 'x']))
  return out.rows.map((r: any) => Number(r.x))
}

describe.concurrent('a v3 roll whose batches are recorded one by one', () => {
  it.concurrent('killed at the second (marker:2), then restarted: every row once, in the table or in its rejects; nothing pending', {
    timeout: 180_000,
  }, async ({ expect }) => {
    const sink = await newSink(stack().adminKey, { tableSpec: { format_version: 3 } })
    const rollerId = `v3crash-${uid()}`
    const first = await sendOk(sink, [{ x: 1 }, { x: 2, who: 'first' }])
    await tickOk(sink.id, rollerId) // the first roll: __ingest_ts and the retention properties, rows 1 and 2
    const a = await sendOk(sink, '[{"x": 3, "who": "a"}, {"x": 4}]')
    const b = await sendOk(sink, '[{"x": 5, "who": "b"}, {"x": "five"}]')
    const c = await sendOk(sink, '[{"x": 6.5}]')
    // Another engine adds a column our writer cannot write: it refuses the roll, then each batch.
    const table = await catalog.loadTable(tableId(sink.table))
    const schemaBefore = table.metadata['current-schema-id']
    const add = addColumnsChange(table.metadata, [{ name: 'v', type: 'variant' }])
    await catalog.commitTable(table, add.requirements, add.updates)

    const killed = await rollerTick({ sink: sink.id, killAt: 'marker:2', rollerId, env: ENV })
    expect(killed.signal, killed.stdout + killed.stderr).toBe('SIGKILL')
    expect(killed.logs.some((l) => l.msg === 'the writer refused the roll; committing its batches one by one')).toBe(true)
    // Two batches recorded (their markers), none deleted yet; the third still waits.
    expect(await markerKeys(sink.id)).toHaveLength(2)
    expect((await batchKeys(sink.id)).length).toBe(3)

    for (const n of [1, 2]) {
      const t = await tickInProcess({ sink: sink.id, rollerId, env: ENV })
      expect({ n, code: t.code, signal: t.signal }, t.stdout + t.stderr).toEqual({ n, code: 0, signal: null })
    }
    // Every row of a, b, c once in its rejects (the writer's refusal or the row's own reason); nothing committed.
    expect(await rejectsOf(sink.id, a)).toEqual([
      [0, 'batch_unwritable'],
      [1, 'batch_unwritable'],
    ])
    expect((await rejectsOf(sink.id, b)).sort()).toEqual([
      [0, 'batch_unwritable'],
      [1, 'type_mismatch'],
    ])
    expect(await rejectsOf(sink.id, c)).toEqual([[0, 'type_mismatch']])
    expect(await duckXs(sink.table)).toEqual([1, 2])
    expect((await catalog.loadTable(tableId(sink.table))).metadata.snapshots).toHaveLength(1)
    expect(await intakeObjects(sink.id)).toEqual(rejectKeys(sink.id, [a, b, c]))
    const firstSnapshot = String(table.metadata['current-snapshot-id'])
    await expectCommitted(expect, sink.id, { [first]: firstSnapshot, [a]: null, [b]: null, [c]: null })

    // The engine drops the column again (the earlier schema current): the sink goes on.
    const now = await catalog.loadTable(tableId(sink.table))
    await catalog.commitTable(
      now,
      [{ type: 'assert-table-uuid', uuid: now.metadata['table-uuid'] }],
      [{ action: 'set-current-schema', 'schema-id': schemaBefore }],
    )
    await sendOk(sink, [{ x: 7 }])
    await tickOk(sink.id, rollerId)
    expect(await duckXs(sink.table)).toEqual([1, 2, 7])
  })
})

// ---- SIGTERM during a roll of `roller run` -------------------------------------------------------

// Not concurrent with the cases above: a `run` roller leases every due sink of the stack.
describe('SIGTERM during a roll of `roller run`', () => {
  let proxy: FaultProxy
  beforeAll(async () => {
    proxy = await startFaultProxy(stack().s3.endpoint)
  })
  afterAll(() => proxy?.stop())

  // Two slots, and every roll large (LHBOX_ROLLER_LARGE_ROLL_BYTES=1): both sinks are leased at once,
  // one rolls and the other waits for the large turn — leased but not started when SIGTERM comes.
  it('the roll under way finishes and reports, no other roll starts (the other due sink is given back), exit 0', { timeout: 180_000 }, async ({ expect }) => {
    const key = stack().adminKey
    const wh = await proxiedWarehouse(proxy.url)
    const rollerId = `sigterm-${uid()}`
    const sinks: Sink[] = []
    for (let i = 0; i < 2; i++) sinks.push(await newSink(key, { table: await createTable(key, { warehouse: wh.name }), sink: { warehouse: wh.name } }))
    // Held for this roller (no other roller takes them), then due: both waiting past roll_seconds.
    for (const s of sinks) await holdSink(s.id, rollerId)
    const batches = [await sendOk(sinks[0], [{ x: 1 }, { x: 2 }]), await sendOk(sinks[1], [{ x: 10 }])]
    await db.query(`update batches set received_at = now() - interval '10 minutes' where sink_id = any($1)`, [sinks.map((s) => s.id)])
    for (const s of sinks) expect((await rollerView(s.id)).due).toBe(true)

    // The first data file PUT of a roll is held until the test lets it go.
    let release: () => void = () => undefined
    const gate = new Promise<void>((r) => (release = r))
    const held = proxy.rule({ method: 'PUT', path: /\/data\/[^?]*\.parquet(\?|$)/, action: { delay: gate }, times: 1 })

    const seenBefore = proxy.requests.length
    const { cmd, args } = rollerCommand(['run'])
    const proc = spawn(cmd, args, {
      env: {
        ...process.env,
        ...rollerEnv({
          LHBOX_ROLLER_TICK_SECONDS: '1',
          LHBOX_ROLLER_ID: rollerId,
          LHBOX_ROLLER_CONCURRENCY: '2',
          LHBOX_ROLLER_LARGE_ROLL_BYTES: '1',
          LHBOX_ROLLER_WAREHOUSES: wh.id,
        }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    proc.stdout.on('data', (d) => (out += d))
    proc.stderr.on('data', (d) => (err += d))
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      proc.on('exit', (code, signal) => resolve({ code, signal })),
    )
    const logs = () =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, any>)
    const alive = () => {
      if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`the roller exited early:\n${out}\n${err}`)
      return true
    }
    try {
      await poll(async () => alive() && held.matched === 1, 60_000, 'a roll holding its data file PUT')
      proc.kill('SIGTERM')
      await poll(async () => alive() && logs().some((l) => l.msg === 'stopping after the current roll'), 30_000, 'the stop logged')
      release()
      expect(await exited, out + err).toEqual({ code: 0, signal: null })
    } finally {
      release()
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL')
    }

    // The held roll is whichever of the two sinks came first; the other one was never rolled.
    const path = proxy.requests.find((r) => r.rule === held)!.path
    const rolled = sinks.find((s) => path.includes(`/${s.table.split('.')[1]}`))!
    const other = sinks.find((s) => s !== rolled)!
    const mine = (l: Record<string, any>) => sinks.some((s) => s.id === l.sink_id)
    expect(
      logs()
        .filter((l) => mine(l) && l.msg === 'rolled')
        .map((l) => l.sink_id),
    ).toEqual([rolled.id])
    expect(
      logs()
        .filter((l) => l.sink_id === other.id)
        .map((l) => l.msg),
    ).toEqual(['not rolled: the roller is stopping; its lease given back'])
    // Nothing of the other sink's was read: no listing, no batch read (the requests since the roller started).
    expect(proxy.requests.slice(seenBefore).filter((r) => r.path.includes(other.id))).toEqual([])

    // The held roll: its rows once, its batch committed, reported; the lease released.
    const rolledBatch = batches[sinks.indexOf(rolled)]
    const s = await scan({ sql: wh.id }, rolled.table)
    expectExactlyOnce(s, rolled === sinks[0] ? [1, 2] : [10])
    await expectCommitted(expect, rolled.id, { [rolledBatch]: String(sinkSnapshots(s, rolled.id)[0].snapshot_id) })
    expect(await batchKeys(rolled.id)).toEqual([])
    expect((await rollerView(rolled.id)).lease).toBeNull()

    // The other: untouched and waiting, its lease given back — another roller rolls it at once.
    const otherBatch = batches[sinks.indexOf(other)]
    expect(await ledgerStates(db, other.id)).toEqual({ [otherBatch]: 'pending' })
    expect(await batchKeys(other.id)).toEqual([`_sink/${other.id}/${otherBatch}.ndjson`])
    expect(await rollerView(other.id)).toMatchObject({ due: true, lease: null })
    await tickOk(other.id, `after-${uid()}`)
    expectExactlyOnce(await scan({ sql: wh.id }, other.table), other === sinks[0] ? [1, 2] : [10])
  })
})
