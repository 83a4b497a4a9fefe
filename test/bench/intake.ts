// npm run bench:intake — the send route under `wrangler dev`, side by side with a bare Worker.
//
// Both Workers run under wrangler dev (real workerd) against the SAME Postgres/pgbouncer/ws bridge and
// the SAME S3 server (one private stack in a temporary folder, loopback only). The bare Worker
// (test/bench/bare-worker) does only the route's irreducible work: the ledger's one statement and the
// one PUT. autocannon drives each in turn: a warm-up, then a bounded run (duration × connections),
// every request a distinct Idempotency-Key and the same ~1 KB, 10-row JSON array. Printed: req/s, p50,
// p99 of both, the ratios ours/bare, and every non-2xx status. The numbers are only meaningful as
// the ratio: both sides ran on this machine, one after the other, in this process.
//
// Options (env): BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (20), BENCH_WARMUP (s, 2),
// BENCH_ROUNDS (1; more rounds alternate the order bare/ours), LHBOX_BENCH_KEEP=1 keeps the state folder.
import autocannon, { type Result } from 'autocannon'
import os from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { freePort } from '../../dev/ports.ts'
import { pgbouncerBinary } from '../../dev/pgbouncer.ts'
import { PG_DATABASE, PG_PASSWORD, PG_USER } from '../../dev/postgres.ts'
import { startChild, waitFor, type Child } from '../../dev/process.ts'
import { WRANGLER_OFFLINE } from '../../dev/wrangler.ts'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import { sha256Hex } from '../../edge/keys.ts'
import { benchStack, Cleanup, deadline, fmt, rowJson, tableAndSink } from './common.ts'

const DURATION = Number(process.env.BENCH_DURATION ?? 10)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1)
const ROWS = 10

const root = fileURLToPath(new URL('../..', import.meta.url))
const log = (line: string) => console.log(`[bench:intake] ${line}`)

/** wrangler dev of test/bench/bare-worker, started the way dev/wrangler.ts starts the real edge. */
async function startBareWorker(stateDir: string, vars: Record<string, string>): Promise<{ child: Child; url: string }> {
  const port = await freePort()
  const inspector = await freePort()
  const require = createRequire(import.meta.url)
  const bin = join(dirname(require.resolve('wrangler/package.json')), 'bin', 'wrangler.js')
  const args = [
    bin,
    'dev',
    '--config',
    join(root, 'test', 'bench', 'bare-worker', 'wrangler.toml'),
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--inspector-port',
    String(inspector),
    '--persist-to',
    join(stateDir, 'bare-wrangler'),
    '--show-interactive-dev-session=false',
    '--log-level',
    'warn',
  ]
  for (const [k, v] of Object.entries(vars)) args.push('--var', `${k}:${v}`)
  const child = startChild('bare worker', process.execPath, args, join(stateDir, 'bare-wrangler.log'), {
    cwd: root,
    env: { ...process.env, ...WRANGLER_OFFLINE, CI: 'true', NO_COLOR: '1' },
  })
  const url = `http://127.0.0.1:${port}`
  await waitFor('bare worker', async () => (await fetch(`${url}/`)).status > 0, 90_000, child)
  return { child, url }
}

function load(url: string, sendKey: string, body: string, prefix: string, seconds: number, connections: number): Promise<Result> {
  let n = 0
  return autocannon({
    url,
    connections,
    duration: seconds,
    timeout: 20,
    requests: [
      {
        method: 'POST',
        headers: { authorization: `Bearer ${sendKey}`, 'content-type': 'application/json' },
        body,
        // A distinct Idempotency-Key for every request: each one is a new batch.
        setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'idempotency-key': `${prefix}-${++n}` } }),
      },
    ],
  })
}

interface Side {
  name: 'ours' | 'bare'
  url: string
  sinkId: string
  sendKey: string
  results: Result[]
}

async function main(): Promise<void> {
  const loadStart = os.loadavg()[0]
  const cleanup = new Cleanup()
  deadline(cleanup, (5 * 60 + ROUNDS * 2 * (DURATION + WARMUP)) * 1000, 'bench:intake')
  try {
    const b = await benchStack('bench-intake', cleanup, log)
    const ours = await tableAndSink(b, 'bench.intake_ours')
    const bareSink = await tableAndSink(b, 'bench.intake_bare')
    const poolPort = pgbouncerBinary() ? b.stack.ports.pgbouncer : b.stack.ports.postgres
    const bare = await startBareWorker(b.stack.dir, {
      DATABASE_URL: `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${poolPort}/${PG_DATABASE}`,
      NEON_WS_PROXY: `127.0.0.1:${b.stack.ports.bridge}`,
      S3_ENDPOINT: b.stack.s3.endpoint,
      S3_BUCKET: b.stack.s3.bucket,
      S3_REGION: b.stack.s3.region,
      S3_ACCESS_KEY_ID: b.stack.s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: b.stack.s3.secretAccessKey,
      BENCH_SINK_ID: bareSink.id,
      BENCH_SEND_KEY_SHA256: await sha256Hex(bareSink.sendKey),
      BENCH_ROWS: String(ROWS),
    })
    cleanup.add(() => bare.child.stop())

    const body = `[${Array.from({ length: ROWS }, (_, i) => rowJson(1000 + i)).join(',')}]`
    const sides: Side[] = [
      { name: 'bare', url: `${bare.url}/v1/sinks/${bareSink.id}`, sinkId: bareSink.id, sendKey: bareSink.sendKey, results: [] },
      { name: 'ours', url: `${b.stack.apiUrl}/v1/sinks/${ours.id}`, sinkId: ours.id, sendKey: ours.sendKey, results: [] },
    ]
    // One request each first: a wrong setup fails here, not as 10 s of errors.
    for (const s of sides) {
      const res = await fetch(s.url, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.sendKey}`, 'content-type': 'application/json', 'idempotency-key': `probe-${s.name}` },
        body,
      })
      if (res.status !== 202) throw new Error(`${s.name}: the probe request answered ${res.status} ${await res.text()}`)
    }
    log(
      `body ${body.length} bytes, ${ROWS} rows; ${CONNECTIONS} connections; ${WARMUP} s warm-up + ${DURATION} s per side${ROUNDS > 1 ? `, ${ROUNDS} rounds` : ''}`,
    )

    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? sides : [...sides].reverse()
      for (const s of order) {
        if (WARMUP > 0) await load(s.url, s.sendKey, body, `warm-${s.name}-${round}`, WARMUP, CONNECTIONS)
        const r = await load(s.url, s.sendKey, body, `run-${s.name}-${round}`, DURATION, CONNECTIONS)
        s.results.push(r)
        log(
          `round ${round + 1} ${s.name.padEnd(4)}: ${fmt(r.requests.average, 1)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, statuses ${JSON.stringify(statusCounts(r))}, errors ${r.errors}, timeouts ${r.timeouts}`,
        )
      }
    }

    // The ledger: every 2xx is one batch row; once the deferred update ran, all are pending.
    await new Promise((r) => setTimeout(r, 1000))
    const db = new pg.Client(b.stack.databaseUrl)
    await db.connect()
    const ledger = new Map<string, Record<string, number>>()
    for (const s of sides) {
      const { rows } = await db.query<{ state: string; n: string }>('select state, count(*) as n from batches where sink_id = $1 group by state', [s.sinkId])
      ledger.set(s.name, Object.fromEntries(rows.map((r) => [r.state, Number(r.n)])))
    }
    await db.end()

    const summary = (s: Side) => {
      const rs = s.results
      const avg = (f: (r: Result) => number) => rs.reduce((a, r) => a + f(r), 0) / rs.length
      return {
        reqPerSec: avg((r) => r.requests.average),
        p50: avg((r) => r.latency.p50),
        p99: avg((r) => r.latency.p99),
        total: rs.reduce((a, r) => a + r.requests.total, 0),
        ok: rs.reduce((a, r) => a + (statusCounts(r)['202'] ?? 0), 0),
        non2xx: rs.reduce((a, r) => a + r.non2xx, 0),
        errors: rs.reduce((a, r) => a + r.errors, 0),
      }
    }
    const o = summary(sides[1])
    const x = summary(sides[0])
    console.log('')
    console.log(
      `bench:intake — ${CONNECTIONS} connections, ${DURATION} s after ${WARMUP} s warm-up, ${ROUNDS} round(s), ${body.length}-byte body of ${ROWS} rows, loopback`,
    )
    console.log('')
    console.log('            req/s    p50 ms   p99 ms   requests   202      non-2xx  errors')
    for (const [name, s] of [
      ['ours', o],
      ['bare', x],
    ] as const) {
      console.log(
        `  ${name.padEnd(8)}${fmt(s.reqPerSec, 1).padStart(7)}  ${fmt(s.p50, 1).padStart(7)}  ${fmt(s.p99, 1).padStart(7)}  ${String(s.total).padStart(8)}  ${String(s.ok).padStart(7)}  ${String(s.non2xx).padStart(7)}  ${String(s.errors).padStart(6)}`,
      )
    }
    console.log(`  ratio ours/bare: req/s ${(o.reqPerSec / x.reqPerSec).toFixed(2)}, p50 ${(o.p50 / x.p50).toFixed(2)}, p99 ${(o.p99 / x.p99).toFixed(2)}`)
    if (ROUNDS > 1) {
      const perRound = sides[1].results.map((r, i) => (r.requests.average / sides[0].results[i].requests.average).toFixed(2))
      console.log(`  req/s ratio per round: ${perRound.join(', ')}`)
    }
    console.log(
      `  load average (1 min) at the start ${loadStart.toFixed(1)}, at the end ${os.loadavg()[0].toFixed(1)}, on ${os.availableParallelism()} cores: a ratio is only as good as the box is quiet`,
    )
    console.log(`  ledger rows by state: ours ${JSON.stringify(ledger.get('ours'))}, bare ${JSON.stringify(ledger.get('bare'))} (warm-up and probe included)`)
    const bad = o.non2xx + x.non2xx + o.errors + x.errors
    if (bad > 0) {
      console.log(`  ${bad} request(s) were not 202 — see the per-round statuses above`)
      process.exitCode = 1
    }
  } finally {
    await cleanup.run()
  }
}

function statusCounts(r: Result): Record<string, number> {
  return Object.fromEntries(Object.entries(r.statusCodeStats).map(([k, v]) => [k, v.count]))
}

await main()
