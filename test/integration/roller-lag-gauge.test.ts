// The sink_lag gauge (issue 15, defect 4), driven by the real roller: createRoller in this process
// against the test stack, its metrics read from the real /metrics endpoint (serveMetrics). After each
// tick's rolls the gauges come from one view of every sink: the oldest waiting batch's age, 0 once a
// roll drained the sink, disabled sinks included, a deleted sink's series removed, and a failed view
// leaves them as they were. Only this file's sinks' labels are looked at: the stack is shared.
import type { Server } from 'node:http'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePorts } from '../support/ports.ts'
import { loadConfig } from '../../roller/config.ts'
import { jsonLogger } from '../../roller/log.ts'
import { createRoller, type Roller } from '../../roller/loop.ts'
import { RollerMetrics, serveMetrics } from '../../roller/metrics.ts'
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts'
import { rollerEnv } from '../support/roller.ts'
import { database, ledger, newSink, send, uid, type Sink } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

/** How long the tests' batches have waited: set in the ledger, so the gauge's value is known. */
const WAITED_S = 120

interface Running {
  roller: Roller
  server: Server
  port: number
  logs: Array<Record<string, any>>
}

let db: pg.Client
const running: Running[] = []

async function startRoller(env: Record<string, string> = {}): Promise<Running> {
  const logs: Array<Record<string, any>> = []
  const metrics = new RollerMetrics()
  const config = loadConfig(rollerEnv({ LHBOX_ROLLER_ID: `lag-${uid()}`, ...env }))
  const roller = createRoller(
    config,
    jsonLogger({}, (l) => logs.push(JSON.parse(l))),
    metrics,
    () => undefined,
  )
  const [port] = await freePorts(1)
  const server = serveMetrics(metrics, port)
  const r = { roller, server, port, logs }
  running.push(r)
  return r
}

beforeAll(async () => {
  db = await database()
})
afterAll(async () => {
  for (const r of running) {
    r.server.close()
    await r.roller.close()
  }
  await db?.end()
})

/** This sink's sample of a per-sink gauge on the roller's /metrics; undefined when it has none. */
async function gauge(r: Running, name: 'lhbox_sink_lag_seconds' | 'lhbox_sink_roll_seconds_policy', sink: Sink): Promise<number | undefined> {
  const res = await fetch(`http://127.0.0.1:${r.port}/metrics`)
  expect(res.status).toBe(200)
  const m = new RegExp(`^${name}\\{sink="${sink.id}"\\} (\\S+)$`, 'm').exec(await res.text())
  return m ? Number(m[1]) : undefined
}

/** A sink with one batch waiting, received WAITED_S ago (not due yet: roll_seconds is 300). */
async function waitingSink(): Promise<Sink> {
  const sink = await newSink(stack().adminKey)
  const res = await send(sink, '[{"x": 1}, {"x": 2}]', { batchId: `lag-${uid()}` })
  expect(res.status).toBe(202)
  await db.query(`update batches set received_at = now() - make_interval(secs => $2) where sink_id = $1`, [sink.id, WAITED_S])
  return sink
}

async function tick(r: Running, opts: { sink: string; force?: boolean }) {
  return r.roller.tick(opts)
}

const pending = async (sink: Sink) => (await ledger(db, sink.id)).filter((b) => b.state !== 'committed').length

describe('lhbox_sink_lag_seconds', () => {
  let r: Running
  beforeAll(async () => {
    r = await startRoller()
  })

  it('shows a waiting batch’s age after a tick that did not roll the sink, and 0 after the roll that drains it', async () => {
    const sink = await waitingSink()
    // Not due: the tick leases nothing, and the gauge still comes from the view.
    expect(await tick(r, { sink: sink.id })).toEqual({ rolled: 0, failed: 0 })
    expect(await pending(sink)).toBe(1)
    expect(await gauge(r, 'lhbox_sink_lag_seconds', sink)).toBeGreaterThanOrEqual(WAITED_S)
    expect(await gauge(r, 'lhbox_sink_roll_seconds_policy', sink)).toBe(300)

    expect(await tick(r, { sink: sink.id, force: true })).toEqual({ rolled: 1, failed: 0 })
    expect(await pending(sink)).toBe(0)
    expect(await gauge(r, 'lhbox_sink_lag_seconds', sink)).toBe(0)
    expect(await gauge(r, 'lhbox_sink_roll_seconds_policy', sink)).toBe(300)
  })

  it('shows the lag of a disabled sink whose batches wait (no roller leases it)', async () => {
    const sink = await waitingSink()
    // Disabled the way a roller does it: a report with a reason (as for a key it cannot apply).
    const report = { roller: 'lag-test', roll_id: `disable-${uid()}`, consumed: [], repaired: [], disabled_reason: 'upsert_test' }
    expect((await call(`/internal/sinks/${sink.id}/roll`, { key: stack().bootstrapSecret, json: report })).status).toBe(200)
    expect((await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })).body.state).toBe('disabled')

    expect(await tick(r, { sink: sink.id, force: true })).toEqual({ rolled: 0, failed: 0 })
    expect(await pending(sink)).toBe(1)
    expect(await gauge(r, 'lhbox_sink_lag_seconds', sink)).toBeGreaterThanOrEqual(WAITED_S)
    expect(await gauge(r, 'lhbox_sink_roll_seconds_policy', sink)).toBe(300)
  })

  it('removes a deleted sink’s series', async () => {
    const sink = await waitingSink()
    await tick(r, { sink: sink.id })
    expect(await gauge(r, 'lhbox_sink_lag_seconds', sink)).toBeGreaterThanOrEqual(WAITED_S)

    expect((await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey, method: 'DELETE' })).status).toBe(202)
    await tick(r, { sink: sink.id })
    expect(await gauge(r, 'lhbox_sink_lag_seconds', sink)).toBeUndefined()
    expect(await gauge(r, 'lhbox_sink_roll_seconds_policy', sink)).toBeUndefined()
  })
})

describe('when the view fails', () => {
  let proxy: FaultProxy
  beforeAll(async () => {
    proxy = await startFaultProxy(stack().apiUrl)
  })
  afterAll(() => proxy?.stop())

  it('the tick goes on and the gauges keep their last values until a view answers', async () => {
    const r = await startRoller({ LHBOX_URL: proxy.url })
    const sink = await waitingSink()
    await tick(r, { sink: sink.id })
    const before = await gauge(r, 'lhbox_sink_lag_seconds', sink)
    expect(before).toBeGreaterThanOrEqual(WAITED_S)

    // The view (GET /internal/lag) fails all four tries of one call; the lease (GET /internal/sinks?roller=…) passes.
    const rule = proxy.rule({
      method: 'GET',
      path: /^\/internal\/lag$/,
      action: { status: 503, body: '{"error":{"code":"unavailable","message":"x"}}' },
      times: 4,
    })
    expect(await tick(r, { sink: sink.id, force: true })).toEqual({ rolled: 1, failed: 0 })
    expect(rule.matched).toBe(4)
    expect(await pending(sink)).toBe(0)
    expect(await gauge(r, 'lhbox_sink_lag_seconds', sink)).toBe(before)
    expect(r.logs.filter((l) => l.level === 'warn').map((l) => l.msg)).toContain('the sink view failed; the lag gauges keep their last values')

    await tick(r, { sink: sink.id })
    expect(await gauge(r, 'lhbox_sink_lag_seconds', sink)).toBe(0)
  })
})
