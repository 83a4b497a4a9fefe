// The roller image's entry command as a process (no Docker engine here): `node --import tsx
// roller/main.ts run` ticks, rolls a due sink, serves /healthz and /metrics, and stops on SIGTERM.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'
import { freePort } from '../../dev/ports.ts'
import { rollerEnv } from '../support/roller.ts'
import { call, stack } from '../support/stack.ts'

const dockerCmd = () => {
  const cmd = /^CMD (\[.*\])$/m.exec(readFileSync('roller/Dockerfile', 'utf8'))
  return JSON.parse(cmd![1]) as string[]
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await fn().catch(() => undefined)
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

describe('the roller service', () => {
  const db = new pg.Client(stack().databaseUrl)
  afterAll(() => db.end())

  it('rolls a due sink, serves /healthz and /metrics, and stops on SIGTERM', async () => {
    await db.connect()
    const key = stack().adminKey
    const warehouse = stack().warehouse
    expect((await call('/v1/tables', { key, json: { warehouse, table: 'svc.events', columns: [{ name: 'x', type: 'long', required: true }] } })).status).toBe(
      201,
    )
    const sink = await call('/v1/sinks', { key, json: { name: 'svc_events', table: 'svc.events', warehouse } })
    expect(sink.status).toBe(201)
    const sent = await call(`/v1/sinks/${sink.body.id}`, {
      key: sink.body.send_key,
      body: '[{"x": 1}, {"x": 2}]',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'svc-1' },
    })
    expect(sent.status).toBe(202)
    // Due by its policy: the batch has waited past roll_seconds.
    await db.query(`update batches set received_at = now() - interval '10 minutes' where sink_id = $1`, [sink.body.id])

    const port = await freePort()
    const [cmd, ...args] = dockerCmd()
    expect(cmd).toBe('node')
    const proc = spawn(process.execPath, args, {
      env: { ...process.env, ...rollerEnv({ LHBOX_ROLLER_PORT: String(port), LHBOX_ROLLER_TICK_SECONDS: '1', LHBOX_ROLLER_ID: 'svc-test' }) },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    proc.stdout.on('data', (d) => (out += d))
    const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)))
    try {
      const health = await waitFor('healthz', async () => {
        const res = await fetch(`http://127.0.0.1:${port}/healthz`)
        return res.ok ? ((await res.json()) as { ok: boolean }) : undefined
      })
      expect(health.ok).toBe(true)
      const rolled = await waitFor('the roll', async () => {
        const view = await call(`/v1/sinks/${sink.body.id}`, { key })
        return view.body.last_roll ? view.body : undefined
      })
      expect(rolled.last_roll).toMatchObject({ batches: 1, rows: 2, rejected_rows: 0 })
      expect(rolled.lag.batches_waiting).toBe(0)
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
      // The service rolls every due sink of the shared stack, other test files' too: at least ours.
      const counter = (pattern: RegExp) => Number(pattern.exec(metrics)?.[1] ?? NaN)
      expect(counter(/^lhbox_rolls_total\{outcome="ok"\} (\d+)$/m)).toBeGreaterThanOrEqual(1)
      expect(counter(/^lhbox_rows_committed_total (\d+)$/m)).toBeGreaterThanOrEqual(2)
      expect(metrics).toContain(`lhbox_sink_roll_seconds_policy{sink="${sink.body.id}"} 300`)
      const logLine = out.split('\n').find((l) => l.includes('"msg":"rolled"') && l.includes(sink.body.id))
      expect(JSON.parse(logLine!)).toMatchObject({ level: 'info', sink_id: sink.body.id, roller: 'svc-test', rows: 2 })
      expect(JSON.parse(logLine!).roll_id).toMatch(/^roll-/)
    } finally {
      proc.kill('SIGTERM')
    }
    expect(await exited).toBe(0)
  }, 90_000)
})
