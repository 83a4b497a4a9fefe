// The Worker on a Hyperdrive binding (issue 14 §2), under `wrangler dev` (real workerd): the binding's
// local connection string points at the stack's Postgres through a proxy that records every statement
// the Worker sends. The edge creates, sends and serves a roll through it, read back by PyIceberg; and
// every statement of the send route and of the roller's /internal routes is one Hyperdrive's query
// cache never serves (a write, or one that reads now(), a stable function): a cache in front of them
// cannot answer a send or a lease from a stale read. (Hyperdrive's cache does not run locally, so
// what is checked is the statements themselves.) The neon driver is the stack's own edge: every other
// test file.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEdge, type Edge } from '../support/edge.ts'
import { startPgProxy, type PgProxy } from '../support/pg-proxy.ts'
import { ensureVenv } from '../support/python.ts'
import { expectExactlyOnce, rowsOf, scan, sinkSnapshots, warehouseId } from '../support/roller-check.ts'
import { tickInProcess } from '../support/roller.ts'
import { createTable, send, uid } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

let proxy: PgProxy
let edge: Edge

/** Hyperdrive caches a read-only statement unless it calls a stable or volatile function (its docs, "Query caching"). */
function neverCached(sql: string): boolean {
  const writes = /\b(insert\s+into|update\s+"?\w+"?\s+(as\s+\w+\s+|\w+\s+)?set|delete\s+from)\b/i.test(sql)
  const stable = /\b(now|clock_timestamp|statement_timestamp|random|gen_random_uuid)\s*\(/i.test(sql)
  return writes || stable
}

beforeAll(async () => {
  await ensureVenv()
  const pg = new URL(stack().databaseUrl)
  proxy = await startPgProxy({ host: pg.hostname, port: Number(pg.port) }, { record: true })
  const local = new URL(stack().databaseUrl)
  local.port = String(proxy.port)
  local.searchParams.set('sslmode', 'disable')
  edge = await startEdge('workerd', {}, { hyperdrive: local.toString() })
}, 180_000)

afterAll(async () => {
  await edge?.stop()
  await proxy?.stop()
})

describe('the Worker on a Hyperdrive binding', { timeout: 120_000 }, () => {
  it('serves the control plane, the send route and a roll; the send route and /internal send only statements the cache never serves', async () => {
    const key = stack().adminKey
    const table = await createTable(key)
    proxy.clear()
    const created = await call('/v1/sinks', { base: edge.url, key, json: { warehouse: stack().warehouse, name: `hd_${uid()}`, table } })
    expect(created.status, created.text).toBe(201)
    expect(proxy.statements.length).toBeGreaterThan(0) // the Worker reached Postgres through the binding
    const sink = { id: created.body.id, sendKey: created.body.send_key }

    proxy.clear()
    expect((await send(sink, rowsOf(1, 3), { batchId: 'a', base: edge.url })).status).toBe(202)
    const again = await send(sink, rowsOf(1, 3), { batchId: 'a', base: edge.url })
    expect(again.status).toBe(200)
    expect(again.body.duplicate).toBe(true)
    const sendStatements = [...proxy.statements]
    expect(sendStatements.some((q) => /insert into batches/i.test(q))).toBe(true) // the ledger's one statement

    proxy.clear()
    const t = await tickInProcess({ sink: sink.id, env: { LHBOX_URL: edge.url } })
    expect(t.logs.at(-1)).toMatchObject({ msg: 'tick done', rolled: 1, failed: 0 })
    const internalStatements = [...proxy.statements]
    expect(internalStatements.some((q) => /update sinks set lease_owner/i.test(q))).toBe(true) // the lease
    expect(internalStatements.some((q) => /update batches b set state = 'committed'/i.test(q))).toBe(true) // the report

    const cacheable = [...sendStatements, ...internalStatements].filter((s) => !neverCached(s))
    expect(cacheable).toEqual([])

    const s = await scan({ sql: await warehouseId(stack().warehouse) }, table)
    expectExactlyOnce(s, [1, 2, 3])
    expect(sinkSnapshots(s, sink.id)).toHaveLength(1)
    const view = await call(`/v1/sinks/${sink.id}`, { base: edge.url, key })
    expect(view.body.lag.batches_waiting).toBe(0)
    expect(view.body.last_roll.rows).toBe(3)
  })

  it('the check itself tells a cached read from one that is not', () => {
    expect(neverCached('select * from api_keys where id = $1 limit $2')).toBe(false)
    expect(neverCached('select s.id, extract(epoch from (now() - lag.oldest)) from sinks s')).toBe(true)
    expect(neverCached('with x as (update sinks set lease_owner = $1 returning id) select id from x')).toBe(true)
    expect(neverCached('insert into batches (sink_id) values ($1)')).toBe(true)
  })
})
