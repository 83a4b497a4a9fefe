// The roller service outlives a database that drops its connections (found by the chaos soak: an idle
// SQL-catalog connection terminated by the server emitted 'error' on the pool with no listener, and
// the process died). The service rolls, its idle catalog connections are terminated
// (pg_terminate_backend, as a restart or a failover would), and it keeps rolling.
import { spawn } from 'node:child_process'
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { rollerCommand } from '../../dev/roller.ts'
import { ensureVenv } from '../support/python.ts'
import { rollerEnv } from '../support/roller.ts'
import { expectExactlyOnce, scan, warehouseId } from '../support/roller-check.ts'
import { newSink, send, uid, type Sink } from '../support/sinks.ts'
import { stack } from '../support/stack.ts'

const db = new pg.Client(stack().databaseUrl)
beforeAll(async () => {
  await ensureVenv()
  await db.connect()
}, 15 * 60_000)
afterAll(() => db.end())

it(
  'keeps rolling after the database terminated its idle catalog connections',
  async () => {
    const sink: Sink = await newSink(stack().adminKey)
    const rollerId = `dbdrop-${uid()}`
    const { cmd, args } = rollerCommand(['run'])
    const proc = spawn(cmd, args, {
      env: { ...process.env, ...rollerEnv({ LHBOX_ROLLER_TICK_SECONDS: '1', LHBOX_ROLLER_ID: rollerId }) },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    proc.stdout.on('data', (d) => (out += d))
    proc.stderr.on('data', (d) => (err += d))
    const logs = () => out.split('\n').filter((l) => l.startsWith('{'))
    const rolledBatches = () => logs().filter((l) => l.includes('"msg":"rolled"') && l.includes(`"sink_id":"${sink.id}"`)).length

    /** Polls until `fn` holds; fails at once if the service died (a bound for a slow machine, not a timing assert). */
    async function until(what: string, fn: () => boolean | Promise<boolean>, ms = 120_000): Promise<void> {
      const deadline = Date.now() + ms
      while (!(await fn())) {
        if (proc.exitCode !== null || proc.signalCode !== null)
          throw new Error(`the roller exited (${proc.exitCode ?? proc.signalCode}) before ${what}:\n${err.slice(-3000)}`)
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${out.slice(-3000)}\n${err.slice(-3000)}`)
        await new Promise((r) => setTimeout(r, 100))
      }
    }

    /** Sends rows x, made due at once (its arrival moved back past roll_seconds), and waits for its roll. */
    async function sendAndRoll(x: number): Promise<void> {
      const before = rolledBatches()
      expect((await send(sink, [{ x }], { batchId: `x${x}` })).status).toBe(202)
      await db.query(`update batches set received_at = now() - interval '10 minutes' where sink_id = $1 and state <> 'committed'`, [sink.id])
      await until(`the roll of x=${x}`, () => rolledBatches() > before)
    }

    try {
      // Roll until the service holds an idle catalog connection at the moment they are terminated
      // (the pool closes idle ones after 10 s, so right after a roll there is one).
      let terminated = 0
      let x = 1
      for (; x <= 3 && terminated === 0; x++) {
        await sendAndRoll(x)
        const r = await db.query(`select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and state = 'idle'`, [
          `lhbox-roller ${rollerId}`,
        ])
        terminated = r.rowCount ?? 0
      }
      expect(terminated).toBeGreaterThan(0)
      await until('the pool noticed', () => logs().some((l) => l.includes('an idle catalog connection was dropped')))
      await sendAndRoll(x)
      expect(proc.exitCode).toBeNull()
      expectExactlyOnce(
        await scan({ sql: await warehouseId(stack().warehouse) }, sink.table),
        Array.from({ length: x }, (_, i) => i + 1),
      )
    } finally {
      proc.kill('SIGTERM')
      await new Promise((r) => (proc.exitCode !== null || proc.signalCode !== null ? r(null) : proc.once('exit', r)))
    }
    // Up to five rolls, each bounded by `until` (120 s): the test's own limit must not cut them short on a
    // loaded machine (CI once timed out at the default 60 s with every roll still under way).
  },
  10 * 60_000,
)
