// The device route, POST|GET /v1/sinks/{sink_id}/devices/{device_id}, through real workerd (the
// device issue, "done when" 2–5; the presets are devices-presets.test.ts): a mapping of one's own
// (require, strip, raw, const, device, received, {pointer, as: 'epoch_ms'}, point) on one v3 table,
// rolled and read back with PyIceberg and DuckDB; mappings the table cannot take (400
// mapping_invalid naming the column) and `mapping: null`; the key (query, Basic, Bearer; a wrong key
// and an unknown sink alike; an API key 403); 413 and the request after it; the sink's view.
//
// Requests are raw fetches, as a device sends them: no Idempotency-Key, no Content-Type unless given.
// Each sink is leased to this file's roller id, so the stack's roller service never rolls it.
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PRESETS } from '../../edge/devices/presets/index.ts'
import { deviceCall, ledgerBatches, readerTz, wkbPoint, wkbPointHex, type LedgerBatch } from '../support/devices.ts'
import { runPython, s3Args, sqlCatalogArgs, toExact } from '../support/python.ts'
import { holdSink, tickInProcess } from '../support/roller.ts'
import { rollerSetup, SETUP_TIMEOUT } from '../support/roller-check.ts'
import { bucket, createTable, expect401, intakeKey, intakeObjects, newSink, poll, postSink, uid, type Sink } from '../support/sinks.ts'
import { call, expectError, newApiKey, stack } from '../support/stack.ts'

const MiB = 1024 * 1024
const HOLDER = `devices-${uid()}`
const admin = () => stack().adminKey
let db: pg.Client
let whId: string
beforeAll(async () => ({ db, whId } = await rollerSetup()), SETUP_TIMEOUT)
afterAll(() => db?.end())

const view = async (sink: { id: string }) => {
  const res = await call(`/v1/sinks/${sink.id}`, { key: admin() })
  expect(res.status, res.text).toBe(200)
  return res.body
}
const patch = (sink: { id: string }, json: Record<string, unknown>) => call(`/v1/sinks/${sink.id}`, { method: 'PATCH', key: admin(), json })

async function roll(sink: Sink): Promise<LedgerBatch[]> {
  await poll(async () => (await ledgerBatches(db, sink.id)).every((b) => b.state !== 'receiving'), 15_000, 'every batch stored')
  const t = await tickInProcess({ sink: sink.id, rollerId: HOLDER })
  expect({ code: t.code, signal: t.signal }, t.stdout + t.stderr).toEqual({ code: 0, signal: null })
  return (await poll(async () => {
    const rows = await ledgerBatches(db, sink.id)
    return rows.every((b) => b.state === 'committed') && rows
  })) as LedgerBatch[]
}

const catalogArgs = () => sqlCatalogArgs({ databaseUrl: stack().databaseUrl, catalogName: whId, s3: stack().s3 })
/** Every column, geometry as WKB hex (PyIceberg 0.12 reads it only projected as binary). */
const pyRows = async (table: string, orderBy: string): Promise<any[]> =>
  toExact(await runPython('parquet_stats.py', [...catalogArgs(), table, '--order-by', orderBy, '--rows-binary-geometry'])).rows

// ---- a mapping of one's own ------------------------------------------------------------------------

const COLUMNS: Array<[string, string]> = [
  ['note', 'string'],
  ['dev', 'string'],
  ['kind', 'string'],
  ['temp', 'double'],
  ['count', 'int'],
  ['ok', 'boolean'],
  ['at', 'timestamptz'],
  ['got', 'timestamptz'],
  ['got_text', 'string'],
  ['raw', 'string'],
  ['src', 'string'],
  ['version', 'long'],
  ['secret', 'string'],
  ['pos', 'geometry'],
]
const MAPPING = {
  columns: {
    // First, and not ASCII: the received placeholders after it sit at byte (not character) offsets.
    note: '/note',
    dev: { device: true },
    kind: '/kind',
    temp: '/m/temp',
    count: '/m/count',
    ok: '/ok',
    at: { pointer: '/t_ms', as: 'epoch_ms' },
    got: { received: true },
    got_text: { received: true },
    raw: { raw: true },
    src: { const: 'custom' },
    version: { const: 3 },
    // Stripped from the payload: "removed before it is mapped or stored".
    secret: '/secret',
  },
  point: { column: 'pos', lon: '/lon', lat: '/lat' },
}
const REQUIRE = { '/kind': ['reading', 'sample'] }
const STRIP = ['/secret', '/m/debug']

describe('a mapping of one’s own, on one table', () => {
  let sink: Sink
  const msg1 = {
    note: 'café ✓ 𝄞',
    kind: 'reading',
    m: { temp: 21.5, count: 3, debug: 'x' },
    ok: true,
    t_ms: 1700000000123,
    lon: 13.405,
    lat: 52.52,
    secret: 's1',
  }
  const msg2 = { kind: 'sample', m: { temp: -0.5, count: 0 }, ok: false, t_ms: '1700000000456', lon: -70.25, lat: -33.5, secret: 's2' }
  const noise = { kind: 'noise', m: { temp: 99 }, lon: 1, lat: 2 }
  const form = 'kind=sample&t_ms=1700000000789&ok=true&lon=2.5&lat=48.75&secret=s3&note=f%C3%B6rm'
  const batches: string[] = []
  let ledger: LedgerBatch[]
  let rows: any[] = []

  beforeAll(async () => {
    const table = await createTable(admin(), { format_version: 3, columns: COLUMNS.map(([name, type]) => ({ name, type })) })
    sink = await newSink(admin(), { table, sink: { mapping: MAPPING, device_require: REQUIRE, device_strip: STRIP } })
    await holdSink(sink.id, HOLDER)
  })

  it('the create answer and GET show mapping, device_require, device_strip and device_url', async () => {
    for (const body of [sink.created.body, await view(sink), (await call(`/v1/sinks/${sink.name}`, { key: admin() })).body]) {
      expect(body).toMatchObject({
        mapping: MAPPING,
        device_require: REQUIRE,
        device_strip: STRIP,
        device_url: `${stack().apiUrl}/v1/sinks/${sink.id}/devices/{device_id}`,
      })
    }
  })

  it('maps a JSON object (key in the query), an array (Basic; require drops one of two), a form (Bearer)', async () => {
    const a = await deviceCall(sink.id, 'sensor-1', { body: JSON.stringify(msg1), contentType: 'application/json', auth: { query: sink.sendKey } })
    expect(a.status, a.text).toBe(202)
    expect(a.body).toMatchObject({ accepted: 1, rejected: 0, batch_id: expect.stringMatching(/^dev:sensor-1:[0-9a-f]{32}$/) })
    // No Content-Type at all: JSON by its first byte.
    const b = await deviceCall(sink.id, 'sensor-2', { body: JSON.stringify([noise, msg2]), auth: { basic: sink.sendKey, user: 'anyone' } })
    expect(b.status, b.text).toBe(202)
    expect(b.body).toMatchObject({ accepted: 1, rejected: 0 })
    const c = await deviceCall(sink.id, 'sensor.3', { body: form, contentType: 'application/x-www-form-urlencoded', auth: { bearer: sink.sendKey } })
    expect(c.status, c.text).toBe(202)
    batches.push(a.body.batch_id, b.body.batch_id, c.body.batch_id)
    ledger = await ledgerBatches(db, sink.id)
    expect(ledger.map((x) => x.batch_id)).toEqual(batches)
  })

  it('a payload failing device_require answers 200 {ignored, reason} and stores nothing', async () => {
    const before = await intakeObjects(sink.id)
    for (const body of [JSON.stringify(noise), JSON.stringify([noise, { ...noise, kind: 'other' }]), '{"m": {}}']) {
      const res = await deviceCall(sink.id, 'sensor-1', { body, contentType: 'application/json', auth: { query: sink.sendKey } })
      expect([res.status, res.body]).toEqual([200, { ignored: true, reason: expect.stringMatching(/^\/kind is (absent|"noise"), not "reading" or "sample"$/) }])
    }
    expect((await ledgerBatches(db, sink.id)).map((x) => x.batch_id)).toEqual(batches)
    expect(await intakeObjects(sink.id)).toEqual(before)
  })

  it('an empty request (no body, no query) answers 200 ignored and stores nothing; with a wrong key, 401', async () => {
    const before = await intakeObjects(sink.id)
    for (const method of ['POST', 'GET'] as const) {
      const res = await deviceCall(sink.id, 'sensor-1', { method, auth: { basic: sink.sendKey } })
      expect([res.status, res.body]).toEqual([200, { ignored: true, reason: 'the payload holds no message (no body and no query parameters, or [])' }])
    }
    expect((await deviceCall(sink.id, 'sensor-1', { auth: { basic: sink.sendKey.replace(/.$/, (ch) => (ch === 'A' ? 'B' : 'A')) } })).status).toBe(401)
    expect((await ledgerBatches(db, sink.id)).map((x) => x.batch_id)).toEqual(batches)
    expect(await intakeObjects(sink.id)).toEqual(before)
  })

  it('the stored NDJSON carries the intake’s clock where {received} is mapped: x-amz-meta-received', async () => {
    for (const b of ledger) {
      const got = await bucket().get(intakeKey(sink.id, b.batch_id))
      expect(got!.head.metadata.received).toBe(b.received_at)
      const lines = Buffer.from(got!.body).toString('utf8').split('\n').filter(Boolean)
      expect(lines).toHaveLength(1)
      expect(JSON.parse(lines[0])).toMatchObject({ got: b.received_at, got_text: b.received_at })
    }
  })

  it('rolled, PyIceberg and DuckDB read every source as mapped (raw after device_strip; received = __ingest_ts)', async () => {
    ledger = await roll(sink)
    const recv = (i: number) => ledger.find((b) => b.batch_id === batches[i])!.received_at
    const row = (i: number, r: Record<string, unknown>) => ({
      note: null,
      temp: null,
      count: null,
      got: readerTz(recv(i)),
      got_text: recv(i),
      src: 'custom',
      version: 3n,
      secret: null,
      __ingest_ts: readerTz(recv(i)),
      ...r,
    })
    const expected = [
      row(0, {
        note: msg1.note,
        dev: 'sensor-1',
        kind: 'reading',
        temp: 21.5,
        count: 3n,
        ok: true,
        at: '2023-11-14T22:13:20.123000+00:00',
        raw: JSON.stringify({ note: msg1.note, kind: 'reading', m: { temp: 21.5, count: 3 }, ok: true, t_ms: msg1.t_ms, lon: 13.405, lat: 52.52 }),
        pos: wkbPointHex(13.405, 52.52),
      }),
      row(1, {
        dev: 'sensor-2',
        kind: 'sample',
        temp: -0.5,
        count: 0n,
        ok: false,
        at: '2023-11-14T22:13:20.456000+00:00', // a numeric string converts too
        raw: JSON.stringify({ kind: 'sample', m: { temp: -0.5, count: 0 }, ok: false, t_ms: '1700000000456', lon: -70.25, lat: -33.5 }),
        pos: wkbPointHex(-70.25, -33.5),
      }),
      row(2, {
        // A form's strings take their column's type: ok a boolean, lon/lat numbers.
        note: 'förm',
        dev: 'sensor.3',
        kind: 'sample',
        ok: true,
        at: '2023-11-14T22:13:20.789000+00:00',
        raw: JSON.stringify({ kind: 'sample', t_ms: '1700000000789', ok: 'true', lon: '2.5', lat: '48.75', note: 'förm' }),
        pos: wkbPointHex(2.5, 48.75),
      }),
    ]
    rows = await pyRows(sink.table, 'at')
    // `secret` is checked on its own below.
    const bar = (list: any[]) => list.map(({ secret: _, ...r }) => r)
    expect(bar(rows)).toEqual(bar(expected))
    expect(rows.map((r) => wkbPoint(r.pos))).toEqual([
      [13.405, 52.52],
      [-70.25, -33.5],
      [2.5, 48.75],
    ])
    for (const r of rows) expect(r.got).toBe(r.__ingest_ts)
    const scan = toExact(await runPython('pyiceberg_scan.py', [...catalogArgs(), sink.table, '--no-files', '--no-rows']))
    const duck = toExact(await runPython('duckdb_scan.py', [...s3Args(stack().s3), '--metadata', scan.metadata_location, '--order-by', 'at']))
    // DuckDB's booleans come out as 1/0 through the harness (see interop-types.test.ts).
    expect(bar(duck.rows.map((r: any) => ({ ...r, ok: r.ok === 1n ? true : r.ok === 0n ? false : r.ok })))).toEqual(bar(expected))
  })

  it('device_strip applies before the mapping: a column pointing at a stripped member is null', () => {
    // schemas.ts: "Members removed from the payload before it is mapped or stored".
    expect(rows.map((r) => r.secret)).toEqual([null, null, null])
  })

  // ---- mappings the table cannot take, and none -------------------------------------------------

  it('refuses a mapping the table cannot take: 400 mapping_invalid naming the column; the settings stay', async () => {
    const tableColumns = COLUMNS.map(([c]) => c)
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ columns: { nope: '/x' } }, 'nope'],
      [{ columns: { version: { device: true } } }, 'version'], // the device id is a string; version is long
      [{ columns: {}, point: { column: 'kind', lon: '/lon', lat: '/lat' } }, 'kind'], // a point needs geometry
      [{ preset: 'owntracks' }, Object.keys(PRESETS.owntracks.columns).find((c) => !tableColumns.includes(c))!],
      [{ columns: { count: { const: 'three' } } }, 'count'],
      [{ columns: { temp: { pointer: '/t', as: 'epoch_ms' } } }, 'temp'],
    ]
    for (const [mapping, column] of cases) {
      const res = await patch(sink, { mapping })
      expectError(res, 400, 'mapping_invalid')
      expect(res.body.error.column, JSON.stringify(mapping)).toBe(column)
    }
    expect(await view(sink)).toMatchObject({ mapping: MAPPING, device_require: REQUIRE, device_strip: STRIP })
    // At create too, and nothing is created.
    const table = await createTable(admin(), { format_version: 3, columns: [{ name: 'n', type: 'long' }] })
    const name = `s_${uid()}`
    const res = await postSink(admin(), { name, table, mapping: { columns: { n: { device: true } } } })
    expectError(res, 400, 'mapping_invalid')
    expect(res.body.error.column).toBe('n')
    expect((await call(`/v1/sinks/${name}`, { key: admin() })).status).toBe(404)
  })

  it('mapping: null removes it (GET shows null); with require and strip cleared too, a payload is stored as sent', async () => {
    const res = await patch(sink, { mapping: null })
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({ mapping: null, device_require: REQUIRE, device_strip: STRIP })
    // Still required and stripped, no longer mapped: the payload's members are the columns.
    const stripped = await deviceCall(sink.id, 'sensor-1', { body: '{"kind": "sample", "secret": "s4", "temp": 4.5}', auth: { query: sink.sendKey } })
    expect(stripped.status, stripped.text).toBe(202)
    const got1 = await bucket().get(intakeKey(sink.id, stripped.body.batch_id))
    expect(Buffer.from(got1!.body).toString('utf8')).toBe('{"kind":"sample","temp":4.5}\n')

    expect((await patch(sink, { device_require: null, device_strip: null })).status).toBe(200)
    expect(await view(sink)).toMatchObject({ mapping: null, device_require: null, device_strip: null })
    const body = '{"kind": "noise",  "secret": "kept", "temp": 7.25, "dev": "as-sent"}'
    const asSent = await deviceCall(sink.id, 'sensor-1', { body, auth: { query: sink.sendKey } })
    expect(asSent.status, asSent.text).toBe(202)
    const got2 = await bucket().get(intakeKey(sink.id, asSent.body.batch_id))
    expect(Buffer.from(got2!.body).toString('utf8')).toBe(`${body}\n`)

    const after = await roll(sink)
    const recv = (id: string) => after.find((b) => b.batch_id === id)!.received_at
    const only = (r: Record<string, unknown>) => ({ ...Object.fromEntries(COLUMNS.map(([c]) => [c, null])), ...r })
    expect((await pyRows(sink.table, '__ingest_ts')).slice(3)).toEqual([
      only({ kind: 'sample', temp: 4.5, __ingest_ts: readerTz(recv(stripped.body.batch_id)) }),
      only({ kind: 'noise', secret: 'kept', temp: 7.25, dev: 'as-sent', __ingest_ts: readerTz(recv(asSent.body.batch_id)) }),
    ])
  })
})

// ---- the key, the batch id, the limits -----------------------------------------------------------

describe('the key, the batch id and the limits', () => {
  let sink: Sink
  let other: Sink
  beforeAll(async () => {
    sink = await newSink(admin())
    other = await newSink(admin())
    await holdSink(sink.id, HOLDER)
    await holdSink(other.id, HOLDER)
  })
  // Their batches are never rolled: deleted (discarded) with the sinks.
  afterAll(async () => {
    for (const s of [sink, other]) if (s) await call(`/v1/sinks/${s.id}`, { method: 'DELETE', key: admin() })
  })

  const ok = (auth: Parameters<typeof deviceCall>[2]['auth'], sinkId = sink.id, query = `x=${uid().length}&who=${uid()}`) =>
    deviceCall(sinkId, 'dev-1', { query, auth })

  it('takes the key as ?key=, as Basic’s password (any user) and as Bearer', async () => {
    for (const auth of [{ query: sink.sendKey }, { basic: sink.sendKey }, { basic: sink.sendKey, user: '' }, { bearer: sink.sendKey }]) {
      const res = await ok(auth)
      expect(res.status, `${JSON.stringify(Object.keys(auth))}: ${res.text}`).toBe(202)
    }
  })

  it('a wrong key and an unknown sink answer the same 401, whichever way the key comes', async () => {
    const answers = []
    for (const place of ['query', 'basic', 'bearer'] as const) {
      const as = (key: string) => ({ [place]: key }) as Parameters<typeof deviceCall>[2]['auth']
      answers.push(
        await ok(as(other.sendKey)), // another sink's key
        await ok(as(`${sink.sendKey.slice(0, -4)}AAAA`)), // this sink's key, wrong secret
        await ok(as(sink.sendKey), 'snk_00000000deadbeef'), // no such sink
        await ok(as(sink.sendKey), sink.name), // a name is no sink id
        await ok(as('al_send_nonsense')),
      )
    }
    answers.push(await ok(null))
    for (const a of answers) expect401(a)
    expect(new Set(answers.map((a) => a.text)).size).toBe(1)
    expect(await ledgerBatches(db, other.id)).toEqual([])
  })

  it('an API key answers 403 send_only, however it comes, whatever the path', async () => {
    const readKey = await newApiKey('read')
    for (const key of [admin(), readKey]) {
      for (const auth of [{ query: key }, { basic: key }, { bearer: key }]) expectError(await ok(auth), 403, 'send_only')
    }
    // The key is judged first: a path a device id cannot be (a template left unfilled) does not change that.
    expectError(await deviceCall(sink.id, '%7Bdevice_id%7D', { auth: { bearer: readKey } }), 403, 'send_only')
  })

  it('honours an Idempotency-Key: the batch id; reused for another body 409; replayed 200 duplicate', async () => {
    const id = `dev-key-${uid()}`
    const send = (who: string) => deviceCall(sink.id, 'dev-1', { query: `x=1&who=${who}`, auth: { query: sink.sendKey }, headers: { 'idempotency-key': id } })
    const first = await send('a')
    expect([first.status, first.body.batch_id]).toEqual([202, id])
    expect([(await send('a')).status, (await send('a')).body.duplicate]).toEqual([200, true])
    expectError(await send('b'), 409, 'idempotency_key_reused')
    expectError(
      await deviceCall(sink.id, 'dev-1', { query: 'x=1', auth: { query: sink.sendKey }, headers: { 'idempotency-key': 'a b' } }),
      400,
      'invalid_idempotency_key',
    )
    expectError(await deviceCall(sink.id, 'dev 1', { query: 'x=1', auth: { query: sink.sendKey } }), 400, 'invalid_device_id')
  })

  it('a 17 MiB body answers 413 payload_too_large, stores nothing, and the next request is served', async () => {
    const before = await ledgerBatches(db, sink.id)
    const big = new Uint8Array(17 * MiB).fill(0x20)
    big.set(new TextEncoder().encode('{"who":"'), 0)
    const res = await deviceCall(sink.id, 'dev-1', { body: big, contentType: 'application/json', auth: { query: sink.sendKey } })
    expectError(res, 413, 'payload_too_large')
    expect(await ledgerBatches(db, sink.id)).toEqual(before)
    const next = await ok({ basic: sink.sendKey })
    expect(next.status, next.text).toBe(202)
  })
  it('a HEAD (a link checker, a prefetch) answers 405 and stores nothing, whatever its query', async () => {
    // The batches themselves, not their state: an earlier send's row may still turn from receiving to
    // pending (the edge marks it stored after answering).
    const ids = async () => (await ledgerBatches(db, sink.id)).map(({ batch_id, rows, received_at }) => ({ batch_id, rows, received_at }))
    const before = await ids()
    const res = await deviceCall(sink.id, 'dev-1', { method: 'HEAD', query: 'x=1&who=head', auth: { query: sink.sendKey } })
    expect([res.status, res.headers.get('allow')]).toEqual([405, 'GET, POST'])
    expect(await ids()).toEqual(before)
  })
})
