// npm run bench:upsert — a keyed roll against PyIceberg's table.upsert, side by side.
//
// One private stack (Postgres, pgbouncer, ws bridge, s3rver, wrangler dev of the edge) in a temporary
// folder, loopback only. The input, generated once:
//   - the starting table: BENCH_ROWS rows (default 1,000,000) of common.ts rowJson, ids 0..N-1;
//   - the changes: BENCH_CHANGED rows (default 100,000) for distinct ids drawn uniformly at random
//     from the whole table (a seeded PRNG: the same ids every run) — the worst case for both sides,
//     every data file holds changed keys — each with a new name and a new amount, in random id
//     order, sent as batches of BENCH_BATCH_ROWS rows (default 5,000).
// BENCH_RUNS times (default 3; test/bench/harness.ts), on fresh tables:
//   - set-up (untimed): two tables created through POST /v1/tables (the same columns), both seeded
//     alike by test/bench/pyiceberg_upsert.py seed (what a sink's first roll adds — __ingest_ts and
//     the retention properties — then the N rows in one PyIceberg append: the same layout for both);
//     a sink with key ["id"] on the first, and the changed rows sent to it;
//   - ours: `roller/main.ts tick --force --sink <id>`: one keyed roll (latest row per key, the key
//     columns of the table's files read, the files holding changed keys rewritten, one overwrite);
//   - pyiceberg: pyiceberg_upsert.py upsert — the same rows (one NDJSON file, pyarrow read_json with
//     the table's schema) into the second table with table.upsert(df, join_cols=["id"]);
//   - then PyIceberg reads both back: N rows, N distinct ids, sum(id) and sum(amount) exactly what the
//     changes make of the starting rows, or the bench fails.
// Work time: the roll's own last_roll.seconds / the Python process from its constructed catalog to the
// committed upsert; process time and peak RSS from /usr/bin/time. Prints medians, the ratio (target: ours >= 3x) and the load average.
//
//   BENCH_ROWS=50000 BENCH_CHANGED=5000 BENCH_RUNS=3 npm run bench:upsert     (a quick look)
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ensureVenv, sqlCatalogArgs } from '../support/python.ts'
import { api, benchStack, COLUMNS, fmt, rowJson, type BenchStack } from './common.ts'
import { changedIds, changedRow, seedTables, writeBaseRows } from './keyed-input.ts'
import {
  apiLossless,
  BENCH_DIR,
  centsText,
  envInt,
  lastJson,
  measured,
  num,
  printSummary,
  rollerTick,
  rowFigures,
  runBench,
  sendBatches,
  sideBySide,
  startBench,
  type Batch,
  type Expected,
} from './harness.ts'

const MiB = 1024 * 1024
const ROLL_BYTES = 64 * MiB // the most a sink allows (edge/sink-rules.ts)
const MAX_BATCHES = 1000
const ROWS = envInt('BENCH_ROWS', 1_000_000)
const CHANGED = envInt('BENCH_CHANGED', 100_000)
const BATCH_ROWS = envInt('BENCH_BATCH_ROWS', 5_000)

interface Input {
  baseFile: string
  changesFile: string
  batches: Batch[]
  changesBytes: number
  expected: Expected
}

async function generate(dir: string): Promise<Input> {
  const baseFile = join(dir, 'base.ndjson')
  const { ids, cents: baseCents } = await writeBaseRows(baseFile, ROWS)
  let cents = baseCents
  const lines: string[] = []
  for (const id of changedIds(ROWS, CHANGED)) {
    const line = changedRow(id)
    cents += rowFigures(line).cents - rowFigures(rowJson(id)).cents
    lines.push(line)
  }
  const changesFile = join(dir, 'changes.ndjson')
  writeFileSync(changesFile, lines.join('\n') + '\n')
  const batches: Batch[] = []
  for (let i = 0; i < lines.length; i += BATCH_ROWS)
    batches.push({ id: `changes-${String(batches.length).padStart(4, '0')}`, body: `[${lines.slice(i, i + BATCH_ROWS).join(',')}]` })
  return {
    baseFile,
    changesFile,
    batches,
    changesBytes: lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0),
    expected: { rows: ROWS, sums: { id: ids.toString(), amount: centsText(cents) }, distinct: { id: ROWS } },
  }
}

interface RunCtx {
  sink: { id: string; sendKey: string }
  ours: string
  pyiceberg: string
}

async function main(): Promise<void> {
  const b = startBench('bench:upsert', 90 * 60_000)
  await runBench(b, async () => {
    if (CHANGED > ROWS) throw new Error(`BENCH_CHANGED=${CHANGED} is more than BENCH_ROWS=${ROWS}`)
    if (Math.ceil(CHANGED / BATCH_ROWS) > MAX_BATCHES)
      throw new Error(`${Math.ceil(CHANGED / BATCH_ROWS)} batches: a roll takes ${MAX_BATCHES} at most; raise BENCH_BATCH_ROWS`)
    const python = await ensureVenv()
    const bs: BenchStack = await benchStack('bench-upsert', b.cleanup, b.log)
    const t0 = performance.now()
    const input = await generate(bs.stack.dir)
    if (input.changesBytes > ROLL_BYTES)
      throw new Error(`the changes are ${(input.changesBytes / MiB).toFixed(1)} MiB, past a sink's roll_bytes (64 MiB): one roll cannot take them`)
    b.log(
      `generated ${fmt(ROWS)} starting rows and ${fmt(CHANGED)} changed rows (${input.batches.length} batches, ${(input.changesBytes / MiB).toFixed(2)} MiB) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    )
    const catalogArgs = sqlCatalogArgs({ databaseUrl: bs.stack.databaseUrl, catalogName: bs.warehouseId, s3: bs.stack.s3 })
    const pyEnv = { ...process.env, PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1' }
    const script = join(BENCH_DIR, 'pyiceberg_upsert.py')

    const results = await sideBySide<RunCtx>(b, {
      catalogArgs,
      prepare: async (run) => {
        const ctx = { ours: `bench.upsert_r${run}`, pyiceberg: `bench.upsert_py_r${run}` }
        for (const table of [ctx.ours, ctx.pyiceberg])
          await api(bs.stack, bs.apiKey, 'POST', '/v1/tables', { warehouse: bs.warehouse, table, columns: COLUMNS, doc: 'benchmark table' })
        const seed = await seedTables(python, catalogArgs, [ctx.ours, ctx.pyiceberg], input.baseFile)
        const created = await api(bs.stack, bs.apiKey, 'POST', '/v1/sinks', {
          warehouse: bs.warehouse,
          table: ctx.ours,
          name: `upsert_r${run}`,
          key: ['id'],
          roll_bytes: ROLL_BYTES,
        })
        const sink = { id: created.id as string, sendKey: created.send_key as string }
        const sent = await sendBatches(bs, sink, input.batches)
        b.log(
          `run ${run}: both tables seeded with ${fmt(ROWS)} rows in ${seed.wallSeconds.toFixed(1)} s; ${input.batches.length} batches sent to the keyed sink in ${sent.toFixed(1)} s`,
        )
        return { sink, ...ctx }
      },
      ours: {
        name: 'ours (keyed roll)',
        run: async (c) => {
          const r = await rollerTick(bs, c.sink.id, { timeoutMs: 30 * 60_000 })
          if (!r.rolled || r.rolled.rows !== CHANGED || r.rolled.batches !== input.batches.length || r.rolled.rejectedRows !== 0) {
            throw new Error(`the roller rolled ${JSON.stringify(r.rolled)}, expected ${input.batches.length} batches / ${CHANGED} rows, none rejected`)
          }
          const view = await apiLossless(bs, 'GET', `/v1/sinks/${c.sink.id}`)
          if (num(view.lag.batches_waiting) !== 0) throw new Error(`${view.lag.batches_waiting} batches still waiting after the roll`)
          return { workSeconds: num(view.last_roll.seconds), wallSeconds: r.wallSeconds, maxRssKib: r.maxRssKib }
        },
        check: (c) => ({ side: 'ours', table: c.ours, expected: input.expected }),
      },
      baseline: {
        name: 'pyiceberg upsert',
        run: async (c) => {
          const m = await measured(python, [script, 'upsert', ...catalogArgs, '--table', c.pyiceberg, '--ndjson', input.changesFile], {
            env: pyEnv,
            timeoutMs: 30 * 60_000,
            what: 'pyiceberg_upsert.py upsert',
          })
          const out = lastJson(m.stdout, 'pyiceberg_upsert.py upsert')
          if (num(out.rows_updated) !== CHANGED || num(out.rows_inserted) !== 0)
            throw new Error(`PyIceberg updated ${out.rows_updated} and inserted ${out.rows_inserted} rows, expected ${CHANGED} and 0`)
          const s = out.seconds
          return {
            workSeconds: num(s.work),
            wallSeconds: m.wallSeconds,
            maxRssKib: m.maxRssKib,
            extra: { 'catalog (untimed) s': num(s.catalog), 'read s': num(s.read), 'upsert s': num(s.upsert) },
          }
        },
        check: (c) => ({ side: 'pyiceberg', table: c.pyiceberg, expected: input.expected }),
      },
    })

    printSummary(b, {
      title: [
        `bench:upsert — ${fmt(CHANGED)} changed rows (ids drawn uniformly at random from the whole table) into a ${fmt(ROWS)}-row table keyed by id {id long, name string, ts timestamptz, amount decimal(18,2)} + __ingest_ts`,
        `  ours: a sink with key ["id"], ${input.batches.length} batches of ${fmt(BATCH_ROWS)} rows, one roll (tick --force); pyiceberg: table.upsert(df, join_cols=["id"]) of the same rows from one NDJSON file`,
      ],
      rows: CHANGED,
      names: { ours: 'ours (keyed roll)', baseline: 'pyiceberg upsert' },
      results,
      target: 3,
      notes: ['rows/s counts the changed rows; both tables start as one PyIceberg-written data file of the same rows'],
    })
  })
}

await main()
