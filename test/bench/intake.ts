// npm run bench:intake — the send route and the device route under `wrangler dev`, side by side with
// a bare Worker.
//
// All run under wrangler dev (real workerd) against the SAME Postgres/pgbouncer/ws bridge and the
// SAME S3 server (one private stack in a temporary folder, loopback only); send and device are the
// SAME edge Worker. The bare Worker (test/bench/bare-worker) does only the send route's irreducible
// work: the ledger's one statement and the one PUT. autocannon drives each in turn, same connections
// and duration: a warm-up, then a bounded run; more rounds alternate the order. The workloads:
//   - bare, send: POST /v1/sinks/{id}, Bearer, Content-Type: application/json, every request a
//     distinct Idempotency-Key and the same ~1 KB, 10-row JSON array;
//   - ndjson: the same route and rows as NDJSON (Content-Type: application/x-ndjson, one row a line,
//     no final newline, as Vector's http sink sends them; target ≥ 0.9× send);
//   - device: POST /v1/sinks/{id}/devices/phone-<n % 16>?key=…, as the OwnTracks app sends it: no
//     Content-Type, no Idempotency-Key, one OwnTracks location object (~230 bytes), a distinct `tst`
//     each time, so each is a new batch (the preset's natural id owntracks:<device>:<tst>:<tid>), on a
//     v3 table with the preset's columns and the sink's mapping {preset: 'owntracks'}.
// Before any figure is printed, each sink is read back: every 2xx answer (probe and warm-up
// included) must be one ledger row, pending, and one object under _sink/<sink_id>/; any other row
// must be a request autocannon sent and cut off unanswered at the end of a run (the server may finish
// it); nothing else. Printed: req/s, p50, p99 of each, the ratios send/bare and device/send (the
// target: device ≥ 0.9× send), every non-2xx status, the load average. The numbers are only
// meaningful as ratios: all sides ran on this machine, one after the other, in this process.
//
// The send route also runs through each database path (db-paths.ts): the neon driver (the stack's
// edge, `send`) and a Hyperdrive binding, and both again with BENCH_DB_DELAY_MS of round trip added
// between the edge and the database's region.
//
// Options (env): BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (20), BENCH_WARMUP (s, 2),
// BENCH_ROUNDS (1; more rounds alternate the order), BENCH_DB_DELAY_MS (100; 0 leaves the database
// paths out), LHBOX_BENCH_KEEP=1 keeps the state folder.
//
// `npm run bench:intake -- --sinks 10000 [--ledger-rows 1000000] [--due 100]` runs the fleet instead
// (test/bench/intake-fleet.ts): sends spread over that many sinks beside the one-sink send side,
// statements and Postgres CPU per send, and the ledger statement's own ceiling on this Postgres.
import type { Result } from 'autocannon'
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
import { PRESETS } from '../../edge/devices/presets/index.ts'
import { api, benchStack, type BenchStack, Cleanup, deadline, fmt, rowJson, sinkHolds, tableAndSink } from './common.ts'
import { startDbPaths } from './db-paths.ts'
import { intOptions } from './fleet.ts'
import { intakeFleet } from './intake-fleet.ts'
import { type Req, sendLoad } from './send-load.ts'

const DURATION = Number(process.env.BENCH_DURATION ?? 10)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 2)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1)
const DB_DELAY_MS = Number(process.env.BENCH_DB_DELAY_MS ?? 100)
const ROWS = 10
const FLEET = intOptions({ sinks: 0, 'ledger-rows': 1_000_000, due: 100 })

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

interface Side {
  name: string
  origin: string
  sinkId: string
  /** The status of a stored batch: 202, or the OwnTracks preset's own 200 `[]`. */
  expect: number
  /** The n-th request to this side (n from 1, over probe, warm-ups and runs alike). */
  request: (n: number) => Req
  n: number
  /** Batch ids of every request written, and the status each answered one got. */
  sent: Set<string>
  answered: Map<string, number>
  loads: number
  results: Result[]
}

/** One OwnTracks location as the app POSTs it (the quick-setup fixture's fields, and acc, cog, bs, t). */
function owntracks(n: number): { deviceId: string; body: string; tst: number } {
  const tst = 1_780_000_000 + n
  const deviceId = `phone-${n % 16}`
  const [lat, lon] = [(48.85 + (n % 997) / 1e5).toFixed(6), (2.29 + (n % 991) / 1e5).toFixed(6)]
  const body = `{"_type":"location","SSID":"mywifi","acc":${5 + (n % 30)},"alt":${150 + (n % 40)},"batt":${20 + (n % 80)},"bs":1,"cog":${n % 360},"conn":"m","created_at":${tst + 1},"lat":${lat},"lon":${lon},"t":"t","tid":"j1","tst":${tst},"vel":${n % 50}}`
  return { deviceId, body, tst }
}

/** Every 2xx is one pending ledger row and one object; other rows only cut-off requests. Throws otherwise. */
async function readBack(b: BenchStack, db: pg.Client, s: Side): Promise<string> {
  const ok = [...s.answered].filter(([, status]) => status >= 200 && status < 300).map(([id]) => id)
  let held = await sinkHolds(b, db, s.sinkId)
  // receiving → pending is deferred past the answer: give it a moment under load.
  for (let i = 0; i < 20 && ok.some((id) => held.ledger.get(id) === 'receiving'); i++) {
    await new Promise((r) => setTimeout(r, 500))
    held = await sinkHolds(b, db, s.sinkId)
  }
  const problems: string[] = []
  const notPending = ok.filter((id) => held.ledger.get(id) !== 'pending')
  const noObject = ok.filter((id) => !held.objects.has(id))
  const extra = [...held.ledger.keys()].filter((id) => !(s.answered.get(id)! >= 200 && s.answered.get(id)! < 300))
  const strange = extra.filter((id) => !s.sent.has(id) || s.answered.has(id))
  const orphans = [...held.objects].filter((id) => !held.ledger.has(id))
  if (notPending.length)
    problems.push(`${notPending.length} 2xx batch(es) not pending in the ledger (e.g. ${notPending[0]}: ${held.ledger.get(notPending[0])})`)
  if (noObject.length) problems.push(`${noObject.length} 2xx batch(es) without an object (e.g. ${noObject[0]})`)
  if (strange.length) problems.push(`${strange.length} ledger row(s) neither a 2xx nor a cut-off request (e.g. ${strange[0]}: ${s.answered.get(strange[0])})`)
  if (extra.length > CONNECTIONS * s.loads) problems.push(`${extra.length} cut-off rows, more than ${CONNECTIONS} per run`)
  if (orphans.length) problems.push(`${orphans.length} object(s) with no ledger row (e.g. ${orphans[0]})`)
  if (problems.length) throw new Error(`${s.name}: read back failed: ${problems.join('; ')}`)
  const cut = extra.length ? ` + ${extra.length} cut off unanswered at a run's end` : ''
  return `${s.name} ${held.ledger.size} rows = ${ok.length} 2xx${cut}, ${held.objects.size} objects`
}

async function main(): Promise<void> {
  const loadStart = os.loadavg()[0]
  const cleanup = new Cleanup()
  deadline(cleanup, (5 * 60 + ROUNDS * 6 * (DURATION + WARMUP)) * 1000, 'bench:intake')
  try {
    const b = await benchStack('bench-intake', cleanup, log)
    const sendSink = await tableAndSink(b, 'bench.intake_send')
    const bareSink = await tableAndSink(b, 'bench.intake_bare')
    const columns = Object.entries(PRESETS.owntracks.columns).map(([name, type]) => ({ name, type }))
    const deviceSink = await tableAndSink(b, 'bench.intake_device', {}, { columns, format_version: 3 })
    const ndjsonSink = await tableAndSink(b, 'bench.intake_ndjson')
    await api(b.stack, b.apiKey, 'PATCH', `/v1/sinks/${deviceSink.id}`, { mapping: { preset: 'owntracks' } })
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
    const paths = DB_DELAY_MS > 0 ? await startDbPaths(b, cleanup, DB_DELAY_MS) : []
    const pathSinks = []
    for (const [i, p] of paths.entries()) pathSinks.push({ path: p, sink: await tableAndSink(b, `bench.intake_path_${i}`) })

    const rows = Array.from({ length: ROWS }, (_, i) => rowJson(1000 + i))
    const body = `[${rows.join(',')}]`
    const lines = rows.join('\n')
    const batch =
      (name: string, sink: { id: string; sendKey: string }, type = 'application/json', text = body) =>
      (n: number) => ({
        path: `/v1/sinks/${sink.id}`,
        headers: { authorization: `Bearer ${sink.sendKey}`, 'content-type': type, 'idempotency-key': `${name}-${n}` },
        body: text,
        batchId: `${name}-${n}`,
      })
    const side = (name: string, origin: string, sinkId: string, expect: number, request: (n: number) => Req): Side => ({
      name,
      origin,
      sinkId,
      expect,
      request,
      n: 0,
      sent: new Set(),
      answered: new Map(),
      loads: 0,
      results: [],
    })
    const key = encodeURIComponent(deviceSink.sendKey)
    const sides: Side[] = [
      side('bare', bare.url, bareSink.id, 202, batch('bare', bareSink)),
      side('send', b.stack.apiUrl, sendSink.id, 202, batch('send', sendSink)),
      side('device', b.stack.apiUrl, deviceSink.id, 200, (n) => {
        const m = owntracks(n)
        // No header at all: autocannon adds only Host, Connection and Content-Length.
        return {
          path: `/v1/sinks/${deviceSink.id}/devices/${m.deviceId}?key=${key}`,
          headers: {},
          body: m.body,
          batchId: `owntracks:${m.deviceId}:${m.tst}:j1`,
        }
      }),
      side('ndjson', b.stack.apiUrl, ndjsonSink.id, 202, batch('ndjson', ndjsonSink, 'application/x-ndjson', lines)),
      ...pathSinks.map(({ path, sink }, i) => side(`send ${path.name}`, path.origin, sink.id, 202, batch(`path${i}`, sink))),
    ]
    // One request each first: a wrong setup fails here, not as 10 s of errors (the device's also
    // fills this isolate's settings cache, the one extra statement a cold isolate pays).
    for (const s of sides) {
      const r = s.request(++s.n)
      s.sent.add(r.batchId)
      // The body as bytes: fetch adds no Content-Type of its own.
      const res = await fetch(s.origin + r.path, { method: 'POST', headers: r.headers, body: new TextEncoder().encode(r.body) })
      const text = await res.text()
      s.answered.set(r.batchId, res.status)
      if (res.status !== s.expect) throw new Error(`${s.name}: the probe request answered ${res.status} ${text}`)
    }
    log(
      `bodies: send/bare ${body.length} bytes, ${ROWS} rows; ndjson the same rows, ${lines.length} bytes; device one OwnTracks location, ~${owntracks(1).body.length} bytes; ${CONNECTIONS} connections; ${WARMUP} s warm-up + ${DURATION} s per side${ROUNDS > 1 ? `, ${ROUNDS} rounds` : ''}`,
    )

    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? sides : [...sides].reverse()
      for (const s of order) {
        if (WARMUP > 0) await sendLoad(s.origin, s, CONNECTIONS, WARMUP)
        const r = await sendLoad(s.origin, s, CONNECTIONS, DURATION)
        s.results.push(r)
        log(
          `round ${round + 1} ${s.name.padEnd(6)}: ${fmt(r.requests.average, 1)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, statuses ${JSON.stringify(statusCounts(r))}, errors ${r.errors}, timeouts ${r.timeouts}`,
        )
      }
    }

    // Read back before printing any figure.
    const db = new pg.Client(b.stack.databaseUrl)
    await db.connect()
    const held: string[] = []
    try {
      for (const s of sides) held.push(await readBack(b, db, s))
    } finally {
      await db.end()
    }

    const summary = (s: Side) => {
      const rs = s.results
      const avg = (f: (r: Result) => number) => rs.reduce((a, r) => a + f(r), 0) / rs.length
      return {
        reqPerSec: avg((r) => r.requests.average),
        p50: avg((r) => r.latency.p50),
        p99: avg((r) => r.latency.p99),
        total: rs.reduce((a, r) => a + r.requests.total, 0),
        ok: rs.reduce((a, r) => a + r['2xx'], 0),
        non2xx: rs.reduce((a, r) => a + r.non2xx, 0),
        errors: rs.reduce((a, r) => a + r.errors + r.timeouts, 0),
      }
    }
    const [bareS, sendS, deviceS, ndjsonS, ...pathS] = sides
    const [x, o, d, nd, ...ps] = sides.map(summary)
    console.log('')
    console.log(
      `bench:intake — ${CONNECTIONS} connections, ${DURATION} s after ${WARMUP} s warm-up, ${ROUNDS} round(s); send/bare: ${body.length}-byte body of ${ROWS} rows; device: one OwnTracks location; loopback`,
    )
    console.log('')
    console.log('                          req/s    p50 ms   p99 ms   requests   2xx      non-2xx  errors')
    for (const [name, s] of [['send (neon)', o], ['ndjson', nd], ['device', d], ['bare', x], ...pathS.map((p, i) => [p.name, ps[i]] as const)] as const) {
      console.log(
        `  ${name.padEnd(22)}${fmt(s.reqPerSec, 1).padStart(7)}  ${fmt(s.p50, 1).padStart(7)}  ${fmt(s.p99, 1).padStart(7)}  ${String(s.total).padStart(8)}  ${String(s.ok).padStart(7)}  ${String(s.non2xx).padStart(7)}  ${String(s.errors).padStart(6)}`,
      )
    }
    const ratio = (a: typeof o, z: typeof o) =>
      `req/s ${(a.reqPerSec / z.reqPerSec).toFixed(2)}, p50 ${(a.p50 / z.p50).toFixed(2)}, p99 ${(a.p99 / z.p99).toFixed(2)}`
    console.log(`  ratio send/bare:   ${ratio(o, x)}`)
    console.log(`  ratio device/send: ${ratio(d, o)} (target: req/s ≥ 0.90)`)
    console.log(`  ratio ndjson/send: ${ratio(nd, o)} (target: req/s ≥ 0.90)`)
    for (const [i, p] of pathS.entries()) console.log(`  ratio ${p.name}/send (neon): ${ratio(ps[i], o)}`)
    if (ROUNDS > 1) {
      const perRound = (a: Side, z: Side) => a.results.map((r, i) => (r.requests.average / z.results[i].requests.average).toFixed(2)).join(', ')
      console.log(
        `  req/s ratio per round: send/bare ${perRound(sendS, bareS)}; device/send ${perRound(deviceS, sendS)}; ndjson/send ${perRound(ndjsonS, sendS)}`,
      )
    }
    console.log(
      `  load average (1 min) at the start ${loadStart.toFixed(1)}, at the end ${os.loadavg()[0].toFixed(1)}, on ${os.availableParallelism()} cores: a ratio is only as good as the box is quiet`,
    )
    console.log(`  read back (probe and warm-up included): ${held.join('; ')}`)
    const bad = [o, d, nd, x, ...ps].reduce((a, s) => a + s.non2xx + s.errors, 0)
    if (bad > 0) {
      console.log(`  ${bad} request(s) were not 2xx — see the per-round statuses above`)
      process.exitCode = 1
    }
  } finally {
    await cleanup.run()
  }
}

function statusCounts(r: Result): Record<string, number> {
  return Object.fromEntries(Object.entries(r.statusCodeStats).map(([k, v]) => [k, v.count]))
}

if (FLEET.sinks > 0)
  await intakeFleet({
    sinks: FLEET.sinks,
    ledgerRows: FLEET['ledger-rows'],
    due: Math.min(FLEET.due, FLEET.sinks),
    duration: DURATION,
    warmup: WARMUP,
    connections: CONNECTIONS,
    rounds: ROUNDS,
  })
else await main()
