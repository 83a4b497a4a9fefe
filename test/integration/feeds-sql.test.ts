// Scheduled SQL sinks (issue 13): DuckDB reads CSV, JSON and Parquet from a loopback HTTP server, its
// rows land in the table (PyIceberg reads them back), the next slot runs again, a run asked for runs
// now, a roller killed between storing the run's Parquet and committing it — then restarted, and a
// second roller trying the slot again — commits the slot once; bad queries are clear errors.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { parquetWriteBuffer } from 'hyparquet-writer'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { lhbox } from '../support/cli.ts'
import { ensureVenv } from '../support/python.ts'
import { rollerTick, tickInProcess } from '../support/roller.ts'
import { scan, sinkSnapshots, warehouseId } from '../support/roller-check.ts'
import { bucket, createTable, database, feedSinksDeletedAfter, intakeObjects, newSink, poll, postSink, uid } from '../support/sinks.ts'
import { call, expectError, stack } from '../support/stack.ts'

const COLUMNS = [
  { name: 'x', type: 'long', required: true },
  { name: 'station', type: 'string' },
  { name: 'temp', type: 'double' },
]

let server: Server
let origin: string

beforeAll(async () => {
  await ensureVenv()
  const parquet = new Uint8Array(
    parquetWriteBuffer({
      columnData: [
        { name: 'x', data: [5n, 6n], type: 'INT64' },
        { name: 'station', data: ['pq-1', 'pq-2'], type: 'STRING' },
        { name: 'temp', data: [5.5, 6.5], type: 'DOUBLE' },
      ],
    }),
  )
  const files: Record<string, [string, string | Uint8Array]> = {
    '/obs.csv': ['text/csv', 'x,station,temp\n1,csv-1,1.5\n2,csv-2,2.5\n'],
    '/obs.json': ['application/json', '[{"x": 3, "station": "json-3", "temp": 3.5}, {"x": 4, "station": "json-4", "temp": 4.5}]'],
    '/obs.parquet': ['application/vnd.apache.parquet', parquet],
  }
  server = createServer((req, res) => {
    const file = files[new URL(req.url ?? '/', 'http://x').pathname]
    if (!file) return res.writeHead(404).end()
    const body = typeof file[1] === 'string' ? Buffer.from(file[1]) : Buffer.from(file[1])
    // DuckDB's httpfs asks HEAD first, then ranges: a plain 200 with the length serves both.
    res.writeHead(200, { 'content-type': file[0], 'content-length': body.length, 'accept-ranges': 'none' })
    res.end(req.method === 'HEAD' ? undefined : body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}, 15 * 60_000)

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

const unionQuery = () =>
  [
    `SELECT x, station, temp FROM read_csv('${origin}/obs.csv')`,
    `SELECT x, station, temp FROM read_json('${origin}/obs.json')`,
    `SELECT x, station, temp FROM read_parquet('${origin}/obs.parquet')`,
  ].join(' UNION ALL ')

const feedSink = feedSinksDeletedAfter(afterAll)

/** The test's HTTP server is on loopback, which a run reaches only when the operator opens it (feeds-sql-egress.test.ts). */
const LOOPBACK = { LHBOX_SQL_ALLOW_HOSTS: '127.0.0.1' }

async function sqlSink(query: string, every = 3600) {
  const sink = await newSink(stack().adminKey, { tableSpec: { columns: COLUMNS }, sink: { sql: { query, every_seconds: every } } })
  feedSink(sink.id)
  return sink
}

const sinkView = async (id: string) => (await call(`/v1/sinks/${id}`, { key: stack().adminKey })).body
const table = async (name: string) => scan({ sql: await warehouseId(stack().warehouse) }, name)

describe.concurrent('scheduled SQL sinks', () => {
  it('runs the query on its slots: CSV, JSON and Parquet over http land in the table, the next slot runs again', async () => {
    // The first run and the tick after it must fall in one slot: start with at least 40 s of it left.
    const leftInSlot = 60_000 - (Date.now() % 60_000)
    if (leftInSlot < 40_000) await new Promise((r) => setTimeout(r, leftInSlot + 200))
    const sink = await sqlSink(unionQuery(), 60)
    expect(sink.created.body.send_key).toBeUndefined()
    expect(sink.created.body).toMatchObject({ kind: 'sql', sql: { query: unionQuery(), every_seconds: 60, last_run: null } })

    const first = await tickInProcess({ env: LOOPBACK, sink: sink.id })
    expect(first.code, first.stdout).toBe(0)
    const after1 = await sinkView(sink.id)
    const slot1 = after1.sql.last_run.run_id
    expect(slot1).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00Z$/)
    expect(after1.sql.last_run).toMatchObject({ outcome: 'ok', rows: 6, error: null })
    expect(Date.parse(after1.sql.next_run_at)).toBe(Date.parse(slot1) + 60_000)
    const t1 = await table(sink.table)
    expect(t1.rows.map((r) => [Number(r.x), r.station, Number(r.temp)])).toEqual([
      [1, 'csv-1', 1.5],
      [2, 'csv-2', 2.5],
      [3, 'json-3', 3.5],
      [4, 'json-4', 4.5],
      [5, 'pq-1', 5.5],
      [6, 'pq-2', 6.5],
    ])
    expect(sinkSnapshots(t1, sink.id).map((s) => s.summary['lakehousebox.sink.batches'])).toEqual([slot1])
    // __ingest_ts is the run's time.
    expect(Date.parse(String(t1.rows[0].__ingest_ts))).toBeGreaterThanOrEqual(Date.parse(slot1))

    // A tick inside the same slot runs nothing more.
    expect((await tickInProcess({ env: LOOPBACK, sink: sink.id })).code).toBe(0)
    expect((await table(sink.table)).rows).toHaveLength(6)

    // The next slot (the next minute) runs the query again: its rows are appended once more.
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(slot1) + 60_000 - Date.now() + 200)))
    expect((await tickInProcess({ env: LOOPBACK, sink: sink.id })).code).toBe(0)
    const after2 = await sinkView(sink.id)
    expect(after2.sql.last_run).toMatchObject({ outcome: 'ok', rows: 6, error: null })
    expect(Date.parse(after2.sql.last_run.run_id)).toBeGreaterThanOrEqual(Date.parse(slot1) + 60_000)
    const t2 = await table(sink.table)
    expect(t2.rows).toHaveLength(12)
    expect(sinkSnapshots(t2, sink.id).map((s) => s.summary['lakehousebox.sink.batches'])).toEqual([slot1, after2.sql.last_run.run_id])
    expect(await intakeObjects(sink.id)).toEqual([])
  }, 180_000)

  it('lhbox sink create --sql --every, then lhbox sink run asks for a run now; POST /run on a send sink is refused', async () => {
    const tableName = await createTable(stack().adminKey, { columns: COLUMNS })
    const name = `cli_${uid()}`
    const query = `SELECT x, station, temp FROM read_csv('${origin}/obs.csv')`
    const made = await lhbox(['sink', 'create', stack().warehouse, '--table', tableName, '--name', name, '--sql', query, '--every', '1h'])
    expect(made.code, made.stderr).toBe(0)
    expect(made.stdout).toContain(`created sql sink ${name}`)
    expect(made.stdout).toContain('every      3600 s')
    const sink = { id: feedSink((await sinkView(name)).id), name, table: tableName }
    expect((await tickInProcess({ env: LOOPBACK, sink: sink.id })).code).toBe(0)
    const got = await lhbox(['sink', 'get', name])
    expect(got.stdout).toMatch(/last run {3}\d{4}-\d\d-\d\dT\d\d:00:00Z: ok, 2 rows/)
    expect((await table(sink.table)).rows).toHaveLength(2)
    // Inside the hour's slot nothing is due; asked for, it runs at the next tick.
    const cli = await lhbox(['sink', 'run', sink.name, '--json'])
    expect(cli.code, cli.stderr).toBe(0)
    const asked = JSON.parse(cli.stdout)
    expect(asked.run.requested_at).toEqual(expect.any(String))
    expect((await tickInProcess({ env: LOOPBACK, sink: sink.id })).code).toBe(0)
    const view = await sinkView(sink.id)
    expect(view.run_requested_at).toBeNull()
    expect(view.sql.last_run).toMatchObject({ outcome: 'ok', rows: 2 })
    expect(Date.parse(view.sql.last_run.run_id)).toBe(Date.parse(asked.run.requested_at))
    expect((await table(sink.table)).rows).toHaveLength(4)

    const send = await newSink(stack().adminKey)
    expectError(await call(`/v1/sinks/${send.id}/run`, { key: stack().adminKey, method: 'POST' }), 409, 'not_a_feed')
    // A disabled feed sink does not run.
    const db = await database()
    try {
      await db.query(`update sinks set state = 'disabled', disabled_reason = 'by_test' where id = $1`, [sink.id])
    } finally {
      await db.end()
    }
    expectError(await call(`/v1/sinks/${sink.id}/run`, { key: stack().adminKey, method: 'POST' }), 409, 'sink_not_active')
  }, 120_000)

  it('a roller killed between storing the Parquet and committing: the restart commits the slot once, a second roller finds it done', async () => {
    const sink = await sqlSink(`SELECT x, station, temp FROM read_csv('${origin}/obs.csv')`)
    const dead = await rollerTick({ env: LOOPBACK, sink: sink.id, killAt: 'feed-batch', rollerId: `dead-${uid()}` })
    expect(dead.signal, dead.stdout + dead.stderr).toBe('SIGKILL')
    const waiting = (await intakeObjects(sink.id)).filter((k) => k.endsWith('.parquet'))
    expect(waiting).toHaveLength(1)
    const slot = waiting[0].split('/').at(-1)!.replace('.parquet', '')
    const db = await database()
    try {
      // The dead roller's lease is given up by hand (it would expire), then two rollers race the slot.
      await db.query('update sinks set lease_owner = null, lease_expires_at = null where id = $1', [sink.id])
      const raced = await Promise.all([
        tickInProcess({ env: LOOPBACK, sink: sink.id, rollerId: `a-${uid()}` }),
        tickInProcess({ env: LOOPBACK, sink: sink.id, rollerId: `b-${uid()}` }),
      ])
      for (const t of raced) expect(t.code, t.stdout).toBe(0)
      // Whatever the order, the report may be lost: the schedule is put back as if no roller had told the edge.
      await db.query(`update sinks set feed_next_run_at = now() - interval '1 second', feed_last_run = null, lease_owner = null where id = $1`, [sink.id])
      const again = await tickInProcess({ env: LOOPBACK, sink: sink.id, rollerId: `c-${uid()}` })
      expect(again.code, again.stdout).toBe(0)
    } finally {
      await db.end()
    }
    const view = await sinkView(sink.id)
    expect(view.sql.last_run).toMatchObject({ run_id: slot, outcome: 'done_before', rows: 0 })
    const t = await table(sink.table)
    expect(t.rows.map((r) => Number(r.x))).toEqual([1, 2])
    expect(sinkSnapshots(t, sink.id).map((s) => s.summary['lakehousebox.sink.batches'])).toEqual([slot])
    expect(await intakeObjects(sink.id)).toEqual([])
  }, 120_000)

  it('checks values as JSON rows are checked: an integral double fits a long, 3.5 is a type_mismatch reject', async () => {
    const sink = await sqlSink(`SELECT * FROM (VALUES (3.0::DOUBLE, 'fits'), (3.5::DOUBLE, 'no')) t(x, station)`)
    expect((await tickInProcess({ env: LOOPBACK, sink: sink.id })).code).toBe(0)
    const view = await sinkView(sink.id)
    expect(view.last_roll).toMatchObject({ rows: 1, rejected_rows: 1 })
    const rejects = await bucket().get(`_sink/${sink.id}/rejects/${view.sql.last_run.run_id}.ndjson`)
    const line = JSON.parse(new TextDecoder().decode(rejects!.body).trim())
    expect(line).toMatchObject({ batch_id: view.sql.last_run.run_id, index: 1, reason: 'type_mismatch', field: 'x', row: { x: 3.5, station: 'no' } })
    expect((await table(sink.table)).rows.map((r) => [Number(r.x), r.station])).toEqual([[3, 'fits']])
  }, 120_000)

  it('converts nested values exactly, as top-level ones: a BIGINT and a timestamptz inside a struct, a list of BIGINTs, a map', async () => {
    const table = `sinks.nested_${uid()}`
    const field = (name: string, type: unknown, required = false) => ({ name, type, required })
    const fields = [
      field('x', 'long', true),
      field('s', { type: 'struct', fields: [field('a', 'long'), field('t', 'timestamptz'), field('d', 'decimal(18, 2)')] }),
      field('l', { type: 'list', element: 'long', 'element-required': false }),
      field('m', { type: 'map', key: 'string', value: 'long', 'value-required': false }),
    ]
    const created = await call('/v1/tables', { key: stack().adminKey, json: { warehouse: stack().warehouse, table, schema: { fields } } })
    expect(created.status, created.text).toBe(201)
    const sink = await newSink(stack().adminKey, {
      table,
      sink: {
        sql: {
          query: `SELECT 1 AS x, {'a': 9007199254740993::BIGINT, 't': TIMESTAMPTZ '2026-01-02 03:04:05.123456+00', 'd': 12.30::DECIMAL(18,2)} AS s,
                    [9223372036854775807::BIGINT, NULL] AS l, MAP {'k': 42::BIGINT} AS m`,
          every_seconds: 3600,
        },
      },
    })
    feedSink(sink.id)
    expect((await tickInProcess({ sink: sink.id })).code).toBe(0)
    // Before, DuckDB's JSON gave the struct's BIGINT as "9007199254740993" and its time as "2026-01-02 03:04:05.123456+00": both refused.
    expect((await sinkView(sink.id)).last_roll).toMatchObject({ rows: 1, rejected_rows: 0 })
    const [row] = (await scan({ sql: await warehouseId(stack().warehouse) }, table)).rows
    expect(String(row.s.a)).toBe('9007199254740993')
    expect(String(row.s.t)).toMatch(/^2026-01-02[T ]03:04:05\.123456/)
    expect(String(row.s.d)).toBe('12.30')
    expect(row.l.map((v: unknown) => (v === null ? null : String(v)))).toEqual(['9223372036854775807', null])
    expect(JSON.stringify(row.m, (_, v) => (typeof v === 'bigint' ? v.toString() : v))).toMatch(/"k".*"?42"?/)
  }, 120_000)

  it('refuses a non-SELECT or several statements at create (DuckDB parser), and a sql sink takes no mapping', async () => {
    const tableName = await createTable(stack().adminKey, { columns: COLUMNS })
    const body = (query: string) => ({ name: `q_${uid()}`, table: tableName, sql: { query, every_seconds: 3600 } })
    for (const query of ['DELETE FROM t', `COPY (SELECT 1) TO '/tmp/x.csv'`, 'SELECT 1; SELECT 2', 'SELEC 1', "ATTACH 'x.db'"]) {
      const res = await postSink(stack().adminKey, body(query))
      expectError(res, 400, 'invalid_query')
      expect(res.body.error.message, query).toMatch(/SELECT|syntax/)
    }
    expectError(await postSink(stack().adminKey, { ...body('SELECT 1 AS x'), sql: { query: 'SELECT 1 AS x', every_seconds: 59 } }), 400, 'invalid_request')
    expectError(await postSink(stack().adminKey, { ...body('SELECT 1 AS x'), mapping: { preset: 'owntracks' } }), 400, 'invalid_request')
    // PATCH: a new query is checked again; a send sink cannot become a SQL sink.
    const sink = await sqlSink('SELECT 1 AS x')
    expectError(await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey, method: 'PATCH', json: { sql: { query: 'DROP TABLE x' } } }), 400, 'invalid_query')
    const patched = await call(`/v1/sinks/${sink.id}`, {
      key: stack().adminKey,
      method: 'PATCH',
      json: { sql: { query: 'SELECT 2 AS x', every_seconds: 7200 } },
    })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body.sql).toMatchObject({ query: 'SELECT 2 AS x', every_seconds: 7200 })
    const send = await newSink(stack().adminKey)
    expectError(await call(`/v1/sinks/${send.id}`, { key: stack().adminKey, method: 'PATCH', json: { sql: { query: 'SELECT 1' } } }), 400, 'invalid_request')
    // A body that is not an object is refused, even one with no members to refuse (`[]`), nested too.
    expectError(await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey, method: 'PATCH', json: [] }), 400, 'invalid_request')
    expectError(await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey, method: 'PATCH', json: { sql: [] } }), 400, 'invalid_request')
  }, 60_000)

  it('a local file, the time limit, the memory limit and a result past the batch limit are last_run.error; the sink keeps its schedule and others roll on', async () => {
    const local = await sqlSink(`SELECT 1 AS x, content AS station FROM read_text('/etc/hostname')`)
    const slow = await sqlSink('SELECT count(*) AS x FROM range(100000000000)')
    const big = await sqlSink('SELECT length(list(range)) AS x FROM range(200000000)')
    const large = await sqlSink('SELECT range AS x FROM range(100000)')
    const limits = { LHBOX_SQL_TIMEOUT_SECONDS: '1', LHBOX_SQL_MEMORY_LIMIT: '64MB', LHBOX_SQL_THREADS: '1' }
    const errors: Record<string, RegExp> = {
      [local.id]: /LocalFileSystem has been disabled/,
      [slow.id]: /time limit of 1 s/,
      [big.id]: /Out of Memory/,
      [large.id]: /^batch_too_large: the result is \d+ bytes of Parquet; a run's batch may be 10000 at most$/,
    }
    for (const s of [local, slow, big, large]) {
      const t = await tickInProcess({ sink: s.id, env: { ...limits, LHBOX_SQL_MAX_BATCH_BYTES: '10000' } })
      expect(t.code, t.stdout).toBe(0)
      expect(t.logs.some((l) => l.msg === 'sql run failed' && l.sink_id === s.id)).toBe(true)
      expect(t.metrics).toContain('lhbox_sql_runs_total{outcome="failed"} 1')
      const view = await sinkView(s.id)
      expect(view.state).toBe('active')
      expect(view.sql.last_run).toMatchObject({ outcome: 'failed', rows: 0, error: expect.stringMatching(errors[s.id]) })
      expect(Date.parse(view.sql.next_run_at)).toBeGreaterThan(Date.now())
      expect(await intakeObjects(s.id)).toEqual([])
    }
    // Another sink rolls on as before.
    const ok = await sqlSink('SELECT 42 AS x')
    expect((await tickInProcess({ sink: ok.id, env: limits })).code).toBe(0)
    await poll(async () => (await sinkView(ok.id)).sql.last_run?.rows === 1 || null, 5_000, 'the good sink ran')
    expect((await table(ok.table)).rows.map((r) => Number(r.x))).toEqual([42])
  }, 120_000)
})
