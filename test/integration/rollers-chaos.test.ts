// Three roller services (`roller/main.ts run`, child processes) share 300 sinks while producers keep
// sending (a few waves per sink, some batch ids sent twice: at once, racing, and later), and one of
// them is SIGKILLed and restarted at random moments (issue 27, part 7). Read back with PyIceberg (all
// 300 tables in one interpreter): every row exactly once, every batch named by exactly one snapshot of
// its sink; nothing left waiting; every roller, the killed one across its lives, rolled something.
//
// No sink starved: each batch committed (its snapshot's timestamp) within 3 × roll_seconds of its 202,
// the sink_lag alert's line. Not 3 × inactivity_seconds (30 s): a sink the killed roller held waits out
// the lease (10 s at the least), twice if the next life takes it and dies too, on top of the queue of
// 300 sinks on 2 cores; the test prints the figures it saw, after the 202 and after the policy's due time.
//
// The rollers lease only this file's warehouse (LHBOX_ROLLER_WAREHOUSES): the stack is shared with the
// other files, whose leftover sinks are not ours to roll. Three due sinks of another warehouse check
// that. Ours is `maintenance: off`, so no sweep (a service's first comes a minute after start) competes
// with the rolls. Our sinks are deleted after, so no later file's roller finds them.
//
// The kill moments, the lives' checkpoints and the send schedule come from one seeded PRNG; the seed is
// printed, and LHBOX_CHAOS_SEED=<seed> replays the same schedule (the rolls' own timing still varies).
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rollerCommand } from '../../dev/roller.ts'
import { ensureVenv, runPython, sqlCatalogArgs, toExact } from '../support/python.ts'
import { rollerEnv } from '../support/roller.ts'
import { bucket, createTable, newSink, send, uid, type Sink } from '../support/sinks.ts'
import { call, newApiKey, stack } from '../support/stack.ts'
import { prng } from '../support/prng.ts'

const SINKS = 300
/** Waves per sink, each at its own moment of the send window; each wave is 1 or 2 batches. */
const WAVES = 3
const SEND_WINDOW_MS = 40_000
/** The fastest legal policy: roll_seconds' floor (60), inactivity_seconds' floor (10). */
const ROLL_SECONDS = 60
const INACTIVITY_SECONDS = 10
const LEASE_SECONDS = 15
const TICK_SECONDS = 1
/** The chaos goes on this long after the last send (the last waves roll meanwhile), then the victim is left alone. */
const CHAOS_AFTER_SENDS_MS = 20_000
/** A life of the victim: killed after 2–10 s (or earlier, at its checkpoint; or later, see LIFE_GRACE_MS), down for 0.2–2.5 s. */
const LIFE_MS: [number, number] = [2_000, 10_000]
const DOWN_MS: [number, number] = [200, 2_500]
/** How much longer a life that has rolled nothing yet may live. */
const LIFE_GRACE_MS = 15_000
/** The step boundaries every roll with rows passes (roller/roll.ts): a life may die at the n-th pass of one. */
const CHECKPOINTS = ['reload', 'rejects', 'data-file', 'commit', 'marker', 'batch-delete', 'marker-delete', 'before-report', 'after-report']
/** Bounds for a slow machine, not timing asserts. */
const DRAIN_DEADLINE_MS = 240_000
const STOP_DEADLINE_MS = 60_000

const SEED = process.env.LHBOX_CHAOS_SEED ? Number(process.env.LHBOX_CHAOS_SEED) >>> 0 : (Date.now() ^ (process.pid << 16)) >>> 0

const between = (r: () => number, [lo, hi]: [number, number]) => Math.round(lo + r() * (hi - lo))
const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms))

// ---- the rollers -----------------------------------------------------------------------------------

interface Life {
  n: number
  id: string
  killAt: string | null
  proc: ChildProcess
  out: string
  err: string
  startedAt: number
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  /** Why it ended: killed by the test, by its own checkpoint, or stopped. */
  end?: string
}

/** Whether a life has logged a roll that committed rows. */
const rolledRows = (life: Life): boolean => /"msg":"rolled".*"rows":[1-9]/.test(life.out)

class RollerSlot {
  readonly lives: Life[] = []
  constructor(
    readonly name: string,
    private readonly env: Record<string, string>,
  ) {}

  get current(): Life {
    return this.lives[this.lives.length - 1]
  }

  alive(life = this.current): boolean {
    return life !== undefined && life.proc.exitCode === null && life.proc.signalCode === null
  }

  start(id: string, killAt: string | null): Life {
    const { cmd, args } = rollerCommand(['run'])
    const env: Record<string, string> = { ...(process.env as Record<string, string>), ...this.env, LHBOX_ROLLER_ID: id }
    delete env.LHBOX_ROLLER_KILL_AT
    if (killAt) env.LHBOX_ROLLER_KILL_AT = killAt
    const proc = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
    const life: Life = {
      n: this.lives.length + 1,
      id,
      killAt,
      proc,
      out: '',
      err: '',
      startedAt: Date.now(),
      exit: new Promise((res) => proc.once('exit', (code, signal) => res({ code, signal }))),
    }
    proc.stdout?.setEncoding('utf8').on('data', (d: string) => (life.out += d))
    proc.stderr?.setEncoding('utf8').on('data', (d: string) => (life.err += d))
    this.lives.push(life)
    return life
  }

  /** The JSON lines of every life. */
  logs(): Array<Record<string, any> & { life: number }> {
    return this.lives.flatMap((l) =>
      l.out
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .flatMap((line) => {
          try {
            return [{ ...(JSON.parse(line) as Record<string, any>), life: l.n }]
          } catch {
            return [] // a line cut by SIGKILL
          }
        }),
    )
  }

  tail(lines = 40): string {
    return this.lives
      .map((l) => {
        const text = `${l.out}${l.err ? `\n[stderr]\n${l.err}` : ''}`.trimEnd().split('\n').slice(-lines).join('\n')
        return `--- roller ${this.name} life ${l.n} (${l.id}${l.killAt ? `, kill at ${l.killAt}` : ''}; ${l.end ?? (this.alive(l) ? 'running' : 'exited')}) ---\n${text}`
      })
      .join('\n')
  }
}

// ---- what was sent ---------------------------------------------------------------------------------

interface SinkInfo extends Sink {
  index: number
}

interface SentBatch {
  sink: number
  batchId: string
  ids: number[]
  /** The 202's received_at, ms (the intake's clock; the roller's snapshot timestamps are on the same host). */
  receivedMs: number
}

/** A wave of one sink: its moment in the send window and its batches (ids of rows), and which are sent again. */
interface Wave {
  sink: number
  at: number
  batches: Array<{ batchId: string; ids: number[]; again: 'no' | 'at-once' | 'racing' | 'later' }>
}

/** The send schedule, all from the PRNG: every sink's waves, batch sizes and repeated batch ids. */
function schedule(r: () => number): Wave[] {
  const waves: Wave[] = []
  for (let sink = 0; sink < SINKS; sink++) {
    for (let w = 0; w < WAVES; w++) {
      const batches: Wave['batches'] = []
      const count = r() < 0.3 ? 2 : 1
      for (let b = 0; b < count; b++) {
        const rows = 1 + Math.floor(r() * 4)
        // id: sink, wave, batch, row — distinct across the whole run.
        const ids = Array.from({ length: rows }, (_, i) => sink * 1000 + w * 100 + b * 10 + i)
        const x = r()
        const again = x < 0.08 ? 'at-once' : x < 0.12 ? 'racing' : x < 0.2 ? 'later' : 'no'
        batches.push({ batchId: `s${sink}-w${w}-b${b}-${uid()}`, ids, again })
      }
      waves.push({ sink, at: Math.round(r() * SEND_WINDOW_MS), batches })
    }
  }
  return waves.sort((a, b) => a.at - b.at)
}

/** Runs `fn` over `items`, `n` at a time. */
async function pool<T>(items: T[], n: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++
        await fn(items[i], i)
      }
    }),
  )
}

/** GET /v1/sinks?warehouse=chaos, every page. */
async function listSinks(key: string): Promise<Array<Record<string, any>>> {
  const all: Array<Record<string, any>> = []
  let cursor: string | null = null
  do {
    const q = new URLSearchParams({ warehouse: 'chaos', limit: '1000', ...(cursor ? { cursor } : {}) })
    const res = await call(`/v1/sinks?${q}`, { key })
    if (res.status !== 200) throw new Error(`GET /v1/sinks: ${res.status} ${res.text}`)
    all.push(...res.body.sinks)
    cursor = res.body.next_cursor ?? null
  } while (cursor)
  return all
}

/** The `it`s below: the logs are removed when all of them pass. */
const TESTS = 6

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]

// ---- the run ---------------------------------------------------------------------------------------

interface TableRead {
  row_count: bigint
  ids: bigint[]
  snapshots: Array<{ snapshot_id: bigint; timestamp_ms: bigint; operation: string; summary: Record<string, string> }>
}

describe('three roller services over 300 sinks, one of them SIGKILLed and restarted at random moments', () => {
  const sinks: SinkInfo[] = []
  const sent: SentBatch[] = []
  const slots: RollerSlot[] = []
  let tables: Record<string, TableRead> = {}
  let leftInIntake: Record<string, string[]> = {}
  const stops: Record<string, { code: number | null; signal: NodeJS.Signals | null }> = {}
  let views: Array<Record<string, any>> = []
  const kills: string[] = []
  const timings: Record<string, number> = {}

  /** Every roller's whole log, one file per life: kept when a test fails (or LHBOX_KEEP_TEST_DIR is set), removed when all pass. */
  let logDir = ''
  let passed = 0
  const writeLogs = () => {
    logDir ||= mkdtempSync(join(tmpdir(), `lhbox-chaos-${SEED}-`))
    for (const s of slots) for (const l of s.lives) writeFileSync(join(logDir, `${s.name}-${l.n}.log`), `${l.out}\n[stderr]\n${l.err}`)
  }
  /** Where to look, and the rollers' lines about the sinks named (all of them, from every life). */
  const logsAbout = (sinkIds: string[]) => {
    const lines = slots.flatMap((s) =>
      s.lives.flatMap((l) =>
        l.out
          .split('\n')
          .filter((line) => sinkIds.some((id) => line.includes(id)))
          .map((line) => ({ line, who: `${s.name}${l.n}` })),
      ),
    )
    // Each line starts with its time ({"at":"…"): sorted, they tell the sinks' story in order.
    lines.sort((x, y) => x.line.localeCompare(y.line))
    return `seed ${SEED}; every roller's whole log in ${logDir}\n${lines.map((l) => `${l.who} ${l.line}`).join('\n')}`
  }
  /** Fails with the rollers' logs (their last lines here, every line in a file). */
  const failWithLogs = (why: string): never => {
    writeLogs()
    throw new Error(`${why} (seed ${SEED}; every roller's whole log in ${logDir})\n${slots.map((s) => s.tail()).join('\n')}`)
  }
  /** Another project's sinks, due all along, in the stack's own warehouse: what another file would leave behind. */
  const foreign: Sink[] = []
  let foreignViews: Array<Record<string, any>> = []
  let key = ''
  afterAll(async () => {
    if (logDir && passed === TESTS && !process.env.LHBOX_KEEP_TEST_DIR) rmSync(logDir, { recursive: true, force: true })
    // Later files share the stack: no sink of ours stays behind (a deleted sink's waiting batches are discarded).
    const gone = async (id: string, k: string) => {
      const res = await call(`/v1/sinks/${id}`, { key: k, method: 'DELETE' })
      if (res.status !== 202) throw new Error(`DELETE /v1/sinks/${id}: ${res.status} ${res.text}`)
    }
    await pool(foreign, 4, (f) => gone(f.id, stack().adminKey))
    await pool(sinks.filter(Boolean), 8, (s) => gone(s.id, key))
  }, 120_000)

  beforeAll(async () => {
    const began = Date.now()
    console.log(`rollers-chaos: seed ${SEED} (replay with LHBOX_CHAOS_SEED=${SEED})`)
    const sendRandom = prng(SEED)
    const chaosRandom = prng(SEED ^ 0x9e3779b9)
    await ensureVenv()

    // Our own project and warehouse: the rollers lease only its sinks.
    key = await newApiKey('admin', `chaos-${uid()}`)
    const wh = await call('/v1/warehouses', { key, json: { name: 'chaos', maintenance: 'off' } })
    if (wh.status !== 201) throw new Error(`POST /v1/warehouses: ${wh.status} ${wh.text}`)
    const warehouseId: string = wh.body.id

    await pool(
      Array.from({ length: SINKS }, (_, i) => i),
      8,
      async (i) => {
        const table = await createTable(key, {
          warehouse: 'chaos',
          namespace: 'chaos',
          name: `t${i}`,
          columns: [
            { name: 'id', type: 'long', required: true },
            { name: 'who', type: 'string' },
          ],
        })
        const res = await call('/v1/sinks', {
          key,
          json: { warehouse: 'chaos', name: `chaos_${i}`, table, roll_seconds: ROLL_SECONDS, inactivity_seconds: INACTIVITY_SECONDS },
        })
        if (res.status !== 201) throw new Error(`POST /v1/sinks: ${res.status} ${res.text}`)
        sinks[i] = { index: i, id: res.body.id, name: `chaos_${i}`, table, sendKey: res.body.send_key, created: res }
      },
    )
    timings.setup_s = (Date.now() - began) / 1000

    // Sinks of another warehouse, due once the rollers start: theirs to leave alone (LHBOX_ROLLER_WAREHOUSES).
    for (let i = 0; i < 3; i++) {
      const f = await newSink(stack().adminKey, { sink: { roll_seconds: ROLL_SECONDS, inactivity_seconds: INACTIVITY_SECONDS } })
      const res = await send(f, [{ x: i }], { batchId: `foreign-${i}` })
      if (res.status !== 202) throw new Error(`send to a foreign sink: ${res.status} ${res.text}`)
      foreign.push(f)
    }

    // Three services; the third is the victim.
    const env = rollerEnv({
      LHBOX_ROLLER_WAREHOUSES: warehouseId,
      LHBOX_ROLLER_TICK_SECONDS: String(TICK_SECONDS),
      LHBOX_ROLLER_LEASE_SECONDS: String(LEASE_SECONDS),
    })
    const runId = uid()
    for (const name of ['a', 'b', 'c']) slots.push(new RollerSlot(name, env))
    const [a, b, victim] = slots
    a.start(`chaos-a-${runId}`, null)
    b.start(`chaos-b-${runId}`, null)
    victim.start(`chaos-c-${runId}-1`, null)
    const t0 = Date.now()

    // The victim's lives: each killed after a random time, or sooner by itself at a random step
    // boundary; restarted under its old id (a restarted service: its own leases are its at once) or a
    // new one (its leases come back to the others after their term).
    let chaosOver = false
    const chaos = (async () => {
      while (!chaosOver) {
        const life = victim.current
        const lifeMs = between(chaosRandom, LIFE_MS)
        const until = Date.now() + lifeMs
        // A life that has not rolled yet gets a little longer (the first sinks are due only 10 s in), so
        // the victim's lives roll something between their kills.
        const due = () => Date.now() >= until && (rolledRows(life) || Date.now() >= until + LIFE_GRACE_MS)
        while (!chaosOver && !due() && victim.alive(life)) await sleep(50)
        if (chaosOver && victim.alive(life)) break
        const at = ((Date.now() - t0) / 1000).toFixed(1)
        if (victim.alive(life)) {
          life.proc.kill('SIGKILL')
          life.end = 'SIGKILLed by the test'
          kills.push(`${at}s: SIGKILL life ${life.n} after ${Date.now() - life.startedAt} ms (drawn: ${lifeMs} ms; rolled rows: ${rolledRows(life)})`)
        } else {
          life.end = `died by itself (${life.proc.signalCode ?? `exit ${life.proc.exitCode}`})`
          kills.push(`${at}s: life ${life.n} died by itself at its checkpoint ${life.killAt} (${life.proc.signalCode ?? life.proc.exitCode})`)
        }
        await life.exit
        await sleep(between(chaosRandom, DOWN_MS))
        const sameId = chaosRandom() < 0.5
        const killAt = chaosRandom() < 0.5 ? `${CHECKPOINTS[Math.floor(chaosRandom() * CHECKPOINTS.length)]}:${1 + Math.floor(chaosRandom() * 6)}` : null
        const id = sameId ? life.id : `chaos-c-${runId}-${life.n + 1}`
        const next = victim.start(id, chaosOver ? null : killAt)
        kills.push(`  restarted as life ${next.n} (${sameId ? 'its old id' : 'a new id'}${next.killAt ? `; to die at ${next.killAt}` : ''})`)
      }
      // The chaos is over: the victim's last life is left alone (one without a checkpoint to die at).
      if (!victim.alive() || victim.current.killAt) {
        if (victim.alive()) {
          victim.current.proc.kill('SIGKILL')
          victim.current.end = 'SIGKILLed by the test (the chaos is over)'
          kills.push(`${((Date.now() - t0) / 1000).toFixed(1)}s: SIGKILL life ${victim.current.n} (the chaos is over)`)
          await victim.current.exit
        }
        const next = victim.start(victim.current.id, null)
        kills.push(`  restarted as life ${next.n} (its old id), left alone`)
      }
    })()

    // The sends, while the chaos goes on: each wave at its moment, 12 requests at a time.
    const waves = schedule(sendRandom)
    const later: Array<{ sink: SinkInfo; batchId: string; body: string }> = []
    const problems: string[] = []
    const expectStatus = (what: string, res: { status: number; text: string }, ok: number[]) => {
      if (!ok.includes(res.status)) problems.push(`${what}: ${res.status} ${res.text}`)
    }
    try {
      await pool(waves, 12, async (wave) => {
        const wait = t0 + wave.at - Date.now()
        if (wait > 0) await sleep(wait)
        const sink = sinks[wave.sink]
        for (const batch of wave.batches) {
          const body = JSON.stringify(batch.ids.map((id) => ({ id, who: `${sink.name}/${batch.batchId}` })))
          const first = send(sink, body, { batchId: batch.batchId })
          // A producer's retry racing its own first try: either may store it (202), or see it stored (200).
          const racing = batch.again === 'racing' ? send(sink, body, { batchId: batch.batchId }) : null
          const res = await first
          expectStatus(`send ${batch.batchId}`, res, batch.again === 'racing' ? [200, 202] : [202])
          if (racing) expectStatus(`racing resend ${batch.batchId}`, await racing, [200, 202])
          const receivedAt = res.body?.received_at ?? (racing ? (await racing).body?.received_at : undefined)
          sent.push({ sink: sink.index, batchId: batch.batchId, ids: batch.ids, receivedMs: Date.parse(receivedAt) })
          if (batch.again === 'at-once') {
            const again = await send(sink, body, { batchId: batch.batchId })
            expectStatus(`resend ${batch.batchId}`, again, [200])
            if (again.status === 200 && again.body?.duplicate !== true) problems.push(`resend ${batch.batchId}: not a duplicate: ${again.text}`)
          }
          if (batch.again === 'later') later.push({ sink, batchId: batch.batchId, body })
        }
      })
      // The batch ids sent again later: rolled by now or not, each is the same batch (200 duplicate).
      await pool(later, 12, async ({ sink, batchId, body }) => {
        const again = await send(sink, body, { batchId })
        expectStatus(`later resend ${batchId}`, again, [200])
        if (again.status === 200 && again.body?.duplicate !== true) problems.push(`later resend ${batchId}: not a duplicate: ${again.text}`)
      })
      timings.sends_s = (Date.now() - t0) / 1000
      console.log(
        `rollers-chaos: ${sent.length} batches (${sent.reduce((n, s) => n + s.ids.length, 0)} rows) sent in ${timings.sends_s} s, ${later.length} sent again later`,
      )
      if (problems.length > 0) throw new Error(`sends answered otherwise than expected:\n${problems.slice(0, 20).join('\n')}`)

      // The chaos goes on a little longer (the last waves become due meanwhile), then stops.
      const chaosUntil = Date.now() + CHAOS_AFTER_SENDS_MS
      while (Date.now() < chaosUntil) {
        if (!a.alive() || !b.alive()) failWithLogs('a roller that is never killed exited')
        await sleep(200)
      }
      chaosOver = true
      await chaos
      timings.chaos_s = (Date.now() - t0) / 1000

      // Until every sink's ledger is drained (each batch committed and reported), a bounded wait.
      const drainUntil = Date.now() + DRAIN_DEADLINE_MS
      for (;;) {
        if (!a.alive() || !b.alive() || !victim.alive()) failWithLogs('a roller exited while the sinks drained')
        views = await listSinks(key).catch((err) => failWithLogs(String(err)))
        const waiting = views.filter((v) => v.lag.batches_waiting > 0)
        if (views.length === SINKS && waiting.length === 0) break
        if (Date.now() > drainUntil)
          failWithLogs(
            `${waiting.length} sinks still wait after ${DRAIN_DEADLINE_MS / 1000} s: ${waiting
              .slice(0, 10)
              .map((v) => `${v.id} ${JSON.stringify(v.lag)} last_error=${JSON.stringify(v.last_error ?? null)}`)
              .join('; ')}`,
          )
        await sleep(1000)
      }
      timings.drained_s = (Date.now() - t0) / 1000
    } finally {
      chaosOver = true
      await chaos.catch(() => undefined)
      // SIGTERM: each service finishes its rolls under way and exits 0. A life just started may not
      // handle it yet: it does from its "roller running" line on.
      const running = (l: Life) => l.out.includes('"msg":"roller running"')
      const until = Date.now() + STOP_DEADLINE_MS
      while (slots.some((s) => s.alive() && !running(s.current)) && Date.now() < until) await sleep(50)
      for (const s of slots) if (s.alive()) s.current.proc.kill('SIGTERM')
      for (const s of slots) {
        const life = s.current
        if (!life) continue
        const timer = setTimeout(() => life.proc.kill('SIGKILL'), STOP_DEADLINE_MS)
        stops[`${s.name}:${life.n}`] = await life.exit
        clearTimeout(timer)
        life.end ??= 'stopped by SIGTERM'
      }
    }
    writeLogs()
    console.log(`rollers-chaos: the rollers' logs in ${logDir}; the victim's lives:\n  ${kills.join('\n  ')}`)

    // Every table in one PyIceberg process.
    const readAt = Date.now()
    const out = toExact(
      await runPython(
        'pyiceberg_tables_ids.py',
        [...sqlCatalogArgs({ databaseUrl: stack().databaseUrl, catalogName: warehouseId, s3: stack().s3 }), '--column', 'id', '--threads', '4'],
        undefined,
        { input: JSON.stringify(sinks.map((s) => s.table)), timeoutMs: 300_000 },
      ),
    )
    tables = out.tables
    timings.pyiceberg_s = (Date.now() - readAt) / 1000

    // What is left under each sink's prefix.
    leftInIntake = {}
    await pool(sinks, 8, async (s) => {
      const keys: string[] = []
      for await (const o of bucket().list(`_sink/${s.id}/`)) keys.push(o.key)
      leftInIntake[s.id] = keys
    })
    foreignViews = await Promise.all(foreign.map(async (f) => (await call(`/v1/sinks/${f.id}`, { key: stack().adminKey })).body))
    timings.total_s = (Date.now() - began) / 1000
    console.log(`rollers-chaos: timings ${JSON.stringify(timings)}`)
  }, 15 * 60_000)

  it('every row exactly once: each table holds exactly the ids sent to its sink (count, sum and the ids themselves)', () => {
    const mismatches: string[] = []
    const bad: string[] = []
    for (const s of sinks) {
      const expected = sent
        .filter((b) => b.sink === s.index)
        .flatMap((b) => b.ids)
        .sort((x, y) => x - y)
      const t = tables[s.table]
      const got = (t?.ids ?? []).map(Number)
      const sum = (xs: number[]) => xs.reduce((n, x) => n + x, 0)
      const same = got.length === expected.length && got.every((x, i) => x === expected[i])
      if (!same || Number(t.row_count) !== expected.length || sum(got) !== sum(expected)) {
        const extra = got.filter((x, i) => got.indexOf(x) !== i)
        const missing = expected.filter((x) => !got.includes(x))
        mismatches.push(
          `${s.table} (${s.id}): ${got.length} rows, sum ${sum(got)}; sent ${expected.length}, sum ${sum(expected)}; twice: [${extra}] missing: [${missing}]`,
        )
        bad.push(s.id)
      }
    }
    expect(mismatches, logsAbout(bad)).toEqual([])
    expect(sent.length).toBeGreaterThanOrEqual(SINKS * WAVES)
    passed++
  })

  it('every batch is named by exactly one snapshot of its sink, an append of its rows', () => {
    const problems: string[] = []
    const bad = new Set<string>()
    for (const s of sinks) {
      const before = problems.length
      const snaps = (tables[s.table]?.snapshots ?? []).filter((x) => x.summary['lakehousebox.sink.id'] === s.id)
      const named = new Map<string, number>()
      for (const snap of snaps) {
        if (snap.operation !== 'append') problems.push(`${s.table}: snapshot ${snap.snapshot_id} is ${snap.operation}`)
        for (const id of snap.summary['lakehousebox.sink.batches'].split(',')) named.set(id, (named.get(id) ?? 0) + 1)
        const rows = sent.filter((b) => snap.summary['lakehousebox.sink.batches'].split(',').includes(b.batchId)).reduce((n, b) => n + b.ids.length, 0)
        if (snap.summary['added-records'] !== String(rows))
          problems.push(`${s.table}: snapshot ${snap.snapshot_id} added ${snap.summary['added-records']} rows, its batches hold ${rows}`)
      }
      const mine = sent.filter((b) => b.sink === s.index).map((b) => b.batchId)
      for (const id of mine) if (named.get(id) !== 1) problems.push(`${s.table}: batch ${id} named by ${named.get(id) ?? 0} snapshots`)
      for (const id of named.keys()) if (!mine.includes(id)) problems.push(`${s.table}: a snapshot names ${id}, never sent`)
      if (problems.length > before) {
        bad.add(s.id)
        for (const snap of snaps)
          problems.push(
            `  ${s.table} snapshot ${snap.snapshot_id} at ${new Date(Number(snap.timestamp_ms)).toISOString()}: ${snap.summary['lakehousebox.sink.batches']}`,
          )
      }
    }
    expect(problems, logsAbout([...bad])).toEqual([])
    passed++
  })

  it('nothing waits: no batch left in the intake, every sink active with lag 0', () => {
    const left: string[] = []
    const markers: string[] = []
    for (const s of sinks) {
      for (const k of leftInIntake[s.id] ?? []) {
        // A repair's marker whose delete a kill cut off (after the report) goes on the sink's next roll (spec): allowed.
        if (k.startsWith(`_sink/${s.id}/committed/`)) markers.push(k)
        else left.push(k)
      }
    }
    if (markers.length > 0) console.log(`rollers-chaos: ${markers.length} committed markers left for the sinks' next rolls: ${markers.slice(0, 5).join(', ')}`)
    expect(left, logsAbout(left.map((k) => k.split('/')[1]))).toEqual([])
    expect(views.map((v) => [v.id, v.state, v.lag.batches_waiting]).filter(([, state, waiting]) => state !== 'active' || waiting !== 0)).toEqual([])
    passed++
  })

  it(`no sink starved: every batch committed within 3 × roll_seconds (${3 * ROLL_SECONDS} s) of its 202`, () => {
    const committedAt = new Map<string, number>()
    for (const s of sinks)
      for (const snap of tables[s.table]?.snapshots ?? [])
        if (snap.summary['lakehousebox.sink.id'] === s.id)
          for (const id of snap.summary['lakehousebox.sink.batches'].split(',')) committedAt.set(`${s.id}/${id}`, Number(snap.timestamp_ms))
    // When each batch's sink was due at the latest by its policy (from the sends alone): roll_seconds
    // after the batch, or inactivity_seconds after the sink's first quiet spell that follows it.
    const sendsOf = new Map<number, number[]>()
    for (const b of sent) sendsOf.set(b.sink, [...(sendsOf.get(b.sink) ?? []), b.receivedMs])
    for (const list of sendsOf.values()) list.sort((x, y) => x - y)
    const dueAt = (b: SentBatch) => {
      const list = sendsOf.get(b.sink)!
      let i = list.indexOf(b.receivedMs)
      while (i + 1 < list.length && list[i + 1] <= list[i] + INACTIVITY_SECONDS * 1000) i++
      return Math.min(b.receivedMs + ROLL_SECONDS * 1000, list[i] + INACTIVITY_SECONDS * 1000)
    }
    const waited: Array<{ batch: string; s: number; afterDue: number }> = []
    const starved: string[] = []
    for (const b of sent) {
      const sink = sinks[b.sink]
      const at = committedAt.get(`${sink.id}/${b.batchId}`)
      if (at === undefined) {
        starved.push(`${sink.id}/${b.batchId}: never committed`)
        continue
      }
      const s = (at - b.receivedMs) / 1000
      waited.push({ batch: `${sink.id}/${b.batchId}`, s, afterDue: (at - dueAt(b)) / 1000 })
      if (s > 3 * ROLL_SECONDS) starved.push(`${sink.id}/${b.batchId}: committed ${s.toFixed(1)} s after its 202`)
    }
    const s = waited.map((w) => w.s).sort((x, y) => x - y)
    const late = waited.map((w) => w.afterDue).sort((x, y) => x - y)
    const worst = [...waited].sort((x, y) => y.s - x.s).slice(0, 5)
    console.log(
      `rollers-chaos: 202 → commit: p50 ${quantile(s, 0.5).toFixed(1)} s, p95 ${quantile(s, 0.95).toFixed(1)} s, max ${s.at(-1)?.toFixed(1)} s; ` +
        `after the policy made the sink due: p50 ${quantile(late, 0.5).toFixed(1)} s, p95 ${quantile(late, 0.95).toFixed(1)} s, max ${late.at(-1)?.toFixed(1)} s; ` +
        `slowest: ${worst.map((w) => `${w.batch} ${w.s.toFixed(1)} s`).join(', ')}`,
    )
    expect(starved, logsAbout([...new Set(starved.map((x) => x.split('/')[0]))])).toEqual([])
    passed++
  })

  it("the rollers leave other warehouses' sinks alone: no roll, no sweep", () => {
    // Due all along, still waiting: never rolled, never swept (a sweep's release leaves maintenance.last).
    expect(foreignViews.map((v) => [v.id, v.lag?.batches_waiting, v.last_roll ?? null, v.maintenance?.last ?? null])).toEqual(
      foreign.map((f) => [f.id, 1, null, null]),
    )
    // No roller line names them but a sweep's skip: the sweep goes through every sink of the stack and
    // asks for each lease, which the edge refuses for a warehouse the roller does not serve.
    const named = slots.flatMap((s) =>
      s
        .logs()
        .filter((l) => foreign.some((f) => JSON.stringify(l).includes(f.id)) && !String(l.msg).startsWith('maintenance skipped this sweep'))
        .map((l) => `${s.name}${l.life} ${l.msg}`),
    )
    expect(named, logsAbout(foreign.map((f) => f.id))).toEqual([])
    passed++
  })

  it('every roller rolled something (the victim across its lives), and each stopped cleanly on SIGTERM', () => {
    const summary = slots.map((s) => {
      const logs = s.logs()
      const rolled = logs.filter((l) => l.msg === 'rolled' && l.rows > 0)
      const failed = logs.filter((l) => l.level === 'error')
      return {
        name: s.name,
        lives: s.lives.length,
        rolled: rolled.length,
        rows: rolled.reduce((n, l) => n + l.rows, 0),
        errors: failed.length,
        sample: failed.slice(0, 3).map((l) => `${l.msg}: ${l.error}`),
      }
    })
    console.log(`rollers-chaos: ${JSON.stringify(summary)}`)
    const tails = () => slots.map((s) => s.tail()).join('\n')
    for (const s of summary) expect(s.rolled, `roller ${s.name} rolled nothing\n${tails()}`).toBeGreaterThan(0)
    // The victim was really killed, more than once.
    expect(slots[2].lives.length, kills.join('\n')).toBeGreaterThanOrEqual(3)
    for (const [life, exit] of Object.entries(stops)) expect({ life, ...exit }, tails()).toEqual({ life, code: 0, signal: null })
    passed++
  })
})
