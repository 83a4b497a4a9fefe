// npm run bench:sinks — many small sinks rolled by 1, 2 and 4 roller services at concurrency 1 and 8,
// side by side with PyIceberg appending the same batches table by table.
//
//   npm run bench:sinks [-- --sinks N] [--batches K] [--rows R] [--window S] [--configs 1x8,2x8,…,pyiceberg] [--roller-edge node|workerd] [--cpu-prof DIR] [--quick]
//
// One private stack (Postgres, pgbouncer, ws bridge, versitygw, wrangler dev of the edge), loopback
// only, and the far side of a real deployment put back in with delaying proxies (test/support):
//   - the bucket: a warehouse whose S3 endpoint is a fault proxy adding BENCH_S3_DELAY_MS (20) to
//     every request — the edge's intake PUTs, the rollers' and PyIceberg's reads and writes;
//   - Postgres: a TCP proxy adding BENCH_PG_DELAY_MS (2) to every round trip, the rollers' SQL catalog
//     (DATABASE_URL) and PyIceberg's; and a second edge whose database (the neon WebSocket bridge) is
//     behind another such proxy, serving the rollers' /internal routes.
// Each side, BENCH_RUNS times (default 3; 1 with --quick), on fresh tables and sinks, the order of the
// sides reversed every other run (harness.ts's rule):
//   - set-up (untimed): N tables {id long, name string, ts timestamptz, amount decimal(18,2),
//     __ingest_ts timestamptz} with the roller's retention properties, so every measured roll is a
//     steady one (bench:roll's rule: the first roll's schema commit is not what is measured); for
//     ours a sink on each and K batches of R rows (default 1 of 10) sent through the send route, each
//     202's time kept; for PyIceberg the same rows as NDJSON objects (x-amz-meta-received set);
//   - ours: R roller services (`roller/main.ts run`, the Docker image's command) with
//     LHBOX_ROLLER_CONCURRENCY C and LHBOX_ROLLER_TICK_SECONDS 1 start and go idle; then, at t0, one
//     UPDATE moves every waiting batch's received_at an hour back (the sinks fall due at once, as the
//     integration tests make them due), and the ledger is polled until every batch is committed or
//     --window seconds (120; 60 with --quick) have passed; then SIGTERM (a roll under way finishes);
//   - pyiceberg: test/bench/pyiceberg_sinks.py, one process, one table after the other (load the
//     table, read its objects, one table.append), through the same proxies, until done or --window;
//   - after every run, before any figure of it prints, PyIceberg reads every table of every side back
//     (readback.py, one process): a committed sink's table (the ledger's word) or an appended table
//     holds exactly its rows (count, sum(id), sum(amount)); every other table holds none.
// Figures per side: rolls per minute (sinks committed over the time to the last commit, or over the
// window when it did not drain), the drain time, freshness (from t0, when the sinks fell due, and from
// each batch's 202) p50/p99, peak RSS per roller process (/proc VmHWM), the rollers' CPU per roll and
// the machine's busy share in the window, S3 requests and catalog SQL statements per roll (counted by
// the proxies), and the `requests` counts of the roller's `rolled` log lines when it writes them.
// Then medians, the ratios the issue asks for, its targets, and the load average.
//
// The rollers' edge (--roller-edge): `workerd` is wrangler dev's one local workerd, one JS thread
// that every roller's leases and reports go through, which caps the fleet on this box before the
// rollers do (on Workers each request has an isolate of its own); `node` (the default) is the Node
// edge (`npm run edge`) in a process of its own, with a pool, as a self-hosted edge runs.
// LHBOX_ROLLER_BUNDLE runs the rollers from a bundle (dev/roller.ts); by default they run through tsx,
// as roller/Dockerfile does. LHBOX_BENCH_KEEP=1 keeps the state folder (the rollers' logs are in it);
// BENCH_AUTO_EXPLAIN=1 has Postgres log every statement over 250 ms with its plan (auto_explain, in
// pg/server.log there): how the lease's stall after a burst of new sinks was found.
import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { rollerCommand } from '../../dev/roller.ts'
import { freePort } from '../../dev/ports.ts'
import { startChild, waitFor, type Child } from '../../dev/process.ts'
import { startWrangler } from '../../dev/wrangler.ts'
import { S3Client } from '../../iceberg/io/s3.ts'
import { startFaultProxy } from '../support/fault-proxy.ts'
import { startPgProxy } from '../support/pg-proxy.ts'
import { ensureVenv, sqlCatalogArgs } from '../support/python.ts'
import { api, benchStack, COLUMNS, fmt, rowJson, type BenchStack } from './common.ts'
import {
  BENCH_DIR,
  centsText,
  envInt,
  lastJson,
  loadText,
  measured,
  median,
  num,
  readBack,
  rowFigures,
  runBench,
  startBench,
  type Expected,
} from './harness.ts'

// ---- settings -------------------------------------------------------------------------------------

const { values: opts } = parseArgs({
  options: {
    sinks: { type: 'string' },
    batches: { type: 'string' },
    rows: { type: 'string' },
    window: { type: 'string' },
    configs: { type: 'string' },
    'roller-edge': { type: 'string', default: 'node' },
    'cpu-prof': { type: 'string' },
    quick: { type: 'boolean', default: false },
  },
})

function positive(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback
  const n = Number(raw.replace(/_/g, ''))
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--${name} ${raw}: expected a positive integer`)
  return n
}

const QUICK = opts.quick === true
const SINKS = positive('sinks', opts.sinks, QUICK ? 60 : 1000)
/** Batches waiting per sink (a roll takes them all) and rows per batch. */
const BATCHES = positive('batches', opts.batches, 1)
const ROWS = positive('rows', opts.rows, 10)
const WINDOW_S = positive('window', opts.window, QUICK ? 60 : 120)
const ROLLER_EDGE = opts['roller-edge']
if (ROLLER_EDGE !== 'node' && ROLLER_EDGE !== 'workerd') throw new Error(`--roller-edge ${ROLLER_EDGE}: node or workerd`)
const RUNS = envInt('BENCH_RUNS', QUICK ? 1 : 3)
const S3_DELAY_MS = envInt('BENCH_S3_DELAY_MS', 20)
const PG_DELAY_MS = envInt('BENCH_PG_DELAY_MS', 2)
const TICK_SECONDS = 1
/** Requests in flight while setting up (tables, sinks, sends, objects). */
const SETUP_CONCURRENCY = 16
/** How long a roller may take to finish its rolls under way after SIGTERM. */
const STOP_GRACE_MS = 120_000
const WAREHOUSE = 'bench-sinks'
/** What roller/roll.ts's first roll adds (roller/roll.ts RETENTION_PROPERTIES, INGEST_TS): set at creation, so every roll measured is a steady one. */
const RETENTION_PROPERTIES = { 'write.metadata.delete-after-commit.enabled': 'true', 'write.metadata.previous-versions-max': '5' }
const TABLE_COLUMNS = [...COLUMNS, { name: '__ingest_ts', type: 'timestamptz', doc: 'When lhbox received the row (the batch’s arrival time).' }]

interface OurSide {
  kind: 'ours'
  key: string
  name: string
  rollers: number
  concurrency: number
}
interface PySide {
  kind: 'pyiceberg'
  key: string
  name: string
}
type Side = OurSide | PySide

const ALL_SIDES: Side[] = [
  ...[1, 2, 4].flatMap((rollers) =>
    [1, 8].map(
      (concurrency): OurSide => ({
        kind: 'ours',
        key: `${rollers}x${concurrency}`,
        name: `${rollers} roller${rollers > 1 ? 's' : ''} × c${concurrency}`,
        rollers,
        concurrency,
      }),
    ),
  ),
  { kind: 'pyiceberg', key: 'pyiceberg', name: 'pyiceberg (sequential)' },
]
const SIDES: Side[] = (() => {
  if (!opts.configs) return ALL_SIDES
  const keys = opts.configs.split(',').map((k) => k.trim())
  const unknown = keys.filter((k) => !ALL_SIDES.some((s) => s.key === k))
  if (unknown.length > 0) throw new Error(`--configs: unknown ${unknown.join(', ')} (known: ${ALL_SIDES.map((s) => s.key).join(', ')})`)
  return ALL_SIDES.filter((s) => keys.includes(s.key))
})()

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Runs `fn` over `items`, `concurrency` at a time. */
async function eachLimited<T>(items: T[], concurrency: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const i = next++
      await fn(items[i] as T, i)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker))
}

// ---- the input: the same batches for every side -----------------------------------------------------

interface BatchInput {
  /** Idempotency-Key / batch id within its sink. */
  id: string
  lines: string[]
  rows: number
  ids: bigint
  cents: bigint
}

/** Table i's batches: rowJson rows, ids counted up across every table (the same on every side). */
function batchesOf(i: number): BatchInput[] {
  return Array.from({ length: BATCHES }, (_, j) => {
    const first = (i * BATCHES + j) * ROWS + 1
    const lines = Array.from({ length: ROWS }, (_, k) => rowJson(first + k))
    let ids = 0n
    let cents = 0n
    for (const l of lines) {
      const f = rowFigures(l)
      ids += f.id
      cents += f.cents
    }
    return { id: `b${j}`, lines, rows: lines.length, ids, cents }
  })
}

/** What a table holds after the given batches (none: an empty table, its sums not asked). */
function expectedOf(batches: BatchInput[]): Expected {
  if (batches.length === 0) return { rows: 0, sums: {} }
  const sum = batches.reduce((a, b) => ({ rows: a.rows + b.rows, ids: a.ids + b.ids, cents: a.cents + b.cents }), { rows: 0, ids: 0n, cents: 0n })
  return { rows: sum.rows, sums: { id: sum.ids.toString(), amount: centsText(sum.cents) } }
}

// ---- the world: stack, proxies, the rollers' edge, the warehouse ------------------------------------

interface World {
  bs: BenchStack
  db: pg.Client
  /** The delaying proxy in front of the bucket (requests counted). */
  s3Proxy: Awaited<ReturnType<typeof startFaultProxy>>
  /** The delaying proxy in front of Postgres for the SQL catalog (statements counted). */
  pgProxy: Awaited<ReturnType<typeof startPgProxy>>
  /** Postgres through pgProxy. */
  slowDatabaseUrl: string
  /** The edge whose database is behind a delaying proxy: the rollers' LHBOX_URL. */
  rollerEdgeUrl: string
  warehouseId: string
  /** PyIceberg through the proxies (the baseline) and straight (the read-back). */
  catalogArgs: { proxied: string[]; direct: string[] }
  python: string
}

async function world(b: ReturnType<typeof startBench>): Promise<World> {
  const python = await ensureVenv()
  const bs = await benchStack('bench-sinks', b.cleanup, b.log)
  const { stack } = bs
  const db = new pg.Client(stack.databaseUrl)
  await db.connect()
  b.cleanup.add(() => db.end())
  if (process.env.BENCH_AUTO_EXPLAIN === '1') {
    for (const q of [
      "alter database lhbox set session_preload_libraries = 'auto_explain'",
      "alter database lhbox set auto_explain.log_min_duration = '250ms'",
      'alter database lhbox set auto_explain.log_analyze = on',
      'alter database lhbox set auto_explain.log_nested_statements = on',
      'alter database lhbox set log_lock_waits = on',
      "alter database lhbox set deadlock_timeout = '100ms'",
      "alter database lhbox set log_min_duration_statement = '250ms'",
      'alter system set log_autovacuum_min_duration = 0',
      'select pg_reload_conf()',
    ])
      await db.query(q)
  }

  const s3Proxy = await startFaultProxy(stack.s3.endpoint)
  b.cleanup.add(() => s3Proxy.stop())
  s3Proxy.rule({ path: /^/, action: { delay: S3_DELAY_MS } })
  const pgUrl = new URL(stack.databaseUrl)
  const pgProxy = await startPgProxy({ host: pgUrl.hostname, port: Number(pgUrl.port) }, { delayMs: PG_DELAY_MS, record: true })
  b.cleanup.add(() => pgProxy.stop())
  const slow = new URL(stack.databaseUrl)
  slow.port = String(pgProxy.port)

  // The rollers' edge: the stack's Worker again, its database (the neon driver's WebSocket bridge,
  // standing in for Neon's proxy next to the database) behind the same delay.
  const bridgeProxy = await startPgProxy({ host: '127.0.0.1', port: stack.ports.bridge }, { delayMs: PG_DELAY_MS })
  b.cleanup.add(() => bridgeProxy.stop())
  const [port, inspector] = [await freePort(), await freePort()]
  const edge =
    ROLLER_EDGE === 'workerd'
      ? await startWrangler(join(stack.dir, 'roller-edge'), port, inspector, { ...stack.edgeVars, NEON_WS_PROXY: `127.0.0.1:${bridgeProxy.port}` })
      : await startNodeEdgeProcess(join(stack.dir, 'roller-edge.log'), port, { ...stack.edgeVars, DATABASE_URL: slow.toString() })
  b.cleanup.add(() => edge.stop())

  // maintenance off: a roller's first sweep (a minute after it starts) would go over every table in the window.
  const wh = await api(stack, bs.apiKey, 'POST', '/v1/warehouses', {
    name: WAREHOUSE,
    catalog: { type: 'sql' },
    bucket: stack.s3.bucket,
    endpoint: s3Proxy.url,
    region: stack.s3.region,
    maintenance: 'off',
  })
  b.log(
    `bucket behind ${s3Proxy.url} (+${S3_DELAY_MS} ms a request); catalog behind 127.0.0.1:${pgProxy.port} and the rollers' edge (${ROLLER_EDGE}) http://127.0.0.1:${port} behind ${ROLLER_EDGE === 'node' ? `127.0.0.1:${pgProxy.port}` : `127.0.0.1:${bridgeProxy.port}`} (+${PG_DELAY_MS} ms a round trip); warehouse ${wh.id}`,
  )
  return {
    bs,
    db,
    s3Proxy,
    pgProxy,
    slowDatabaseUrl: slow.toString(),
    rollerEdgeUrl: `http://127.0.0.1:${port}`,
    warehouseId: wh.id,
    catalogArgs: {
      proxied: sqlCatalogArgs({ databaseUrl: slow.toString(), catalogName: wh.id, s3: { ...stack.s3, endpoint: s3Proxy.url } }),
      direct: sqlCatalogArgs({ databaseUrl: stack.databaseUrl, catalogName: wh.id, s3: stack.s3 }),
    },
    python,
  }
}

// ---- set-up -----------------------------------------------------------------------------------------

interface Prepared {
  namespace: string
  tables: string[]
  /** ours: the sinks, in table order, and when each batch's 202 came (epoch ms). */
  sinks?: Array<{ id: string; sendKey: string; sent: number[] }>
  /** pyiceberg: each table's object keys. */
  objects?: string[][]
  setupSeconds: number
}

async function prepare(w: World, side: Side, run: number, input: BatchInput[][]): Promise<Prepared> {
  const { stack, apiKey } = w.bs
  const t0 = Date.now()
  const namespace = `r${run}_${side.key.replace(/\W/g, '_')}`
  const tables = Array.from({ length: SINKS }, (_, i) => `${namespace}.t${String(i).padStart(5, '0')}`)
  await eachLimited(tables, SETUP_CONCURRENCY, async (table) => {
    await api(stack, apiKey, 'POST', '/v1/tables', {
      warehouse: WAREHOUSE,
      table,
      columns: TABLE_COLUMNS,
      properties: RETENTION_PROPERTIES,
      doc: 'bench:sinks',
    })
  })
  if (side.kind === 'pyiceberg') {
    const s3 = new S3Client(stack.s3)
    const objects = tables.map((_, i) => input[i]!.map((batch) => `_bench/sinks/${namespace}/t${String(i).padStart(5, '0')}-${batch.id}.ndjson`))
    const jobs = objects.flatMap((keys, i) => keys.map((key, j) => ({ key, batch: input[i]![j]! })))
    await eachLimited(jobs, SETUP_CONCURRENCY, async ({ key, batch }) => {
      const received = new Date().toISOString().replace('Z', '000Z')
      await s3.put(key, `${batch.lines.join('\n')}\n`, { contentType: 'application/x-ndjson', metadata: { received, rows: String(batch.rows) } })
    })
    return { namespace, tables, objects, setupSeconds: (Date.now() - t0) / 1000 }
  }
  const sinks: NonNullable<Prepared['sinks']> = new Array(SINKS)
  await eachLimited(tables, SETUP_CONCURRENCY, async (table, i) => {
    const made = await api(stack, apiKey, 'POST', '/v1/sinks', { warehouse: WAREHOUSE, table, name: table.replace(/\W/g, '_') })
    sinks[i] = { id: made.id, sendKey: made.send_key, sent: [] }
  })
  const sends = sinks.flatMap((sink, i) => input[i]!.map((batch, j) => ({ sink, batch, j })))
  await eachLimited(sends, SETUP_CONCURRENCY, async ({ sink, batch, j }) => {
    const res = await fetch(`${stack.apiUrl}/v1/sinks/${sink.id}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sink.sendKey}`, 'content-type': 'application/json', 'idempotency-key': batch.id },
      body: `[${batch.lines.join(',')}]`,
    })
    const text = await res.text()
    if (res.status !== 202) throw new Error(`send ${sink.id}/${batch.id}: ${res.status} ${text}`)
    sink.sent[j] = Date.now()
  })
  return { namespace, tables, sinks, setupSeconds: (Date.now() - t0) / 1000 }
}

// ---- the rollers: service processes, their peak RSS and CPU from /proc -------------------------------

interface RollerProc {
  id: string
  proc: ChildProcess
  logFile: string
  exited: Promise<void>
}

function startRollerProc(w: World, id: string, concurrency: number, logFile: string): RollerProc {
  const { stack } = w.bs
  const { cmd, args } = rollerCommand(['run'])
  // --cpu-prof DIR: each roller writes a V8 CPU profile there when it stops (for chrome://inspect or speedscope).
  if (opts['cpu-prof']) args.unshift('--cpu-prof', '--cpu-prof-dir', opts['cpu-prof'])
  const out = openSync(logFile, 'a')
  let proc: ChildProcess
  try {
    proc = spawn(cmd, args, {
      stdio: ['ignore', out, out],
      env: {
        ...process.env,
        LHBOX_URL: w.rollerEdgeUrl,
        LHBOX_BOOTSTRAP_SECRET: stack.bootstrapSecret,
        DATABASE_URL: w.slowDatabaseUrl,
        S3_ACCESS_KEY_ID: stack.s3.accessKeyId,
        S3_SECRET_ACCESS_KEY: stack.s3.secretAccessKey,
        LHBOX_ROLLER_ID: id,
        LHBOX_ROLLER_CONCURRENCY: String(concurrency),
        LHBOX_ROLLER_TICK_SECONDS: String(TICK_SECONDS),
        LHBOX_ROLLER_WAREHOUSES: w.warehouseId,
        LHBOX_ROLLER_PORT: '0',
        LHBOX_MEASURE_SECONDS: '0',
      },
    })
  } finally {
    closeSync(out)
  }
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
  return { id, proc, logFile, exited }
}

const running = (p: RollerProc) => p.proc.exitCode === null && p.proc.signalCode === null

function logTail(p: RollerProc, chars = 3000): string {
  return existsSync(p.logFile) ? readFileSync(p.logFile, 'utf8').slice(-chars) : '(no log)'
}

/** Peak resident set of a live process so far, KiB (/proc/<pid>/status VmHWM). */
function peakRssKib(pid: number): number {
  const m = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  if (!m) throw new Error(`no VmHWM in /proc/${pid}/status`)
  return Number(m[1])
}

const CLOCK_TICKS = 100
/** User + system CPU seconds of a live process and its threads (/proc/<pid>/stat). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
}

/** The machine's CPU counters (/proc/stat): busy and total jiffies, for its busy share over a window. */
function machineCpu(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number)
  const total = f.reduce((a, b) => a + b, 0)
  return { busy: total - (f[3] ?? 0) - (f[4] ?? 0), total }
}

async function stopRollers(procs: RollerProc[]): Promise<string[]> {
  const problems: string[] = []
  for (const p of procs) if (running(p)) p.proc.kill('SIGTERM')
  await Promise.all(
    procs.map(async (p) => {
      const timer = setTimeout(() => {
        problems.push(`${p.id} still rolling ${STOP_GRACE_MS / 1000} s after SIGTERM: SIGKILLed`)
        p.proc.kill('SIGKILL')
      }, STOP_GRACE_MS)
      await p.exited
      clearTimeout(timer)
    }),
  )
  return problems
}

/** What the rollers' logs say: their `rolled` lines (and the `requests` counts those carry), and errors. */
function rollerLogs(procs: RollerProc[]): { rolls: number; requests: Record<string, number>; withRequests: number; errors: string[] } {
  const out = { rolls: 0, requests: {} as Record<string, number>, withRequests: 0, errors: [] as string[] }
  for (const p of procs) {
    for (const line of readFileSync(p.logFile, 'utf8').split('\n')) {
      if (!line.startsWith('{')) continue
      let entry: Record<string, unknown>
      try {
        entry = JSON.parse(line)
      } catch {
        continue
      }
      if (entry.level === 'error') out.errors.push(`${p.id}: ${entry.msg} ${entry.error ?? ''}`.trim())
      if (entry.msg !== 'rolled') continue
      out.rolls++
      if (entry.requests && typeof entry.requests === 'object') {
        out.withRequests++
        for (const [k, v] of Object.entries(entry.requests as Record<string, unknown>)) if (typeof v === 'number') out.requests[k] = (out.requests[k] ?? 0) + v
      }
    }
  }
  return out
}

// ---- one side, one run --------------------------------------------------------------------------------

interface SideRun {
  side: Side
  sinks: number
  /** Sinks whose every batch was committed by the window's end. */
  committed: number
  /** Seconds from t0 to the last commit, when every sink was committed within the window. */
  drainedSeconds: number | null
  rollsPerMinute: number
  /** Per batch committed by the window's end: seconds from t0 (the sinks fell due) and from its 202. */
  freshDue: number[]
  fresh202: number[]
  /** Peak RSS of each roller process (the one Python process), MiB. */
  rssMiB: number[]
  /** The rollers' CPU seconds per roll in the window; the machine's busy share in it. */
  cpuPerRoll: number | null
  busy: number | null
  /** CPU of this process (the proxies, the ledger polls) in the window, in cores. */
  benchCores: number
  /** Per roll (per table for PyIceberg): requests through the bucket proxy, SQL statements through the catalog proxy. */
  s3PerRoll: number
  sqlPerRoll: number
  /** ours: `rolled` log lines and their summed `requests` (when the roller writes them). */
  rolls: number | null
  requests: Record<string, number> | null
  notes: string[]
  /** What the read-back must find in each table. */
  checks: Array<{ side: string; table: string; expected: Expected }>
}

function ratePerMinute(committed: number, drained: number | null, windowS: number): number {
  return committed / ((drained ?? windowS) / 60)
}

async function runOurs(w: World, side: OurSide, run: number, prep: Prepared, input: BatchInput[][]): Promise<SideRun> {
  const sinks = prep.sinks!
  const ids = sinks.map((s) => s.id)
  const procs = Array.from({ length: side.rollers }, (_, i) => {
    const id = `bench-r${run}-${side.key}-${i + 1}`
    return startRollerProc(w, id, side.concurrency, join(w.bs.stack.dir, `${id}.log`))
  })
  try {
    // Each service up (its scan threads warm, a first tick with nothing due) before the sinks fall due.
    const ready = Date.now() + 60_000
    for (const p of procs) {
      while (!(existsSync(p.logFile) && readFileSync(p.logFile, 'utf8').includes('"msg":"roller running"'))) {
        if (!running(p)) throw new Error(`${p.id} ended before it ran:\n${logTail(p)}`)
        if (Date.now() > ready) throw new Error(`${p.id} not running after 60 s:\n${logTail(p)}`)
        await sleep(100)
      }
    }
    await sleep(2000 + TICK_SECONDS * 1000)

    w.s3Proxy.requests.splice(0)
    w.pgProxy.clear()
    const cpu0 = procs.map((p) => cpuSeconds(p.proc.pid!))
    const machine0 = machineCpu()
    const self0 = process.cpuUsage()
    const t0 = Date.now()
    await w.db.query(`update batches set received_at = received_at - interval '1 hour' where sink_id = any($1) and state = 'pending'`, [ids])
    const total = SINKS * BATCHES
    const limit = t0 + WINDOW_S * 1000
    for (;;) {
      const { rows } = await w.db.query<{ n: number }>(`select count(*)::int as n from batches where sink_id = any($1) and state = 'committed'`, [ids])
      if (rows[0]!.n >= total || Date.now() >= limit) break
      const dead = procs.find((p) => !running(p))
      if (dead) throw new Error(`${dead.id} ended in the window (${dead.proc.exitCode ?? dead.proc.signalCode}):\n${logTail(dead)}`)
      await sleep(200)
    }
    const tEnd = Date.now()
    const rss = procs.map((p) => peakRssKib(p.proc.pid!) / 1024)
    const cpu = procs.reduce((a, p, i) => a + cpuSeconds(p.proc.pid!) - cpu0[i]!, 0)
    const machine1 = machineCpu()
    const self = process.cpuUsage(self0)
    const notes = await stopRollers(procs)
    const s3Requests = w.s3Proxy.requests.length
    const sqlStatements = w.pgProxy.statements.length

    const { rows } = await w.db.query<{ sink_id: string; batch_id: string; state: string; at: number | null }>(
      `select sink_id, batch_id, state, (extract(epoch from committed_at) * 1000)::float8 as at from batches where sink_id = any($1)`,
      [ids],
    )
    const bySink = new Map<string, Map<string, { state: string; at: number | null }>>()
    for (const r of rows) {
      if (!bySink.has(r.sink_id)) bySink.set(r.sink_id, new Map())
      bySink.get(r.sink_id)!.set(r.batch_id, { state: r.state, at: r.at })
    }
    const freshDue: number[] = []
    const fresh202: number[] = []
    const checks: SideRun['checks'] = []
    let committed = 0
    let committedAfter = 0
    let last = 0
    sinks.forEach((sink, i) => {
      const ledger = bySink.get(sink.id) ?? new Map()
      const batches = input[i]!
      const done = batches.filter((b) => ledger.get(b.id)?.state === 'committed')
      checks.push({ side: side.name, table: prep.tables[i]!, expected: expectedOf(done) })
      if (done.length === batches.length) committedAfter++
      let inWindow = 0
      batches.forEach((b, j) => {
        const at = ledger.get(b.id)?.at
        if (ledger.get(b.id)?.state !== 'committed' || at === null || at === undefined || at > tEnd) return
        inWindow++
        last = Math.max(last, at)
        freshDue.push((at - t0) / 1000)
        fresh202.push((at - sink.sent[j]!) / 1000)
      })
      if (inWindow === batches.length) committed++
    })
    const drainedSeconds = committed === SINKS ? (last - t0) / 1000 : null
    if (committedAfter > committed) notes.push(`${committedAfter - committed} more sink(s) committed by rolls under way at the window's end (not counted)`)
    const logs = rollerLogs(procs)
    if (logs.errors.length > 0) notes.push(`${logs.errors.length} error line(s) in the rollers' logs, first: ${logs.errors[0]!.slice(0, 300)}`)
    const rolls = Math.max(logs.rolls, 1)
    return {
      side,
      sinks: SINKS,
      committed,
      drainedSeconds,
      rollsPerMinute: ratePerMinute(committed, drainedSeconds, (tEnd - t0) / 1000),
      freshDue,
      fresh202,
      rssMiB: rss,
      cpuPerRoll: logs.rolls > 0 ? cpu / logs.rolls : null,
      busy: (machine1.busy - machine0.busy) / (machine1.total - machine0.total),
      benchCores: (self.user + self.system) / 1000 / (tEnd - t0),
      s3PerRoll: s3Requests / rolls,
      sqlPerRoll: sqlStatements / rolls,
      rolls: logs.rolls,
      requests: logs.withRequests > 0 ? Object.fromEntries(Object.entries(logs.requests).map(([k, v]) => [k, v / logs.withRequests])) : null,
      notes,
      checks,
    }
  } finally {
    for (const p of procs) if (running(p)) p.proc.kill('SIGKILL')
    // The side's sinks are done with: deleted in the ledger, so the next side's rollers neither lease nor view them.
    await w.db.query(`update sinks set state = 'deleted', deleted_at = now(), lease_owner = null, lease_expires_at = null where id = any($1)`, [ids])
    await w.db.query(`update batches set state = 'discarded' where sink_id = any($1) and state in ('receiving', 'pending')`, [ids])
  }
}

async function runPyIceberg(w: World, side: PySide, prep: Prepared, input: BatchInput[][]): Promise<SideRun> {
  const jobsFile = join(w.bs.stack.dir, `${prep.namespace}.jobs`)
  writeFileSync(jobsFile, prep.tables.map((t, i) => `${t} ${prep.objects![i]!.join(' ')}\n`).join(''))
  w.s3Proxy.requests.splice(0)
  w.pgProxy.clear()
  const machine0 = machineCpu()
  const self0 = process.cpuUsage()
  const t0 = Date.now()
  const m = await measured(
    w.python,
    [join(BENCH_DIR, 'pyiceberg_sinks.py'), ...w.catalogArgs.proxied, '--jobs', jobsFile, '--bucket', w.bs.stack.s3.bucket, '--seconds', String(WINDOW_S)],
    { env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1' }, timeoutMs: (WINDOW_S + 600) * 1000, what: 'pyiceberg_sinks.py' },
  )
  const machine1 = machineCpu()
  const self = process.cpuUsage(self0)
  const benchCores = (self.user + self.system) / 1000 / (Date.now() - t0)
  rmSync(jobsFile, { force: true })
  const out = lastJson(m.stdout, 'pyiceberg_sinks.py')
  const started = num(out.started_ms)
  const appended = new Map<string, number>((out.appended as unknown[][]).map((a) => [String(a[0]), num(a[1])]))
  const freshDue = [...appended.values()].map((at) => (at - started) / 1000)
  const last = Math.max(started, ...appended.values())
  const drainedSeconds = appended.size === SINKS ? (last - started) / 1000 : null
  const tables = Math.max(appended.size, 1)
  return {
    side,
    sinks: SINKS,
    committed: appended.size,
    drainedSeconds,
    rollsPerMinute: ratePerMinute(appended.size, drainedSeconds, num(out.seconds.work)),
    freshDue: freshDue.flatMap((s) => Array(BATCHES).fill(s)),
    fresh202: [],
    rssMiB: [m.maxRssKib / 1024],
    cpuPerRoll: null,
    busy: (machine1.busy - machine0.busy) / (machine1.total - machine0.total),
    benchCores,
    s3PerRoll: w.s3Proxy.requests.length / tables,
    sqlPerRoll: w.pgProxy.statements.length / tables,
    rolls: null,
    requests: null,
    notes: [
      `python process ${m.wallSeconds.toFixed(1)} s (imports ${num(out.seconds.import).toFixed(1)} s, catalog ${num(out.seconds.catalog).toFixed(2)} s)`,
      ...(num(out.stamped_now) > 0
        ? [`__ingest_ts set to the append's time for ${num(out.stamped_now)} object(s): pyarrow did not show x-amz-meta-received`]
        : []),
    ],
    checks: prep.tables.map((table, i) => ({ side: side.name, table, expected: expectedOf(appended.has(table) ? input[i]! : []) })),
  }
}

// ---- figures -------------------------------------------------------------------------------------------

function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return Number.NaN
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!
}

const secs = (x: number | null) => (x === null || Number.isNaN(x) ? '—' : `${x.toFixed(1)} s`)

function runLine(r: SideRun): string {
  const drained =
    r.drainedSeconds === null ? `${fmt(r.committed)}/${fmt(r.sinks)} committed in ${WINDOW_S} s` : `all ${fmt(r.sinks)} in ${r.drainedSeconds.toFixed(1)} s`
  const fresh = `fresh from due p50 ${secs(quantile(r.freshDue, 0.5))} p99 ${secs(quantile(r.freshDue, 0.99))}${
    r.fresh202.length ? `, from 202 p50 ${secs(quantile(r.fresh202, 0.5))} p99 ${secs(quantile(r.fresh202, 0.99))}` : ''
  }`
  const rss = `peak RSS ${r.rssMiB.map((m) => fmt(m)).join('/')} MiB`
  const extra = [
    r.cpuPerRoll === null ? null : `${(r.cpuPerRoll * 1000).toFixed(0)} CPU-ms/roll`,
    r.busy === null ? null : `machine ${(r.busy * 100).toFixed(0)} % busy (the proxies ${(r.benchCores * 100).toFixed(0)} % of a core)`,
    `${r.s3PerRoll.toFixed(1)} S3 req + ${r.sqlPerRoll.toFixed(1)} SQL/${r.side.kind === 'ours' ? 'roll' : 'table'}`,
    r.requests
      ? `rolled.requests/roll ${Object.entries(r.requests)
          .map(([k, v]) => `${k} ${v.toFixed(1)}`)
          .join(', ')}`
      : null,
  ].filter(Boolean)
  return `${r.side.name}: ${fmt(r.rollsPerMinute)} rolls/min (${drained}); ${fresh}; ${rss}; ${extra.join('; ')}${r.notes.length ? ` [${r.notes.join('; ')}]` : ''}`
}

function printSummary(b: ReturnType<typeof startBench>, results: Map<string, SideRun[]>): void {
  const med = (key: string, f: (r: SideRun) => number | null): number | null => {
    const xs = (results.get(key) ?? []).map(f).filter((x): x is number => x !== null && !Number.isNaN(x))
    return xs.length ? median(xs) : null
  }
  const rate = (key: string) => med(key, (r) => r.rollsPerMinute)
  console.log('')
  console.log(
    `bench:sinks — ${fmt(SINKS)} sinks, each with ${BATCHES} batch${BATCHES > 1 ? 'es' : ''} of ${ROWS} rows waiting; bucket +${S3_DELAY_MS} ms a request, Postgres +${PG_DELAY_MS} ms a round trip (catalog and the rollers' edge); roller tick ${TICK_SECONDS} s; window ${WINDOW_S} s`,
  )
  console.log(
    `medians of ${RUNS} run${RUNS > 1 ? 's' : ''} (fresh tables and sinks each side and run; order reversed every other run); every run read back by PyIceberg: every table exactly as the ledger (ours) or the appends (pyiceberg) say`,
  )
  console.log('')
  const widths = [24, 10, 11, 20, 20, 14, 11, 5, 8, 8]
  const row = (cells: string[]) => `  ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' ')}`
  console.log(
    row(['side', 'rolls/min', 'drained in', 'due→commit p50/p99', '202→commit p50/p99', 'peak RSS/proc', 'CPU-ms/roll', 'busy', 'S3/roll', 'SQL/roll']),
  )
  for (const side of SIDES) {
    const rs = results.get(side.key) ?? []
    if (rs.length === 0) continue
    const m = (f: (r: SideRun) => number | null) => med(side.key, f)
    const drained = rs.every((r) => r.drainedSeconds !== null)
      ? secs(m((r) => r.drainedSeconds))
      : `${rs.filter((r) => r.drainedSeconds !== null).length}/${rs.length} runs`
    const pair = (f: (r: SideRun) => number[]) => {
      const p50 = m((r) => quantile(f(r), 0.5))
      const p99 = m((r) => quantile(f(r), 0.99))
      return p50 === null || p99 === null ? '—' : `${p50.toFixed(1)}/${p99.toFixed(1)} s`
    }
    const cpuMs = m((r) => (r.cpuPerRoll === null ? null : r.cpuPerRoll * 1000))
    const busy = m((r) => r.busy)
    console.log(
      row([
        side.name,
        fmt(m((r) => r.rollsPerMinute) ?? Number.NaN),
        drained,
        pair((r) => r.freshDue),
        pair((r) => r.fresh202),
        `${fmt(m((r) => Math.max(...r.rssMiB)) ?? Number.NaN)} MiB`,
        cpuMs === null ? '—' : fmt(cpuMs),
        busy === null ? '—' : `${fmt(busy * 100)}%`,
        (m((r) => r.s3PerRoll) ?? Number.NaN).toFixed(1),
        (m((r) => r.sqlPerRoll) ?? Number.NaN).toFixed(1),
      ]),
    )
  }
  const requests = SIDES.filter((s) => s.kind === 'ours')
    .flatMap((s) => (results.get(s.key) ?? []).map((r) => r.requests))
    .find((r) => r !== null)
  console.log(
    requests
      ? '  (the rollers’ own counts per roll are in the per-run lines: the `requests` of their `rolled` log lines)'
      : '  (the rollers’ `rolled` log lines carry no `requests` counts yet: S3/roll and SQL/roll are the proxies’ counts, the edge’s not counted)',
  )
  console.log('')
  const ratio = (a: string, bKey: string, label: string, target?: number) => {
    const x = rate(a)
    const y = rate(bKey)
    if (x === null || y === null) return console.log(`  ${label}: not measured (--configs)`)
    const perRun = (results.get(a) ?? []).map((r, i) => {
      const other = results.get(bKey)?.[i]
      return other ? r.rollsPerMinute / other.rollsPerMinute : Number.NaN
    })
    // Met only when every run is over the target, not the median alone: a target met within the noise is not met.
    const verdict =
      target === undefined
        ? ''
        : ` — target ≥ ${target}×: ${perRun.every((q) => q >= target) ? 'met (every run)' : x / y >= target ? 'NOT met (the median is, a run is not)' : 'NOT met'}`
    console.log(`  ${label}: ${(x / y).toFixed(2)}× rolls/min (runs ${perRun.map((q) => q.toFixed(2)).join(', ')})${verdict}`)
  }
  // Adding rollers, twice: at concurrency 8 one roller can keep a 2-core box that also runs the store,
  // Postgres, the edge and the proxies busy (the `busy` column says how busy), so there the box is what
  // is measured; at concurrency 1 each roller waits on its round trips, the box has room, and the pair
  // shows what another roller adds where it gets a core of its own.
  ratio('2x1', '1x1', '2 rollers vs 1 (concurrency 1)', 1.8)
  ratio('4x1', '1x1', '4 rollers vs 1 (concurrency 1)', 3.2)
  ratio('2x8', '1x8', '2 rollers vs 1 (concurrency 8)', 1.8)
  ratio('4x8', '1x8', '4 rollers vs 1 (concurrency 8)', 3.2)
  ratio('1x8', '1x1', 'concurrency 8 vs 1 (1 roller)', 5)
  ratio('1x1', 'pyiceberg', 'ours 1 roller × c1 vs pyiceberg (both one process, one table at a time)')
  ratio('1x8', 'pyiceberg', 'ours 1 roller × c8 vs pyiceberg')
  ratio('2x8', 'pyiceberg', 'ours 2 rollers × c8 vs pyiceberg')
  const two = results.get('2x8') ?? []
  if (two.length === 0) console.log('  target 1,000 sinks committed within 60 s by two rollers: not measured (--configs)')
  else {
    const times = two.map((r) =>
      r.drainedSeconds === null ? `not drained (${fmt(r.committed)}/${fmt(r.sinks)} in ${WINDOW_S} s)` : `${r.drainedSeconds.toFixed(1)} s`,
    )
    const met = two.every((r) => r.drainedSeconds !== null && r.drainedSeconds <= 60)
    const judged = SINKS >= 1000 ? (met ? 'met' : 'NOT met') : `not judged: ${fmt(SINKS)} sinks, not 1,000`
    console.log(
      `  target every one of 1,000 sinks committed within 60 s of falling due by two rollers (c8): ${fmt(SINKS)} sinks drained in ${times.join(', ')} — ${judged}`,
    )
  }
  console.log(
    '  rolls/min = sinks committed / time from t0 (all sinks due at once, the rollers idle and ready) to the last commit, or the window when not drained; fresh = committed_at (ledger) − t0 or − the batch’s 202 (the batches were sent before t0: that wait is in it)',
  )
  console.log(`  load average at the start ${loadText(b.loadStart)}; at the end ${loadText()} — a ratio is only as good as the box is quiet`)
}

// ---- main ------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  // A side: its window, the rollers' start and stop, set-up (~3 requests a sink) and its share of the read-back.
  const perSide = WINDOW_S + 60 + SINKS * (0.1 + 0.05 * BATCHES) + SINKS * 0.1
  const b = startBench('bench:sinks', (15 * 60 + RUNS * SIDES.length * perSide * 1.5) * 1000, RUNS)
  await runBench(b, async () => {
    const w = await world(b)
    const input = Array.from({ length: SINKS }, (_, i) => batchesOf(i))
    b.log(
      `${fmt(SINKS)} sinks × ${BATCHES} batch(es) × ${ROWS} rows; sides ${SIDES.map((s) => s.key).join(', ')}; ${RUNS} run(s); window ${WINDOW_S} s; rollers ${process.env.LHBOX_ROLLER_BUNDLE ? `from ${process.env.LHBOX_ROLLER_BUNDLE}` : 'through tsx'}`,
    )
    const results = new Map<string, SideRun[]>(SIDES.map((s) => [s.key, []]))
    for (let run = 1; run <= RUNS; run++) {
      const order = run % 2 === 1 ? SIDES : [...SIDES].reverse()
      const got: SideRun[] = []
      for (const side of order) {
        const prep = await prepare(w, side, run, input)
        b.log(`run ${run}/${RUNS} ${side.name}: set up in ${prep.setupSeconds.toFixed(1)} s (${prep.namespace}.*); load ${loadText()}`)
        got.push(side.kind === 'ours' ? await runOurs(w, side, run, prep, input) : await runPyIceberg(w, side, prep, input))
        b.log(`run ${run}/${RUNS} ${side.name}: done (its figures print after the run's read-back)`)
      }
      const t = Date.now()
      const checks = got.flatMap((r) => r.checks)
      const lines = await readBack(w.catalogArgs.direct, checks, { timeoutMs: (10 * 60 + checks.length / 5) * 1000 })
      b.log(
        `run ${run}/${RUNS}: read back OK — ${fmt(lines.length)} tables, each exactly as committed (ours: the ledger; pyiceberg: its appends), the rest empty (${((Date.now() - t) / 1000).toFixed(1)} s)`,
      )
      for (const r of got) {
        results.get(r.side.key)!.push(r)
        b.log(`run ${run}/${RUNS} ${runLine(r)}`)
      }
    }
    printSummary(b, results)
  })
}

await main()

/** The Node edge (`npm run edge`) in a process of its own on `port`, its database at `vars.DATABASE_URL`. */
async function startNodeEdgeProcess(logFile: string, port: number, vars: Record<string, string>): Promise<Child> {
  const child = startChild('node edge', process.execPath, ['--import', 'tsx', 'edge/node-main.ts'], logFile, {
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    env: { ...process.env, ...vars, LHBOX_EDGE_PORT: String(port), LHBOX_EDGE_HOST: '127.0.0.1', LHBOX_EDGE_POOL: '16' },
  })
  await waitFor('the Node edge', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 30_000, child)
  return child
}
