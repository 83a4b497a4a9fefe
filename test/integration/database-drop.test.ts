// A database that drops connections mid-request (a restart, a failover, a pooler recycling them):
// the send route answers 503 unavailable, failed ["database"], never a 500, and a producer retrying
// with the same Idempotency-Key gets its batch stored once. Found by the chaos soak: a dropped
// connection was a 500 "internal", and the client's unheard 'error' event an uncaught error.
//
// An edge of its own, straight to Postgres (on workerd, through its own bridge, no pgbouncer) with an
// application_name of its own, so terminating its connections touches no other test file's requests.
import type pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { PG_DATABASE, PG_PASSWORD, PG_USER } from '../../dev/postgres.ts'
import { startBridge, type Bridge } from '../../dev/wsbridge.ts'
import { startEdge, type Edge } from '../support/edge.ts'
import { freePorts } from '../support/ports.ts'
import { database, ledger, newSink, uid, type Sink } from '../support/sinks.ts'
import { edgeHost, stack } from '../support/stack.ts'

const APP = `lhbox-dbdrop-${uid()}`
let db: pg.Client
let bridge: Bridge
let worker: Edge
let url: string
beforeAll(async () => {
  const s = stack()
  db = await database()
  const [bridgePort] = await freePorts(1)
  bridge = await startBridge(bridgePort, { host: '127.0.0.1', port: s.ports.postgres })
  worker = await startEdge(edgeHost(), {
    DATABASE_URL: `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${s.ports.postgres}/${PG_DATABASE}?application_name=${APP}`,
    NEON_WS_PROXY: `127.0.0.1:${bridgePort}`,
    // Postgres itself (trust on loopback) asks no password: the connect is not pipelined.
    NEON_PIPELINE_CONNECT: '',
  })
  url = worker.url
}, 180_000)
afterAll(async () => {
  await worker?.stop()
  await bridge?.stop()
  await db?.end()
})

async function post(sink: Sink, batchId: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}/v1/sinks/${sink.id}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${sink.sendKey}`, 'idempotency-key': batchId, 'content-type': 'application/json' },
    body: `[{"x": 1, "who": "${batchId}"}]`,
  })
  return { status: res.status, body: await res.json() }
}

it('answers 503 unavailable (database), never a 500, while its connections are terminated; retried batches are stored once', async () => {
  const sink = await newSink(stack().adminKey)
  // Terminate this Worker's connections over and over while 4 producers send. Bounded by count: it
  // stops at 1,000 requests, or as soon as 10 of them met a dropped connection.
  let stop = false
  const killer = (async () => {
    while (!stop) {
      await db.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [APP])
      await new Promise((r) => setTimeout(r, 20))
    }
  })()
  const answers: Array<{ batchId: string; status: number; body: any }> = []
  let n = 0
  const dropped = () => answers.filter((a) => a.status === 503).length
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (n < 1000 && dropped() < 10) {
        const batchId = `d${n++}`
        answers.push({ batchId, ...(await post(sink, batchId)) })
      }
    }),
  )
  stop = true
  await killer

  const other = answers.filter((a) => a.status !== 202 && a.status !== 503)
  expect(other.map((a) => `${a.batchId}: ${a.status} ${JSON.stringify(a.body)}`)).toEqual([])
  for (const a of answers.filter((x) => x.status === 503))
    expect(a.body).toEqual({ error: { code: 'unavailable', message: expect.any(String), failed: ['database'] } })
  expect(dropped()).toBeGreaterThan(0)

  // The producer's side of the contract: a 503 is retried with the same key until it is stored, once.
  for (const a of answers.filter((x) => x.status === 503)) {
    const again = await post(sink, a.batchId)
    expect([200, 202]).toContain(again.status)
  }
  const rows = await ledger(db, sink.id)
  expect(rows.map((r) => r.batch_id).sort()).toEqual(answers.map((a) => a.batchId).sort())
})
