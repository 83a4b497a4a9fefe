// npm run bench:intake — the send route and the device route under `wrangler dev`, side by side with
// a bare Worker, and the send route's other producers (NDJSON bodies, OTLP logs) beside the JSON one.
//
// All run under wrangler dev (real workerd) against the SAME Postgres/pgbouncer/ws bridge and the
// SAME S3 server (one private stack in a temporary folder, loopback only); send, ndjson, otlp and
// device are the SAME edge Worker. The bare Worker (test/bench/bare-worker) does only the send
// route's irreducible work: the ledger's one statement and the one PUT. autocannon drives each in
// turn, same connections and duration: a warm-up, then a bounded run; BENCH_ROUNDS rounds (default
// 3, for medians), the order reversed every other round. Each run starts from the same state, as a
// fair comparison needs (the stack has no roller: nothing is rolled while it runs):
//   - every side is loaded once (a warm-up, not counted) before round 1, so no counted run is the
//     first load its edge's wrangler and workerd and this process's autocannon see;
//   - a run on another edge than the run before it warms up 3× as long: an edge left idle while the
//     others ran (round 2's first runs after the database paths) spent ~10 % more CPU a request in
//     its next run, wrangler's Node and workerd alike, after the usual warm-up;
//   - before each run the stack's processes are waited on until idle (intake-cpu.ts's settle: under
//     25 ms of CPU in two 250 ms windows in a row), so no run pays for the one before it (a request
//     finished after its run's end, the read-back's S3 listing, a rebuild);
//   - a run during which a Worker was rebuilt is run again (at most 3 times): wrangler dev rebuilds
//     and restarts a Worker whenever one of its sources changes, and others edit this working tree
//     (intake-sources.ts; an edge's esbuild spending over 200 ms in the run says so too);
//   - the CPU every process of the stack spent (intake-cpu.ts: edges' wrangler, workerd and
//     esbuild, Postgres's backends, autovacuum and writers, pgbouncer, the S3 server, this process)
//     is printed for each run, for the gap before it and its warm-up, with Postgres's autovacuum and
//     checkpoint counts: what a side's figure may owe to anything but its route shows there.
// The workloads, ROWS (10) rows a request:
//   - bare, send: POST /v1/sinks/{id}, Bearer, Content-Type: application/json, every request a
//     distinct Idempotency-Key and the same ~1 KB, 10-row JSON array;
//   - ndjson: the same route and rows as NDJSON (Content-Type: application/x-ndjson, one row a line,
//     no final newline, as Vector's http sink sends them), with an Idempotency-Key as the array has;
//   - otlp: POST /v1/sinks/{id}/otlp/v1/logs, Bearer, Content-Type: application/x-protobuf, an export
//     of 10 log records serialized once by the OpenTelemetry SDK (intake-otlp.ts), each request a
//     distinct body and no Idempotency-Key, as an exporter sends it; a v3 table with the otlp_logs
//     preset's columns;
//   - device: POST /v1/sinks/{id}/devices/phone-<n % 16>?key=…, as the OwnTracks app sends it: no
//     Content-Type, no Idempotency-Key, one OwnTracks location object (~230 bytes), a distinct `tst`
//     each time, so each is a new batch (the preset's natural id owntracks:<device>:<tst>:<tid>), on a
//     v3 table with the preset's columns and the sink's mapping {preset: 'owntracks'}.
// After every round, before any figure of it is printed, each sink is read back (intake-readback.ts).
// Printed (intake-summary.ts): medians of req/s, p50, p99 of each side, the ratios send/bare,
// ndjson/send, otlp/send and device/send (the targets: each ≥ 0.9× send's req/s, met only if every
// round meets it), every non-2xx status, the load average. The numbers are only meaningful as
// ratios: all sides ran on this machine, one after the other, in this process.
//
// The send route also runs through each database path (db-paths.ts): the neon driver (the stack's
// edge, `send`) and a Hyperdrive binding, and both again with BENCH_DB_DELAY_MS of round trip added
// between the edge and the database's region.
//
// Options (env): BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (20), BENCH_WARMUP (s, 2),
// BENCH_ROUNDS (3), BENCH_DB_DELAY_MS (100; 0 leaves the database paths out), LHBOX_BENCH_KEEP=1
// keeps the state folder. `--quick` checks that the bench works, in a minute or two, and gives no
// figure worth quoting: 2 s per side after 1 s of warm-up, 4 connections, no database paths (each
// env option still overrides).
//
// `npm run bench:intake -- --sinks 10000 [--ledger-rows 1000000] [--due 100]` runs the fleet instead
// (test/bench/intake-fleet.ts): sends spread over that many sinks beside the one-sink send side,
// statements and Postgres CPU per send, and the ledger statement's own ceiling on this Postgres.
import type { Result } from 'autocannon'
import { createRequire } from 'node:module'
import os from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { freePort } from '../../dev/ports.ts'
import { pgbouncerBinary } from '../../dev/pgbouncer.ts'
import { PG_DATABASE, PG_PASSWORD, PG_USER } from '../../dev/postgres.ts'
import { startChild, waitFor, type Child } from '../../dev/process.ts'
import { WRANGLER_OFFLINE } from '../../dev/wrangler.ts'
import { PRESETS } from '../../edge/devices/presets/index.ts'
import { sha256Hex } from '../../edge/keys.ts'
import { api, benchStack, Cleanup, deadline, fmt, rowJson, tableAndSink } from './common.ts'
import { startDbPaths } from './db-paths.ts'
import { intOptions } from './fleet.ts'
import { type CpuSample, CpuWatch, rebuildMs, settle, spentText } from './intake-cpu.ts'
import { intakeFleet } from './intake-fleet.ts'
import { OTLP_COLUMNS, otlpExport } from './intake-otlp.ts'
import { readBack, type Side, side } from './intake-readback.ts'
import { sourcesStamp } from './intake-sources.ts'
import { printIntake } from './intake-summary.ts'
import { type Req, sendLoad } from './send-load.ts'

const QUICK = process.argv.includes('--quick')
const env = (name: string, normal: number, quick: number) => Number(process.env[name] ?? (QUICK ? quick : normal))
const DURATION = env('BENCH_DURATION', 10, 2)
const CONNECTIONS = env('BENCH_CONNECTIONS', 20, 4)
const WARMUP = env('BENCH_WARMUP', 2, 1)
const ROUNDS = env('BENCH_ROUNDS', 3, 3)
const DB_DELAY_MS = env('BENCH_DB_DELAY_MS', 100, 0)
const ROWS = 10
const TARGET = 0.9
/** A run is run again when an edge's esbuild spent this much CPU in it (a rebuild), at most MAX_ATTEMPTS times. */
const REBUILD_MS = 200
const MAX_ATTEMPTS = 3
/** The warm-up of a run on another edge than the run before it, in WARMUPs. */
const EDGE_SWITCH_WARMUP = 3
const FLEET = intOptions(
  { sinks: 0, 'ledger-rows': 1_000_000, due: 100 },
  process.argv.slice(2).filter((a) => a !== '--quick'),
)

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

/** One OwnTracks location as the app POSTs it (the quick-setup fixture's fields, and acc, cog, bs, t). */
function owntracks(n: number): { deviceId: string; body: string; tst: number } {
  const tst = 1_780_000_000 + n
  const deviceId = `phone-${n % 16}`
  const [lat, lon] = [(48.85 + (n % 997) / 1e5).toFixed(6), (2.29 + (n % 991) / 1e5).toFixed(6)]
  const body = `{"_type":"location","SSID":"mywifi","acc":${5 + (n % 30)},"alt":${150 + (n % 40)},"batt":${20 + (n % 80)},"bs":1,"cog":${n % 360},"conn":"m","created_at":${tst + 1},"lat":${lat},"lon":${lon},"t":"t","tid":"j1","tst":${tst},"vel":${n % 50}}`
  return { deviceId, body, tst }
}

async function main(): Promise<void> {
  const loadStart = os.loadavg()
  const cleanup = new Cleanup()
  // Eight sides at most, each read back after every round; a settle and a run again now and then.
  deadline(cleanup, (5 * 60 + ROUNDS * 8 * 2 * (DURATION + WARMUP + 5)) * 1000, 'bench:intake')
  if (QUICK) log(`--quick: ${DURATION} s per side, ${CONNECTIONS} connections — a check that the bench works, not a figure`)
  try {
    const b = await benchStack('bench-intake', cleanup, log)
    const sendSink = await tableAndSink(b, 'bench.intake_send')
    const bareSink = await tableAndSink(b, 'bench.intake_bare')
    const columns = Object.entries(PRESETS.owntracks.columns).map(([name, type]) => ({ name, type }))
    const deviceSink = await tableAndSink(b, 'bench.intake_device', {}, { columns, format_version: 3 })
    const ndjsonSink = await tableAndSink(b, 'bench.intake_ndjson')
    const otlpSink = await tableAndSink(b, 'bench.intake_otlp', {}, { columns: OTLP_COLUMNS, format_version: 3 })
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

    // Every body built here, before any timing.
    const rows = Array.from({ length: ROWS }, (_, i) => rowJson(1000 + i))
    const body = `[${rows.join(',')}]`
    const lines = rows.join('\n')
    const otlp = await otlpExport(ROWS)
    const batch =
      (name: string, sink: { id: string; sendKey: string }, type = 'application/json', text = body) =>
      (n: number): Req => ({
        path: `/v1/sinks/${sink.id}`,
        headers: { authorization: `Bearer ${sink.sendKey}`, 'content-type': type, 'idempotency-key': `${name}-${n}` },
        body: text,
        batchId: `${name}-${n}`,
      })
    const key = encodeURIComponent(deviceSink.sendKey)
    const [bareS, sendS, deviceS, ndjsonS, otlpS] = [
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
      side('otlp', b.stack.apiUrl, otlpSink.id, 200, (n) => {
        const { body, batchId } = otlp.request(n)
        return {
          path: `/v1/sinks/${otlpSink.id}/otlp/v1/logs`,
          headers: { authorization: `Bearer ${otlpSink.sendKey}`, 'content-type': 'application/x-protobuf' },
          body,
          batchId,
        }
      }),
    ]
    const pathS = pathSinks.map(({ path, sink }, i) => side(`send ${path.name}`, path.origin, sink.id, 202, batch(`path${i}`, sink)))
    const sides: Side[] = [bareS, sendS, deviceS, ndjsonS, otlpS, ...pathS]
    // One request each first: a wrong setup fails here, not as 10 s of errors (the device's also
    // fills this isolate's settings cache, the one extra statement a cold isolate pays; the otlp's
    // the table's shape, which it keeps a minute).
    for (const s of sides) {
      for (let attempt = 1; ; attempt++) {
        const r = s.request(++s.n)
        s.sent.add(r.batchId)
        // The body as bytes: fetch adds no Content-Type of its own.
        const res = await fetch(s.origin + r.path, {
          method: 'POST',
          headers: r.headers,
          body: typeof r.body === 'string' ? new TextEncoder().encode(r.body) : r.body,
        })
        const text = await res.text()
        // wrangler dev restarting a Worker rebuilt from edited sources: that request is cut off (it
        // may or may not be stored, as a run's last ones); another once it is up.
        if (res.status === 503 && text.includes('restarted') && attempt < 5) {
          await new Promise((ok) => setTimeout(ok, 3000))
          continue
        }
        s.answered.set(r.batchId, res.status)
        // An OTLP 200 with a body is a partialSuccess: a record refused.
        if (res.status !== s.expect || (s === otlpS && text !== '')) throw new Error(`${s.name}: the probe request answered ${res.status} ${text}`)
        break
      }
    }
    log(
      `bodies: send/bare ${body.length} bytes, ${ROWS} rows; ndjson the same rows, ${lines.length} bytes; otlp ${ROWS} log records, ${otlp.bytes} bytes of protobuf; device one OwnTracks location, ~${owntracks(1).body.length} bytes; ${CONNECTIONS} connections; ${WARMUP} s warm-up + ${DURATION} s per side, ${ROUNDS} round(s)`,
    )

    const db = new pg.Client(b.stack.databaseUrl)
    await db.connect()
    cleanup.add(() => db.end())
    const port = (origin: string) => Number(new URL(origin).port)
    const watch = new CpuWatch(
      b.stack.dir,
      new Map([[port(b.stack.apiUrl), 'edge'], [port(bare.url), 'bare'], ...paths.map((p): [number, string] => [port(p.origin), p.name])]),
      db,
    )
    let held: string[] = []
    const notes: string[] = []
    // Every side loaded once before round 1, not counted: no counted run is the first load its edge's
    // processes (and this one's autocannon) see (the first runs of a bench cost ~30 % more CPU a request).
    for (const s of sides) if (WARMUP > 0) await sendLoad(s.origin, s, CONNECTIONS, WARMUP)
    let last = await watch.sample()
    let lastOrigin = ''
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? sides : [...sides].reverse()
      const cpu: string[] = []
      for (const s of order) {
        // Each run from the same state: the stack idle, the Worker's sources as they were, its own
        // warm-up; a run during which the Worker was rebuilt is run again (intake-sources.ts).
        for (let attempt = 1; ; attempt++) {
          const waited = await settle(watch)
          const stamp = sourcesStamp(root)
          const w0 = await watch.sample()
          // An edge idle while other edges ran (the database paths, the bare Worker) costs more CPU a
          // request for longer than one warm-up: the first side back on it gets a longer one.
          const warmup = s.origin === lastOrigin ? WARMUP : WARMUP * EDGE_SWITCH_WARMUP
          if (warmup > 0) await sendLoad(s.origin, s, CONNECTIONS, warmup)
          lastOrigin = s.origin
          const r0 = await watch.sample()
          const result = await sendLoad(s.origin, s, CONNECTIONS, DURATION)
          const r1: CpuSample = await watch.sample()
          const what = `cpu round ${round + 1} ${s.name}${attempt > 1 ? ` (run ${attempt})` : ''}`
          cpu.push(`${what}: before ${spentText(last, w0)}; settled in ${waited.toFixed(1)} s`)
          cpu.push(`${what}: warm-up ${spentText(w0, r0)}`)
          cpu.push(`${what}: run (${result.requests.total} requests) ${spentText(r0, r1)}`)
          last = r1
          const rebuilt = sourcesStamp(root) !== stamp || rebuildMs(w0, r1) > REBUILD_MS
          if (!rebuilt || attempt === MAX_ATTEMPTS) {
            if (rebuilt) notes.push(`round ${round + 1} ${s.name}: the Worker was rebuilt during each of ${attempt} runs (sources edited); the last is kept`)
            s.results.push(result)
            break
          }
          notes.push(`round ${round + 1} ${s.name}: run again, the Worker was rebuilt during run ${attempt} (sources edited meanwhile)`)
        }
      }
      for (const line of cpu) log(line)
      // Read back before printing any figure of the round.
      held = []
      for (const s of sides) held.push(await readBack(b, db, s, CONNECTIONS))
      for (const s of order) {
        const r = s.results[round]
        log(
          `round ${round + 1} ${s.name.padEnd(6)}: ${fmt(r.requests.average, 1)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, statuses ${JSON.stringify(statusCounts(r))}, errors ${r.errors}, timeouts ${r.timeouts}`,
        )
      }
    }

    const bad = printIntake({
      title: `bench:intake — ${CONNECTIONS} connections, ${DURATION} s after ${WARMUP} s warm-up, ${ROUNDS} round(s); send/bare/ndjson: ${ROWS} rows (${body.length}-byte array); otlp: ${ROWS} log records (${otlp.bytes} bytes); device: one OwnTracks location; loopback`,
      sides: [sendS, ndjsonS, otlpS, deviceS, bareS, ...pathS],
      ratios: [
        { of: sendS, over: bareS },
        { of: ndjsonS, over: sendS, target: TARGET },
        { of: otlpS, over: sendS, target: TARGET },
        { of: deviceS, over: sendS, target: TARGET },
        ...pathS.map((p) => ({ of: p, over: sendS })),
      ],
      loadStart,
      readBacks: held,
      notes: [...notes, ...(QUICK ? ['--quick: a check that the bench works; these figures are not a measurement'] : [])],
    })
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
    // The fleet run keeps its one round unless asked (its sides are not the ratios above).
    rounds: Number(process.env.BENCH_ROUNDS ?? 1),
  })
else await main()
