// npm run bench:roll — a 64 MiB / 1,000-batch roll end to end, side by side with PyIceberg.
//
// One private stack (Postgres, pgbouncer, ws bridge, s3rver, wrangler dev of the edge) in a temporary
// folder, loopback only. A table {id long, name string, ts timestamptz, amount decimal(18,2)} and a
// sink on it (roll_bytes 64 MiB); one small batch rolled first so the measured roll is a steady one
// (the first roll's __ingest_ts/properties commit is out of the way). Then 1,000 batches totalling
// just under 64 MiB of NDJSON go through the send route, and:
//   - PyIceberg (test/bench/pyiceberg_roll.py, its own process) reads those same intake objects from
//     the bucket, parses them with pyarrow.json and appends them to a second table with the sink
//     table's schema, in one table.append;
//   - `roller/main.ts tick --force --sink <id>` (a child, as test/support/roller.ts runs it) rolls them.
// Each child runs under /usr/bin/time for its peak RSS and wall time. Printed: rows/s of each (whole
// process, and the work alone: the roll's own last_roll.seconds / PyIceberg's time after imports),
// the ratio roller/PyIceberg, and the peak RSS of each. Only the ratio means something: both ran on
// this machine, one after the other.
//
// BENCH_ROLL_PROFILE=1 (or --profile) adds a second round of 1,000 batches rolled under --cpu-prof
// and prints the roller's top functions (self and inclusive time) — profiling slows the roll, so it
// is never the timed run. LHBOX_BENCH_KEEP=1 keeps the state folder (and the .cpuprofile).
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import os from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { rollerCommand } from '../../dev/roller.ts'
import { ensureVenv, sqlCatalogArgs } from '../support/python.ts'
import { api, benchStack, Cleanup, deadline, fmt, rowJson, tableAndSink, type BenchStack } from './common.ts'

const MiB = 1024 * 1024
const ROLL_BYTES = 64 * MiB
const BATCHES = 1000
/** Just under roll_bytes so the roller takes all 1,000 batches in one roll. */
const TOTAL_TARGET = ROLL_BYTES - 256 * 1024
const SEND_CONCURRENCY = 4
const TIME = '/usr/bin/time'
const PROFILE = process.env.BENCH_ROLL_PROFILE === '1' || process.argv.includes('--profile')

const root = fileURLToPath(new URL('../..', import.meta.url))
const log = (line: string) => console.log(`[bench:roll] ${line}`)

interface Measured {
  code: number | null
  stdout: string
  stderr: string
  wallSeconds: number
  /** Peak RSS in KiB, from /usr/bin/time (null when it is not installed). */
  maxRssKib: number | null
}

/** Runs a child under /usr/bin/time -f '%M %e' (peak RSS KiB, elapsed s). */
function measured(cmd: string, args: string[], env: NodeJS.ProcessEnv, timeFile: string, timeoutMs: number): Promise<Measured> {
  const timed = existsSync(TIME)
  const [c, a] = timed ? [TIME, ['-f', '%M %e', '-o', timeFile, cmd, ...args]] : [cmd, args]
  const started = process.hrtime.bigint()
  return new Promise((resolve, reject) => {
    const child = spawn(c, a, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', reject)
    child.on('exit', (code) => {
      clearTimeout(timer)
      const wallSeconds = Number(process.hrtime.bigint() - started) / 1e9
      let maxRssKib: number | null = null
      if (timed && existsSync(timeFile)) {
        const last = readFileSync(timeFile, 'utf8').trim().split('\n').at(-1) ?? ''
        const [rss] = last.split(' ')
        if (/^\d+$/.test(rss)) maxRssKib = Number(rss)
      }
      resolve({ code, stdout, stderr, wallSeconds, maxRssKib })
    })
  })
}

/** 1,000 batches of producer rows, just under 64 MiB as NDJSON in total. */
function* batches(firstId: number): Generator<{ body: string; rows: number; ndjsonBytes: number }> {
  const perBatch = Math.floor(TOTAL_TARGET / BATCHES)
  let id = firstId
  for (let b = 0; b < BATCHES; b++) {
    const lines: string[] = []
    let bytes = 0
    for (;;) {
      const line = rowJson(id)
      if (bytes + line.length + 1 > perBatch) break
      lines.push(line)
      bytes += line.length + 1
      id++
    }
    yield { body: `[${lines.join(',')}]`, rows: lines.length, ndjsonBytes: bytes }
  }
}

async function sendBatch(b: BenchStack, sink: { id: string; sendKey: string }, batchId: string, body: string): Promise<void> {
  const res = await fetch(`${b.stack.apiUrl}/v1/sinks/${sink.id}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${sink.sendKey}`, 'content-type': 'application/json', 'idempotency-key': batchId },
    body,
  })
  const text = await res.text()
  if (res.status !== 202) throw new Error(`send ${batchId}: ${res.status} ${text}`)
}

/** Sends the 1,000 batches, a few at a time; answers the rows and NDJSON bytes sent. */
async function sendAll(b: BenchStack, sink: { id: string; sendKey: string }, prefix: string, firstId: number): Promise<{ rows: number; bytes: number; seconds: number }> {
  const t0 = Date.now()
  const it = batches(firstId)
  let rows = 0
  let bytes = 0
  let n = 0
  const worker = async () => {
    for (let next = it.next(); !next.done; next = it.next()) {
      const i = n++
      rows += next.value.rows
      bytes += next.value.ndjsonBytes
      await sendBatch(b, sink, `${prefix}-${String(i).padStart(4, '0')}`, next.value.body)
    }
  }
  await Promise.all(Array.from({ length: SEND_CONCURRENCY }, worker))
  return { rows, bytes, seconds: (Date.now() - t0) / 1000 }
}

function rollerEnv(b: BenchStack): NodeJS.ProcessEnv {
  return {
    ...process.env,
    LHBOX_URL: b.stack.apiUrl,
    LHBOX_BOOTSTRAP_SECRET: b.stack.bootstrapSecret,
    DATABASE_URL: b.stack.databaseUrl,
    S3_ACCESS_KEY_ID: b.stack.s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: b.stack.s3.secretAccessKey,
    LHBOX_ROLLER_ID: `bench-${process.pid}`,
  }
}

interface RollerRun extends Measured {
  rolled: { batches: number; rows: number; rejected_rows: number } | null
}

async function rollerTick(b: BenchStack, sinkId: string, timeFile: string, nodeFlags: string[] = []): Promise<RollerRun> {
  const { cmd, args } = rollerCommand(['tick', '--force', '--sink', sinkId])
  const run = await measured(cmd, [...nodeFlags, ...args], rollerEnv(b), timeFile, 10 * 60_000)
  if (run.code !== 0) throw new Error(`roller tick exited ${run.code}:\n${run.stdout.slice(-4000)}\n${run.stderr.slice(-4000)}`)
  const logs = run.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, any>)
  const rolled = logs.find((l) => l.msg === 'rolled') ?? null
  return { ...run, rolled: rolled && { batches: rolled.batches, rows: rolled.rows, rejected_rows: rolled.rejected_rows } }
}

// ---- the CPU profile ---------------------------------------------------------------------------------

/** The roll's step functions in roller/roll.ts, in order. */
const STEPS = ['reloadTable', 'reestablishInvariant', 'applyFirstRollChanges', 'readPendingBatches', 'validateRows', 'writeAndCommit', 'finishRoll']

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}

function summarizeProfile(path: string): string[] {
  const prof = JSON.parse(readFileSync(path, 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }
  const byId = new Map(prof.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const short = (url: string) => {
    if (!url) return ''
    const p = url.startsWith('file://') ? fileURLToPath(url) : url
    const r = relative(root, p)
    return r.startsWith('node_modules/') ? r.replace(/^node_modules\/((@[^/]+\/)?[^/]+)\/.*$/, '$1 (dep)') : r.startsWith('..') ? p : r
  }
  // tsx's transpiled modules report line 0 for everything: the file name alone then.
  const keyOf = (n: ProfileNode) => `${n.callFrame.functionName || '(anonymous)'}  ${short(n.callFrame.url)}${n.callFrame.lineNumber > 0 ? `:${n.callFrame.lineNumber + 1}` : ''}`
  const self = new Map<string, number>()
  const inclusive = new Map<string, number>()
  const byFile = new Map<string, number>()
  let total = 0
  // The steps' wall-clock windows: when each step function is first seen on a sampled stack (the
  // steps run one after the other; time awaiting I/O inside a step falls in its window).
  const firstSeen = new Map<string, number>()
  let lastRollSeen = 0
  let at = prof.startTime
  prof.samples.forEach((id, i) => {
    const dt = prof.timeDeltas[i] ?? 0
    const node = byId.get(id)!
    total += dt
    at += dt
    for (let n: ProfileNode | undefined = node; n; n = byId.get(parent.get(n.id) ?? -1)) {
      const fn = n.callFrame.functionName
      if (!n.callFrame.url.includes('roller/roll.ts')) continue
      if (STEPS.includes(fn) && !firstSeen.has(fn)) firstSeen.set(fn, at)
      if (STEPS.includes(fn) || fn === 'roll') lastRollSeen = at
    }
    self.set(keyOf(node), (self.get(keyOf(node)) ?? 0) + dt)
    const file = short(node.callFrame.url) || node.callFrame.functionName
    byFile.set(file, (byFile.get(file) ?? 0) + dt)
    const seen = new Set<string>()
    for (let n: ProfileNode | undefined = node; n; n = byId.get(parent.get(n.id) ?? -1)) {
      const k = keyOf(n)
      if (seen.has(k)) continue
      seen.add(k)
      inclusive.set(k, (inclusive.get(k) ?? 0) + dt)
    }
  })
  const pct = (us: number) => `${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1e6).toFixed(2).padStart(6)} s`
  const top = (m: Map<string, number>, n: number, filter: (k: string) => boolean = () => true) =>
    [...m].filter(([k]) => filter(k)).sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `    ${pct(v)}  ${k}`)
  const marks = [['start-up (modules, config, lease)', prof.startTime] as const, ...STEPS.filter((s) => firstSeen.has(s)).map((s) => [s, firstSeen.get(s)!] as const), ['after the roll (report logged, exit)', lastRollSeen] as const]
  const timeline = marks.map(([name, t], i) => {
    const end = i + 1 < marks.length ? marks[i + 1][1] : prof.endTime
    return `    ${((end - t) / 1e6).toFixed(2).padStart(6)} s  ${name}`
  })
  return [
    `  profile: ${(total / 1e6).toFixed(2)} s sampled (${path})`,
    '  wall time by step (windows between the steps’ first samples):',
    ...timeline,
    '  top self time:',
    ...top(self, 15),
    '  self time by file:',
    ...top(byFile, 10),
    '  inclusive time, the roll and the project code it calls:',
    ...top(inclusive, 20, (k) => /\s(roller|iceberg)\//.test(k)),
  ]
}

// ---- main -----------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const loadStart = os.loadavg()[0]
  const cleanup = new Cleanup()
  deadline(cleanup, (PROFILE ? 30 : 20) * 60_000, 'bench:roll')
  try {
    const python = await ensureVenv()
    const b = await benchStack('bench-roll', cleanup, log)
    const dir = b.stack.dir
    const sink = await tableAndSink(b, 'bench.roll_roller', { roll_bytes: ROLL_BYTES })
    const catalog = sqlCatalogArgs({ databaseUrl: b.stack.databaseUrl, catalogName: b.warehouseId, s3: b.stack.s3 })

    // A first small roll: the sink's first-roll commit (__ingest_ts, properties) is not measured.
    await sendBatch(b, sink, 'first', `[${rowJson(0)}]`)
    await rollerTick(b, sink.id, join(dir, 'time-first.txt'))

    const sent = await sendAll(b, sink, 'roll', 1)
    const view = await api(b.stack, b.apiKey, 'GET', `/v1/sinks/${sink.id}`)
    log(`sent ${BATCHES} batches, ${fmt(sent.rows)} rows, ${(sent.bytes / MiB).toFixed(2)} MiB NDJSON in ${sent.seconds.toFixed(1)} s; lag ${view.lag.batches_waiting} batches / ${(view.lag.bytes_waiting / MiB).toFixed(2)} MiB`)

    // PyIceberg first, while the intake holds the batches; then the roller rolls (and deletes) them.
    const py = await measured(
      python,
      [join(root, 'test', 'bench', 'pyiceberg_roll.py'), ...catalog, '--source-table', sink.table, '--table', 'bench.roll_pyiceberg', '--bucket', b.stack.s3.bucket, '--prefix', `_sink/${sink.id}/`],
      { ...process.env, PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1' },
      join(dir, 'time-pyiceberg.txt'),
      10 * 60_000,
    )
    if (py.code !== 0) throw new Error(`pyiceberg_roll.py exited ${py.code}:\n${py.stderr.slice(-4000)}`)
    const pyOut = JSON.parse(py.stdout) as { rows: number; batches: number; bytes: number; seconds: Record<string, number>; max_rss_kib: number; added_records: number; received_from: string }
    log(`pyiceberg: ${fmt(pyOut.rows)} rows from ${pyOut.batches} batches in ${py.wallSeconds.toFixed(2)} s (import ${pyOut.seconds.import.toFixed(2)}, setup ${pyOut.seconds.setup.toFixed(2)}, read+parse ${pyOut.seconds.read.toFixed(2)}, append ${pyOut.seconds.append.toFixed(2)}); __ingest_ts from ${pyOut.received_from}`)

    const roller = await rollerTick(b, sink.id, join(dir, 'time-roller.txt'))
    const after = await api(b.stack, b.apiKey, 'GET', `/v1/sinks/${sink.id}`)
    const rollSeconds = Number(after.last_roll?.seconds)
    log(`roller: ${JSON.stringify(roller.rolled)} in ${roller.wallSeconds.toFixed(2)} s (the roll itself ${rollSeconds.toFixed(2)} s); lag after ${after.lag.batches_waiting} batches`)
    if (!roller.rolled || roller.rolled.rows !== sent.rows || roller.rolled.batches !== BATCHES) {
      throw new Error(`the roller rolled ${JSON.stringify(roller.rolled)}, expected ${BATCHES} batches / ${sent.rows} rows`)
    }
    if (pyOut.rows !== sent.rows || pyOut.added_records !== sent.rows) throw new Error(`PyIceberg appended ${pyOut.rows} rows (${pyOut.added_records} in its snapshot), expected ${sent.rows}`)

    let profileLines: string[] = []
    if (PROFILE) {
      const profDir = join(dir, 'cpu-prof')
      mkdirSync(profDir, { recursive: true })
      await sendAll(b, sink, 'prof', 10_000_000)
      const profiled = await rollerTick(b, sink.id, join(dir, 'time-profiled.txt'), ['--cpu-prof', '--cpu-prof-dir', profDir])
      const file = readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(profDir, f))[0]
      profileLines = [`  profiled roll: ${profiled.wallSeconds.toFixed(2)} s wall, peak RSS ${profiled.maxRssKib === null ? 'n/a' : `${(profiled.maxRssKib / 1024).toFixed(0)} MiB`}`, ...(file ? summarizeProfile(file) : ['  (no .cpuprofile written)'])]
    }

    const work = { roller: rollSeconds, pyiceberg: pyOut.seconds.total - pyOut.seconds.import }
    const mib = (kib: number | null) => (kib === null ? 'n/a' : `${fmt(kib / 1024)} MiB`)
    const rps = (s: number) => sent.rows / s
    console.log('')
    console.log(`bench:roll — ${BATCHES} batches, ${(sent.bytes / MiB).toFixed(2)} MiB NDJSON, ${fmt(sent.rows)} rows {id long, name string, ts timestamptz, amount decimal(18,2)} + __ingest_ts`)
    console.log('')
    console.log('              process s   rows/s     work s   rows/s     peak RSS')
    console.log(`  roller      ${roller.wallSeconds.toFixed(2).padStart(9)}  ${fmt(rps(roller.wallSeconds)).padStart(8)}  ${work.roller.toFixed(2).padStart(8)}  ${fmt(rps(work.roller)).padStart(8)}  ${mib(roller.maxRssKib).padStart(10)}`)
    console.log(`  pyiceberg   ${py.wallSeconds.toFixed(2).padStart(9)}  ${fmt(rps(py.wallSeconds)).padStart(8)}  ${work.pyiceberg.toFixed(2).padStart(8)}  ${fmt(rps(work.pyiceberg)).padStart(8)}  ${mib(py.maxRssKib).padStart(10)}`)
    console.log(`  ratio roller/pyiceberg rows/s: process ${(py.wallSeconds / roller.wallSeconds).toFixed(2)}, work ${(work.pyiceberg / work.roller).toFixed(2)}; peak RSS ${roller.maxRssKib && py.maxRssKib ? (roller.maxRssKib / py.maxRssKib).toFixed(2) : 'n/a'}`)
    console.log('  (process = the whole child under /usr/bin/time, interpreter start-up included; work = the roll’s own last_roll.seconds / PyIceberg after its imports)')
    console.log(`  load average (1 min) at the start ${loadStart.toFixed(1)}, at the end ${os.loadavg()[0].toFixed(1)}, on ${os.availableParallelism()} cores: a ratio is only as good as the box is quiet`)
    if (!existsSync(TIME)) console.log(`  ${TIME} is missing (apt-get install time): no peak RSS`)
    for (const l of profileLines) console.log(l)
  } finally {
    await cleanup.run()
  }
}

await main()
