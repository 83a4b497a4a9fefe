// The roller as the tests run it: `roller/main.ts tick` (or `maintain`) in a child process against the
// test stack, optionally killed (SIGKILL) at a step boundary; or in the test's own process, for the
// rolls and sweeps a test only needs done.
import { spawn } from 'node:child_process'
import type { ExpectStatic } from 'vitest'
import { rollerCommand } from '../../dev/roller.ts'
import { loadConfig } from '../../roller/config.ts'
import { jsonLogger } from '../../roller/log.ts'
import { createRoller, type Roller } from '../../roller/loop.ts'
import { RollerMetrics } from '../../roller/metrics.ts'
import { duckdbHttpfsPath } from './python.ts'
import { bucket, intakeKey, uid } from './sinks.ts'
import { call, stack } from './stack.ts'

export interface TickResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  /** The JSON log lines. */
  logs: Array<Record<string, unknown>>
  /** In this process: the roller's /metrics text after the tick. */
  metrics?: string
}

export function rollerEnv(extra: Record<string, string> = {}): Record<string, string> {
  const s = stack()
  return {
    LHBOX_URL: s.apiUrl,
    LHBOX_BOOTSTRAP_SECRET: s.bootstrapSecret,
    DATABASE_URL: s.databaseUrl,
    S3_ACCESS_KEY_ID: s.s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: s.s3.secretAccessKey,
    LHBOX_ROLLER_BACKOFF_MIN_MS: '20',
    LHBOX_ROLLER_BACKOFF_MAX_MS: '100',
    LHBOX_DUCKDB_HTTPFS: duckdbHttpfsPath(),
    // No periodic storage figures (each would list the shared bucket and load every table): only those asked for.
    LHBOX_MEASURE_SECONDS: '0',
    ...extra,
  }
}

export function rollerTick(
  opts: { sink?: string; force?: boolean; killAt?: string; rollerId?: string; env?: Record<string, string> } = {},
): Promise<TickResult> {
  const args = ['tick']
  if (opts.force ?? true) args.push('--force')
  if (opts.sink) args.push('--sink', opts.sink)
  return runRoller(args, opts)
}

/**
 * The same forced tick (`tick --force --sink ID`) by the roller in this process: a fresh createRoller
 * (no scan threads), closed after; its answer shaped as the child's would be (exit code 1 when a roll
 * failed, the JSON log lines, "tick done" last). For the rolls a test only needs done: no process to
 * start, and its code stays warm from one roll to the next.
 */
export async function tickInProcess(opts: { sink: string; rollerId?: string; env?: Record<string, string> }): Promise<TickResult> {
  const p = inProcessRoller({ ...(opts.rollerId ? { LHBOX_ROLLER_ID: opts.rollerId } : {}), ...opts.env })
  const lines = () => p.logs.map((l) => `${JSON.stringify(l)}\n`).join('')
  try {
    const result = await p.roller.tick({ sink: opts.sink, force: true })
    p.logs.push({ level: 'info', msg: 'tick done', roller: p.id, ...result })
    return { code: result.failed > 0 ? 1 : 0, signal: null, stdout: lines(), stderr: '', logs: p.logs, metrics: await p.metrics.registry.metrics() }
  } catch (err) {
    // What the child does with an error tick() throws: it ends with code 1, the error on stderr.
    return { code: 1, signal: null, stdout: lines(), stderr: (err as Error).stack ?? String(err), logs: p.logs }
  } finally {
    await p.roller.close()
  }
}

/** `roller/main.ts maintain --sink ID`: the sweep of one sink's table, under its lease. */
export function rollerMaintain(opts: { sink: string; killAt?: string; rollerId?: string; env?: Record<string, string> }): Promise<TickResult> {
  return runRoller(['maintain', '--sink', opts.sink], opts)
}

function runRoller(args: string[], opts: { killAt?: string; rollerId?: string; env?: Record<string, string> }): Promise<TickResult> {
  const { cmd, args: full } = rollerCommand(args)
  const env: Record<string, string> = { ...(process.env as Record<string, string>), ...rollerEnv(opts.env) }
  env.LHBOX_ROLLER_ID = opts.rollerId ?? `test-${Math.random().toString(36).slice(2, 8)}`
  if (opts.killAt) env.LHBOX_ROLLER_KILL_AT = opts.killAt
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, full, { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000)
    child.on('error', reject)
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      const logs = stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
      resolve({ code, signal, stdout, stderr, logs })
    })
  })
}

/**
 * The roller killed at each of `kills` (each tick must die by SIGKILL), the first `deletedByHand`
 * batches deleted by the test (a DeleteObjects the store applied in part), then two healthy ticks
 * under the same roller id (a restarted service, in this process; the dead roller's lease is still held). `afterKills`
 * looks at what the kills left, before the restart.
 */
export async function killThenRestart(
  sinkId: string,
  batches: string[],
  kills: string[],
  deletedByHand: number,
  expect: ExpectStatic,
  opts: { rollerId?: string; env?: Record<string, string>; afterKills?: () => Promise<void> } = {},
): Promise<void> {
  const { rollerId = `crash-${uid()}`, env } = opts
  for (const killAt of kills) {
    const t = await rollerTick({ sink: sinkId, killAt, rollerId, env })
    expect({ killAt, signal: t.signal }, t.stdout + t.stderr).toEqual({ killAt, signal: 'SIGKILL' })
  }
  for (const batchId of batches.slice(0, deletedByHand)) {
    expect(await bucket().head(intakeKey(sinkId, batchId)), batchId).not.toBeNull()
    await bucket().delete(intakeKey(sinkId, batchId))
  }
  await opts.afterKills?.()
  for (const n of [1, 2]) {
    const t = await tickInProcess({ sink: sinkId, rollerId, env })
    expect({ n, code: t.code, signal: t.signal }, t.stdout + t.stderr).toEqual({ n, code: 0, signal: null })
  }
}

/**
 * Leases the sink to `rollerId` for `seconds`, due or not (a forced lease): no other roller rolls or
 * sweeps it meanwhile, while `rollerId` itself still may. Throws when another roller holds it.
 */
export async function holdSink(sinkId: string, rollerId: string, seconds = 3600): Promise<void> {
  const res = await call(`/internal/sinks?roller=${encodeURIComponent(rollerId)}&sink=${sinkId}&force=true&lease_seconds=${seconds}`, {
    key: stack().bootstrapSecret,
  })
  if (res.status !== 200) throw new Error(`GET /internal/sinks (hold ${sinkId}): ${res.status} ${res.text}`)
  const ids = res.body.sinks.map((s: { id: string }) => s.id)
  if (ids.length !== 1 || ids[0] !== sinkId) throw new Error(`the sink ${sinkId} is held by another roller`)
}

export interface InProcessRoller {
  id: string
  roller: Roller
  /** Its JSON log lines. */
  logs: Array<Record<string, any>>
  metrics: RollerMetrics
}

/** The roller in this process (createRoller; no scan threads unless `env` says so); close() it when done. */
export function inProcessRoller(env: Record<string, string> = {}, checkpoint: (name: string) => void | Promise<void> = () => {}): InProcessRoller {
  const logs: Array<Record<string, any>> = []
  const config = loadConfig(rollerEnv({ LHBOX_ROLLER_ID: `inproc-${uid()}`, LHBOX_ROLLER_SCAN_THREADS: '0', ...env }))
  const metrics = new RollerMetrics()
  const roller = createRoller(
    config,
    jsonLogger({ roller: config.rollerId }, (l) => logs.push(JSON.parse(l))),
    metrics,
    checkpoint,
  )
  return { id: config.rollerId, roller, logs, metrics }
}
