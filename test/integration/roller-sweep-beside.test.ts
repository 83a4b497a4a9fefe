// The maintenance sweep runs beside the rolls, not instead of them. A sweep of thousands of tables
// takes a long time (each table: load, compact, rewrite manifests, expire, delete), and a roller that
// swept between its ticks rolled nothing meanwhile: every due sink of a one-roller fleet waited for the
// whole sweep. Now the service (roller/main.ts run) sweeps in the background and goes on ticking; and
// because a lease is the roller's, not the job's, one roller never rolls and sweeps the same table at
// once (roller/loop.ts `busy`).
import { spawn } from 'node:child_process'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts'
import { ensureVenv } from '../support/python.ts'
import { expectExactlyOnce, ledgerStates, proxiedWarehouse, rowsOf, scan } from '../support/roller-check.ts'
import { inProcessRoller, rollerEnv, tickInProcess } from '../support/roller.ts'
import { createTable, database, newSink, poll, send, uid, type Sink } from '../support/sinks.ts'
import { stack } from '../support/stack.ts'

let db: pg.Client
let store: FaultProxy
let wh: { name: string; id: string }

beforeAll(async () => {
  await ensureVenv()
  db = await database()
  store = await startFaultProxy(stack().s3.endpoint)
  wh = await proxiedWarehouse(store.url)
}, 15 * 60_000)

afterAll(async () => {
  await db?.end()
  await store?.stop()
})

async function sinkWith(rows: number[], batchId: string): Promise<Sink> {
  const key = stack().adminKey
  const table = await createTable(key, { warehouse: wh.name })
  const sink = await newSink(key, { table, sink: { warehouse: wh.name } })
  expect((await send(sink, rowsOf(rows[0]!, rows.length), { batchId })).status).toBe(202)
  return sink
}

/** Its waiting batches fall due (their roll_seconds passed), as other tests make them due. */
const makeDue = (sink: Sink) =>
  db.query(`update batches set received_at = now() - interval '10 minutes' where sink_id = $1 and state <> 'committed'`, [sink.id])

/** A gate a test opens when it is done holding something. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open: () => void = () => {}
  const wait = new Promise<void>((resolve) => {
    open = resolve
  })
  return { wait, open }
}

describe('the sweep beside the rolls', { timeout: 180_000 }, () => {
  it('the service rolls a due sink while its sweep is held on another table, then finishes the sweep', async () => {
    // A's table has a snapshot for the sweep to load; its batch is committed, so A is not due.
    const a = await sinkWith([1, 2], 'a1')
    const first = await tickInProcess({ sink: a.id, rollerId: `beside-${uid()}` })
    expect(first.code, first.stdout).toBe(0)
    expect(await ledgerStates(db, a.id)).toEqual({ a1: 'committed' })

    // The sweep's load of A's table waits at the store until the test lets it go.
    const [ns, name] = a.table.split('.')
    const held = gate()
    const hold = store.rule({
      method: 'GET',
      path: new RegExp(`^/${stack().s3.bucket}/(?:[^?]*/)?${ns}/${name}/metadata/[^/?]*\\.metadata\\.json$`),
      action: { delay: held.wait },
      times: 1,
    })
    const rollerId = `beside-svc-${uid()}`
    const proc = spawn(process.execPath, ['--import', 'tsx', 'roller/main.ts', 'run'], {
      env: {
        ...process.env,
        ...rollerEnv({
          LHBOX_ROLLER_ID: rollerId,
          LHBOX_ROLLER_WAREHOUSES: wh.id,
          LHBOX_ROLLER_TICK_SECONDS: '1',
          LHBOX_ROLLER_PORT: '0',
          LHBOX_MEASURE_SECONDS: '0',
          // The first sweep a moment after start (min(60 s, the period)), then every 3.6 s.
          LHBOX_MAINTENANCE_HOURS: '0.001',
        }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    proc.stdout.on('data', (d) => (out += d))
    proc.stderr.on('data', (d) => (out += d))
    const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)))
    const lines = () =>
      out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, any>)
    try {
      await poll(async () => hold.matched === 1 || proc.exitCode !== null, 60_000, 'the sweep at A’s table')
      expect(proc.exitCode, out).toBeNull()

      // B falls due while A's sweep is held: rolled by the same service all the same.
      const b = await sinkWith([10, 11, 12], 'b1')
      await makeDue(b)
      await poll(async () => (await ledgerStates(db, b.id)).b1 === 'committed', 60_000, 'B’s roll during A’s sweep').catch((err) => {
        throw new Error(`${err.message}\n${out.slice(-4000)}`)
      })
      expect(lines().some((l) => l.msg === 'maintained' && l.sink_id === a.id)).toBe(false)

      held.open()
      await poll(async () => lines().some((l) => l.msg === 'maintained' && l.sink_id === a.id), 60_000, 'A’s sweep to end').catch((err) => {
        throw new Error(`${err.message}\n${out.slice(-4000)}`)
      })
    } finally {
      held.open()
      proc.kill('SIGTERM')
    }
    expect(await exited, out).toBe(0)
    expect(
      lines().filter((l) => l.level === 'error'),
      out,
    ).toEqual([])
    expectExactlyOnce(await scan({ sql: wh.id }, a.table), [1, 2])
  })

  it('one roller never rolls and sweeps the same table at once: each waits for the other', async () => {
    const a = await sinkWith([1], 'a1')
    const first = await tickInProcess({ sink: a.id, rollerId: `beside-${uid()}` })
    expect(first.code, first.stdout).toBe(0)

    // A sweep of A held at its last step: this roller's tick leases A again (its own lease) but does not roll it.
    const sweeping = gate()
    const swept = gate()
    const r = inProcessRoller({ LHBOX_ROLLER_WAREHOUSES: wh.id }, async (name) => {
      if (name === 'cleanup') {
        sweeping.open()
        await swept.wait
      }
    })
    try {
      const sweep = r.roller.maintain({ sink: a.id })
      await sweeping.wait
      expect((await send(a, rowsOf(5, 2), { batchId: 'a2' })).status).toBe(202)
      await makeDue(a)
      expect(await r.roller.tick({ sink: a.id, force: true })).toEqual({ rolled: 0, failed: 0 })
      expect(r.logs.some((l) => l.msg === 'not rolled this tick: this roller is sweeping the sink' && l.sink_id === a.id)).toBe(true)
      expect(await ledgerStates(db, a.id)).toEqual({ a1: 'committed', a2: 'pending' })
      swept.open()
      expect(await sweep).toEqual({ maintained: 1, failed: 0, skipped: 0 })
      // The sweep's release ended the lease: the next tick rolls A.
      expect(await r.roller.tick({ sink: a.id, force: true })).toEqual({ rolled: 1, failed: 0 })
    } finally {
      swept.open()
      await r.roller.close()
    }
    expect(await ledgerStates(db, a.id)).toEqual({ a1: 'committed', a2: 'committed' })
    expectExactlyOnce(await scan({ sql: wh.id }, a.table), [1, 5, 6])

    // And the other way: a roll of A held at its data file; this roller's sweep of A skips it.
    expect((await send(a, rowsOf(7, 1), { batchId: 'a3' })).status).toBe(202)
    await makeDue(a)
    const rolling = gate()
    const rolled = gate()
    const q = inProcessRoller({ LHBOX_ROLLER_WAREHOUSES: wh.id }, async (name) => {
      if (name === 'data-file') {
        rolling.open()
        await rolled.wait
      }
    })
    try {
      const roll = q.roller.tick({ sink: a.id, force: true })
      await rolling.wait
      expect(await q.roller.maintain({ sink: a.id })).toEqual({ maintained: 0, failed: 0, skipped: 1 })
      rolled.open()
      expect(await roll).toEqual({ rolled: 1, failed: 0 })
    } finally {
      rolled.open()
      await q.roller.close()
    }
    expectExactlyOnce(await scan({ sql: wh.id }, a.table), [1, 5, 6, 7])
  })
})
