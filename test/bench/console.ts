// npm run bench:console — the console's views (issue 16: "under 300 ms on the dev stack with 50 sinks
// and 10,000 rejected rows"), side by side with the JSON API routes that answer the same data.
//
// One private stack (wrangler dev, Postgres behind pgbouncer, versitygw; loopback only). Set-up,
// untimed: BENCH_SINKS tables and sinks (an hour's roll_seconds); the first sink is sent
// BENCH_REJECTS rejected rows (with some good ones) in 20 batches, every other sink one small batch;
// one roller tick rolls them all. Then a day of history is added straight into Postgres, marked as
// such: per sink a roll report every half hour (sink.roll audit events) and a committed batch every
// five minutes (the ledger), so the charts and the usage page aggregate what a day would hold.
//
// Before any figure: PyIceberg reads every table back (rows and sum(id) as sent), and boto3 counts the
// lines of the first sink's rejects files, which must be BENCH_REJECTS.
//
// Measured: per view, BENCH_REQUESTS sequential GETs (after 3 unmeasured), their median; the JSON
// route beside it the same way; the order alternates each run; medians over BENCH_RUNS runs. Printed:
// each view's median and p90, the API route's, the ratio, and whether the view is under 300 ms.
// The views: overview (vs GET /v1/sinks), a sink (vs GET /v1/sinks/{id}), its rejects first page and
// a page 50 rows from the end (vs GET /v1/sinks/{id}/rejects?limit=50, same cursor), a table (vs GET
// /v1/tables/{…}), usage (vs GET /v1/usage).
import pg from 'pg'
import { sqlCatalogArgs, runBoto3 } from '../support/python.ts'
import { api, benchStack, rowJson, tableAndSink } from './common.ts'
import { envInt, loadText, readBack, rollerTick, runBench, sendBatches, startBench, type Batch } from './harness.ts'

const SINKS = envInt('BENCH_SINKS', 50)
const REJECTS = envInt('BENCH_REJECTS', 10_000)
const REQUESTS = envInt('BENCH_REQUESTS', 20)
const RUNS = envInt('BENCH_RUNS', 3)
const TARGET_MS = 300
const REJECT_BATCHES = 20

const b = startBench('bench:console', 20 * 60_000)

const median = (xs: number[]) => {
  const s = [...xs].sort((p, q) => p - q)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const p90 = (xs: number[]) => [...xs].sort((p, q) => p - q)[Math.min(xs.length - 1, Math.floor(xs.length * 0.9))]

/** REQUESTS sequential GETs after 3 unmeasured; each must answer 200 with the content type given. */
async function timeGets(url: string, key: string, type: RegExp): Promise<number[]> {
  const ms: number[] = []
  for (let i = 0; i < REQUESTS + 3; i++) {
    const t0 = performance.now()
    const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } })
    const body = await res.text()
    const took = performance.now() - t0
    if (res.status !== 200 || !type.test(res.headers.get('content-type') ?? '')) throw new Error(`GET ${url}: ${res.status} ${body.slice(0, 300)}`)
    if (i >= 3) ms.push(took)
  }
  return ms
}

await runBench(b, async () => {
  const bs = await benchStack('console', b.cleanup, b.log)
  const sinks = []
  for (let i = 0; i < SINKS; i++) sinks.push(await tableAndSink(bs, `console.t${String(i).padStart(2, '0')}`, { roll_seconds: 3600 }))
  b.log(`${SINKS} tables and sinks`)

  // The first sink: REJECTS rows of a wrong type among good ones; the others one small batch each.
  const perBatch = Math.ceil(REJECTS / REJECT_BATCHES)
  const bad = (id: number) => `{"id":"row ${id}","name":"no number","ts":"2026-05-01T00:00:00Z","amount":1.00}`
  let goodId = 0
  const expected = new Map<string, { rows: number; sum: bigint }>()
  const good = (table: string) => {
    const id = ++goodId
    const e = expected.get(table) ?? { rows: 0, sum: 0n }
    expected.set(table, { rows: e.rows + 1, sum: e.sum + BigInt(id) })
    return rowJson(id)
  }
  const first: Batch[] = []
  let rejected = 0
  for (let n = 0; n < REJECT_BATCHES; n++) {
    const rows: string[] = []
    for (let i = 0; i < perBatch && rejected < REJECTS; i++, rejected++) rows.push(bad(rejected))
    for (let i = 0; i < 50; i++) rows.push(good(sinks[0].table))
    first.push({ id: `rejects-${n}`, body: `[${rows.join(',')}]` })
  }
  await sendBatches(bs, sinks[0], first)
  for (const s of sinks.slice(1)) await sendBatches(bs, s, [{ id: 'one', body: `[${Array.from({ length: 10 }, () => good(s.table)).join(',')},${bad(0)}]` }])
  const tick = await rollerTick(bs, null)
  b.log(`one roller tick rolled every sink in ${tick.wallSeconds.toFixed(1)} s`)

  // A day of history, marked as the bench's: roll reports and committed batches.
  const db = new pg.Client({ connectionString: bs.stack.databaseUrl })
  await db.connect()
  b.cleanup.add(() => db.end())
  const project = (await db.query('select project_id from sinks where id = $1', [sinks[0].id])).rows[0].project_id
  await db.query(
    `insert into audit_events (project_id, at, actor, action, subject, details)
     select $1, now() - make_interval(mins => 30 * g), 'roller:bench-history', 'sink.roll', s,
            jsonb_build_object('roll_id', 'bench-' || g, 'batches_committed', 6, 'repaired', 0,
              'last_roll', jsonb_build_object('at', now() - make_interval(mins => 30 * g), 'batches', 6, 'rows', 600 + g, 'rejected_rows', g % 7,
                'snapshot_id', (1000000000000000000 + g)::text, 'seconds', 0.4))
     from unnest($2::text[]) s, generate_series(1, 47) g`,
    [project, sinks.map((s) => s.id)],
  )
  await db.query(
    `insert into batches (sink_id, batch_id, body_sha256, bytes, rows, received_at, state, committed_at)
     select s, 'history-' || g, md5(s || g), 10000, 100, now() - make_interval(mins => 5 * g), 'committed', now() - make_interval(mins => 5 * g - 2)
     from unnest($1::text[]) s, generate_series(1, 288) g`,
    [sinks.map((s) => s.id)],
  )
  b.log(`history added: ${SINKS * 47} roll reports and ${SINKS * 288} committed batches over the last day (actor roller:bench-history)`)

  // Read back before any figure.
  const catalogArgs = sqlCatalogArgs({ databaseUrl: bs.stack.databaseUrl, catalogName: bs.warehouseId, s3: bs.stack.s3 })
  const lines = await readBack(
    catalogArgs,
    sinks.map((s) => ({ side: s.table, table: s.table, expected: { rows: expected.get(s.table)!.rows, sums: { id: String(expected.get(s.table)!.sum) } } })),
  )
  b.log(`PyIceberg read back ${lines.length} tables as sent (${lines[0]})`)
  const s3 = bs.stack.s3
  const counted = (await runBoto3('boto3_bucket.py', [
    '--lines-under',
    `_sink/${sinks[0].id}/rejects/`,
    '--s3-endpoint',
    s3.endpoint,
    '--s3-access-key-id',
    s3.accessKeyId,
    '--s3-secret-access-key',
    s3.secretAccessKey,
    '--s3-region',
    s3.region,
    s3.bucket,
  ])) as { line_objects: number; lines: number }
  if (counted.lines !== REJECTS) throw new Error(`boto3 counts ${counted.lines} rejected rows under the first sink, expected ${REJECTS}`)
  b.log(`boto3 counts ${counted.lines} rejected rows in ${counted.line_objects} files`)

  // A cursor 9,950 rows deep, from the API's own pages.
  let cursor: string | null = null
  for (let skipped = 0; skipped < REJECTS - 50; skipped += 1000) {
    const page: { next_cursor: string | null } = await api(
      bs.stack,
      bs.apiKey,
      'GET',
      `/v1/sinks/${sinks[0].id}/rejects?limit=1000${cursor ? `&cursor=${cursor}` : ''}`,
    )
    cursor = page.next_cursor
  }
  const deep = `cursor=${cursor}&limit=50`
  const table = `${bs.warehouse}.${sinks[0].table}`
  const views: Array<[string, string, string]> = [
    ['overview', '/console/f/overview', '/v1/sinks'],
    ['sink', `/console/f/sinks/${sinks[0].id}`, `/v1/sinks/${sinks[0].id}`],
    ['rejects, first page', `/console/f/sinks/${sinks[0].id}/rejects`, `/v1/sinks/${sinks[0].id}/rejects?limit=50`],
    [`rejects, ${REJECTS - 50} deep`, `/console/f/sinks/${sinks[0].id}/rejects?${deep}`, `/v1/sinks/${sinks[0].id}/rejects?${deep}`],
    ['table', `/console/f/tables/${table}`, `/v1/tables/${table}`],
    ['usage', '/console/f/usage', '/v1/usage'],
  ]
  const got = new Map<string, { view: number[]; api: number[]; viewP90: number[] }>()
  for (let run = 0; run < RUNS; run++) {
    for (const [name, view, route] of views) {
      const r = got.get(name) ?? { view: [], api: [], viewP90: [] }
      const sides = [
        async () => {
          const ms = await timeGets(bs.stack.apiUrl + view, bs.apiKey, /^text\/html/)
          r.view.push(median(ms))
          r.viewP90.push(p90(ms))
        },
        async () => r.api.push(median(await timeGets(bs.stack.apiUrl + route, bs.apiKey, /^application\/json/))),
      ]
      for (const side of run % 2 ? sides.reverse() : sides) await side()
      got.set(name, r)
    }
    b.log(`run ${run + 1}/${RUNS} done (load ${loadText()})`)
  }
  console.log(`\nbench:console — ${SINKS} sinks, ${REJECTS} rejected rows, a day of history; ${REQUESTS} GETs per side per run, medians of ${RUNS} runs`)
  console.log('| view | console median | console p90 | JSON route median | ratio | under 300 ms |')
  console.log('| --- | --- | --- | --- | --- | --- |')
  for (const [name] of views) {
    const r = got.get(name)!
    const view = median(r.view)
    const route = median(r.api)
    console.log(
      `| ${name} | ${view.toFixed(1)} ms | ${median(r.viewP90).toFixed(1)} ms | ${route.toFixed(1)} ms | ${(view / route).toFixed(2)}× | ${view < TARGET_MS ? 'yes' : 'NO'} |`,
    )
  }
  console.log(`  load average at the start ${loadText(b.loadStart)}; at the end ${loadText()}`)
})
