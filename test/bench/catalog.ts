// npm run bench:catalog — lhbox's Iceberg REST catalog (/iceberg on the edge) beside the Apache Iceberg
// REST fixture (iceberg-open-api's RESTCatalogServer, dev/rest-catalog.ts, with the JVM's full JIT as an
// operator runs it), on the same table: load-table and commit latency (issue 28's bench).
//
//   npm run bench:catalog [-- --snapshots N] [--loads K] [--commits K] [--edge miniflare|workerd|node]
//
// One private stack (Postgres, versitygw, and the edge: by default the Worker's bundle in workerd
// through Miniflare, without wrangler dev's proxy hop, which Cloudflare does not have (miniflare-edge.ts);
// under wrangler dev with --edge workerd; the Node edge with --edge node), and the fixture with its
// SQLite catalog and its data in the same versitygw bucket.
// Set-up (untimed): through PyIceberg's RestCatalog, the same calls on both (catalog_tables.py): a
// namespace and a table {id long, name string} with N (20) appends of 10 rows. Then a warm-up on each
// (200 loads, 20 commits: the JVM's JIT and workerd's isolate warm), and BENCH_RUNS (3) runs, the
// sides' order reversed every other run (harness.ts's rule), each side:
//   - load: K (200) GET …/namespaces/bench/tables/events one after another over a keep-alive
//     connection (ours with an API key as Bearer, the fixture without auth): each request's time
//     from send to the last byte of the answer;
//   - commit: K (50) POSTs to the same table, each `assert-table-uuid` + `set-properties
//     {bench.n: i}`: a new metadata file written and swapped (the fixture's SQLite row, our
//     Postgres row).
// After each run, PyIceberg loads both tables back: bench.n must be the last value committed and the
// snapshots as many as set up, before any figure of that run prints. Figures: medians of each run's
// median (and p90) per side, and ours ÷ fixture per run (lower is quicker). Target (issue 28): load ≤
// 1.2× the fixture's, met only when every run meets it. The load average at the start and the end.
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { parse } from 'lossless-json'
import { freePort } from '../../dev/ports.ts'
import { startChild, waitFor } from '../../dev/process.ts'
import { startRestCatalog } from '../../dev/rest-catalog.ts'
import { startMiniflareEdge } from './miniflare-edge.ts'
import { ensureVenv, runPython, s3Args } from '../support/python.ts'
import { benchStack, fmt } from './common.ts'
import { BENCH_DIR, envInt, loadText, median, runBench, startBench } from './harness.ts'

const { values: opts } = parseArgs({
  options: {
    snapshots: { type: 'string', default: '20' },
    loads: { type: 'string', default: '200' },
    commits: { type: 'string', default: '50' },
    edge: { type: 'string', default: 'miniflare' },
  },
})
const SNAPSHOTS = Number(opts.snapshots)
const LOADS = Number(opts.loads)
const COMMITS = Number(opts.commits)
const RUNS = envInt('BENCH_RUNS', 3)
if (![SNAPSHOTS, LOADS, COMMITS].every((n) => Number.isSafeInteger(n) && n > 0)) throw new Error('--snapshots, --loads, --commits: positive integers')
if (!['workerd', 'miniflare', 'node'].includes(opts.edge)) throw new Error(`--edge ${opts.edge}: workerd, miniflare or node`)
const TABLE = 'bench.events'
const WARM_LOADS = 200
const WARM_COMMITS = 20
const TARGET_LOAD = 1.2

interface Side {
  name: string
  /** …/v1/{prefix}/namespaces/bench/tables/events */
  tableUrl: string
  headers: Record<string, string>
  /** PyIceberg's connection options for catalog_tables.py. */
  pyArgs: string[]
  uuid?: string
  /** The value of bench.n the last commit set. */
  lastN?: number
}

interface RunFigures {
  load: { p50: number; p90: number }
  commit: { p50: number; p90: number }
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!
}

async function timed(n: number, one: (i: number) => Promise<void>): Promise<number[]> {
  const ms: number[] = []
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    await one(i)
    ms.push(performance.now() - t)
  }
  return ms
}

async function load(side: Side): Promise<void> {
  const res = await fetch(side.tableUrl, { headers: side.headers })
  const text = await res.text()
  if (res.status !== 200) throw new Error(`${side.name}: load ${res.status} ${text.slice(0, 300)}`)
  side.uuid ??= String((parse(text) as { metadata: { 'table-uuid': string } }).metadata['table-uuid'])
}

let counter = 0
async function commit(side: Side): Promise<void> {
  const n = ++counter
  const body = JSON.stringify({
    requirements: [{ type: 'assert-table-uuid', uuid: side.uuid }],
    updates: [{ action: 'set-properties', updates: { 'bench.n': String(n) } }],
  })
  const res = await fetch(side.tableUrl, { method: 'POST', headers: { ...side.headers, 'content-type': 'application/json' }, body })
  const text = await res.text()
  if (res.status !== 200) throw new Error(`${side.name}: commit ${res.status} ${text.slice(0, 300)}`)
  side.lastN = n
}

async function measure(side: Side): Promise<RunFigures> {
  const loads = await timed(LOADS, () => load(side))
  const commits = await timed(COMMITS, () => commit(side))
  return { load: { p50: median(loads), p90: quantile(loads, 0.9) }, commit: { p50: median(commits), p90: quantile(commits, 0.9) } }
}

/** PyIceberg reads the table back: the last commit's bench.n and the snapshots set up. */
async function readBack(side: Side): Promise<void> {
  const out = (await runPython(join(BENCH_DIR, 'catalog_tables.py'), [...side.pyArgs, 'check', TABLE, 'bench.n'])) as { result: Record<string, unknown> }
  const got = { property: String(out.result.property), snapshots: Number(String(out.result.snapshots)) }
  const want = { property: String(side.lastN), snapshots: SNAPSHOTS }
  if (got.property !== want.property || got.snapshots !== want.snapshots)
    throw new Error(`${side.name}: read back ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`)
}

const b = startBench('bench:catalog', 20 * 60_000, RUNS)
await runBench(b, async () => {
  await ensureVenv()
  const bs = await benchStack('bench-catalog', b.cleanup, b.log)
  const { stack } = bs
  let edgeUrl = stack.apiUrl
  if (opts.edge === 'node') {
    const port = await freePort()
    const child = startChild('node edge', process.execPath, ['--import', 'tsx', 'edge/node-main.ts'], join(stack.dir, 'node-edge.log'), {
      env: { ...process.env, ...stack.edgeVars, LHBOX_EDGE_PORT: String(port), LHBOX_EDGE_HOST: '127.0.0.1' },
    })
    b.cleanup.add(() => child.stop())
    edgeUrl = `http://127.0.0.1:${port}`
    await waitFor('the Node edge', async () => (await fetch(`${edgeUrl}/healthz`)).ok, 30_000, child)
  }
  if (opts.edge === 'miniflare') {
    const edge = await startMiniflareEdge(await freePort(), stack.edgeVars)
    b.cleanup.add(() => edge.stop())
    edgeUrl = edge.url
  }
  const fixturePort = await freePort()
  // The fixture as an operator runs it: the full JIT (not the tests' quick-start flags), the same heap.
  const fixture = await startRestCatalog(join(stack.dir, 'rest-fixture'), fixturePort, stack.s3, `s3://${stack.s3.bucket}/rest`, ['-Xmx256m'])
  b.cleanup.add(() => fixture.child.stop())

  const config = (await (
    await fetch(`${edgeUrl}/iceberg/v1/config?warehouse=${encodeURIComponent(bs.warehouse)}`, {
      headers: { authorization: `Bearer ${bs.apiKey}` },
    })
  ).json()) as { overrides: { prefix: string } }
  const ours: Side = {
    name: `lhbox /iceberg (${opts.edge})`,
    tableUrl: `${edgeUrl}/iceberg/v1/${config.overrides.prefix}/namespaces/bench/tables/events`,
    headers: { authorization: `Bearer ${bs.apiKey}` },
    pyArgs: ['--rest-uri', `${edgeUrl}/iceberg`, '--rest-token', bs.apiKey, '--warehouse', bs.warehouse, ...s3Args(stack.s3)],
  }
  const apache: Side = {
    name: 'Apache REST fixture',
    tableUrl: `${fixture.uri}/v1/namespaces/bench/tables/events`,
    headers: {},
    pyArgs: ['--rest-uri', fixture.uri, '--warehouse', `s3://${stack.s3.bucket}/rest`, ...s3Args(stack.s3)],
  }
  for (const side of [ours, apache]) {
    const out = (await runPython(join(BENCH_DIR, 'catalog_tables.py'), [...side.pyArgs, 'setup', TABLE, '--snapshots', String(SNAPSHOTS)])) as {
      result: { snapshots: unknown }
    }
    b.log(`${side.name}: ${TABLE} set up with ${String(out.result.snapshots)} snapshots`)
    await timed(WARM_LOADS, () => load(side))
    await timed(WARM_COMMITS, () => commit(side))
  }

  const results = new Map<Side, RunFigures[]>([
    [ours, []],
    [apache, []],
  ])
  for (let run = 0; run < RUNS; run++) {
    const order = run % 2 === 0 ? [ours, apache] : [apache, ours]
    for (const side of order) results.get(side)!.push(await measure(side))
    for (const side of order) await readBack(side)
    const o = results.get(ours)![run]!
    const a = results.get(apache)![run]!
    b.log(
      `run ${run + 1}/${RUNS} (read back OK; load ${loadText()}): load p50 ours ${o.load.p50.toFixed(2)} ms, fixture ${a.load.p50.toFixed(2)} ms (${(o.load.p50 / a.load.p50).toFixed(2)}×); commit p50 ours ${o.commit.p50.toFixed(2)} ms, fixture ${a.commit.p50.toFixed(2)} ms (${(o.commit.p50 / a.commit.p50).toFixed(2)}×)`,
    )
  }

  const m = (side: Side, f: (r: RunFigures) => number) => median(results.get(side)!.map(f))
  console.log(
    `\nbench:catalog — ${TABLE} with ${SNAPSHOTS} snapshots; ${LOADS} loads and ${COMMITS} commits a side a run, one after another; medians of ${RUNS} runs`,
  )
  console.log('  side                           load p50   load p90   commit p50   commit p90')
  for (const side of [ours, apache])
    console.log(
      `  ${side.name.padEnd(30)} ${fmt(
        m(side, (r) => r.load.p50),
        2,
      ).padStart(6)} ms ${fmt(
        m(side, (r) => r.load.p90),
        2,
      ).padStart(7)} ms ${fmt(
        m(side, (r) => r.commit.p50),
        2,
      ).padStart(9)} ms ${fmt(
        m(side, (r) => r.commit.p90),
        2,
      ).padStart(9)} ms`,
    )
  const perRun = (f: (r: RunFigures) => number) => results.get(ours)!.map((r, i) => f(r) / f(results.get(apache)![i]!))
  const loadRatios = perRun((r) => r.load.p50)
  const commitRatios = perRun((r) => r.commit.p50)
  const met = loadRatios.every((q) => q <= TARGET_LOAD)
  console.log(
    `\n  load, ours ÷ fixture: ${median(loadRatios).toFixed(2)}× (runs ${loadRatios.map((q) => q.toFixed(2)).join(', ')}) — target ≤ ${TARGET_LOAD}×: ${met ? 'met (every run)' : 'NOT met'}`,
  )
  console.log(`  commit, ours ÷ fixture: ${median(commitRatios).toFixed(2)}× (runs ${commitRatios.map((q) => q.toFixed(2)).join(', ')}) — no target`)
  console.log(`  load average at the start ${loadText(b.loadStart)}; at the end ${loadText()} — a ratio is only as good as the box is quiet`)
})
