// A sink behind (more waiting than one roll takes) is caught up in consecutive rolls under one lease
// (issue 29, item 3; roller/catch-up.ts), each roll its own commit, summary, marker and report; and
// the roller killed between two rolls of a catch-up, or inside the second, loses and doubles nothing.
// The sink's roll_bytes is set in the ledger to two of its batches (below the API's 32 MiB floor), so
// five small batches make a backlog of three rolls. Read back with PyIceberg.
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { killThenRestart, rollerTick } from '../support/roller.ts'
import { scan, sinkSnapshots, type Scan, rollerSetup, SETUP_TIMEOUT } from '../support/roller-check.ts'
import { bucket, ledger, newSink, send, uid, type Sink } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

let db: pg.Client
let whId: string
beforeAll(async () => ({ db, whId } = await rollerSetup()), SETUP_TIMEOUT)
afterAll(() => db?.end())

const BATCHES = 5

/** A sink with five batches waiting (two good rows and a bad one each, all the same size), two to a roll. */
async function behindSink(): Promise<{ sink: Sink; batches: string[] }> {
  const sink = await newSink(stack().adminKey)
  const batches: string[] = []
  for (let i = 1; i <= BATCHES; i++) {
    const batchId = `k${i}-${uid()}`
    const res = await send(sink, `[{"x": ${i * 10 + 1}}, {"x": ${i * 10 + 2}, "who": "w${i}"}, {"x": "bad"}]`, { batchId })
    expect(res.status, res.text).toBe(202)
    batches.push(batchId)
  }
  const { rows } = await db.query('select distinct bytes from batches where sink_id = $1', [sink.id])
  expect(rows).toHaveLength(1)
  await db.query('update sinks set roll_bytes = $2 where id = $1', [sink.id, 2 * Number(rows[0].bytes)])
  return { sink, batches }
}

const goodRows = (n: number) => Array.from({ length: n }, (_, i) => [(i + 1) * 10 + 1, (i + 1) * 10 + 2]).flat()

/** Every good row once; each batch named by exactly one snapshot of the sink, whose summary counts its rows. */
function expectEachOnce(s: Scan, sinkId: string, batches: string[]): void {
  expect(s.rows.map((r) => Number(r.x))).toEqual(goodRows(BATCHES))
  const named = sinkSnapshots(s, sinkId).flatMap((snap) => {
    const ids = snap.summary['lakehousebox.sink.batches'].split(',')
    expect(snap.summary['lakehousebox.sink.rows']).toBe(String(2 * ids.length))
    expect(snap.summary['added-records']).toBe(String(2 * ids.length))
    return ids
  })
  expect(named.sort()).toEqual([...batches].sort())
}

/** Nothing left in the intake but the rejects; the ledger committed; lag 0. */
async function expectSettled(sink: Sink, batches: string[]): Promise<void> {
  const left: string[] = []
  for await (const o of bucket().list(`_sink/${sink.id}/`)) left.push(o.key)
  expect(left.sort()).toEqual(batches.map((b) => `_sink/${sink.id}/rejects/${b}.ndjson`).sort())
  expect((await ledger(db, sink.id)).map((r) => r.state)).toEqual(batches.map(() => 'committed'))
  const view = (await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })).body
  expect(view.lag).toEqual({ batches_waiting: 0, bytes_waiting: 0, oldest_waiting_at: null, seconds_behind: 0 })
}

describe('a sink behind', () => {
  it('is caught up in one tick: three rolls under one lease, each its own snapshot, in arrival order', async () => {
    const { sink, batches } = await behindSink()
    const t = await rollerTick({ sink: sink.id })
    expect({ code: t.code, signal: t.signal }, t.stdout + t.stderr).toEqual({ code: 0, signal: null })
    const rolled = t.logs.filter((l) => l.msg === 'rolled')
    expect(rolled.map((l) => [l.batches, l.rows, l.follows ?? false])).toEqual([
      [2, 4, true],
      [2, 4, true],
      [1, 2, false],
    ])
    expect(new Set(rolled.map((l) => l.roll_id)).size).toBe(3)
    expect(t.logs.find((l) => l.msg === 'catch-up done')).toMatchObject({ sink_id: sink.id, rolls: 3, batches: 5, rows: 10 })
    const s = await scan({ sql: whId }, sink.table)
    expectEachOnce(s, sink.id, batches)
    const snaps = sinkSnapshots(s, sink.id)
    expect(snaps.map((x) => x.summary['lakehousebox.sink.batches'])).toEqual(
      [batches.slice(0, 2), batches.slice(2, 4), batches.slice(4)].map((b) => b.join(',')),
    )
    await expectSettled(sink, batches)
    const view = (await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })).body
    expect(view.last_roll).toMatchObject({ batches: 1, rows: 2 })
  })

  it('takes at most LHBOX_ROLLER_CATCH_UP_ROLLS rolls under one lease; the rest waits for a tick', async () => {
    const { sink, batches } = await behindSink()
    const env = { LHBOX_ROLLER_CATCH_UP_ROLLS: '2' }
    const first = await rollerTick({ sink: sink.id, env })
    expect(first.code, first.stdout + first.stderr).toBe(0)
    expect(first.logs.filter((l) => l.msg === 'rolled').map((l) => l.batches)).toEqual([2, 2])
    const states = await ledger(db, sink.id)
    expect(states.map((r) => r.state)).toEqual(['committed', 'committed', 'committed', 'committed', 'pending'])
    // Released: another roller may lease it at once.
    expect((await call(`/internal/sinks?sink=${sink.id}`, { key: stack().bootstrapSecret })).body.sinks[0].lease).toBeNull()
    const second = await rollerTick({ sink: sink.id, env })
    expect(second.code).toBe(0)
    // The catch-up's second roll loaded no table (its predecessor's commit answered it); a fresh lease's roll does.
    const catalogRequests = (t: typeof first) => t.logs.filter((l) => l.msg === 'rolled').map((l) => (l.requests as { catalog: number }).catalog)
    expect(catalogRequests(second)[0]).toBeGreaterThan(catalogRequests(first)[1])
    expectEachOnce(await scan({ sql: whId }, sink.table), sink.id, batches)
    await expectSettled(sink, batches)
  })
})

// The crash points between and inside a catch-up's rolls (LHBOX_ROLLER_KILL_AT, as roller-crash.test.ts):
// 'catch-up' is passed after a roll that leaves the lease kept, before the next roll's lease renewal.
const CASES: Array<[string, string[]]> = [
  ['catch-up (between the first and second roll)', ['catch-up']],
  ['catch-up:2 (between the second and third)', ['catch-up:2']],
  ['reload:2 (the second roll begun on the carried table)', ['reload:2']],
  ['commit:2 (the second roll committed, no marker yet)', ['commit:2']],
  ['marker:2, then batch-delete (two crashes in a row)', ['marker:2', 'batch-delete']],
  ['before-report:2 (the second roll committed and its batches deleted, not reported)', ['before-report:2']],
]

describe('the roller killed during a catch-up', () => {
  it.concurrent.for(CASES)(
    'at %s, then restarted: every good row exactly once, each batch in one snapshot, nothing pending, lag 0',
    { timeout: 150_000 },
    async ([, kills]) => {
      const { sink, batches } = await behindSink()
      await killThenRestart(sink.id, batches, kills, 0, expect)
      const s = await scan({ sql: whId }, sink.table)
      expectEachOnce(s, sink.id, batches)
      await expectSettled(sink, batches)
    },
  )
})
