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
//   BENCH_BATCHES=500 npm run bench:roll -- --schema mixed   (600,000 rows, 73 MiB: more than one roll
//     takes, so the roller catches the sink up in consecutive rolls under one lease; BENCH_ROLL_CATCH_UP=0:
//     a tick a roll, as before catch-up rolls)
//
// --schema NAME picks the rows' shape (narrow, mixed, wide, decimal, nested, long-strings, geometry,
// keyed): its columns, its rows, the columns whose exact sums are checked, and its rows a batch (so
// 400 batches stay under one roll). A third side, DuckDB's COPY of the same objects to one zstd
// Parquet file (test/bench/duckdb_copy.py: no Iceberg commit, a floor), is read back by pyarrow and
// checked too.
//   - geometry: a v3 table with a geometry column, GeoJSON Points; PyIceberg 0.12 writes no v3
//     table, so its side is a v2 table with the WKB in a binary column (pyiceberg_roll.py);
//   - keyed: a sink with key ["id"] on a table seeded (untimed, keyed-input.ts, as bench:upsert's) with
//     BENCH_KEYED_BASE_ROWS rows (default 1,000,000); half the rows sent change rows it holds, half
//     are new keys; PyIceberg's side upserts the same objects into its seeded copy (table.upsert),
//     DuckDB's only writes them (no merge). No warm-up roll: the seed made the first roll's changes.
// The roller runs with LHBOX_ROLL_STAGE_CPU=1: its CPU per stage (get, scan, encode, compress,
// commit; roller/stage-cpu.ts) is printed as medians after the summary.
//
// BENCH_ROLL_PROFILE=1 (or --profile) adds one more round of the same batches rolled under
// --cpu-prof after the measured runs and prints the roller's top functions (self and inclusive
// time) — profiling slows the roll, so it is never a timed run. LHBOX_BENCH_KEEP=1 keeps the state
// folder (and the .cpuprofile).
import { mkdirSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { ensureVenv, sqlCatalogArgs } from '../support/python.ts'
import { api, benchStack, fmt, tableAndSink, type BenchStack } from './common.ts'
import {
  apiLossless,
  BENCH_DIR,
  copyIntake,
  envInt,
  lastJson,
  measured,
  median,
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
import { seedTables, writeBaseRows } from './keyed-input.ts'
import { summarizeProfile } from './roll-profile.ts'
import { ROLL_SCHEMAS, unitsText, type RollSchema } from './roll-schemas.ts'
import { STAGES } from '../../roller/stage-cpu.ts'

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
const KEYED = SCHEMA.keyed
const CATCH_UP = process.env.BENCH_ROLL_CATCH_UP !== '0'

/** The batches: rows 1.. of the schema, ROWS_PER_BATCH a batch (the same input every run). */
function* batches(prefix: string): Generator<Batch & { lines: string[] }> {
  let id = 1
  for (let i = 0; i < BATCHES; i++) {
    const lines = Array.from({ length: ROWS_PER_BATCH }, () => SCHEMA.row(id++).json)
    yield { id: `${prefix}-${String(i).padStart(4, '0')}`, body: `[${lines.join(',')}]`, lines }
  }
}

type Sums = Record<string, bigint>
/**
 * What rows `from`..`to` add up to: count, NDJSON bytes (as the intake stores them), each summed
 * column; and what they make of a keyed table: the rows they add (the others replace rows) and the
 * change to each sum.
 */
type Figures = { rows: number; bytes: number; sums: Sums; added: number; change: Sums }

const zeros = (): Sums => Object.fromEntries(Object.keys(SCHEMA.summed).map((c) => [c, 0n]))

function figures(from: number, to: number): Figures {
  const f: Figures = { rows: 0, bytes: 0, sums: zeros(), added: 0, change: zeros() }
  for (let id = from; id <= to; id++) {
    const row = SCHEMA.row(id)
    f.rows++
    f.bytes += Buffer.byteLength(row.json) + 1
    if (!row.replaces) f.added++
    for (const [c, v] of Object.entries(row.sums)) {
      f.sums[c] += v
      f.change[c] += v - (row.replaces?.[c] ?? 0n)
    }
  }
  return f
}

const expectOf = (rows: number, sums: Sums, distinct?: Record<string, number>): Expected => ({
  rows,
  sums: Object.fromEntries(Object.entries(SCHEMA.summed).map(([c, scale]) => [c, unitsText(sums[c], scale)])),
  ...(distinct ? { distinct } : {}),
})

/** The table's shape as POST /v1/tables takes it: columns, or a whole schema for nested types. */
const tableSpec = (s: RollSchema) =>
  s.nested
    ? {
        schema: { fields: s.columns.map((c, i) => ({ id: i + 1, name: c.name, type: c.type, required: c.required ?? false, doc: c.doc })) },
        format_version: s.formatVersion,
      }
    : { columns: s.columns as Array<{ name: string; type: string }>, format_version: s.formatVersion }

/**
 * The CPU-seconds line: medians of the runs' stages, the main thread's rest (table load, listing,
 * report, deletes), and the rest of the roll's process: threads no stage reads (V8's compiler and
 * GC helpers, libuv's pool).
 */
function stageLine(runs: Array<Record<string, number>>): string {
  if (runs.length === 0) return '  ours cpu s: no stage figures (the roller logged no cpu_stages_ms: not Linux?)'
  const m = (k: string) => median(runs.map((r) => r[k] ?? NaN))
  const others = median(runs.map((r) => r.roll - r.main_rest - STAGES.reduce((n, s) => n + (r[s] ?? 0), 0)))
  return `  ours cpu s: ${STAGES.map((s) => `${s} ${m(s).toFixed(2)}`).join(' · ')} · main thread's rest ${m('main_rest').toFixed(2)} · other threads ${others.toFixed(2)} (the roll's process ${m('roll').toFixed(2)}; medians, LHBOX_ROLL_STAGE_CPU=1)`
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
    const sent = figures(1, BATCHES * ROWS_PER_BATCH)
    // More than one roll takes (roll_bytes, 1,000 batches): the sink is behind, and the roller catches
    // it up in consecutive rolls under one lease (roller/catch-up.ts); BENCH_ROLL_CATCH_UP=0 turns that
    // off, and the rolls are then ticks of their own, one after the other.
    const behind = sent.bytes > ROLL_BYTES || BATCHES > MAX_BATCHES
    if (behind)
      b.log(
        `${fmt(sent.rows)} rows are ${(sent.bytes / MiB).toFixed(1)} MiB of NDJSON in ${BATCHES} batches: more than one roll takes; ${CATCH_UP ? 'caught up under one lease' : 'one tick a roll (BENCH_ROLL_CATCH_UP=0)'}`,
      )
    const python = await ensureVenv()
    const bs: BenchStack = await benchStack('bench-roll', b.cleanup, b.log)
    const catalogArgs = sqlCatalogArgs({ databaseUrl: bs.stack.databaseUrl, catalogName: bs.warehouseId, s3: bs.stack.s3 })
    // DuckDB's COPY writes the rows sent; the tables hold them as each side committed them.
    const expected = { ours: expectOf(sent.rows, sent.sums), pyiceberg: expectOf(sent.rows, sent.sums), duckdb: expectOf(sent.rows, sent.sums) }
    let baseFile = ''
    if (KEYED) {
      // Both tables start with the same rows (untimed): then the roll's rows change half of theirs and add as many.
      baseFile = join(bs.stack.dir, 'keyed-base.ndjson')
      const base = await writeBaseRows(baseFile, KEYED.baseRows)
      const rows = KEYED.baseRows + sent.added
      const sums: Sums = { id: base.ids + sent.change.id, amount: base.cents + sent.change.amount }
      expected.ours = expected.pyiceberg = expectOf(rows, sums, Object.fromEntries(KEYED.key.map((k) => [k, rows])))
    } else {
      const w = figures(0, 0) // the roller's table also holds the warm-up row
      expected.ours = expectOf(sent.rows + w.rows, Object.fromEntries(Object.entries(sent.sums).map(([c, v]) => [c, v + w.sums[c]])))
    }
    const stageRuns: Array<Record<string, number>> = []
    let last: RunCtx | undefined

    const results = await sideBySide<RunCtx>(b, {
      catalogArgs,
      prepare: async (run) => {
        const pyTable = `bench.roll_py_r${run}`
        let sink: RunCtx['sink']
        if (KEYED) {
          // As bench:upsert: both tables seeded alike (what a first roll adds, then the rows), then the keyed sink.
          sink = { id: '', sendKey: '', table: `bench.roll_r${run}` }
          for (const table of [sink.table, pyTable])
            await api(bs.stack, bs.apiKey, 'POST', '/v1/tables', { warehouse: bs.warehouse, table, doc: 'benchmark table', ...tableSpec(SCHEMA) })
          const seed = await seedTables(python, catalogArgs, [sink.table, pyTable], baseFile)
          const created = await api(bs.stack, bs.apiKey, 'POST', '/v1/sinks', {
            warehouse: bs.warehouse,
            table: sink.table,
            name: `roll_keyed_r${run}`,
            key: KEYED.key,
            roll_bytes: ROLL_BYTES,
          })
          sink = { ...sink, id: created.id, sendKey: created.send_key }
          b.log(`run ${run}: both tables seeded with ${fmt(KEYED.baseRows)} rows in ${seed.wallSeconds.toFixed(1)} s`)
        } else {
          sink = await tableAndSink(bs, `bench.roll_r${run}`, { roll_bytes: ROLL_BYTES }, tableSpec(SCHEMA))
          // A first small roll: the sink's first-roll commit (__ingest_ts, properties) is not measured.
          await sendBatches(bs, sink, [{ id: 'warmup', body: `[${SCHEMA.row(0).json}]` }])
          const first = await rollerTick(bs, sink.id)
          if (first.rolled?.rows !== 1) throw new Error(`the warm-up roll rolled ${JSON.stringify(first.rolled)}`)
        }
        const seconds = await sendBatches(bs, sink, batches(`r${run}`))
        const view = await apiLossless(bs, 'GET', `/v1/sinks/${sink.id}`)
        const copyPrefix = `_bench/roll-r${run}/`
        const copied = await copyIntake(bs, sink.id, copyPrefix)
        if (copied !== BATCHES) throw new Error(`copied ${copied} intake objects, expected ${BATCHES}`)
        b.log(
          `run ${run}: sent ${BATCHES} batches, ${fmt(sent.rows)} rows, ${(sent.bytes / MiB).toFixed(2)} MiB NDJSON in ${seconds.toFixed(1)} s; lag ${view.lag.batches_waiting} batches / ${(num(view.lag.bytes_waiting) / MiB).toFixed(2)} MiB; copied for PyIceberg under ${copyPrefix}`,
        )
        last = { sink, pyTable, copyPrefix }
        return last
      },
      ours: {
        name: 'ours (roller)',
        run: async (c) => {
          // Without catch-up, tick after tick until nothing waits; the work is the rolls' own seconds summed
          // (each tick's lease and process start left out). With it, one tick: the catch-up's seconds.
          const ticks: Awaited<ReturnType<typeof rollerTick>>[] = []
          let rollSeconds = 0
          let view: any
          do {
            ticks.push(await rollerTick(bs, c.sink.id, { stageCpu: true, env: CATCH_UP ? {} : { LHBOX_ROLLER_CATCH_UP_ROLLS: '1' } }))
            view = await apiLossless(bs, 'GET', `/v1/sinks/${c.sink.id}`)
            rollSeconds += num(view.last_roll.seconds)
          } while (!CATCH_UP && num(view.lag.batches_waiting) > 0 && ticks.length < 10)
          const r = ticks[0]
          const rolls = ticks.flatMap((t) => t.rolls)
          const sum = (f: (x: (typeof rolls)[number]) => number) => rolls.reduce((n, x) => n + f(x), 0)
          const stages = rolls.every((x) => x.stageCpu)
            ? Object.fromEntries(Object.keys(rolls[0]?.stageCpu ?? {}).map((k) => [k, sum((x) => x.stageCpu![k])]))
            : null
          if (stages) stageRuns.push({ ...stages, roll: sum((x) => x.cpuSeconds) })
          const rolled = { batches: sum((x) => x.batches), rows: sum((x) => x.rows), rejectedRows: sum((x) => x.rejectedRows) }
          if (rolls.length === 0 || rolled.rows !== sent.rows || rolled.batches !== BATCHES || rolled.rejectedRows !== 0) {
            throw new Error(`the roller rolled ${JSON.stringify(rolled)}, expected ${BATCHES} batches / ${sent.rows} rows, none rejected`)
          }
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
            workSeconds: r.catchUpSeconds ?? rollSeconds,
            wallSeconds: ticks.reduce((n, t) => n + t.wallSeconds, 0),
            maxRssKib: Math.max(...ticks.map((t) => t.maxRssKib)),
            extra: { rolls: rolls.length, 'process cpu s': ticks.reduce((n, t) => n + t.cpuSeconds, 0), 'roll cpu s': sum((x) => x.cpuSeconds), ...extra },
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
              ...(KEYED ? KEYED.key.flatMap((k) => ['--upsert-key', k]) : []),
            ],
            { env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1' }, timeoutMs: 15 * 60_000, what: 'pyiceberg_roll.py' },
          )
          const out = lastJson(m.stdout, 'pyiceberg_roll.py')
          if (num(out.rows) !== sent.rows || num(out.batches) !== BATCHES) {
            throw new Error(`PyIceberg read ${out.rows} rows from ${out.batches} objects, expected ${sent.rows} from ${BATCHES}`)
          }
          if (KEYED ? num(out.rows_updated) !== sent.rows - sent.added || num(out.rows_inserted) !== sent.added : num(out.added_records) !== sent.rows) {
            const did = KEYED ? `updated ${out.rows_updated} and inserted ${out.rows_inserted} rows` : `committed ${out.added_records} rows`
            throw new Error(`PyIceberg ${did}, expected ${KEYED ? `${sent.rows - sent.added} and ${sent.added}` : sent.rows}`)
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
            // pyarrow read DuckDB's file back: the rows sent and their sums.
            const want = expected.duckdb
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
        KEYED
          ? 'ours: the keyed roll’s last_roll.seconds (read, latest row per key, rewrite the files holding changed keys, one overwrite); pyiceberg: list, read+parse on threads, one table.upsert(join_cols=["id"]); duckdb: COPY of the rows sent, no merge'
          : 'ours: the roll’s last_roll.seconds (read, validate, write, commit, delete the batches); pyiceberg: list, read+parse on threads, one table.append',
        ...(behind
          ? [
              CATCH_UP
                ? 'behind: more than one roll takes; ours is one tick catching up in consecutive rolls under one lease, its seconds from the first roll’s start to the last’s end (the "catch-up done" log)'
                : 'behind: more than one roll takes; ours is one tick a roll (BENCH_ROLL_CATCH_UP=0), the rolls’ last_roll.seconds summed (leases and process starts left out)',
            ]
          : []),
        ...(SCHEMA.name === 'geometry'
          ? [
              'geometry: ours a v3 table with a geometry column; pyiceberg a v2 table with the WKB in a binary column (PyIceberg 0.12 writes no v3 metadata), the GeoJSON points made WKB by Arrow compute; duckdb WKT → its core GEOMETRY (no spatial extension offline) → WKB in Parquet',
            ]
          : []),
      ],
    })
    console.log(stageLine(stageRuns))
    for (const l of profileLines) console.log(l)
  })
}

await main()
