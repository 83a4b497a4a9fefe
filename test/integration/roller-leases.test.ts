// Leases that share (issue 27): a lease takes at most the roller's free slots, most overdue first, so
// rollers ticking together split the due sinks; a tick leases a sink once; a roller renews the leases
// its rolls still need; a roller can be kept to some warehouses. And two `tick` processes started at
// the same moment on 200 due sinks each roll a fair share, every batch committed once.
//
// Each case's sinks live in a warehouse of its own, and the leases are asked for with
// `warehouses=<it>`: no other case's or file's sinks are leased, and none interfere. The sinks are
// deleted after the file (their waiting batches discarded), so no later roller finds them due.
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { proxiedWarehouse } from '../support/roller-check.ts'
import { inProcessRoller, rollerTick } from '../support/roller.ts'
import { createTable, database, newSink, send, uid, type Sink } from '../support/sinks.ts'
import { call, expectError, stack } from '../support/stack.ts'

let db: pg.Client
let wh: { name: string; id: string }
const made: Sink[] = []
beforeAll(async () => {
  db = await database()
})
afterAll(async () => {
  for (const s of made) await call(`/v1/sinks/${s.id}`, { method: 'DELETE', key: stack().adminKey })
  await db?.end()
})

const secret = () => stack().bootstrapSecret
const lease = (query: string) => call(`/internal/sinks?warehouses=${wh.id}&${query}`, { key: secret() })
const release = (sinkId: string, roller: string) =>
  call(`/internal/sinks/${sinkId}/roll`, { key: secret(), json: { roller, roll_id: `release-${uid()}`, release: true } })

/** `n` sinks in a new warehouse (roll_seconds 60), each with one batch `[{x: i}]` waiting. */
async function dueSinks(n: number, concurrency = 8): Promise<Sink[]> {
  wh = await proxiedWarehouse(stack().s3.endpoint)
  const key = stack().adminKey
  const out: Sink[] = new Array(n)
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++
        const sink = await newSink(key, { table: await createTable(key, { warehouse: wh.name }), sink: { warehouse: wh.name, roll_seconds: 60 } })
        const sent = await send(sink, [{ x: i }], { batchId: `b-${i}` })
        expect(sent.status, sent.text).toBe(202)
        out[i] = sink
        made.push(sink)
      }
    }),
  )
  return out
}

/** Moves each sink's waiting batches back: `ago[i]` seconds before now. */
async function arrivedAgo(sinks: Sink[], ago: number[]): Promise<void> {
  await db.query(
    `update batches b set received_at = now() - make_interval(secs => a.secs)
     from unnest($1::text[], $2::int[]) as a(sink_id, secs) where b.sink_id = a.sink_id`,
    [sinks.map((s) => s.id), ago],
  )
}

describe('a lease', () => {
  it('takes at most `limit` sinks, most overdue first; the next roller gets the rest; nothing twice', async () => {
    const sinks = await dueSinks(5)
    // Past roll_seconds (60) by 10, 50, 30, 40 and 20 s; none leased yet.
    await arrivedAgo(sinks, [70, 110, 90, 100, 80])
    const a = await lease('roller=a&limit=2')
    expect(a.status, a.text).toBe(200)
    expect(a.body.sinks.map((s: { id: string }) => s.id)).toEqual([sinks[1].id, sinks[3].id].sort())
    expect(a.body.now_us).toMatch(/^\d{16}$/)
    const b = await lease('roller=b&limit=10')
    expect(b.body.sinks.map((s: { id: string }) => s.id).sort()).toEqual([sinks[0].id, sinks[2].id, sinks[4].id].sort())
    for (const s of b.body.sinks) expect(s.lease.owner).toBe('b')
    expect((await lease('roller=c')).body.sinks).toEqual([])
    for (const s of sinks) await release(s.id, sinks.indexOf(s) === 1 || sinks.indexOf(s) === 3 ? 'a' : 'b')
  })

  it('leaves out a sink leased since `leased_before` (one lease a tick), and a sink not yet due', async () => {
    const [due, fresh] = await dueSinks(2)
    await arrivedAgo([due, fresh], [61, 5])
    const first = await lease('roller=t&limit=5')
    expect(first.body.sinks.map((s: { id: string }) => s.id)).toEqual([due.id])
    // The roll failed, say: the lease is given back, and the sink is still due.
    expect((await release(due.id, 't')).status).toBe(200)
    expect((await lease(`roller=t&leased_before=${first.body.now_us}`)).body.sinks).toEqual([])
    // The next tick (no leased_before, or a later one) takes it again; so does another roller's.
    const again = await lease('roller=t2')
    expect(again.body.sinks.map((s: { id: string }) => s.id)).toEqual([due.id])
    await release(due.id, 't2')
  })

  it('is renewed for the roller holding it, and for no other; bad renewals are 400', async () => {
    const [sink] = await dueSinks(1)
    await arrivedAgo([sink], [61])
    const got = await lease('roller=holder&lease_seconds=30')
    expect(got.body.sinks).toHaveLength(1)
    const before = Date.parse(got.body.sinks[0].lease.expires_at)
    const renew = (roller: string, ids: string[], leaseSeconds = 600) =>
      call('/internal/leases', { key: secret(), json: { roller, lease_seconds: leaseSeconds, sink_ids: ids } })
    const mine = await renew('holder', [sink.id, 'snk_00000000deadbeef'])
    expect(mine.status, mine.text).toBe(200)
    expect(mine.body).toEqual({ renewed: [sink.id] })
    const viewed = await call(`/internal/sinks?sink=${sink.id}`, { key: secret() })
    expect(Date.parse(viewed.body.sinks[0].lease.expires_at) - before).toBeGreaterThan(500_000)
    expect((await renew('thief', [sink.id])).body).toEqual({ renewed: [] })
    expect(viewed.body.sinks[0].lease.owner).toBe('holder')
    expectError(await renew('holder', [sink.id], 5), 400, 'invalid_request')
    expectError(await call('/internal/leases', { key: secret(), json: { roller: 'holder', sink_ids: 'x' } }), 400, 'invalid_request')
    expectError(await call('/internal/leases', { key: stack().adminKey, json: { roller: 'holder', lease_seconds: 60, sink_ids: [] } }), 403, 'forbidden')
    // A feed run's batch is recorded only by the lease holder (POST /internal/sinks/{id}/batches).
    const batch = { batch_id: `feed-${uid()}`, body_sha256: 'a'.repeat(64), bytes: 10, rows: 1, received_at: '2026-12-03T10:00:00.000000Z' }
    const record = (roller: string, key = secret(), body: Record<string, unknown> = batch) =>
      call(`/internal/sinks/${sink.id}/batches`, { key, json: { roller, ...body } })
    expectError(await record('thief'), 409, 'lease_lost')
    expect((await record('holder')).body).toEqual({ recorded: true })
    expect((await record('holder')).body).toEqual({ recorded: false })
    expectError(await record('holder', secret(), { ...batch, body_sha256: 'nope' }), 400, 'invalid_request')
    expectError(await record('holder', stack().adminKey), 403, 'forbidden')
    await db.query('delete from batches where sink_id = $1 and batch_id = $2', [sink.id, batch.batch_id])
    await release(sink.id, 'holder')
  })

  it('shows in GET /internal/lag (the gauges’ view): waiting, due, held; bootstrap secret only', async () => {
    const [waiting, held] = await dueSinks(2)
    await arrivedAgo([waiting, held], [90, 90])
    expect((await lease(`roller=g&sink=${held.id}`)).body.sinks).toHaveLength(1)
    const lag = await call('/internal/lag', { key: secret() })
    expect(lag.status, lag.text).toBe(200)
    const mine = lag.body.sinks.filter((s: { id: string }) => s.id === waiting.id || s.id === held.id)
    expect(
      mine
        .map(({ oldest_at, ...rest }: Record<string, unknown>) => ({ ...rest, oldest_at: typeof oldest_at }))
        .sort((a: any, b: any) => (a.id < b.id ? -1 : 1)),
    ).toEqual(
      [
        { id: waiting.id, state: 'active', roll_seconds: 60, batches: 1, oldest_at: 'string', due: true, leased: false },
        { id: held.id, state: 'active', roll_seconds: 60, batches: 1, oldest_at: 'string', due: true, leased: true },
      ].sort((a, b) => (a.id < b.id ? -1 : 1)),
    )
    for (const key of [stack().adminKey, waiting.sendKey]) expectError(await call('/internal/lag', { key }), 403, 'forbidden')
    await release(held.id, 'g')
  })

  it('of another warehouse is not taken by a roller kept to this one; bad query values are 400', async () => {
    const [sink] = await dueSinks(1)
    await arrivedAgo([sink], [61])
    const elsewhere = await call(`/internal/sinks?roller=w&warehouses=wh_elsewhere&sink=${sink.id}`, { key: secret() })
    expect(elsewhere.body.sinks).toEqual([])
    expect((await lease(`roller=w&sink=${sink.id}`)).body.sinks).toHaveLength(1)
    await release(sink.id, 'w')
    for (const bad of ['limit=0', 'limit=x', 'limit=10001', 'leased_before=yesterday', 'leased_before=12345678901234567']) {
      expectError(await lease(`roller=w&${bad}`), 400, 'invalid_request')
    }
  })
})

describe('two rollers ticking at the same moment', () => {
  it('on 200 due sinks each roll a fair share, and every batch is committed once', { timeout: 300_000 }, async () => {
    const sinks = await dueSinks(200)
    await arrivedAgo(
      sinks,
      sinks.map(() => 61),
    )
    const env = { LHBOX_ROLLER_WAREHOUSES: wh.id, LHBOX_ROLLER_CONCURRENCY: '4' }
    const ticks = await Promise.all(['r0', 'r1'].map((r) => rollerTick({ force: false, rollerId: `${r}-${uid()}`, env })))
    const rolled = ticks.map((t) => t.logs.filter((l) => l.msg === 'rolled').map((l) => String(l.sink_id)))
    // On failure, show the lines that say why (a tick's whole output is too long for the message).
    const why = (t: (typeof ticks)[number]) =>
      `${t.logs
        .filter((l) => l.level !== 'info')
        .map((l) => JSON.stringify(l))
        .join('\n')}\n${t.stderr}`
    for (const t of ticks) expect({ code: t.code, signal: t.signal }, why(t)).toEqual({ code: 0, signal: null })
    // Neither under 30 %, and together each sink once.
    for (const r of rolled) expect(r.length, `rolled ${rolled.map((x) => x.length).join(' / ')}`).toBeGreaterThanOrEqual(60)
    expect([...rolled[0], ...rolled[1]].sort()).toEqual(sinks.map((s) => s.id).sort())
    const { rows } = await db.query(`select state, count(*)::int as n from batches where sink_id = any($1) group by state`, [sinks.map((s) => s.id)])
    expect(rows).toEqual([{ state: 'committed', n: 200 }])
    // Each rolled line counts its requests: the store, the catalog and the edge, and how many in a row.
    const line = ticks[0].logs.find((l) => l.msg === 'rolled') as { requests: Record<string, number> }
    expect(line.requests.s3).toBeGreaterThan(0)
    expect(line.requests.catalog).toBeGreaterThan(0)
    expect(line.requests.edge).toBe(1)
    expect(line.requests.sequential).toBeLessThanOrEqual(line.requests.total)
  })
})

describe('a one-batch append roll', () => {
  it('takes at most 8 round trips in a row once the table is known (the store, the catalog, the edge)', async () => {
    const [sink] = await dueSinks(1)
    const p = inProcessRoller({ LHBOX_ROLLER_WAREHOUSES: wh.id })
    try {
      // The first roll adds __ingest_ts (one commit more) and loads the table's metadata; the second is the steady one.
      for (const n of [1, 2]) {
        if (n === 2) expect((await send(sink, [{ x: 100 }], { batchId: 'second' })).status).toBe(202)
        await arrivedAgo([sink], [61])
        expect(await p.roller.tick()).toEqual({ rolled: 1, failed: 0 })
      }
      const [first, second] = p.logs.filter((l) => l.msg === 'rolled' && l.sink_id === sink.id)
      expect(first.requests.sequential).toBeGreaterThan(second.requests.sequential)
      expect(second.batches).toBe(1)
      expect(second.requests.sequential, JSON.stringify(second.requests)).toBeLessThanOrEqual(8)
      // Each kind was reached: the intake and table files, the catalog's row, the edge's report.
      expect(second.requests).toMatchObject({ edge: 1 })
      expect(second.requests.s3).toBeGreaterThanOrEqual(6)
      expect(second.requests.catalog).toBeGreaterThanOrEqual(2)
    } finally {
      await p.roller.close()
    }
  })
})
