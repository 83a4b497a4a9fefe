// The roll policy's triggers (spec "The roll policy"): a sink is due at roll_seconds since its oldest
// waiting batch, at roll_bytes waiting, at inactivity_seconds since its newest, or at 1,000 waiting
// batches — whichever first (the 1,000 with the backlog below); and a backlog past 1,000 batches rolls in arrival order, 1,000 at a time.
//
// Each sink is leased to this file's own roller id first (a forced lease), so no other roller of the
// shared stack rolls it between a send and the check. Time is not waited for: the ledger's
// received_at is moved back in Postgres, which is what the policy reads.
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { holdSink, tickInProcess } from '../support/roller.ts'
import { scan, rollerSetup, SETUP_TIMEOUT } from '../support/roller-check.ts'
import { ledger, newSink, send, uid, type Sink } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

const MiB = 1024 * 1024
const HOLDER = `triggers-${uid()}`
let db: pg.Client
let whId: string
beforeAll(async () => ({ db, whId } = await rollerSetup()), SETUP_TIMEOUT)
afterAll(() => db?.end())

const internal = (query: string) => call(`/internal/sinks?${query}`, { key: stack().bootstrapSecret })

/** Leases the sink to HOLDER for an hour, due or not: other rollers leave it alone. */
const hold = (sink: Sink): Promise<void> => holdSink(sink.id, HOLDER)

/** The sink as the roller sees it (no lease taken): its lag and due flag. */
async function view(sink: Sink): Promise<{ due: boolean; lag: { batches: number; bytes: number } }> {
  const res = await internal(`sink=${sink.id}`)
  expect(res.status).toBe(200)
  return res.body.sinks[0]
}

/** Moves the sink's waiting batches' arrival back: `ago[batchId]` seconds before now. */
async function arrivedAgo(sink: Sink, ago: Record<string, number>): Promise<void> {
  for (const [batchId, seconds] of Object.entries(ago)) {
    const r = await db.query(`update batches set received_at = now() - make_interval(secs => $3) where sink_id = $1 and batch_id = $2`, [
      sink.id,
      batchId,
      seconds,
    ])
    expect(r.rowCount).toBe(1)
  }
}

async function sendOk(sink: Sink, body: string | unknown[], batchId: string): Promise<void> {
  const res = await send(sink, body, { batchId })
  expect(res.status, res.text).toBe(202)
}

/** Sends `ids` one batch each (`[{"x": n, "who": id}]`), `concurrency` at a time. */
async function sendMany(sink: Sink, ids: string[], first: number, concurrency = 16): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < ids.length) {
        const i = next++
        await sendOk(sink, [{ x: first + i, who: ids[i] }], ids[i])
      }
    }),
  )
}

describe('a sink is due', () => {
  it('at roll_seconds since its oldest waiting batch', async () => {
    const sink = await newSink(stack().adminKey, { sink: { roll_seconds: 60 } })
    await hold(sink)
    await sendOk(sink, [{ x: 1 }], 'a')
    await sendOk(sink, [{ x: 2 }], 'b')
    await arrivedAgo(sink, { a: 59, b: 1 })
    expect((await view(sink)).due).toBe(false)
    await arrivedAgo(sink, { a: 61 })
    expect((await view(sink)).due).toBe(true)
  })

  it('at roll_bytes waiting', async () => {
    const sink = await newSink(stack().adminKey, { sink: { roll_seconds: 3600, roll_bytes: 32 * MiB } })
    await hold(sink)
    // `[{"who":"aaa…"}]` of 16 MiB is stored as 16 MiB - 1 bytes (the brackets go, a newline comes).
    const padded = `[{"x":1,"who":"${'a'.repeat(16 * MiB - 18)}"}]`
    expect(padded.length).toBe(16 * MiB)
    await sendOk(sink, padded, 'big-1')
    await sendOk(sink, padded, 'big-2')
    expect(await view(sink)).toMatchObject({ due: false, lag: { batches: 2, bytes: 32 * MiB - 2 } })
    await sendOk(sink, '[{"x":3}]', 'small')
    expect(await view(sink)).toMatchObject({ due: true, lag: { batches: 3, bytes: 32 * MiB - 2 + 8 } })
  })

  it('at inactivity_seconds since its newest batch: a burst, then quiet', async () => {
    const sink = await newSink(stack().adminKey, { sink: { roll_seconds: 3600, inactivity_seconds: 10 } })
    await hold(sink)
    await sendOk(sink, [{ x: 1 }], 'burst-1')
    await sendOk(sink, [{ x: 2 }], 'burst-2')
    // The burst's first batch is long quiet, but the newest is not: not yet.
    await arrivedAgo(sink, { 'burst-1': 300, 'burst-2': 9 })
    expect((await view(sink)).due).toBe(false)
    await arrivedAgo(sink, { 'burst-2': 11 })
    expect((await view(sink)).due).toBe(true)
    // Without inactivity_seconds the same quiet is not a trigger.
    const plain = await newSink(stack().adminKey, { sink: { roll_seconds: 3600 } })
    await hold(plain)
    await sendOk(plain, [{ x: 1 }], 'quiet')
    await arrivedAgo(plain, { quiet: 3000 })
    expect((await view(plain)).due).toBe(false)
  })
})

describe('a backlog past 1,000 batches', () => {
  // One backlog for two checks (1,000 sends are the slow part): due at the 1,000th batch, then the
  // rolls take the batches in arrival order.
  it('is due at 1,000 waiting batches, and rolls the 1,000 that arrived first, then the rest: arrival order, not key order', async () => {
    const sink = await newSink(stack().adminKey, { sink: { roll_seconds: 3600 } })
    await hold(sink)
    // The first 1,000 to arrive have keys that list AFTER the 50 that arrive later.
    const early = Array.from({ length: 1000 }, (_, i) => `z${String(i).padStart(4, '0')}`)
    const late = Array.from({ length: 50 }, (_, i) => `a${String(i).padStart(4, '0')}`)
    await sendMany(sink, early.slice(0, 999), 0)
    expect(await view(sink)).toMatchObject({ due: false, lag: { batches: 999 } })
    await sendOk(sink, [{ x: 999, who: early[999] }], early[999])
    expect(await view(sink)).toMatchObject({ due: true, lag: { batches: 1000 } })
    await sendMany(sink, late, 1000)
    expect((await view(sink)).lag.batches).toBe(1050)

    // One roll a lease (no catch-up, roller-catch-up.test.ts): the first roll's choice is what is checked.
    const first = await tickInProcess({ sink: sink.id, rollerId: HOLDER, env: { LHBOX_ROLLER_CATCH_UP_ROLLS: '1' } })
    expect(first.code, first.stderr).toBe(0)
    const states = new Map((await ledger(db, sink.id)).map((r) => [r.batch_id as string, r.state as string]))
    expect(early.filter((id) => states.get(id) !== 'committed')).toEqual([])
    expect(late.filter((id) => states.get(id) === 'committed')).toEqual([])
    const once = await scan({ sql: whId }, sink.table)
    expect(once.rows.map((r) => Number(r.x)).sort((a, b) => a - b)).toEqual(early.map((_, i) => i))

    const second = await tickInProcess({ sink: sink.id, rollerId: HOLDER })
    expect(second.code, second.stderr).toBe(0)
    const all = await scan({ sql: whId }, sink.table)
    expect(all.rows.map((r) => Number(r.x)).sort((a, b) => a - b)).toEqual(Array.from({ length: 1050 }, (_, i) => i))
    expect((await view(sink)).lag.batches).toBe(0)
  })
})
