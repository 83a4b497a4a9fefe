// The roller image's entry command as a process (no Docker engine here): `node --import tsx
// roller/main.ts run` ticks, rolls a due sink, serves /healthz and /metrics, and stops on SIGTERM.
//
// The service rolls every due sink of the shared stack, other test files' too, so its process-wide
// counters are not ours to predict. What is checked: our sink's roll (its log line, its view, its
// table read back with PyIceberg), and that the counters agree with the rolls the service itself
// logged: each "rolled" line is written right after its counters move, so at the moment of the
// scrape the counters cover at least the lines already read and at most every line it ever wrote.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePorts } from '../support/ports.ts'
import { ensureVenv } from '../support/python.ts'
import { expectExactlyOnce, scan, sinkSnapshots, warehouseId } from '../support/roller-check.ts'
import { rollerEnv } from '../support/roller.ts'
import { newSink, poll, send, uid } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

const dockerCmd = () => {
  const cmd = /^CMD (\[.*\])$/m.exec(readFileSync('roller/Dockerfile', 'utf8'))
  return JSON.parse(cmd![1]) as string[]
}

interface Rolled {
  sink_id: string
  rows: number
  rejected_rows: number
  batches: number
  roller: string
  roll_id: string
  level: string
}

/** The "rolled" lines among the complete lines of the service's output so far. */
const rolledLines = (out: string): Rolled[] =>
  out
    .slice(0, out.lastIndexOf('\n') + 1)
    .split('\n')
    .filter((l) => l.startsWith('{') && l.includes('"msg":"rolled"'))
    .map((l) => JSON.parse(l) as Rolled)

const sum = (lines: Rolled[], field: 'rows' | 'rejected_rows') => lines.reduce((n, l) => n + l[field], 0)

describe('the roller service', () => {
  const db = new pg.Client(stack().databaseUrl)
  beforeAll(async () => {
    await ensureVenv()
    await db.connect()
  }, 15 * 60_000)
  afterAll(() => db.end())

  it('rolls a due sink, serves /healthz and /metrics, and stops on SIGTERM', async () => {
    const key = stack().adminKey
    const sink = await newSink(key, { tableSpec: { namespace: 'svc', name: `events_${uid()}`, columns: [{ name: 'x', type: 'long', required: true }] } })
    expect((await send(sink, '[{"x": 1}, {"x": 2}]', { batchId: 'svc-1' })).status).toBe(202)
    // Due by its policy: the batch has waited past roll_seconds.
    await db.query(`update batches set received_at = now() - interval '10 minutes' where sink_id = $1`, [sink.id])

    const [port] = await freePorts(1)
    const [cmd, ...args] = dockerCmd()
    expect(cmd).toBe('node')
    const rollerId = `svc-test-${uid()}`
    const proc = spawn(process.execPath, args, {
      env: { ...process.env, ...rollerEnv({ LHBOX_ROLLER_PORT: String(port), LHBOX_ROLLER_TICK_SECONDS: '1', LHBOX_ROLLER_ID: rollerId }) },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    proc.stdout.on('data', (d) => (out += d))
    proc.stderr.on('data', (d) => (err += d))
    const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)))

    /** Polls `fn` until it answers; throws if the service exits meanwhile or the time is up (a bound, not a timing assert). */
    async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, ms = 150_000): Promise<T> {
      const deadline = Date.now() + ms
      for (;;) {
        if (proc.exitCode !== null || proc.signalCode !== null)
          throw new Error(`the service exited (${proc.exitCode ?? proc.signalCode}) before ${what}:\n${out}\n${err}`)
        const v = await fn().catch(() => undefined)
        if (v !== undefined) return v
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${out.slice(-4000)}\n${err.slice(-4000)}`)
        await new Promise((r) => setTimeout(r, 200))
      }
    }

    const policyLine = `lhbox_sink_roll_seconds_policy{sink="${sink.id}"} 300`
    let metrics = ''
    let readBeforeScrape: Rolled[] = []
    try {
      const health = await waitFor('healthz', async () => {
        const res = await fetch(`http://127.0.0.1:${port}/healthz`)
        return res.ok ? ((await res.json()) as { ok: boolean }) : undefined
      })
      expect(health.ok).toBe(true)
      // Our roll's line (written after the counters moved): then the scrape includes our roll.
      const ours = await waitFor('the roll of our sink', async () => rolledLines(out).find((l) => l.sink_id === sink.id))
      expect(ours).toMatchObject({ level: 'info', sink_id: sink.id, roller: rollerId, batches: 1, rows: 2, rejected_rows: 0 })
      expect(ours.roll_id).toMatch(/^roll-/)
      // The per-sink gauges may be set at the end of the roll's tick: scrape until ours is there. The
      // lines read before a scrape was sent were all written before it was answered.
      const scraped = await waitFor('our sink in /metrics', async () => {
        const lines = rolledLines(out)
        const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
        return text.includes(policyLine) ? { text, lines } : undefined
      })
      metrics = scraped.text
      readBeforeScrape = scraped.lines
    } finally {
      proc.kill('SIGTERM')
    }
    expect(await exited).toBe(0)

    const rolledEver = rolledLines(out)
    const counter = (pattern: RegExp) => Number(pattern.exec(metrics)?.[1] ?? Number.NaN)
    const rollsOk = counter(/^lhbox_rolls_total\{outcome="ok"\} (\d+)$/m)
    expect(rollsOk).toBeGreaterThanOrEqual(readBeforeScrape.length)
    expect(rollsOk).toBeLessThanOrEqual(rolledEver.length)
    const rows = counter(/^lhbox_rows_committed_total (\d+)$/m)
    expect(rows).toBeGreaterThanOrEqual(sum(readBeforeScrape, 'rows'))
    expect(rows).toBeLessThanOrEqual(sum(rolledEver, 'rows'))
    const rejected = counter(/^lhbox_rows_rejected_total (\d+)$/m)
    expect(rejected).toBeGreaterThanOrEqual(sum(readBeforeScrape, 'rejected_rows'))
    expect(rejected).toBeLessThanOrEqual(sum(rolledEver, 'rejected_rows'))
    // Rolled once, by this service.
    expect(rolledEver.filter((l) => l.sink_id === sink.id)).toHaveLength(1)

    // What the roll did to our sink and our table.
    const view = await call(`/v1/sinks/${sink.id}`, { key })
    expect(view.body.last_roll).toMatchObject({ batches: 1, rows: 2, rejected_rows: 0 })
    expect(view.body.lag.batches_waiting).toBe(0)
    const table = await scan({ sql: await warehouseId(stack().warehouse) }, sink.table)
    expectExactlyOnce(table, [1, 2])
    expect(sinkSnapshots(table, sink.id)).toHaveLength(1)
  }, 240_000)

  it('keeps ticking while it has nothing open (no metrics port, the edge unreachable): it never stops by itself', async () => {
    // The soak's steady roller once stopped without a word: the wait between ticks did not hold the
    // process, so with no socket, pool client or busy scan thread open, node ended it (exit 13) in the
    // middle of `run`. No scan threads here: nothing else holds the process from the first tick on.
    const [closed] = await freePorts(1)
    const proc = spawn(process.execPath, dockerCmd().slice(1), {
      env: {
        ...process.env,
        ...rollerEnv({
          LHBOX_URL: `http://127.0.0.1:${closed}`,
          LHBOX_ROLLER_TICK_SECONDS: '1',
          LHBOX_ROLLER_SCAN_THREADS: '0',
          LHBOX_ROLLER_ID: `svc-idle-${uid()}`,
        }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    proc.stdout.on('data', (d) => (out += d))
    proc.stderr.on('data', (d) => (out += d))
    const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)))
    const failedTicks = () => out.split('\n').filter((l) => l.includes('"msg":"tick failed"')).length
    try {
      await poll(async () => failedTicks() >= 3 || proc.exitCode !== null || proc.signalCode !== null, 60_000, 'three failed ticks or an exit')
      expect({ code: proc.exitCode, signal: proc.signalCode, ticks: failedTicks() }).toMatchObject({ code: null, signal: null })
      expect(failedTicks()).toBeGreaterThanOrEqual(3)
    } finally {
      proc.kill('SIGTERM')
    }
    expect(await exited).toBe(0)
    expect(out).toContain('ECONNREFUSED')
  }, 120_000)
})
