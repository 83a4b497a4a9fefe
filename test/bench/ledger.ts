// npm run bench:ledger -- [--sinks 10000] [--due 100] [--ledger-rows 1000000] [--reps 7] [--limit 4]
//                         [--rollers 4] [--connections 8] [--send-seconds 10] [--plans 1]
//
// The ledger at fleet scale (issue 27: many rollers, ten thousand sinks). A private stack in a
// temporary folder, loopback only: Postgres (initdb) with pgbouncer in transaction mode in front, an
// S3 gateway (versitygw; BENCH_STORE=s3rver for the mock) and the edge on Node (edge/node-main.ts, what
// `npm run edge` runs) reaching Postgres through pgbouncer. The edge prunes the ledger when it starts:
// it starts before the fleet is seeded (test/bench/fleet.ts: --sinks sinks, --due of them due, the rest
// idle or waiting but not due, --ledger-rows committed batches of history). Then, each REPS times after
// a warm-up, medians printed:
//   (a) leaseSinks (edge/roller-ledger.ts) as it is now, called with a db client as the Node edge makes
//       one (drizzle over node-postgres, through pgbouncer), with `limit` (a roller's free slots); the
//       leases are released after each call. Also --rollers rollers leasing at once: what each got must
//       be disjoint.
//   (b) GET /internal/sinks (the full view, which only the 6-hourly sweep reads), GET /internal/lag (what
//       a roller reads every tick for its gauges) and GET /internal/sinks?roller=…&limit=… (a lease) over
//       HTTP, the lease released after each;
//   (c) GET /v1/sinks, the first page, as the project with the most sinks;
//   (d) EXPLAIN (ANALYZE, BUFFERS) of the statements leaseSinks and viewSinks send (recorded as they
//       go to the client), each in a transaction rolled back: execution (and JIT) time and the plan's top
//       nodes (--plans 1: the whole plans);
//   (e) pruneLedger (edge/roller-ledger.ts) as it is now, once, while sends go through the edge to sinks
//       across the fleet: the sends' p50/p99 during the prune beside a window of sends just before it,
//       and any session seen waiting on a lock meanwhile; its statements by text with their times; then
//       the next prune, with nothing left to prune (the hourly steady state), and each statement's plan there.
// Targets (issue 27): the lease statement ≤ 50 ms, the roller's reads of /internal ≤ 100 ms at 10,000 sinks, 100 due.
// Everything it started is stopped and its folder removed at the end (LHBOX_BENCH_KEEP=1 keeps the
// folder), also on failure, Ctrl-C and the deadline.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os, { tmpdir } from 'node:os'
import { join } from 'node:path'
import { drizzle } from 'drizzle-orm/node-postgres'
import pg from 'pg'
import { migrateTo } from '../../db/migrate.ts'
import type { EdgeDb } from '../../db/edge.ts'
import * as schema from '../../db/schema.ts'
import { startNodeEdgeChild } from '../../dev/node-edge.ts'
import { pgbouncerBinary, startPgbouncer } from '../../dev/pgbouncer.ts'
import { freePort } from '../../dev/ports.ts'
import { PG_DATABASE, PG_PASSWORD, PG_USER, startPostgres } from '../../dev/postgres.ts'
import { waitFor } from '../../dev/process.ts'
import { startS3rver, startVersitygw } from '../../dev/s3.ts'
import { newSecretsKey } from '../../dev/stack.ts'
import { createApp } from '../../edge/app.ts'
import type { Env } from '../../edge/env.ts'
import { nodeEnv } from '../../edge/node.ts'
import { leaseSinks, pruneLedger, viewSinks } from '../../edge/roller-ledger.ts'
import { Cleanup, deadline, fmt, rowJson } from './common.ts'
import { type Fleet, fleetWarehouses, intOptions, seedFleet } from './fleet.ts'

const O = intOptions({
  sinks: 10_000,
  due: 100,
  'ledger-rows': 1_000_000,
  reps: 7,
  limit: 4,
  rollers: 4,
  connections: 8,
  'send-seconds': 10,
  /** 1: print each explained statement's whole plan (text) after the table. */
  plans: 0,
})
const REPS = Math.max(1, O.reps)
const LEASE_TARGET_MS = 50
const VIEW_TARGET_MS = 100
const log = (line: string) => console.log(`[bench:ledger] ${line}`)

// ---- figures -----------------------------------------------------------------------------------------

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length === 0 ? NaN : s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor(q * s.length))]
}
const ms = (n: number) => (Number.isFinite(n) ? `${n.toFixed(1)} ms` : '—')
const mib = (bytes: number) => `${(bytes / 1048576).toFixed(2)} MiB`
const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')

async function timed<T>(f: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t = performance.now()
  const value = await f()
  return { ms: performance.now() - t, value }
}

interface Row {
  what: string
  times: number[]
  note: string
  target?: number
}

// ---- the db client the edge makes, and one that records what it is sent ---------------------------

interface Recorded {
  text: string
  params: unknown[]
  /** Client-side time of the statement (sent → answer read). */
  ms?: number
}

/** drizzle over one node-postgres client, as edge/node.ts makes it per request (hence the one cast). */
const edgeDb = (client: pg.Client) => drizzle(client, { schema }) as unknown as EdgeDb

/** The sinks a lease answered: leaseSinks answers a list, or {sinks, …} (both shapes have been its). */
const leased = (answer: unknown): Array<{ id: string }> => (Array.isArray(answer) ? answer : (answer as { sinks: Array<{ id: string }> }).sinks)

/** The same db whose raw client records each statement it is sent (edge/roller-ledger.ts sends through db.$client). */
function recording(db: EdgeDb, client: pg.Client, into: Recorded[]): EdgeDb {
  const $client = {
    query: async (text: string, params?: unknown[]) => {
      const r: Recorded = { text, params: params ?? [] }
      into.push(r)
      const t = performance.now()
      const answer = await client.query(text, params)
      r.ms = performance.now() - t
      return answer
    },
  }
  return Object.assign(Object.create(db), { $client }) as EdgeDb
}

/**
 * The statements a route sends, whatever builds them: the app (edge/app.ts, as edge/node.ts serves it)
 * answers one request in this process over a client whose every query is recorded.
 */
async function routeStatements(client: pg.Client, env: Env, path: string, headers: Record<string, string>): Promise<Recorded[]> {
  const into: Recorded[] = []
  const query = client.query.bind(client) as (...args: unknown[]) => unknown
  const recordingQuery = (...args: unknown[]) => {
    const [config, values] = args as [string | { text?: string; values?: unknown[] }, unknown[] | undefined]
    const text = typeof config === 'string' ? config : config?.text
    if (text) into.push({ text, params: (typeof config === 'string' ? values : (config.values ?? values)) ?? [] })
    return query(...args)
  }
  const recorded = Object.assign(Object.create(client), { query: recordingQuery }) as pg.Client
  const app = createApp(async () => ({ db: edgeDb(recorded), close: async () => undefined }))
  const res = await app.request(path, { headers }, env)
  const text = await res.text()
  if (res.status !== 200) throw new Error(`GET ${path} (in process): ${res.status} ${text.slice(0, 500)}`)
  return into
}

// ---- EXPLAIN -------------------------------------------------------------------------------------------

interface PlanNode {
  'Node Type': string
  'Relation Name'?: string
  'Index Name'?: string
  'CTE Name'?: string
  'Parent Relationship'?: string
  'Subplan Name'?: string
  'Actual Total Time'?: number
  'Actual Rows'?: number
  'Actual Loops'?: number
  'Shared Hit Blocks'?: number
  'Shared Read Blocks'?: number
  Plans?: PlanNode[]
}

interface Explained {
  executionMs: number[]
  planningMs: number[]
  /** JIT compilation, part of the execution time (0 when the plan was not compiled). */
  jitMs: number[]
  top: string[]
  /** With --plans 1: one more run's plan as text. */
  text?: string
}

/** EXPLAIN (ANALYZE, BUFFERS) `runs` times, each in a transaction rolled back; the nodes of the median run that took the most time themselves. */
async function explain(client: pg.Client, s: Recorded, runs: number): Promise<Explained> {
  const out: Explained = { executionMs: [], planningMs: [], jitMs: [], top: [] }
  const plans: PlanNode[] = []
  for (let i = 0; i < runs; i++) {
    await client.query('begin')
    try {
      const { rows } = await client.query(`explain (analyze, buffers, format json) ${s.text}`, s.params)
      const doc = rows[0]['QUERY PLAN'][0]
      out.executionMs.push(doc['Execution Time'])
      out.planningMs.push(doc['Planning Time'])
      out.jitMs.push(doc.JIT?.Timing?.Total ?? 0)
      plans.push(doc.Plan)
    } finally {
      await client.query('rollback')
    }
  }
  // The plan of the median run, its top levels: each node with its time (all loops) and rows.
  const mid = median(out.executionMs)
  const plan = plans[out.executionMs.indexOf(mid)] ?? plans.at(-1)
  const walk = (n: PlanNode, depth: number) => {
    if (depth > 8 || out.top.length >= 18) return
    const on = [n['Relation Name'] && `on ${n['Relation Name']}`, n['Index Name'] && `using ${n['Index Name']}`, n['CTE Name'] && `CTE ${n['CTE Name']}`]
      .filter(Boolean)
      .join(' ')
    const sub = n['Subplan Name'] ? ` [${n['Subplan Name']}]` : ''
    const total = (n['Actual Total Time'] ?? 0) * (n['Actual Loops'] ?? 1)
    out.top.push(
      `${'  '.repeat(depth)}${n['Node Type']}${on ? ` ${on}` : ''}${sub}: ${total.toFixed(1)} ms, rows ${fmt(n['Actual Rows'] ?? 0)} × loops ${fmt(n['Actual Loops'] ?? 0)}, buffers hit ${fmt(n['Shared Hit Blocks'] ?? 0)} read ${fmt(n['Shared Read Blocks'] ?? 0)}`,
    )
    for (const c of n.Plans ?? []) walk(c, depth + 1)
  }
  if (plan) walk(plan, 0)
  if (O.plans) {
    await client.query('begin')
    try {
      const { rows } = await client.query(`explain (analyze, buffers) ${s.text}`, s.params)
      out.text = rows.map((r) => r['QUERY PLAN']).join('\n')
    } finally {
      await client.query('rollback')
    }
  }
  return out
}

// ---- sends through the edge ------------------------------------------------------------------------------

interface Sent {
  start: number
  end: number
  status: number
}

/** `connections` producers sending ~1 KB, 10-row batches to sinks across the fleet until `stop()` says so. */
function sendLoad(edgeUrl: string, fleet: Fleet, connections: number, tag: string, stop: () => boolean): Promise<Sent[]> {
  const body = `[${Array.from({ length: 10 }, (_, i) => rowJson(2000 + i)).join(',')}]`
  const sent: Sent[] = []
  let n = 0
  const producer = async () => {
    while (!stop()) {
      const k = n++
      const sink = fleet.sinks[(k * 7919) % fleet.sinks.length]
      const start = performance.now()
      let status = 0
      try {
        const res = await fetch(`${edgeUrl}/v1/sinks/${sink.id}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${sink.sendKey}`, 'content-type': 'application/json', 'idempotency-key': `${tag}-${k}` },
          body,
        })
        await res.arrayBuffer()
        status = res.status
      } catch {
        status = -1
      }
      sent.push({ start, end: performance.now(), status })
    }
  }
  return Promise.all(Array.from({ length: connections }, producer)).then(() => sent)
}

function sendFigures(sent: Sent[]): { n: number; ok: number; p50: number; p99: number; max: number; perSecond: number } {
  const lat = sent.map((s) => s.end - s.start)
  const span = sent.length ? (Math.max(...sent.map((s) => s.end)) - Math.min(...sent.map((s) => s.start))) / 1000 : 0
  return {
    n: sent.length,
    ok: sent.filter((s) => s.status === 202).length,
    p50: quantile(lat, 0.5),
    p99: quantile(lat, 0.99),
    max: Math.max(0, ...lat),
    perSecond: span > 0 ? sent.length / span : 0,
  }
}

// ---- the bench -------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const loadStart = load()
  log(`load average at the start: ${loadStart} (1/5/15 min) on ${os.availableParallelism()} cores`)
  log(`${fmt(O.sinks)} sinks (${fmt(O.due)} due), ${fmt(O['ledger-rows'])} ledger rows, ${REPS} repetitions`)
  const cleanup = new Cleanup()
  process.once('uncaughtException', (err) => {
    console.error(`\n[bench:ledger] FAILED: ${err.stack ?? err}`)
    void cleanup.run().finally(() => process.exit(1))
  })
  // Seeding costs about a minute per million rows on two busy cores; the rest is bounded.
  deadline(cleanup, (15 * 60 + Math.ceil(O['ledger-rows'] / 1_000_000) * 90) * 1000, 'bench:ledger')
  const dir = mkdtempSync(join(tmpdir(), 'lhbox-bench-ledger-'))
  cleanup.add(() => (process.env.LHBOX_BENCH_KEEP ? log(`state kept in ${dir}`) : rmSync(dir, { recursive: true, force: true })))
  const clients: pg.Client[] = []
  try {
    // ---- the stack
    if (!pgbouncerBinary()) throw new Error('pgbouncer is not installed (apt-get install pgbouncer): the edge reaches Postgres through it')
    const [pgPort, bouncerPort, s3Port, edgePort] = [await freePort(), await freePort(), await freePort(), await freePort()]
    const pgs = await startPostgres(dir, pgPort)
    cleanup.add(() => pgs.stop())
    cleanup.add(() => Promise.all(clients.map((c) => c.end().catch(() => undefined))))
    const secretsKey = newSecretsKey()
    await migrateTo(pgs.url, secretsKey)
    const bouncer = await startPgbouncer(dir, bouncerPort, pgPort)
    cleanup.add(() => bouncer.stop())
    const pooled = `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${bouncerPort}/${PG_DATABASE}`
    const s3 = process.env.BENCH_STORE === 's3rver' ? await startS3rver(dir, s3Port, 'lhbox-bench') : await startVersitygw(dir, s3Port, 'lhbox-bench')
    cleanup.add(() => s3.child.stop())
    const bootstrapSecret = `bench-${crypto.randomUUID()}`
    const edgeLog = () => readFileSync(join(dir, 'node-edge.log'), 'utf8')
    const edgeVars = {
      DATABASE_URL: pooled,
      LHBOX_BOOTSTRAP_SECRET: bootstrapSecret,
      LHBOX_SECRETS_KEY: secretsKey,
      S3_ENDPOINT: s3.config.endpoint,
      S3_BUCKET: s3.config.bucket,
      S3_REGION: s3.config.region,
      S3_ACCESS_KEY_ID: s3.config.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.config.secretAccessKey,
    }
    const edge = await startNodeEdgeChild(dir, edgePort, { ...edgeVars, LHBOX_EDGE_POOL: '10' }).catch((err: Error) => {
      throw new Error(`${err.message}\n${edgeLog().slice(-3000)}`)
    })
    cleanup.add(() => edge.stop())
    const edgeUrl = `http://127.0.0.1:${edgePort}`
    // Its prune on start, over the empty ledger, before anything is seeded.
    await waitFor("the edge's first prune", async () => edgeLog().includes('"ledger pruned"'), 30_000)

    const connect = async (url: string) => {
      const c = new pg.Client({ connectionString: url, application_name: 'bench-ledger' })
      c.on('error', () => undefined) // a connection cut at the end (or by a failure) is not news
      await c.connect()
      clients.push(c)
      return c
    }
    const direct = await connect(pgs.url)

    // ---- the fleet: three projects, six warehouses (half the sinks in the first project)
    const { warehouses, keys } = await fleetWarehouses(edgeUrl, bootstrapSecret, { 'fleet-a': 3, 'fleet-b': 2, 'fleet-c': 1 })
    const fleet = await seedFleet(direct, { sinks: O.sinks, due: O.due, ledgerRows: O['ledger-rows'], warehouses, log })
    log(
      `seeded in ${fleet.seedSeconds.toFixed(1)} s: ${fmt(fleet.sinks.length)} live sinks (${fmt(fleet.due)} due, ${fmt(fleet.waiting)} waiting, not due) + ${fmt(fleet.deleted)} deleted; ledger ${Object.entries(
        fleet.ledger,
      )
        .map(([s, n]) => `${s} ${fmt(n)}`)
        .join(', ')}; ${fmt(fleet.prunable)} prunable`,
    )
    const bytes = await direct.query<{ t: string; i: string }>(
      `select pg_size_pretty(pg_table_size('batches')) as t, pg_size_pretty(pg_indexes_size('batches')) as i`,
    )
    log(`batches: table ${bytes.rows[0].t}, indexes ${bytes.rows[0].i}`)
    const internal = { authorization: `Bearer ${bootstrapSecret}` }
    const release = (roller: string) => direct.query(`update sinks set lease_owner = null, lease_expires_at = null where lease_owner like $1`, [roller])

    // The view says what is due: the fleet as seeded, or nothing measured means anything.
    const seen = (await (await fetch(`${edgeUrl}/internal/sinks`, { headers: internal })).json()) as { sinks: Array<{ due: boolean }> }
    const dueSeen = seen.sinks.filter((s) => s.due).length
    log(`GET /internal/sinks: ${fmt(seen.sinks.length)} sinks, ${fmt(dueSeen)} due`)
    if (dueSeen !== O.due) throw new Error(`the view shows ${dueSeen} sinks due, the fleet was seeded with ${O.due}`)
    log(`load average before measuring: ${load()}`)
    const rows: Row[] = []

    // ---- (a) leaseSinks, one roller; then several at once
    const leaseClient = await connect(pooled)
    const leaseDb = edgeDb(leaseClient)
    const leaseOpts = (roller: string) =>
      ({ roller, leaseSeconds: 300, sinkId: null, force: false, purpose: 'roll', limit: O.limit }) as unknown as Parameters<typeof leaseSinks>[1]
    const leaseStatements: Recorded[] = []
    const warm = await leaseSinks(recording(leaseDb, leaseClient, leaseStatements), leaseOpts('bench-warm'))
    await release('bench-warm')
    const leaseTimes: number[] = []
    const statementTimes: number[][] = []
    const leasedCounts = new Set<number>()
    for (let i = 0; i < REPS; i++) {
      const sent: Recorded[] = []
      const r = await timed(() => leaseSinks(recording(leaseDb, leaseClient, sent), leaseOpts('bench-a')))
      leaseTimes.push(r.ms)
      for (const [k, s] of sent.entries()) (statementTimes[k] ??= []).push(s.ms ?? NaN)
      leasedCounts.add(leased(r.value).length)
      await release('bench-a')
    }
    const honoured = Math.max(...leasedCounts) <= O.limit
    rows.push({
      what: `leaseSinks(limit ${O.limit}), ${leaseStatements.length} statement(s)`,
      times: leaseTimes,
      note: `leased ${[...leasedCounts].join('/')} ${honoured ? '' : `(limit not honoured: the function has none yet) `}`,
      target: LEASE_TARGET_MS,
    })
    for (const [k, times] of statementTimes.entries())
      rows.push({ what: `  its statement ${k + 1}${k === 0 ? ' (the lease)' : ''}`, times, note: 'client side', target: k === 0 ? LEASE_TARGET_MS : undefined })
    log(`leaseSinks: first call leased ${leased(warm).length}; ${leaseTimes.map((t) => t.toFixed(1)).join(' ')} ms`)

    const rollerClients = await Promise.all(Array.from({ length: O.rollers }, () => connect(pooled)))
    const manyTimes: number[] = []
    let overlaps = 0
    let manyLeased = 0
    for (let i = 0; i < REPS; i++) {
      const t = performance.now()
      const got = await Promise.all(rollerClients.map((c, k) => timed(() => leaseSinks(edgeDb(c), leaseOpts(`bench-many-${k}`)))))
      manyTimes.push(performance.now() - t)
      const ids = got.flatMap((g) => leased(g.value).map((s) => s.id))
      overlaps += ids.length - new Set(ids).size
      manyLeased = ids.length
      await release('bench-many-%')
    }
    rows.push({
      what: `${O.rollers} rollers leasing at once (all done)`,
      times: manyTimes,
      note: `${manyLeased} sinks leased, ${overlaps === 0 ? 'no sink twice' : `${overlaps} SINKS LEASED TWICE`}`,
    })
    if (overlaps > 0) process.exitCode = 1

    // ---- (b) the roller's routes over HTTP
    const get = async (path: string, headers: Record<string, string>) => {
      const t = performance.now()
      const res = await fetch(edgeUrl + path, { headers })
      const text = await res.text()
      const took = performance.now() - t
      if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${text.slice(0, 500)}`)
      return { ms: took, bytes: Buffer.byteLength(text), json: JSON.parse(text) }
    }
    const httpRow = async (what: string, path: string, headers: Record<string, string>, after?: () => Promise<unknown>, target?: number) => {
      const first = await get(path, headers) // warm-up
      await after?.()
      const times: number[] = []
      let last = first
      for (let i = 0; i < REPS; i++) {
        last = await get(path, headers)
        times.push(last.ms)
        await after?.()
      }
      const list = (last.json.sinks ?? []) as unknown[]
      const paging = 'next_cursor' in last.json ? `, next_cursor ${last.json.next_cursor ? 'set' : 'null'}` : ''
      rows.push({ what, times, note: `${fmt(list.length)} sinks, ${mib(last.bytes)}${paging}`, target })
    }
    await httpRow('GET /internal/sinks (view)', '/internal/sinks', internal)
    // What a roller asks every tick for its gauges (the full view is for the 6-hourly sweep only).
    await httpRow('GET /internal/lag (the gauges)', '/internal/lag', internal, undefined, VIEW_TARGET_MS)
    await httpRow(
      `GET /internal/sinks?roller=…&limit=${O.limit}`,
      `/internal/sinks?roller=bench-http&limit=${O.limit}`,
      internal,
      () => release('bench-http'),
      LEASE_TARGET_MS,
    )

    // ---- (c) the control plane's list, the biggest project's first page
    await httpRow('GET /v1/sinks (first page, fleet-a)', '/v1/sinks', { authorization: `Bearer ${keys['fleet-a']}` })

    // ---- (d) the plans
    const viewStatements: Recorded[] = []
    await viewSinks(recording(leaseDb, leaseClient, viewStatements), null)
    const explained: Array<{ what: string; e: Explained }> = []
    for (const [i, s] of leaseStatements.entries())
      explained.push({ what: `leaseSinks statement ${i + 1}/${leaseStatements.length}`, e: await explain(direct, s, Math.max(3, Math.min(REPS, 5))) })
    for (const [i, s] of viewStatements.entries())
      explained.push({ what: `viewSinks statement ${i + 1}/${viewStatements.length}`, e: await explain(direct, s, Math.max(3, Math.min(REPS, 5))) })
    // GET /v1/sinks: the statements the route sent (its key's check too), the costliest explained.
    const listStatements = await routeStatements(leaseClient, nodeEnv(edgeVars), '/v1/sinks', { authorization: `Bearer ${keys['fleet-a']}` })
    const listExplained: Array<{ s: Recorded; e: Explained }> = []
    for (const st of listStatements) listExplained.push({ s: st, e: await explain(direct, st, 3) })
    const costliest = listExplained.sort((a, z) => median(z.e.executionMs) - median(a.e.executionMs))[0]
    if (costliest)
      explained.push({
        what: `GET /v1/sinks statement (costliest of ${listStatements.length})`,
        e: costliest.e,
      })
    await release('bench-warm')

    // ---- (e) the prune, with sends going on
    const sendSeconds = O['send-seconds']
    log(`sends without a prune: ${O.connections} connections for ${sendSeconds} s, after 2 s of warm-up`)
    let until = performance.now() + 2000
    await sendLoad(edgeUrl, fleet, O.connections, 'warm', () => performance.now() > until)
    until = performance.now() + sendSeconds * 1000
    const before = sendFigures(await sendLoad(edgeUrl, fleet, O.connections, 'before', () => performance.now() > until))
    const pruneClient = await connect(pooled)
    const prunable = Number(
      (
        await direct.query(
          `select (select count(*) from batches where state = 'committed' and committed_at < now() - interval '7 days')
                + (select count(*) from batches where state = 'discarded' and received_at < now() - interval '7 days') as n`,
        )
      ).rows[0].n,
    )
    log(`the prune, ${fmt(prunable)} rows prunable, with the same sends going on`)
    let pruning = true
    let lockSamples = 0
    let lockWaiters = 0
    const sampler = (async () => {
      const watch = await connect(pgs.url)
      while (pruning) {
        const { rows: w } = await watch.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity where datname = $1 and wait_event_type = 'Lock'`,
          [PG_DATABASE],
        )
        lockSamples++
        lockWaiters = Math.max(lockWaiters, w[0].n)
        await new Promise((r) => setTimeout(r, 100))
      }
    })()
    until = Infinity
    const during = sendLoad(edgeUrl, fleet, O.connections, 'during', () => performance.now() > until)
    await new Promise((r) => setTimeout(r, 1000))
    const pruneStatements: Recorded[] = []
    const pruneStart = performance.now()
    let pruneEnd = pruneStart
    let pruned: number
    try {
      pruned = await pruneLedger(recording(edgeDb(pruneClient), pruneClient, pruneStatements))
      pruneEnd = performance.now()
    } finally {
      until = performance.now() + 500 // the sends and the sampler stop, also when the prune failed
      pruning = false
    }
    const duringAll = await during
    await sampler
    const inWindow = duringAll.filter((s) => s.start >= pruneStart && s.end <= pruneEnd)
    const duringFig = sendFigures(inWindow)
    const pruneSeconds = (pruneEnd - pruneStart) / 1000
    const failed = before.n - before.ok + duringAll.filter((s) => s.status !== 202).length
    const left = Number((await direct.query(`select count(*) as n from batches`)).rows[0].n)
    // Its statements by text; then the hourly prune that finds nothing left (the steady state), and each
    // distinct statement's plan there.
    const byText = new Map<string, { times: number[]; first: Recorded }>()
    for (const st of pruneStatements) {
      const got = byText.get(st.text) ?? { times: [], first: st }
      got.times.push(st.ms ?? NaN)
      byText.set(st.text, got)
    }
    const idle = await timed(() => pruneLedger(edgeDb(pruneClient)))
    for (const [i, [, g]] of [...byText].entries()) explained.push({ what: `prune statement ${i + 1}, nothing left`, e: await explain(direct, g.first, 3) })

    // ---- the table
    console.log('')
    console.log(
      `bench:ledger — ${fmt(fleet.sinks.length)} sinks (${fmt(fleet.due)} due, ${fmt(fleet.waiting)} waiting not due, ${fmt(fleet.deleted)} deleted), ${fmt(O['ledger-rows'])} committed ledger rows; medians of ${REPS} after a warm-up; edge on Node through pgbouncer; loopback`,
    )
    console.log('')
    console.log(`  ${'what'.padEnd(46)} ${'median'.padStart(9)} ${'min'.padStart(9)} ${'max'.padStart(9)}  target      notes`)
    for (const r of rows) {
      const m = median(r.times)
      const target = r.target === undefined ? ''.padEnd(11) : `≤ ${r.target} ms ${m <= r.target ? 'met' : 'NOT'}`.padEnd(11)
      console.log(
        `  ${r.what.padEnd(46)} ${ms(m).padStart(9)} ${ms(Math.min(...r.times)).padStart(9)} ${ms(Math.max(...r.times)).padStart(9)}  ${target} ${r.note}`,
      )
    }
    for (const { what, e } of explained) {
      console.log(
        `  ${`EXPLAIN ${what}`.padEnd(46)} ${ms(median(e.executionMs)).padStart(9)} ${ms(Math.min(...e.executionMs)).padStart(9)} ${ms(Math.max(...e.executionMs)).padStart(9)}  ${''.padEnd(11)} execution; planning ${ms(median(e.planningMs))}${median(e.jitMs) > 0 ? `; JIT ${ms(median(e.jitMs))} of the execution` : ''}`,
      )
    }
    console.log('')
    console.log(
      `  pruneLedger: ${fmt(pruned)} rows in ${pruneSeconds.toFixed(1)} s (${fmt(prunable)} counted prunable just before${pruned >= prunable ? '' : ' — it LEFT SOME'}; ${fmt(left)} ledger rows left), ${pruneStatements.length} statement(s)`,
    )
    for (const [i, [text, g]] of [...byText].entries())
      console.log(
        `    statement ${i + 1}: ${g.times.length}×, median ${ms(median(g.times))}, max ${ms(Math.max(...g.times))}: ${text.replace(/\s+/g, ' ').slice(0, 110)}`,
      )
    console.log(`    the next prune, nothing left to prune: ${ms(idle.ms)} (${fmt(idle.value)} rows)`)
    const sendLine = (what: string, f: ReturnType<typeof sendFigures>) =>
      `  ${what.padEnd(26)} ${fmt(f.n).padStart(6)} sends, ${fmt(f.perSecond, 1).padStart(6)}/s, p50 ${ms(f.p50).padStart(9)}, p99 ${ms(f.p99).padStart(9)}, max ${ms(f.max).padStart(9)}, ${f.n - f.ok} not 202`
    console.log(sendLine(`sends, no prune (${sendSeconds} s)`, before))
    console.log(sendLine('sends during the prune', duringFig))
    console.log(
      `  sessions waiting on a lock during the prune: at most ${lockWaiters} (${lockSamples} samples, every 100 ms); sends failed: ${failed}; ${O.connections} connections, sinks across the fleet`,
    )
    console.log('')
    console.log("  the plans' top nodes (the median EXPLAIN ANALYZE run; time over all loops, an InitPlan or CTE counted where it ran too):")
    for (const { what, e } of explained) {
      console.log(`    ${what}:`)
      for (const t of e.top) console.log(`      ${t}`)
    }
    for (const { what, e } of explained) if (e.text) console.log(`\n  ${what}:\n${e.text}`)
    console.log('')
    console.log(`  load average (1/5/15 min) at the start ${loadStart}, at the end ${load()}, on ${os.availableParallelism()} cores`)
    if (failed > 0) process.exitCode = 1
  } catch (err) {
    console.error(`\n[bench:ledger] FAILED: ${(err as Error).stack ?? err}`)
    process.exitCode = 1
  } finally {
    await cleanup.run()
  }
}

await main()
