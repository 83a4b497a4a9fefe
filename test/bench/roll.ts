// npm run bench:roll — one roll of BENCH_BATCHES batches end to end, side by side with PyIceberg.
//
// One private stack (Postgres, pgbouncer, ws bridge, s3rver, wrangler dev of the edge) in a temporary
// folder, loopback only. BENCH_RUNS times (default 3; test/bench/harness.ts), on fresh tables:
//   - set-up (untimed): a table of the schema's columns (narrow: {id long, name string, ts
//     timestamptz, amount decimal(18,2)}) and a sink on it (roll_bytes 64 MiB, the most a sink allows); one small batch rolled first so the
//     measured roll is a steady one (the first roll's __ingest_ts/properties commit is out of the
//     way); then BENCH_BATCHES batches (default 400) of BENCH_ROWS_PER_BATCH rows (default 1,500:
//     600,000 rows, ~58 MiB of NDJSON for narrow; each schema has its own default) go through the send route, and the intake objects are copied
//     (bytes and x-amz-meta-*) under _bench/roll-r<run>/ for PyIceberg — the roller deletes the
//     originals once it has rolled them, and the two sides take turns going first;
//   - ours: `roller/main.ts tick --force --sink <id>` (as `npm run roller -- tick --force` runs it),
//     one roll of every batch: read from the bucket, validated, written, committed;
//   - pyiceberg: test/bench/pyiceberg_roll.py reads the same objects from the bucket on 8 threads
//     (pyarrow read_json, the table's schema as the explicit schema) and appends them to a table of
//     its own with the sink table's schema, in one table.append;
//   - then PyIceberg reads both tables back: every row sent (ours: plus the warm-up row), sum(id)
//     and sum(amount) exactly as sent, or the bench fails.
// Work time: the roll's own last_roll.seconds / PyIceberg's time from its constructed catalog to the
// committed snapshot (its table's creation excluded); process time and peak RSS of the roller process and the Python process from
// /usr/bin/time. Prints the medians, the ratios and the load average.
//
//   BENCH_BATCHES=40 BENCH_ROWS_PER_BATCH=500 BENCH_RUNS=3 npm run bench:roll     (a quick look)
//   npm run bench:roll -- --schema wide        (the shapes: test/bench/roll-schemas.ts; narrow by default)
//
// --schema NAME picks the rows' shape (narrow, mixed, wide, decimal, nested, long-strings): its
// columns, its rows, the columns whose exact sums are checked, and its rows a batch (so 400 batches
// stay under one roll). A third side, DuckDB's COPY of the same objects to one zstd Parquet file
// (test/bench/duckdb_copy.py: no Iceberg commit, a floor), is read back by pyarrow and checked too.
//
// BENCH_ROLL_PROFILE=1 (or --profile) adds one more round of the same batches rolled under
// --cpu-prof after the measured runs and prints the roller's top functions (self and inclusive
// time) — profiling slows the roll, so it is never a timed run. LHBOX_BENCH_KEEP=1 keeps the state
// folder (and the .cpuprofile).
import { mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureVenv, sqlCatalogArgs } from '../support/python.ts'
import { benchStack, fmt, tableAndSink, type BenchStack } from './common.ts'
import {
  apiLossless,
  BENCH_DIR,
  copyIntake,
  envInt,
  lastJson,
  measured,
  num,
  printSummary,
  rollerTick,
  runBench,
  sendBatches,
  sideBySide,
  startBench,
  type Batch,
  type Expected,
} from './harness.ts'
import { ROLL_SCHEMAS, unitsText, type RollSchema } from './roll-schemas.ts'

const MiB = 1024 * 1024
/** The most a sink's roll_bytes may be (edge/sink-rules.ts): every batch must fit in one roll. */
const ROLL_BYTES = 64 * MiB
const MAX_BATCHES = 1000
const schemaArg = process.argv.indexOf('--schema')
const SCHEMA: RollSchema = (() => {
  const name = schemaArg > 0 ? process.argv[schemaArg + 1] : 'narrow'
  const found = ROLL_SCHEMAS[name]
  if (!found) throw new Error(`--schema ${name}: one of ${Object.keys(ROLL_SCHEMAS).join(', ')}`)
  return found
})()
const BATCHES = envInt('BENCH_BATCHES', 400)
const ROWS_PER_BATCH = envInt('BENCH_ROWS_PER_BATCH', SCHEMA.rowsPerBatch)
const THREADS = 8
const PROFILE = process.env.BENCH_ROLL_PROFILE === '1' || process.argv.includes('--profile')

const root = fileURLToPath(new URL('../..', import.meta.url))

/** The batches: rows 1.. of the schema, ROWS_PER_BATCH a batch (the same input every run). */
function* batches(prefix: string): Generator<Batch & { lines: string[] }> {
  let id = 1
  for (let i = 0; i < BATCHES; i++) {
    const lines = Array.from({ length: ROWS_PER_BATCH }, () => SCHEMA.row(id++).json)
    yield { id: `${prefix}-${String(i).padStart(4, '0')}`, body: `[${lines.join(',')}]`, lines }
  }
}

type Figures = { rows: number; bytes: number; sums: Record<string, bigint> }

/** What rows `from`..`to` add up to: count, NDJSON bytes (as the intake stores them), each summed column. */
function figures(from: number, to: number): Figures {
  const f: Figures = { rows: 0, bytes: 0, sums: Object.fromEntries(Object.keys(SCHEMA.summed).map((c) => [c, 0n])) }
  for (let id = from; id <= to; id++) {
    const row = SCHEMA.row(id)
    f.rows++
    f.bytes += Buffer.byteLength(row.json) + 1
    for (const [c, v] of Object.entries(row.sums)) f.sums[c] += v
  }
  return f
}

const expectOf = (f: Figures): Expected => ({
  rows: f.rows,
  sums: Object.fromEntries(Object.entries(SCHEMA.summed).map(([c, scale]) => [c, unitsText(f.sums[c], scale)])),
})

/** The table's shape as POST /v1/tables takes it: columns, or a whole schema for nested types. */
const tableSpec = (s: RollSchema) =>
  s.nested
    ? {
        schema: { fields: s.columns.map((c, i) => ({ id: i + 1, name: c.name, type: c.type, required: c.required ?? false, doc: c.doc })) },
        format_version: s.formatVersion,
      }
    : { columns: s.columns as Array<{ name: string; type: string }>, format_version: s.formatVersion }

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
  const keyOf = (n: ProfileNode) =>
    `${n.callFrame.functionName || '(anonymous)'}  ${short(n.callFrame.url)}${n.callFrame.lineNumber > 0 ? `:${n.callFrame.lineNumber + 1}` : ''}`
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
    [...m]
      .filter(([k]) => filter(k))
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `    ${pct(v)}  ${k}`)
  const marks = [
    ['start-up (modules, config, lease)', prof.startTime] as const,
    ...STEPS.filter((s) => firstSeen.has(s)).map((s) => [s, firstSeen.get(s)!] as const),
    ['after the roll (report logged, exit)', lastRollSeen] as const,
  ]
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

interface RunCtx {
  sink: { id: string; sendKey: string; table: string }
  pyTable: string
  copyPrefix: string
}

async function main(): Promise<void> {
  const b = startBench('bench:roll', (PROFILE ? 60 : 45) * 60_000)
  await runBench(b, async () => {
    if (BATCHES > MAX_BATCHES) throw new Error(`BENCH_BATCHES=${BATCHES}: a roll takes ${MAX_BATCHES} batches at most`)
    const warmup = SCHEMA.row(0).json
    const sent = figures(1, BATCHES * ROWS_PER_BATCH)
    if (sent.bytes > ROLL_BYTES) {
      throw new Error(
        `${fmt(sent.rows)} rows are ${(sent.bytes / MiB).toFixed(1)} MiB of NDJSON, past a sink's roll_bytes (${ROLL_BYTES / MiB} MiB at most): one roll cannot take them all. Lower BENCH_BATCHES or BENCH_ROWS_PER_BATCH.`,
      )
    }
    const w = figures(0, 0) // the roller's table also holds the warm-up row
    const withWarmup = { rows: sent.rows + w.rows, bytes: 0, sums: Object.fromEntries(Object.entries(sent.sums).map(([c, v]) => [c, v + w.sums[c]])) }
    const expected = { ours: expectOf(withWarmup), pyiceberg: expectOf(sent) }

    const python = await ensureVenv()
    const bs: BenchStack = await benchStack('bench-roll', b.cleanup, b.log)
    const catalogArgs = sqlCatalogArgs({ databaseUrl: bs.stack.databaseUrl, catalogName: bs.warehouseId, s3: bs.stack.s3 })
    let last: RunCtx | undefined

    const results = await sideBySide<RunCtx>(b, {
      catalogArgs,
      prepare: async (run) => {
        const sink = await tableAndSink(bs, `bench.roll_r${run}`, { roll_bytes: ROLL_BYTES }, tableSpec(SCHEMA))
        // A first small roll: the sink's first-roll commit (__ingest_ts, properties) is not measured.
        await sendBatches(bs, sink, [{ id: 'warmup', body: `[${warmup}]` }])
        const first = await rollerTick(bs, sink.id)
        if (first.rolled?.rows !== 1) throw new Error(`the warm-up roll rolled ${JSON.stringify(first.rolled)}`)
        const seconds = await sendBatches(bs, sink, batches(`r${run}`))
        const view = await apiLossless(bs, 'GET', `/v1/sinks/${sink.id}`)
        const copyPrefix = `_bench/roll-r${run}/`
        const copied = await copyIntake(bs, sink.id, copyPrefix)
        if (copied !== BATCHES) throw new Error(`copied ${copied} intake objects, expected ${BATCHES}`)
        b.log(
          `run ${run}: sent ${BATCHES} batches, ${fmt(sent.rows)} rows, ${(sent.bytes / MiB).toFixed(2)} MiB NDJSON in ${seconds.toFixed(1)} s; lag ${view.lag.batches_waiting} batches / ${(num(view.lag.bytes_waiting) / MiB).toFixed(2)} MiB; copied for PyIceberg under ${copyPrefix}`,
        )
        last = { sink, pyTable: `bench.roll_py_r${run}`, copyPrefix }
        return last
      },
      ours: {
        name: 'ours (roller)',
        run: async (c) => {
          const r = await rollerTick(bs, c.sink.id)
          if (!r.rolled || r.rolled.rows !== sent.rows || r.rolled.batches !== BATCHES || r.rolled.rejectedRows !== 0) {
            throw new Error(`the roller rolled ${JSON.stringify(r.rolled)}, expected ${BATCHES} batches / ${sent.rows} rows, none rejected`)
          }
          const view = await apiLossless(bs, 'GET', `/v1/sinks/${c.sink.id}`)
          if (num(view.lag.batches_waiting) !== 0) throw new Error(`${view.lag.batches_waiting} batches still waiting after the roll`)
          // where the roll's time went: seconds at which the last batch was checked, the data file stored, the commit made, the batches deleted
          const at = (step: string) => (r.steps[step] ?? NaN) / 1000
          const extra = {
            'reloaded at s': at('reload'),
            'validated at s': at('rejects'),
            'file stored at s': at('data-file'),
            'committed at s': at('commit'),
            'deleted at s': at('before-report'),
          }
          return {
            workSeconds: num(view.last_roll.seconds),
            wallSeconds: r.wallSeconds,
            maxRssKib: r.maxRssKib,
            extra: { 'process cpu s': r.cpuSeconds, 'roll cpu s': r.rollCpuSeconds, ...extra },
          }
        },
        check: (c) => ({ side: 'ours', table: c.sink.table, expected: expected.ours }),
      },
      baseline: {
        name: `pyiceberg (${THREADS} threads)`,
        run: async (c) => {
          const m = await measured(
            python,
            [
              join(BENCH_DIR, 'pyiceberg_roll.py'),
              ...catalogArgs,
              '--source-table',
              c.sink.table,
              '--table',
              c.pyTable,
              '--bucket',
              bs.stack.s3.bucket,
              '--prefix',
              c.copyPrefix,
              '--threads',
              String(THREADS),
            ],
            { env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1' }, timeoutMs: 15 * 60_000, what: 'pyiceberg_roll.py' },
          )
          const out = lastJson(m.stdout, 'pyiceberg_roll.py')
          if (num(out.rows) !== sent.rows || num(out.added_records) !== sent.rows || num(out.batches) !== BATCHES) {
            throw new Error(
              `PyIceberg appended ${out.rows} rows from ${out.batches} objects (${out.added_records} in its snapshot), expected ${sent.rows} from ${BATCHES}`,
            )
          }
          const s = out.seconds
          return {
            workSeconds: num(s.work),
            wallSeconds: m.wallSeconds,
            maxRssKib: m.maxRssKib,
            extra: {
              'process cpu s': m.cpuSeconds,
              'catalog (untimed) s': num(s.catalog),
              'setup s': num(s.setup),
              'list s': num(s.list),
              'read+parse s': num(s.read),
              'append s': num(s.append),
            },
          }
        },
        check: (c) => ({ side: 'pyiceberg', table: c.pyTable, expected: expected.pyiceberg }),
      },
      others: [
        {
          name: 'duckdb COPY (no commit)',
          run: async (c, run) => {
            const m = await measured(
              python,
              [
                join(BENCH_DIR, 'duckdb_copy.py'),
                ...catalogArgs,
                '--source-table',
                c.sink.table,
                '--bucket',
                bs.stack.s3.bucket,
                '--prefix',
                c.copyPrefix,
                '--out',
                `_bench/duckdb-r${run}.parquet`,
                ...Object.keys(SCHEMA.summed).flatMap((col) => ['--sum', col]),
              ],
              { env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1' }, timeoutMs: 15 * 60_000, what: 'duckdb_copy.py' },
            )
            const out = lastJson(m.stdout, 'duckdb_copy.py')
            // pyarrow read DuckDB's file back: the same rows and sums PyIceberg's table must hold.
            const want = expected.pyiceberg
            const wrong = [
              ...(num(out.rows) !== want.rows ? [`${out.rows} rows, expected ${want.rows}`] : []),
              ...Object.entries(want.sums)
                .filter(([col, v]) => String(out.sums[col]) !== v)
                .map(([col, v]) => `sum(${col}) ${out.sums[col]}, expected ${v}`),
            ]
            if (num(out.batches) !== BATCHES) wrong.push(`${out.batches} objects read, expected ${BATCHES}`)
            if (wrong.length) throw new Error(`READ-BACK MISMATCH — DuckDB's file: ${wrong.join('; ')}`)
            return {
              workSeconds: num(out.seconds.work),
              wallSeconds: m.wallSeconds,
              maxRssKib: m.maxRssKib,
              extra: { 'process cpu s': m.cpuSeconds, 'copy s': num(out.seconds.copy), 'file MiB': num(out.file_bytes) / MiB },
            }
          },
          check: () => null,
        },
      ],
    })

    let profileLines: string[] = []
    if (PROFILE && last) {
      const profDir = join(bs.stack.dir, 'cpu-prof')
      mkdirSync(profDir, { recursive: true })
      await sendBatches(bs, last.sink, batches('prof'))
      const profiled = await rollerTick(bs, last.sink.id, { nodeFlags: ['--cpu-prof', '--cpu-prof-dir', profDir] })
      const file = readdirSync(profDir)
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => join(profDir, f))[0]
      profileLines = [
        `  profiled roll (not timed): ${profiled.wallSeconds.toFixed(2)} s wall, peak RSS ${fmt(profiled.maxRssKib / 1024)} MiB`,
        ...(file ? summarizeProfile(file) : ['  (no .cpuprofile written)']),
      ]
    }

    printSummary(b, {
      title: [
        `bench:roll — one roll of ${BATCHES} batches × ${fmt(ROWS_PER_BATCH)} rows = ${fmt(sent.rows)} rows, ${(sent.bytes / MiB).toFixed(2)} MiB NDJSON, schema ${SCHEMA.name}: ${SCHEMA.about} + __ingest_ts, read from the bucket → one committed snapshot`,
      ],
      rows: sent.rows,
      names: { ours: 'ours (roller)', baseline: `pyiceberg (${THREADS} threads)` },
      target: 1.3,
      results,
      notes: [
        'ours: the roll’s last_roll.seconds (read, validate, write, commit, delete the batches); pyiceberg: list, read+parse on threads, one table.append',
      ],
    })
    for (const l of profileLines) console.log(l)
  })
}

await main()
