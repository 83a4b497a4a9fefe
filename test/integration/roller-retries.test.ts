// A moment's hiccup costs the roller a retry, not the roll: the store's 503s and dropped connections
// (roller/catalogs.ts STORE_RETRIES) and the edge's 503s (roller/api.ts EDGE_ATTEMPTS), each through
// a fault proxy in front of the real part, a bounded number of times. The roll commits in the same
// tick, once (read back with PyIceberg); a fault that outlasts the tries still fails it, as
// roller-faults.test.ts shows.
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts'
import { ensureVenv } from '../support/python.ts'
import { expectExactlyOnce, ledgerStates, proxiedWarehouse, rowsOf, scan, sinkSnapshots } from '../support/roller-check.ts'
import { tickInProcess } from '../support/roller.ts'
import { createTable, database, newSink, send, uid, type Sink } from '../support/sinks.ts'
import { stack } from '../support/stack.ts'

let db: pg.Client
let store: FaultProxy
let edge: FaultProxy
let proxied: { name: string; id: string }

beforeAll(async () => {
  await ensureVenv()
  db = await database()
  store = await startFaultProxy(stack().s3.endpoint)
  edge = await startFaultProxy(stack().apiUrl)
  proxied = await proxiedWarehouse(store.url)
}, 15 * 60_000)

afterAll(async () => {
  await db?.end()
  await store?.stop()
  await edge?.stop()
})

async function sinkWith(rows: number[]): Promise<Sink> {
  const key = stack().adminKey
  const table = await createTable(key, { warehouse: proxied.name })
  const sink = await newSink(key, { table, sink: { warehouse: proxied.name } })
  expect((await send(sink, rowsOf(rows[0], rows.length), { batchId: 'a' })).status).toBe(202)
  return sink
}

const s3Busy = { status: 503, body: '<?xml version="1.0"?><Error><Code>SlowDown</Code><Message>injected</Message></Error>' }
const B = () => stack().s3.bucket

describe('the roller rides out a moment of trouble', { timeout: 120_000 }, () => {
  it('the store answers 503s and drops connections: the roll retries and commits in the same tick, once', async () => {
    const sink = await sinkWith([1, 2, 3])
    const [ns, name] = sink.table.split('.')
    const dataPut = store.rule({ method: 'PUT', path: new RegExp(`^/${B()}/(?:[^?]*/)?${ns}/${name}/data/[^?]*\\.parquet$`), action: s3Busy, times: 2 })
    const listing = store.rule({ method: 'GET', path: new RegExp(`^/${B()}\\?.*prefix=_sink%2F${sink.id}%2F`), action: 'drop', times: 1 })
    const marker = store.rule({ method: 'PUT', path: new RegExp(`^/${B()}/_sink/${sink.id}/committed/`), action: 'drop', times: 1 })
    const batchDelete = store.rule({ method: 'POST', path: new RegExp(`^/${B()}\\?delete`), body: new RegExp(`_sink/${sink.id}/`), action: s3Busy, times: 1 })
    const t = await tickInProcess({ sink: sink.id, rollerId: `retry-${uid()}` })
    expect(t.code, t.stdout).toBe(0)
    expect([dataPut.matched, listing.matched, marker.matched, batchDelete.matched]).toEqual([2, 1, 1, 1])
    const s = await scan({ sql: proxied.id }, sink.table)
    expectExactlyOnce(s, [1, 2, 3])
    expect(sinkSnapshots(s, sink.id)).toHaveLength(1)
    expect(await ledgerStates(db, sink.id)).toEqual({ a: 'committed' })
  })

  it('the edge answers the lease and the report 503 (its database away a moment): asked again, the roll counts and its batch is committed', async () => {
    const sink = await sinkWith([1, 2])
    const unavailable = { status: 503, headers: { 'retry-after': '5' }, body: '{"error":{"code":"unavailable","message":"injected"}}' }
    const lease = edge.rule({ method: 'GET', path: new RegExp(`^/internal/sinks\\?.*sink=${sink.id}`), action: unavailable, times: 1 })
    const report = edge.rule({ method: 'POST', path: new RegExp(`^/internal/sinks/${sink.id}/roll$`), action: unavailable, times: 2 })
    const t = await tickInProcess({ sink: sink.id, rollerId: `retry-${uid()}`, env: { LHBOX_URL: edge.url } })
    expect(t.code, t.stdout).toBe(0)
    expect(t.logs.filter((l) => l.msg === 'rolled')).toHaveLength(1)
    expect([lease.matched, report.matched]).toEqual([1, 2])
    expect(await ledgerStates(db, sink.id)).toEqual({ a: 'committed' })
    expectExactlyOnce(await scan({ sql: proxied.id }, sink.table), [1, 2])
  })

  it('an edge answer that is not "nothing was done" (a 500) is not sent again: the roll fails; the next tick reports it, once', async () => {
    const sink = await sinkWith([1])
    const report = edge.rule({
      method: 'POST',
      path: new RegExp(`^/internal/sinks/${sink.id}/roll$`),
      action: { status: 500, body: '{"error":{"code":"internal","message":"injected"}}' },
      times: 1,
    })
    const rollerId = `retry-${uid()}`
    const t = await tickInProcess({ sink: sink.id, rollerId, env: { LHBOX_URL: edge.url } })
    expect(report.matched).toBe(1)
    expect(t.code).toBe(1)
    expect(t.logs.filter((l) => l.msg === 'roll failed')).toHaveLength(1)
    // Committed, not reported: the next tick finds the roll in the table and reports it, never a second copy.
    const healed = await tickInProcess({ sink: sink.id, rollerId, env: { LHBOX_URL: edge.url } })
    expect(healed.code, healed.stdout).toBe(0)
    expect(await ledgerStates(db, sink.id)).toEqual({ a: 'committed' })
    const s = await scan({ sql: proxied.id }, sink.table)
    expectExactlyOnce(s, [1])
    expect(sinkSnapshots(s, sink.id)).toHaveLength(1)
  })
})
