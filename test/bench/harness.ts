// The one harness of the side-by-side benchmarks (bench:write, bench:roll, bench:upsert): every bench
// runs ours and a baseline (what a competent PyIceberg user would write) in the same run, and follows
// the same rules, all of them here:
//   - BENCH_RUNS repetitions (default 3; medians need 3 or more), each on fresh tables, the order of
//     the two sides alternated between repetitions (ours first in runs 1, 3, 5, ...);
//   - each side a child process under /usr/bin/time: its peak RSS and its wall time;
//   - after every repetition, before any figure of it is printed, PyIceberg reads back what each side
//     wrote (test/bench/readback.py): the row count and the exact sum of numeric columns (and, where
//     asked, distinct counts) must equal what the generated input says, or the bench fails;
//   - medians of the work time, the process time and the peak RSS of each side, the ratios, and
//     the load average at the start and at the end.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { rollerCommand } from '../../dev/roller.ts'
import { parseLossless } from '../../iceberg/spec/json.ts'
import { S3Client } from '../../iceberg/io/s3.ts'
import { runPython, toExact } from '../support/python.ts'
import { Cleanup, deadline, fmt, type BenchStack } from './common.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
export const BENCH_DIR = fileURLToPath(new URL('.', import.meta.url))
const TIME = '/usr/bin/time'

// ---- settings -------------------------------------------------------------------------------------

/** A positive integer from the environment, or the default; anything else stops the bench. */
export function envInt(name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const n = Number(raw.replace(/_/g, ''))
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name}=${raw}: expected a positive integer`)
  return n
}

/** BENCH_RUNS (default 3). */
const RUNS = envInt('BENCH_RUNS', 3)

// ---- the bench's life: load average, deadline, children -------------------------------------------

export interface Bench {
  name: string
  cleanup: Cleanup
  log: (line: string) => void
  /** os.loadavg() when the bench started. */
  loadStart: number[]
}

const children = new Set<ChildProcess>()

/** Kills every measured child still running (its whole process group). */
function killChildren(): void {
  for (const c of children) {
    try {
      process.kill(-c.pid!, 'SIGKILL')
    } catch {
      /* gone */
    }
  }
}

/**
 * Prints the load average, arms the deadline, and kills the measured children on the way out.
 * `runs`: the repetitions the bench makes (BENCH_RUNS unless it has its own default, e.g. a --quick run).
 */
export function startBench(name: string, deadlineMs: number, runs = RUNS): Bench {
  const log = (line: string) => console.log(`[${name}] ${line}`)
  const loadStart = os.loadavg()
  log(`load average at the start: ${loadText(loadStart)}`)
  if (runs < 3) log(`BENCH_RUNS=${runs}: fewer than 3 runs — the medians below are not a valid figure`)
  if (!existsSync(TIME)) throw new Error(`${TIME} is missing (apt-get install time): it measures each side's peak RSS`)
  const cleanup = new Cleanup()
  cleanup.add(killChildren)
  deadline(cleanup, deadlineMs, name)
  return { name, cleanup, log, loadStart }
}

/** Runs the bench's body; a failure is printed loudly and the process exits non-zero. */
export async function runBench(b: Bench, body: () => Promise<void>): Promise<void> {
  try {
    await body()
  } catch (err) {
    console.error(`\n[${b.name}] FAILED: ${(err as Error).stack ?? err}`)
    process.exitCode = 1
  } finally {
    killChildren()
    await b.cleanup.run()
  }
}

export function loadText(l: number[] = os.loadavg()): string {
  return `${l.map((x) => x.toFixed(2)).join(' ')} (1/5/15 min) on ${os.availableParallelism()} cores`
}

// ---- one measured child -----------------------------------------------------------------------------

export interface Measured {
  stdout: string
  stderr: string
  wallSeconds: number
  /** Peak RSS of the child (and its descendants' largest), KiB, from /usr/bin/time. */
  maxRssKib: number
  /** User + system CPU seconds of the child and its waited-for descendants, from /usr/bin/time. */
  cpuSeconds: number
}

/**
 * Runs `cmd args` under /usr/bin/time -f '%U %S %M' in its own process group (a timeout or the bench's
 * cleanup kills the whole group). Throws with the tail of its output when it exits non-zero.
 */
export function measured(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs: number; what: string }): Promise<Measured> {
  const timeFile = join(os.tmpdir(), `lhbox-bench-time-${crypto.randomUUID()}.txt`)
  const started = process.hrtime.bigint()
  return new Promise((resolve, reject) => {
    const child = spawn(TIME, ['-f', '%U %S %M', '-o', timeFile, cmd, ...args], {
      cwd: ROOT,
      env: opts.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    children.add(child)
    let stdout = ''
    let stderr = ''
    child.stdout!.on('data', (d) => (stdout += d))
    child.stderr!.on('data', (d) => (stderr += d))
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {
        /* gone */
      }
    }, opts.timeoutMs)
    child.on('error', (err) => {
      clearTimeout(timer)
      children.delete(child)
      reject(err)
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      children.delete(child)
      const wallSeconds = Number(process.hrtime.bigint() - started) / 1e9
      const timeText = existsSync(timeFile) ? readFileSync(timeFile, 'utf8') : ''
      rmSync(timeFile, { force: true })
      if (code !== 0) {
        const why = timedOut ? `timed out after ${opts.timeoutMs / 1000} s` : `exited with ${code ?? signal}`
        return reject(new Error(`${opts.what} ${why}:\n${stdout.slice(-3000)}\n${stderr.slice(-3000)}\n${timeText.slice(-500)}`))
      }
      const figures = /^([\d.]+) ([\d.]+) (\d+)$/.exec(timeText.trim().split('\n').at(-1) ?? '')
      if (!figures) return reject(new Error(`${opts.what}: no CPU time and peak RSS from ${TIME} (${JSON.stringify(timeText)})`))
      resolve({ stdout, stderr, wallSeconds, maxRssKib: Number(figures[3]), cpuSeconds: Number(figures[1]) + Number(figures[2]) })
    })
  })
}

/** The last line of a child's stdout that is a JSON object, parsed losslessly (numbers as LosslessNumber). */
export function lastJson(stdout: string, what: string): Record<string, any> {
  const line = stdout
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('{'))
  if (!line) throw new Error(`${what} printed no JSON result:\n${stdout.slice(-2000)}`)
  return parseLossless(line) as Record<string, any>
}

/** JSON log lines of a child (the roller's), parsed losslessly. */
function jsonLines(stdout: string): Array<Record<string, any>> {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => parseLossless(l) as Record<string, any>)
}

/** A LosslessNumber / number / string as a JS number (for timings and counts). */
export const num = (v: unknown): number => Number(String(v))

// ---- the read-back ----------------------------------------------------------------------------------

export interface Expected {
  rows: number
  /** Column -> its exact sum as text: integers as digits, decimals with their scale ("12.30"). */
  sums: Record<string, string>
  /** Column -> number of distinct non-null values. */
  distinct?: Record<string, number>
}

interface ReadBackCheck {
  side: string
  table: string
  expected: Expected
}

/**
 * PyIceberg reads every table back (test/bench/readback.py, one process for all) and each must hold
 * exactly the expected rows and sums; throws, naming every difference, otherwise.
 * Answers one line per table for the log.
 */
export async function readBack(catalogArgs: string[], checks: ReadBackCheck[], opts: { timeoutMs?: number } = {}): Promise<string[]> {
  const sums = [...new Set(checks.flatMap((c) => Object.keys(c.expected.sums)))]
  const distinct = [...new Set(checks.flatMap((c) => Object.keys(c.expected.distinct ?? {})))]
  // Thousands of tables (bench:sinks) go in a file: a command line has a limit.
  const listFile = checks.length > 100 ? join(os.tmpdir(), `lhbox-bench-tables-${crypto.randomUUID()}.txt`) : null
  if (listFile) writeFileSync(listFile, checks.map((c) => `${c.table}\n`).join(''))
  const args = [
    ...catalogArgs,
    ...(listFile ? ['--tables-from', listFile] : checks.flatMap((c) => ['--table', c.table])),
    ...sums.flatMap((s) => ['--sum', s]),
    ...distinct.flatMap((d) => ['--distinct', d]),
  ]
  try {
    const out = toExact(await runPython(join(BENCH_DIR, 'readback.py'), args, undefined, { timeoutMs: opts.timeoutMs ?? 10 * 60_000 })) as ReadBackOutput
    return compareReadBack(out, checks)
  } finally {
    if (listFile) rmSync(listFile, { force: true })
  }
}

/** readback.py's answer, numbers made exact (toExact). */
interface ReadBackOutput {
  tables: Record<string, { rows: bigint; sums: Record<string, string>; distinct: Record<string, bigint>; snapshot_id: bigint | null; data_files: bigint }>
}

/** Each table against what it must hold; throws naming every difference. */
function compareReadBack(out: ReadBackOutput, checks: ReadBackCheck[]): string[] {
  const problems: string[] = []
  const lines: string[] = []
  for (const c of checks) {
    const got = out.tables[c.table]
    if (!got) {
      problems.push(`${c.side} (${c.table}): not read back`)
      continue
    }
    if (got.rows !== BigInt(c.expected.rows)) problems.push(`${c.side} (${c.table}): ${got.rows} rows, expected ${c.expected.rows}`)
    for (const [col, want] of Object.entries(c.expected.sums)) {
      if (got.sums[col] !== want) problems.push(`${c.side} (${c.table}): sum(${col}) = ${got.sums[col]}, expected ${want}`)
    }
    for (const [col, want] of Object.entries(c.expected.distinct ?? {})) {
      if (got.distinct[col] !== BigInt(want)) problems.push(`${c.side} (${c.table}): ${got.distinct[col]} distinct ${col}, expected ${want}`)
    }
    const detail = [
      `${fmt(Number(got.rows))} rows`,
      ...Object.keys(c.expected.sums).map((col) => `sum(${col}) ${got.sums[col]}`),
      ...Object.keys(c.expected.distinct ?? {}).map((col) => `${fmt(Number(got.distinct[col]))} distinct ${col}`),
      `${got.data_files} data file(s)`,
    ]
    lines.push(`${c.side}: ${detail.join(', ')}`)
  }
  if (problems.length > 0) {
    const shown = problems.length > 50 ? [...problems.slice(0, 50), `… and ${problems.length - 50} more`] : problems
    throw new Error(`READ-BACK MISMATCH — what a side wrote is not what it was given; no figure is valid:\n  ${shown.join('\n  ')}`)
  }
  return lines
}

// ---- side by side -----------------------------------------------------------------------------------

interface SideResult {
  /** The work alone (no interpreter start-up, imports or catalog construction), seconds. */
  workSeconds: number
  /** The whole child process, seconds. */
  wallSeconds: number
  maxRssKib: number
  /** Extra per-run figures printed as medians (e.g. file MiB, seconds of a step). */
  extra?: Record<string, number>
}

export interface Side<C> {
  name: string
  run(ctx: C, run: number): Promise<SideResult>
  /** The table this side wrote in this run, and what it must hold; null: the side checked what it wrote itself (no table). */
  check(ctx: C, run: number): ReadBackCheck | null
}

export interface Comparison {
  ours: SideResult[]
  baseline: SideResult[]
  /** More baselines (e.g. DuckDB's COPY), by name. */
  others?: Record<string, SideResult[]>
}

/**
 * RUNS repetitions: prepare (fresh tables, untimed), then the two sides one after the other — ours
 * first in odd runs, the baseline first in even ones — then the read-back of both. A run's figures
 * are logged only after its read-back passed.
 */
export async function sideBySide<C>(
  b: Bench,
  opts: { prepare: (run: number) => Promise<C>; ours: Side<C>; baseline: Side<C>; others?: Side<C>[]; catalogArgs: string[] },
): Promise<Comparison> {
  const others = opts.others ?? []
  const result: Comparison = { ours: [], baseline: [], ...(others.length ? { others: Object.fromEntries(others.map((s) => [s.name, []])) } : {}) }
  const sides = [opts.ours, opts.baseline, ...others]
  for (let run = 1; run <= RUNS; run++) {
    const ctx = await opts.prepare(run)
    // Ours first in odd runs, last in even ones: no side always has the box warm, or cold.
    const order = run % 2 === 1 ? sides : [...sides].reverse()
    const got = new Map<Side<C>, SideResult>()
    for (const side of order) got.set(side, await side.run(ctx, run))
    const checks = sides.map((s) => s.check(ctx, run)).filter((c): c is ReadBackCheck => c !== null)
    const lines = await readBack(opts.catalogArgs, checks)
    result.ours.push(got.get(opts.ours)!)
    result.baseline.push(got.get(opts.baseline)!)
    for (const s of others) result.others![s.name].push(got.get(s)!)
    const one = (s: Side<C>, r: SideResult) =>
      `${s.name} ${r.workSeconds.toFixed(2)} s work / ${r.wallSeconds.toFixed(2)} s process, ${fmt(r.maxRssKib / 1024)} MiB`
    b.log(`run ${run}/${RUNS} (${order[0].name} first): read back OK — ${lines.join('; ')}`)
    b.log(`run ${run}/${RUNS}: ${sides.map((s) => one(s, got.get(s)!)).join('; ')}`)
  }
  return result
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2
}

/**
 * The summary: medians of each side (work s, rows/s, process s, peak RSS, extras), the ratios ours
 * over the baseline, the spread of the work times, and the load average at the start and the end.
 * `rows`: what rows/s counts (the rows each side took in).
 */
export function printSummary(
  b: Bench,
  opts: { title: string[]; rows: number; names: { ours: string; baseline: string }; results: Comparison; notes?: string[]; target?: number },
): void {
  const { ours, baseline } = opts.results
  const med = (rs: SideResult[], f: (r: SideResult) => number) => median(rs.map(f))
  const sides: Array<[string, SideResult[]]> = [[opts.names.ours, ours], [opts.names.baseline, baseline], ...Object.entries(opts.results.others ?? {})]
  const work: Record<string, number> = {}
  const wall: Record<string, number> = {}
  const rss: Record<string, number> = {}
  for (const [name, rs] of sides) {
    work[name] = med(rs, (r) => r.workSeconds)
    wall[name] = med(rs, (r) => r.wallSeconds)
    rss[name] = med(rs, (r) => r.maxRssKib) / 1024
  }
  const w = Math.max(...sides.map(([name]) => name.length), 4)
  const row = (name: string, rs: SideResult[]) => {
    const extras = Object.keys(rs[0]?.extra ?? {}).map((e) => `${e} ${med(rs, (r) => r.extra?.[e] ?? NaN).toFixed(2)}`)
    return `  ${name.padEnd(w)}  ${work[name].toFixed(2).padStart(8)}  ${fmt(opts.rows / work[name]).padStart(10)}  ${wall[name].toFixed(2).padStart(9)}  ${`${fmt(rss[name])} MiB`.padStart(10)}${extras.length ? '   ' + extras.join(', ') : ''}`
  }
  const [o, base] = [opts.names.ours, opts.names.baseline]
  const speed = work[base] / work[o]
  console.log('')
  for (const t of opts.title) console.log(t)
  console.log(
    `medians of ${opts.results.ours.length} runs (fresh tables each run; order alternated, ${opts.names.ours} first in runs 1, 3, …); every run read back by PyIceberg: rows and sums as expected`,
  )
  console.log('')
  console.log(`  ${'side'.padEnd(w)}  ${'work s'.padStart(8)}  ${'rows/s'.padStart(10)}  ${'process s'.padStart(9)}  ${'peak RSS'.padStart(10)}`)
  for (const [name, rs] of sides) console.log(row(name, rs))
  console.log('')
  for (const [name] of sides.slice(1)) {
    console.log(
      `  ratio ${o} / ${name}: ${(work[name] / work[o]).toFixed(2)}x rows/s (work), ${(wall[name] / wall[o]).toFixed(2)}x (process); peak RSS ${(rss[o] / rss[name]).toFixed(2)}x`,
    )
  }
  // A run's ratio pairs the two sides of that run (same box, minutes apart); a target is met only when every run meets it.
  const perRun = ours.map((r, i) => baseline[i].workSeconds / r.workSeconds)
  if (opts.target !== undefined) {
    const met = perRun.every((x) => x >= opts.target!)
    console.log(`  target: ours >= ${opts.target}x the baseline's rows/s (work) in every run — ${met ? 'met' : 'NOT met'} (median ${speed.toFixed(2)}x)`)
  }
  console.log(`  work s per run: ${sides.map(([name, rs]) => `${name} ${rs.map((r) => r.workSeconds.toFixed(2)).join(' ')}`).join('; ')}`)
  console.log(`  ratio ${o} / ${base} per run: ${perRun.map((x) => `${x.toFixed(2)}x`).join(' ')}`)
  console.log(
    '  (work = the work alone, to the committed snapshot: no interpreter start-up, imports or catalog construction; process = the whole child under /usr/bin/time)',
  )
  for (const n of opts.notes ?? []) console.log(`  ${n}`)
  console.log(`  load average at the start ${loadText(b.loadStart)}; at the end ${loadText()} — a ratio is only as good as the box is quiet`)
}

// ---- the stack's sinks and the roller (bench:roll, bench:upsert) -------------------------------------

/** An API call whose answer is parsed losslessly (sink views carry snapshot ids and counters). */
export async function apiLossless(b: BenchStack, method: string, path: string, json?: unknown): Promise<any> {
  const res = await fetch(b.stack.apiUrl + path, {
    method,
    headers: { authorization: `Bearer ${b.apiKey}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
    body: json === undefined ? undefined : JSON.stringify(json),
  })
  const text = await res.text()
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`)
  return text ? parseLossless(text) : null
}

export interface Batch {
  id: string
  /** The JSON array as the producer sends it. */
  body: string
}

/** Sends batches through the send route, `concurrency` at a time (untimed set-up). */
export async function sendBatches(b: BenchStack, sink: { id: string; sendKey: string }, batches: Iterable<Batch>, concurrency = 4): Promise<number> {
  const t0 = Date.now()
  const it = batches[Symbol.iterator]()
  const worker = async () => {
    for (let next = it.next(); !next.done; next = it.next()) {
      const { id, body } = next.value
      const res = await fetch(`${b.stack.apiUrl}/v1/sinks/${sink.id}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sink.sendKey}`, 'content-type': 'application/json', 'idempotency-key': id },
        body,
      })
      const text = await res.text()
      if (res.status !== 202) throw new Error(`send ${id}: ${res.status} ${text}`)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return (Date.now() - t0) / 1000
}

/** Copies every intake batch of a sink (body, content type, x-amz-meta-*) under another prefix. */
export async function copyIntake(b: BenchStack, sinkId: string, toPrefix: string, concurrency = 8): Promise<number> {
  const s3 = new S3Client(b.stack.s3)
  const keys: string[] = []
  for await (const o of s3.list(`_sink/${sinkId}/`)) if (/^_sink\/[^/]+\/[^/]+\.ndjson$/.test(o.key)) keys.push(o.key)
  let i = 0
  const worker = async () => {
    while (i < keys.length) {
      const key = keys[i++]
      const got = await s3.get(key)
      if (!got) throw new Error(`copy: ${key} vanished`)
      await s3.put(`${toPrefix.replace(/\/$/, '')}/${key.split('/').at(-1)}`, got.body, {
        contentType: got.head.contentType ?? 'application/x-ndjson',
        metadata: got.head.metadata,
      })
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return keys.length
}

export interface RollerRun extends Measured {
  rolled: { batches: number; rows: number; rejectedRows: number } | null
  /** ms since the roll began at which each step boundary was last passed (the roller's 'rolled' log) */
  steps: Record<string, number>
  /** CPU seconds of the whole roller process during the roll (its threads included; the 'rolled' log's cpu_ms) */
  rollCpuSeconds: number
  /** With `stageCpu`: CPU seconds per stage of the roll (the 'rolled' log's cpu_stages_ms; roller/stage-cpu.ts) */
  stageCpu: Record<string, number> | null
  /** Every roll of the tick in order (a sink behind is caught up in several; roller/catch-up.ts): its counts, CPU seconds and stage CPU seconds. */
  rolls: Array<{ batches: number; rows: number; rejectedRows: number; cpuSeconds: number; stageCpu: Record<string, number> | null }>
  /** A catch-up of more than one roll: its seconds from the first roll's start to the last's end (the 'catch-up done' log). */
  catchUpSeconds: number | null
}

/**
 * One `roller/main.ts tick --force --sink <id>` (the `npm run roller -- tick --force` path; every sink for null), measured.
 * `stageCpu`: the roller counts its CPU per stage (LHBOX_ROLL_STAGE_CPU=1).
 */
export async function rollerTick(
  b: BenchStack,
  sinkId: string | null,
  opts: { nodeFlags?: string[]; timeoutMs?: number; stageCpu?: boolean; env?: Record<string, string> } = {},
): Promise<RollerRun> {
  const { cmd, args } = rollerCommand(['tick', '--force', ...(sinkId ? ['--sink', sinkId] : [])])
  const env = {
    ...process.env,
    LHBOX_URL: b.stack.apiUrl,
    LHBOX_BOOTSTRAP_SECRET: b.stack.bootstrapSecret,
    DATABASE_URL: b.stack.databaseUrl,
    S3_ACCESS_KEY_ID: b.stack.s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: b.stack.s3.secretAccessKey,
    LHBOX_ROLLER_ID: `bench-${process.pid}`,
    ...(opts.stageCpu ? { LHBOX_ROLL_STAGE_CPU: '1' } : {}),
    ...opts.env,
  }
  const run = await measured(cmd, [...(opts.nodeFlags ?? []), ...args], {
    env,
    timeoutMs: opts.timeoutMs ?? 15 * 60_000,
    what: `roller tick (${sinkId ? `sink ${sinkId}` : 'every sink'})`,
  })
  const logs = jsonLines(run.stdout)
  const failed = logs.find((l) => l.level === 'error')
  if (failed) throw new Error(`roller tick: ${failed.msg}: ${failed.error ?? ''}\n${run.stdout.slice(-3000)}`)
  const r = logs.find((l) => l.msg === 'rolled')
  const steps = Object.fromEntries(Object.entries((r?.steps_ms ?? {}) as Record<string, unknown>).map(([k, v]) => [k, num(v)]))
  const stagesOf = (l: Record<string, any>) =>
    l.cpu_stages_ms ? Object.fromEntries(Object.entries(l.cpu_stages_ms as Record<string, unknown>).map(([k, v]) => [k, num(v) / 1000])) : null
  const caughtUp = logs.find((l) => l.msg === 'catch-up done')
  return {
    rolls: logs
      .filter((l) => l.msg === 'rolled')
      .map((l) => ({
        batches: num(l.batches),
        rows: num(l.rows),
        rejectedRows: num(l.rejected_rows),
        cpuSeconds: num(l.cpu_ms) / 1000,
        stageCpu: stagesOf(l),
      })),
    catchUpSeconds: caughtUp ? num(caughtUp.seconds) : null,
    ...run,
    rolled: r ? { batches: num(r.batches), rows: num(r.rows), rejectedRows: num(r.rejected_rows) } : null,
    steps,
    rollCpuSeconds: r?.cpu_ms === undefined ? NaN : num(r.cpu_ms) / 1000,
    stageCpu: r ? stagesOf(r) : null,
  }
}

// ---- the rows of common.ts rowJson -------------------------------------------------------------------

/** The id and the amount (in cents) of one rowJson line, read from its text. */
export function rowFigures(line: string): { id: bigint; cents: bigint } {
  const m = /^\{"id":(-?\d+),.*"amount":(-?)(\d+)\.(\d{2})\}$/.exec(line)
  if (!m) throw new Error(`not a benchmark row: ${line.slice(0, 200)}`)
  const cents = BigInt(m[3]) * 100n + BigInt(m[4])
  return { id: BigInt(m[1]), cents: m[2] ? -cents : cents }
}

/** Cents as decimal(…, 2) text ("-12.05"). */
export function centsText(cents: bigint): string {
  const neg = cents < 0n
  const a = neg ? -cents : cents
  return `${neg ? '-' : ''}${a / 100n}.${String(a % 100n).padStart(2, '0')}`
}
