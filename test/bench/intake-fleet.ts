// npm run bench:intake -- --sinks 10000 [--ledger-rows 1000000] [--due 100]: the send route at fleet
// scale. The same private stack as bench:intake (wrangler dev, the neon driver over the WebSocket
// bridge, pgbouncer in transaction mode, one Postgres, versitygw), with a fleet seeded in it
// (test/bench/fleet.ts: --sinks sinks over three projects and six warehouses, --ledger-rows batches of
// committed history). autocannon drives, in alternation, each with a warm-up first:
//   - `send, 1 sink`: bench:intake's send side (one sink, ~1 KB 10-row batches, a new Idempotency-Key
//     each), for comparison in the same run;
//   - `send, N sinks`: the same requests spread over every live sink of the fleet, each with its key.
// Around each timed run it reads pgbouncer's SHOW STATS (every statement the edge sent through the
// pool) and the CPU time of Postgres's processes and of pgbouncer (/proc), per request sent. Then:
//   - `ledger only`: the send route's database work alone — ledgerStatement and markStored of edge/ledger.ts
//     through pgbouncer from BENCH_CONNECTIONS clients, no HTTP, no bucket — across the fleet: the sends
//     per second this one Postgres sustains on this machine, with its CPU per send;
//   - 20 sends through another edge Worker whose database path has a recording TCP proxy between the
//     bridge and pgbouncer (test/support/pg-proxy.ts): the statements of a send, by text.
// Before any figure is printed, every 2xx of the fleet side is read back: one pending ledger row and one
// object each (and the single sink's, as bench:intake checks it).
import type { Result } from 'autocannon'
import { readdirSync, readFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { drizzle } from 'drizzle-orm/node-postgres'
import pg from 'pg'
import { intakeEntry } from '../../contract/bucket.ts'
import type { EdgeDb } from '../../db/edge.ts'
import * as schema from '../../db/schema.ts'
import { freePort } from '../../dev/ports.ts'
import { PG_DATABASE, PG_PASSWORD, PG_USER } from '../../dev/postgres.ts'
import { startBridge } from '../../dev/wsbridge.ts'
import { startWrangler } from '../../dev/wrangler.ts'
import { ledgerStatement, markStored } from '../../edge/ledger.ts'
import { sha256Hex } from '../../edge/keys.ts'
import { S3Client } from '../../iceberg/io/s3.ts'
import { startPgProxy } from '../support/pg-proxy.ts'
import { benchStack, type BenchStack, Cleanup, deadline, fmt, rowJson, sinkHolds, tableAndSink } from './common.ts'
import { type Fleet, fleetWarehouses, seedFleet } from './fleet.ts'
import { type Req, sendLoad } from './send-load.ts'

const log = (line: string) => console.log(`[bench:intake] ${line}`)

export interface FleetOptions {
  sinks: number
  ledgerRows: number
  due: number
  duration: number
  warmup: number
  connections: number
  rounds: number
}

// ---- what the database side spent ---------------------------------------------------------------------

interface Counters {
  queries: number
  xacts: number
  /** CPU seconds of Postgres (the postmaster and its children) and of pgbouncer. */
  pgCpu: number
  bouncerCpu: number
}

const TICK = 100 // USER_HZ on Linux

/** utime + stime of a process, seconds (0 when it is gone). */
function cpuOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(f[11]) + Number(f[12])) / TICK
  } catch {
    return 0
  }
}

/** Processes whose parent is `ppid`. */
function childrenOf(ppid: number): number[] {
  const out: number[] = []
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8')
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === ppid) out.push(Number(d))
    } catch {
      /* gone */
    }
  }
  return out
}

/** The pid of the process whose command line names `needle`. */
function pidByCmdline(needle: string): number | null {
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(needle)) return Number(d)
    } catch {
      /* gone */
    }
  }
  return null
}

class DbSide {
  private constructor(
    private readonly admin: pg.Client,
    private readonly postmaster: number,
    private readonly bouncer: number | null,
  ) {}

  static async open(b: BenchStack): Promise<DbSide> {
    const admin = new pg.Client(`postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${b.stack.ports.pgbouncer}/pgbouncer`)
    admin.on('error', () => undefined)
    await admin.connect()
    const postmaster = Number(readFileSync(join(b.stack.dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0])
    return new DbSide(admin, postmaster, pidByCmdline(join(b.stack.dir, 'pgbouncer', 'pgbouncer.ini')))
  }

  async read(): Promise<Counters> {
    const { rows } = await this.admin.query('show stats')
    const row = rows.find((r) => r.database === PG_DATABASE)
    // Children that ended meanwhile take their CPU with them: the pool keeps its server connections, so few do.
    const pgCpu = [this.postmaster, ...childrenOf(this.postmaster)].reduce((a, p) => a + cpuOf(p), 0)
    return {
      queries: Number(row?.total_query_count ?? NaN),
      xacts: Number(row?.total_xact_count ?? NaN),
      pgCpu,
      bouncerCpu: this.bouncer ? cpuOf(this.bouncer) : NaN,
    }
  }

  close(): Promise<void> {
    return this.admin.end()
  }
}

const diff = (a: Counters, z: Counters): Counters => ({
  queries: z.queries - a.queries,
  xacts: z.xacts - a.xacts,
  pgCpu: z.pgCpu - a.pgCpu,
  bouncerCpu: z.bouncerCpu - a.bouncerCpu,
})

// ---- the sides -------------------------------------------------------------------------------------------

interface Side {
  name: string
  request: (n: number) => Req
  n: number
  sent: Set<string>
  answered: Map<string, number>
  loads: number
  results: Array<{ r: Result; sent: number; spent: Counters }>
}

/** Every 2xx of the fleet side is one pending ledger row and one object; other rows only cut-off requests. */
async function readBackFleet(b: BenchStack, db: pg.Client, s: Side, prefix: string, connections: number): Promise<string> {
  const ok = new Set([...s.answered].filter(([, st]) => st >= 200 && st < 300).map(([id]) => id))
  const ledger = async () =>
    new Map(
      (await db.query<{ batch_id: string; state: string }>(`select batch_id, state from batches where batch_id like $1`, [`${prefix}-%`])).rows.map((r) => [
        r.batch_id,
        r.state,
      ]),
    )
  let rows = await ledger()
  for (let i = 0; i < 20 && [...ok].some((id) => rows.get(id) === 'receiving'); i++) {
    await new Promise((r) => setTimeout(r, 500))
    rows = await ledger()
  }
  const objects = new Set<string>()
  for await (const o of new S3Client(b.stack.s3).list('_sink/')) {
    const sinkId = o.key.split('/')[1]
    const entry = intakeEntry(sinkId, o.key)
    if (entry?.kind === 'batch' && entry.batchId.startsWith(`${prefix}-`)) objects.add(entry.batchId)
  }
  const problems: string[] = []
  const notPending = [...ok].filter((id) => rows.get(id) !== 'pending')
  const noObject = [...ok].filter((id) => !objects.has(id))
  const extra = [...rows.keys()].filter((id) => !ok.has(id))
  const strange = extra.filter((id) => !s.sent.has(id) || s.answered.has(id))
  const orphans = [...objects].filter((id) => !rows.has(id))
  if (notPending.length) problems.push(`${notPending.length} 2xx batch(es) not pending (e.g. ${notPending[0]}: ${rows.get(notPending[0])})`)
  if (noObject.length) problems.push(`${noObject.length} 2xx batch(es) without an object (e.g. ${noObject[0]})`)
  if (strange.length) problems.push(`${strange.length} ledger row(s) neither a 2xx nor a cut-off request (e.g. ${strange[0]})`)
  if (extra.length > connections * s.loads) problems.push(`${extra.length} cut-off rows, more than ${connections} per run`)
  if (orphans.length) problems.push(`${orphans.length} object(s) with no ledger row (e.g. ${orphans[0]})`)
  if (problems.length) throw new Error(`${s.name}: read back failed: ${problems.join('; ')}`)
  const sinks = new Set(
    (await db.query<{ sink_id: string }>(`select distinct sink_id from batches where batch_id like $1`, [`${prefix}-%`])).rows.map((r) => r.sink_id),
  )
  return `${s.name}: ${rows.size} rows = ${ok.size} 2xx${extra.length ? ` + ${extra.length} cut off` : ''}, ${objects.size} objects, over ${fmt(sinks.size)} sinks`
}

/** The single sink's check, as bench:intake makes it. */
async function readBackOne(b: BenchStack, db: pg.Client, s: Side, sinkId: string): Promise<string> {
  const ok = [...s.answered].filter(([, st]) => st >= 200 && st < 300).map(([id]) => id)
  const held = await sinkHolds(b, db, sinkId)
  const bad = ok.filter((id) => held.ledger.get(id) !== 'pending' || !held.objects.has(id))
  if (bad.length) throw new Error(`${s.name}: ${bad.length} 2xx batch(es) not pending with an object (e.g. ${bad[0]})`)
  return `${s.name}: ${held.ledger.size} rows, ${ok.length} 2xx, ${held.objects.size} objects`
}

// ---- ledger only: the statement's ceiling on this Postgres ---------------------------------------------

async function ledgerOnly(
  pooledUrl: string,
  fleet: Fleet,
  connections: number,
  seconds: number,
): Promise<{ sends: number; perSecond: number; p50: number; p99: number }> {
  const pool = new pg.Pool({ connectionString: pooledUrl, max: connections })
  pool.on('error', () => undefined)
  const lat: number[] = []
  const hashes = await Promise.all(fleet.sinks.map((s) => sha256Hex(s.sendKey)))
  let n = 0
  const until = performance.now() + seconds * 1000
  const t0 = performance.now()
  const worker = async () => {
    while (performance.now() < until) {
      const k = n++
      const i = (k * 7919) % fleet.sinks.length
      const t = performance.now()
      const client = await pool.connect()
      try {
        const db = drizzle(client, { schema }) as unknown as EdgeDb
        const batchId = `ledger-${k}`
        const answer = await ledgerStatement(db, {
          sinkId: fleet.sinks[i].id,
          batchId,
          bodySha256: 'f'.repeat(64),
          bytes: 1024,
          rows: 10,
          rejected: 0,
          reasons: [],
          sendKeySha256: hashes[i],
        })
        if (!answer.batch?.inserted) throw new Error(`ledger only: ${batchId} was not inserted`)
        await markStored(db, fleet.sinks[i].id, batchId)
      } finally {
        client.release()
      }
      lat.push(performance.now() - t)
    }
  }
  await Promise.all(Array.from({ length: connections }, worker))
  const took = (performance.now() - t0) / 1000
  await pool.end()
  const sorted = lat.sort((a, b) => a - b)
  return { sends: lat.length, perSecond: lat.length / took, p50: sorted[Math.floor(sorted.length / 2)], p99: sorted[Math.floor(sorted.length * 0.99)] }
}

// ---- the statements of a send, by text ----------------------------------------------------------------

async function statementsOfASend(b: BenchStack, cleanup: Cleanup, fleet: Fleet, sends: number): Promise<string[]> {
  const proxy = await startPgProxy({ host: '127.0.0.1', port: b.stack.ports.pgbouncer }, { record: true })
  cleanup.add(() => proxy.stop())
  const bridgePort = await freePort()
  const bridge = await startBridge(bridgePort, { host: '127.0.0.1', port: proxy.port })
  cleanup.add(() => bridge.stop())
  const [port, inspector] = [await freePort(), await freePort()]
  const worker = await startWrangler(join(b.stack.dir, 'edge-recorded'), port, inspector, { ...b.stack.edgeVars, NEON_WS_PROXY: `127.0.0.1:${bridgePort}` })
  cleanup.add(() => worker.stop())
  const body = `[${Array.from({ length: 10 }, (_, i) => rowJson(3000 + i)).join(',')}]`
  proxy.clear()
  for (let k = 0; k < sends; k++) {
    const sink = fleet.sinks[(k * 104_729) % fleet.sinks.length]
    const res = await fetch(`http://127.0.0.1:${port}/v1/sinks/${sink.id}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sink.sendKey}`, 'content-type': 'application/json', 'idempotency-key': `recorded-${k}` },
      body,
    })
    await res.arrayBuffer()
    if (res.status !== 202) throw new Error(`recorded send ${k}: ${res.status}`)
  }
  await new Promise((r) => setTimeout(r, 1500)) // the deferred work after the last answer
  const byText = new Map<string, number>()
  for (const s of proxy.statements) {
    const text = s.replace(/\s+/g, ' ').trim().slice(0, 90)
    byText.set(text, (byText.get(text) ?? 0) + 1)
  }
  return [...byText].map(([text, count]) => `${(count / sends).toFixed(2)} per send (${count}×): ${text}…`)
}

// ---- the run -----------------------------------------------------------------------------------------------

export async function intakeFleet(o: FleetOptions): Promise<void> {
  const loadStart = os.loadavg()
  const cleanup = new Cleanup()
  process.once('uncaughtException', (err) => {
    console.error(`\n[bench:intake] FAILED: ${err.stack ?? err}`)
    void cleanup.run().finally(() => process.exit(1))
  })
  deadline(cleanup, (6 * 60 + o.rounds * 3 * (o.duration + o.warmup) + Math.ceil(o.ledgerRows / 1_000_000) * 90) * 1000, 'bench:intake --sinks')
  const clients: pg.Client[] = []
  try {
    const b = await benchStack('bench-intake', cleanup, log)
    cleanup.add(() => Promise.all(clients.map((c) => c.end().catch(() => undefined))))
    const db = new pg.Client(b.stack.databaseUrl)
    db.on('error', () => undefined)
    await db.connect()
    clients.push(db)
    const single = await tableAndSink(b, 'bench.intake_send')
    const { warehouses } = await fleetWarehouses(b.stack.apiUrl, b.stack.bootstrapSecret, { 'fleet-a': 3, 'fleet-b': 2, 'fleet-c': 1 })
    const fleet = await seedFleet(db, { sinks: o.sinks, due: o.due, ledgerRows: o.ledgerRows, warehouses, log })
    log(
      `seeded in ${fleet.seedSeconds.toFixed(1)} s: ${fmt(fleet.sinks.length)} live sinks + ${fmt(fleet.deleted)} deleted; ledger ${Object.entries(fleet.ledger)
        .map(([st, n]) => `${st} ${fmt(n)}`)
        .join(', ')}`,
    )
    const dbSide = await DbSide.open(b)
    cleanup.add(() => dbSide.close())

    const body = `[${Array.from({ length: 10 }, (_, i) => rowJson(1000 + i)).join(',')}]`
    const side = (name: string, request: (n: number) => Req): Side => ({ name, request, n: 0, sent: new Set(), answered: new Map(), loads: 0, results: [] })
    const send = (prefix: string, pick: (n: number) => { id: string; sendKey: string }) => (n: number) => {
      const sink = pick(n)
      return {
        path: `/v1/sinks/${sink.id}`,
        headers: { authorization: `Bearer ${sink.sendKey}`, 'content-type': 'application/json', 'idempotency-key': `${prefix}-${n}` },
        body,
        batchId: `${prefix}-${n}`,
      }
    }
    const one = side(
      'send, 1 sink',
      send('send', () => single),
    )
    const many = side(
      `send, ${fmt(fleet.sinks.length)} sinks`,
      send('fleet', (n) => fleet.sinks[(n * 7919) % fleet.sinks.length]),
    )
    const sides = [one, many]
    for (const s of sides) {
      const r = s.request(++s.n)
      s.sent.add(r.batchId)
      const res = await fetch(b.stack.apiUrl + r.path, { method: 'POST', headers: r.headers, body: r.body })
      s.answered.set(r.batchId, res.status)
      if (res.status !== 202) throw new Error(`${s.name}: the probe answered ${res.status} ${await res.text()}`)
    }
    log(`${o.connections} connections; ${o.warmup} s warm-up + ${o.duration} s per side, ${o.rounds} round(s)`)
    for (let round = 0; round < o.rounds; round++) {
      for (const s of round % 2 === 0 ? sides : [...sides].reverse()) {
        if (o.warmup > 0) await sendLoad(b.stack.apiUrl, s, o.connections, o.warmup)
        await new Promise((r) => setTimeout(r, 1000))
        const before = await dbSide.read()
        const n0 = s.n
        const r = await sendLoad(b.stack.apiUrl, s, o.connections, o.duration)
        await new Promise((r) => setTimeout(r, 1500)) // the work deferred past the last answers
        const spent = diff(before, await dbSide.read())
        s.results.push({ r, sent: s.n - n0, spent })
        log(
          `round ${round + 1} ${s.name}: ${fmt(r.requests.average, 1)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, ${r['2xx']} 2xx, ${r.non2xx} non-2xx, ${r.errors + r.timeouts} errors; ${fmt(spent.queries / (s.n - n0), 2)} statements per request`,
        )
      }
    }

    log(`ledger only: ledgerStatement + markStored through pgbouncer, ${o.connections} clients, ${o.duration} s, across the fleet`)
    const before = await dbSide.read()
    const ceiling = await ledgerOnly(b.stack.edgeVars.DATABASE_URL, fleet, o.connections, o.duration)
    const ceilingSpent = diff(before, await dbSide.read())

    const readBacks = [await readBackOne(b, db, one, single.id), await readBackFleet(b, db, many, 'fleet', o.connections)]
    const byText = await statementsOfASend(b, cleanup, fleet, 20)

    // ---- the table
    const sum = (s: Side, f: (x: Side['results'][number]) => number) => s.results.reduce((a, x) => a + f(x), 0)
    const avg = (s: Side, f: (x: Side['results'][number]) => number) => sum(s, f) / s.results.length
    console.log('')
    console.log(
      `bench:intake --sinks ${o.sinks} — the send route under wrangler dev (neon → bridge → pgbouncer → one Postgres), ${o.connections} connections, ${o.duration} s after ${o.warmup} s warm-up, ${o.rounds} round(s); ${fmt(o.ledgerRows)} committed ledger rows; ~1 KB 10-row batches; loopback`,
    )
    console.log('')
    const WIDTHS = [7, 7, 7, 6, 7, 9, 9, 13, 20]
    const line = (name: string, cells: string[]) => console.log(`  ${name.padEnd(24)} ${cells.map((c, i) => c.padStart(WIDTHS[i])).join(' ')}`)
    line('', ['req/s', 'p50 ms', 'p99 ms', '2xx', 'non-2xx', 'stmts/req', 'xacts/req', 'pg CPU ms/req', 'pgbouncer CPU ms/req'])
    const perReq = (spent: Counters, sent: number) => [
      fmt(spent.queries / sent, 2),
      fmt(spent.xacts / sent, 2),
      fmt((1000 * spent.pgCpu) / sent, 2),
      fmt((1000 * spent.bouncerCpu) / sent, 2),
    ]
    for (const s of sides) {
      const spent = s.results
        .map((x) => x.spent)
        .reduce((a, z) => ({ queries: a.queries + z.queries, xacts: a.xacts + z.xacts, pgCpu: a.pgCpu + z.pgCpu, bouncerCpu: a.bouncerCpu + z.bouncerCpu }))
      line(s.name, [
        fmt(
          avg(s, (x) => x.r.requests.average),
          1,
        ),
        fmt(
          avg(s, (x) => x.r.latency.p50),
          1,
        ),
        fmt(
          avg(s, (x) => x.r.latency.p99),
          1,
        ),
        fmt(sum(s, (x) => x.r['2xx'])),
        fmt(sum(s, (x) => x.r.non2xx + x.r.errors + x.r.timeouts)),
        ...perReq(
          spent,
          sum(s, (x) => x.sent),
        ),
      ])
    }
    const pgMsPerSend = (1000 * ceilingSpent.pgCpu) / ceiling.sends
    line('ledger only', [fmt(ceiling.perSecond, 1), fmt(ceiling.p50, 1), fmt(ceiling.p99, 1), fmt(ceiling.sends), '0', ...perReq(ceilingSpent, ceiling.sends)])
    const rq = (s: Side) => avg(s, (x) => x.r.requests.average)
    console.log(`  ratio ${many.name} / ${one.name}: req/s ${(rq(many) / rq(one)).toFixed(2)}`)
    console.log(
      `  ledger only: the send's two statements from ${o.connections} clients through pgbouncer, no HTTP and no bucket (the client shares the 2 cores); Postgres's CPU per send puts one Postgres core at ≈ ${fmt(1000 / pgMsPerSend)} sends/s`,
    )
    console.log(`  statements of a send, recorded on the wire between the bridge and pgbouncer (20 sends to fleet sinks through a second edge Worker):`)
    for (const line of byText) console.log(`    ${line}`)
    console.log(`  read back: ${readBacks.join('; ')}`)
    const l = os.loadavg()
    console.log(
      `  load average (1 min) at the start ${loadStart[0].toFixed(1)}, at the end ${l[0].toFixed(1)}, on ${os.availableParallelism()} cores: a ratio is only as good as the box is quiet`,
    )
    if (sides.some((s) => sum(s, (x) => x.r.non2xx + x.r.errors + x.r.timeouts) > 0)) process.exitCode = 1
  } catch (err) {
    console.error(`\n[bench:intake] FAILED: ${(err as Error).stack ?? err}`)
    process.exitCode = 1
  } finally {
    await cleanup.run()
  }
}
