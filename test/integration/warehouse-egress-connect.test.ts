// The Node processes connect to a warehouse's endpoint only where the egress policy allows, whatever
// the warehouse's row holds (issue 31, contract/egress-connect.ts): here an endpoint at an internal
// address, as a warehouse made before the create-time check (warehouse-egress.test.ts) or edited in the
// database holds it. The edge on Node answers the send 503 (the bucket unavailable) and the roller's
// roll fails naming the refusal, while the server listening there sees no request; the endpoint put
// right, the waiting batch rolls, once. (A deployed Worker reaches public addresses only; wrangler
// dev's local workerd reaches loopback, so this is the Node edge's and the roller's test.)
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { holdSink, rollerTick, tickInProcess } from '../support/roller.ts'
import { expectExactlyOnce, proxiedWarehouse, rollerSetup, SETUP_TIMEOUT, scan } from '../support/roller-check.ts'
import { createTable, newSink, send, uid } from '../support/sinks.ts'
import { expectError, onEdgeHost, stack } from '../support/stack.ts'

onEdgeHost('node')

let inside: Server
let origin: string
let hits = 0
let db: pg.Client

beforeAll(async () => {
  ;({ db } = await rollerSetup())
  inside = createServer((_req, res) => {
    hits++
    res.writeHead(503).end()
  })
  await new Promise<void>((resolve) => inside.listen(0, '127.0.0.2', resolve))
  origin = `http://127.0.0.2:${(inside.address() as AddressInfo).port}`
}, SETUP_TIMEOUT)
afterAll(async () => {
  await db?.end()
  await new Promise<void>((resolve) => (inside ? inside.close(() => resolve()) : resolve()))
})

/** A warehouse of its own on the stack's store, a table and a sink in it. */
async function sinkInOwnWarehouse() {
  const warehouse = await proxiedWarehouse(stack().s3.endpoint)
  const table = await createTable(stack().adminKey, { warehouse: warehouse.name })
  const sink = await newSink(stack().adminKey, { table, sink: { warehouse: warehouse.name } })
  return { warehouse, table, sink }
}

const setEndpoint = (warehouseId: string, endpoint: string) => db.query('update warehouses set endpoint = $1 where id = $2', [endpoint, warehouseId])

const REFUSED = /egress refused: 127\.0\.0\.2 is a loopback address; a warehouse’s endpoint or catalog reaches public addresses only/

describe('a warehouse endpoint at an internal address', () => {
  it('the edge on Node never connects to it: the send is 503 unavailable (the bucket), nothing reaches it', async () => {
    const { warehouse, sink } = await sinkInOwnWarehouse()
    await setEndpoint(warehouse.id, origin)
    try {
      const res = await send(sink, [{ x: 1 }])
      expectError(res, 503, 'unavailable')
      expect(res.body.error.failed).toEqual(['bucket'])
      expect(hits).toBe(0)
    } finally {
      await setEndpoint(warehouse.id, stack().s3.endpoint)
    }
  })

  it('the roller never connects to it: the roll fails naming the refusal; put right, the batch rolls once', async () => {
    const { warehouse, table, sink } = await sinkInOwnWarehouse()
    const holder = `egress-${uid()}`
    await holdSink(sink.id, holder)
    const sent = await send(sink, [{ x: 7, who: 'waiting' }])
    expect(sent.status, sent.text).toBeLessThan(300)
    await setEndpoint(warehouse.id, origin)
    try {
      const t = await rollerTick({ sink: sink.id, rollerId: holder })
      expect(t.code, t.stdout + t.stderr).toBe(1)
      expect(t.stdout).toMatch(REFUSED)
      expect(hits).toBe(0)
    } finally {
      await setEndpoint(warehouse.id, stack().s3.endpoint)
    }
    const again = await tickInProcess({ sink: sink.id, rollerId: holder })
    expect(again.code, again.stdout + again.stderr).toBe(0)
    expectExactlyOnce(await scan({ sql: warehouse.id }, table), [7])
  })
})
