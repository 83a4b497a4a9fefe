// The sinks' control plane through real workerd: create (the spec's table checks, the send key once,
// iam_writes, docs_hint), list (a page at a time: the API, lhbox and the console's overview)/get,
// patch, delete, dedupe, usage, connection, audit.
import { createHash } from 'node:crypto'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { lhbox } from '../support/cli.ts'
import { call, expectError, secretOf, stack } from '../support/stack.ts'
import {
  createTable,
  database,
  intakeObjects,
  ledger,
  listSinks,
  newProject,
  newSink,
  poll,
  postSink,
  send,
  SEND_KEY_FORMAT,
  uid,
  usage,
  expect401,
} from '../support/sinks.ts'

const MiB = 1024 * 1024
let db: pg.Client
let admin: string
beforeAll(async () => {
  db = await database()
  admin = stack().adminKey
})
afterAll(() => db.end())

describe('POST /v1/sinks', () => {
  it('answers 201 with the sink, the send key once, iam_writes [] and the default policy', async () => {
    const table = await createTable(admin)
    const name = `s_${uid()}`
    const res = await postSink(admin, { name, table })
    expect(res.status).toBe(201)
    expect(res.body.send_key).toMatch(SEND_KEY_FORMAT)
    expect(res.body.id).toMatch(/^snk_[0-9a-f]{16}$/)
    expect(res.body).toMatchObject({
      name,
      table,
      warehouse: stack().warehouse,
      state: 'active',
      disabled_reason: null,
      key: null,
      iam_writes: [],
      roll: { roll_seconds: 300, roll_bytes: 64 * MiB, inactivity_seconds: null },
      ingest_url: `${stack().apiUrl}/v1/sinks/${res.body.id}`,
      lag: { batches_waiting: 0, bytes_waiting: 0, oldest_waiting_at: null, seconds_behind: 0 },
      received: { batches: 0, rows: 0, bytes: 0, last_at: null },
      last_roll: null,
      rejects: { rows_total: 0, batches_with_rejects: 0, last_at: null, prefix: `s3://${stack().s3.bucket}/_sink/${res.body.id}/rejects/` },
      dedupe: { requested_at: null, last: null },
    })
    // The key is never answered again.
    const got = await call(`/v1/sinks/${res.body.id}`, { key: admin })
    expect(got.status).toBe(200)
    expect(got.text).not.toContain(secretOf(res.body.send_key))
    expect(got.body.send_key).toBeUndefined()
  })

  it('stores only the SHA-256 of the send key', async () => {
    const sink = await newSink(admin)
    const { rows } = await db.query('select * from sinks where id = $1', [sink.id])
    expect(rows).toHaveLength(1)
    expect(rows[0].send_key_sha256).toBe(createHash('sha256').update(sink.sendKey).digest('hex'))
    expect(JSON.stringify(rows[0])).not.toContain(secretOf(sink.sendKey))
  })

  it('names the undocumented table and columns in docs_hint with the lhbox table document command', async () => {
    const table = await createTable(admin)
    const res = await postSink(admin, { name: `s_${uid()}`, table })
    expect(res.status).toBe(201)
    expect(res.body.docs_hint).toEqual({
      message: expect.stringMatching(/describe/),
      table_doc_missing: true,
      columns: ['x', 'who'],
      command: `lhbox table document ${stack().warehouse}.${table} --doc '…' --column x='…' --column who='…'`,
    })
  })

  it('names only what is missing, and has no docs_hint once the table and columns are documented', async () => {
    const partly = await createTable(admin, {
      doc: 'readings',
      columns: [
        { name: 'x', type: 'long', doc: 'the reading' },
        { name: 'who', type: 'string' },
      ],
    })
    const hint = (await postSink(admin, { name: `s_${uid()}`, table: partly })).body.docs_hint
    expect(hint).toMatchObject({
      table_doc_missing: false,
      columns: ['who'],
      command: `lhbox table document ${stack().warehouse}.${partly} --doc '…' --column who='…'`,
    })

    const table = await createTable(admin)
    const docs = await call(`/v1/tables/${stack().warehouse}.${table}/docs`, {
      key: admin,
      method: 'PATCH',
      json: { doc: 'events from the garden', columns: { x: 'a count', who: 'the sensor' } },
    })
    expect(docs.status).toBe(200)
    expect(docs.body.undocumented_columns).toEqual([])
    const res = await postSink(admin, { name: `s_${uid()}`, table })
    expect(res.status).toBe(201)
    expect(res.body).not.toHaveProperty('docs_hint')
  })

  it('answers 404 table_not_found with the namespace’s tables, and 404 warehouse_not_found', async () => {
    const ns = `nf_${uid()}`
    const a = await createTable(admin, { namespace: ns, name: 'alpha' })
    const b = await createTable(admin, { namespace: ns, name: 'beta' })
    const res = await postSink(admin, { name: `s_${uid()}`, table: `${ns}.gamma` })
    expectError(res, 404, 'table_not_found')
    expect([...res.body.error.tables].sort()).toEqual([a, b])
    const none = await postSink(admin, { name: `s_${uid()}`, table: `nowhere_${uid()}.t` })
    expectError(none, 404, 'table_not_found')
    expect(none.body.error.tables).toEqual([])
    expectError(await postSink(admin, { name: `s_${uid()}`, table: a, warehouse: 'no-such-warehouse' }), 404, 'warehouse_not_found')
  })

  it('answers 409 sink_exists for a second sink on a table, and 409 sink_name_taken for a name in use', async () => {
    const first = await newSink(admin)
    const res = await postSink(admin, { name: `s_${uid()}`, table: first.table })
    expectError(res, 409, 'sink_exists')
    expect(res.body.error.sink_id).toBe(first.id)
    expectError(await postSink(admin, { name: first.name, table: await createTable(admin) }), 409, 'sink_name_taken')
  })

  it('refuses partitioned tables except format-version 3 by time (409 partitioned_table_unsupported)', async () => {
    const columns = [
      { name: 'ts', type: 'timestamptz', required: true },
      { name: 'who', type: 'string' },
      { name: 'x', type: 'long' },
    ]
    const refused = [
      { format_version: 2 as const, partition: ['day(ts)'] },
      { format_version: 3 as const, partition: ['who'] },
      { format_version: 3 as const, partition: ['identity(who)'] },
      { format_version: 3 as const, partition: ['bucket(4, x)'] },
      { format_version: 3 as const, partition: ['day(ts)', 'who'] },
    ]
    for (const spec of refused) {
      const table = await createTable(admin, { columns, ...spec })
      const res = await postSink(admin, { name: `s_${uid()}`, table })
      expectError(res, 409, 'partitioned_table_unsupported')
      expect(res.body.error.partition_spec.length).toBe(spec.partition.length)
    }
    for (const p of ['day(ts)', 'hour(ts)', 'month(ts)', 'year(ts)']) {
      const table = await createTable(admin, { columns, format_version: 3, partition: [p] })
      expect((await postSink(admin, { name: `s_${uid()}`, table })).status).toBe(201)
    }
    expect((await postSink(admin, { name: `s_${uid()}`, table: await createTable(admin, { columns, format_version: 3 }) })).status).toBe(201)
  })

  it('refuses geography, variant and geometry with a CRS of its own (409 unsupported_column_type)', async () => {
    const withColumn = (type: string) =>
      createTable(admin, {
        format_version: 3,
        columns: [
          { name: 'x', type: 'long' },
          { name: 'where', type },
        ],
      })
    for (const type of ['geography', 'geography(OGC:CRS84)', 'geometry(EPSG:3857)', 'variant']) {
      const res = await postSink(admin, { name: `s_${uid()}`, table: await withColumn(type) })
      expectError(res, 409, 'unsupported_column_type')
      expect(res.body.error.columns).toEqual([`where (${type})`])
    }
    // Issue 15, defect 9: a variant was accepted here, then every row (null variants too) was rejected
    // at roll. Nested ones are found as well.
    const nested = `sinks.t_${uid()}`
    const made = await call('/v1/tables', {
      key: admin,
      json: {
        warehouse: stack().warehouse,
        table: nested,
        format_version: 3,
        schema: {
          fields: [
            { id: 1, name: 'x', type: 'long', required: false },
            { id: 2, name: 's', type: { type: 'struct', fields: [{ id: 3, name: 'v', type: 'variant', required: false }] }, required: false },
          ],
        },
      },
    })
    expect(made.status).toBe(201)
    const res = await postSink(admin, { name: `s_${uid()}`, table: nested })
    expectError(res, 409, 'unsupported_column_type')
    expect(res.body.error.columns).toEqual(['s.v (variant)'])
    for (const type of ['geometry', 'geometry(OGC:CRS84)', 'geometry(EPSG:4326)']) {
      expect((await postSink(admin, { name: `s_${uid()}`, table: await withColumn(type) })).status).toBe(201)
    }
  })

  it('checks the roll policy ranges (400 invalid_request) and accepts the bounds', async () => {
    const table = await createTable(admin)
    for (const bad of [
      { roll_seconds: 59 },
      { roll_bytes: 32 * MiB - 1 },
      { roll_bytes: 64 * MiB + 1 },
      { inactivity_seconds: 9 },
      { roll_seconds: 60.5 },
      { roll_seconds: '300' },
    ]) {
      const res = await postSink(admin, { name: `s_${uid()}`, table, ...bad })
      expectError(res, 400, 'invalid_request')
      expect(res.body.error.message).toContain(Object.keys(bad)[0])
    }
    const res = await postSink(admin, { name: `s_${uid()}`, table, roll_seconds: 60, roll_bytes: 32 * MiB, inactivity_seconds: 10 })
    expect(res.status).toBe(201)
    expect(res.body.roll).toEqual({ roll_seconds: 60, roll_bytes: 32 * MiB, inactivity_seconds: 10 })
  })

  it('checks a key: v2 unpartitioned table, known columns of a key type', async () => {
    const v3 = await createTable(admin, { format_version: 3 })
    expectError(await postSink(admin, { name: `s_${uid()}`, table: v3, key: ['who'] }), 409, 'key_unsupported')
    const table = await createTable(admin, {
      columns: [
        { name: 'id', type: 'string' },
        { name: 'v', type: 'double' },
        { name: 'f', type: 'float' },
      ],
    })
    const dbl = await postSink(admin, { name: `s_${uid()}`, table, key: ['id', 'v'] })
    expectError(dbl, 409, 'key_type_unsupported')
    expect(dbl.body.error.columns).toEqual(['v'])
    expectError(await postSink(admin, { name: `s_${uid()}`, table, key: ['f'] }), 409, 'key_type_unsupported')
    const unknown = await postSink(admin, { name: `s_${uid()}`, table, key: ['nope'] })
    expectError(unknown, 400, 'unknown_column')
    expect(unknown.body.error.columns).toEqual(['nope'])
    expectError(await postSink(admin, { name: `s_${uid()}`, table, key: [] }), 400, 'invalid_request')
    const ok = await postSink(admin, { name: `s_${uid()}`, table, key: ['id'] })
    expect(ok.status).toBe(201)
    expect(ok.body.key).toEqual(['id'])
  })

  it('validates the body: unknown fields, bad names, wrong Content-Type', async () => {
    const table = await createTable(admin)
    expectError(await postSink(admin, { name: `s_${uid()}`, table, colour: 'red' }), 400, 'invalid_request')
    expectError(await postSink(admin, { name: 'has space', table }), 400, 'invalid_request')
    expectError(await postSink(admin, { name: `s_${uid()}`, table: 'no-dot' }), 400, 'invalid_request')
    expectError(await call('/v1/sinks', { key: admin, body: '{', headers: { 'content-type': 'application/json' } }), 400, 'malformed_json')
    expectError(await call('/v1/sinks', { key: admin, body: '{}', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type')
  })
})

describe('GET /v1/sinks', () => {
  it('lists the project’s sinks, by warehouse, and gets one by id and by name', async () => {
    const other = `wh-${uid()}`
    expect((await call('/v1/warehouses', { key: admin, json: { name: other } })).status).toBe(201)
    const here = await newSink(admin)
    const there = await newSink(admin, { tableSpec: { warehouse: other }, sink: { warehouse: other } })
    // The shared project holds every file's sinks: more than a page, so every page is read.
    const all = await listSinks(admin)
    const ids = all.map((s: { id: string }) => s.id)
    expect(ids).toEqual(expect.arrayContaining([here.id, there.id]))
    const names = all.map((s: { name: string }) => s.name)
    expect(names).toEqual([...names].sort())
    const only = await call(`/v1/sinks?warehouse=${other}`, { key: admin })
    expect(only.body.sinks.map((s: { id: string }) => s.id)).toEqual([there.id])
    expect(only.body.next_cursor).toBeNull()
    expect((await call('/v1/sinks?warehouse=nope', { key: admin })).body).toEqual({ sinks: [], next_cursor: null })
    expectError(await call('/v1/sinks?include_deleted=yes', { key: admin }), 400, 'invalid_request')

    const byId = await call(`/v1/sinks/${here.id}`, { key: admin })
    const byName = await call(`/v1/sinks/${here.name}`, { key: admin })
    expect(byId.status).toBe(200)
    expect(byName.body).toEqual(byId.body)
    expect(byId.body).toMatchObject({ id: here.id, name: here.name, table: here.table, state: 'active' })
    expect(all.find((s: { id: string }) => s.id === here.id)).toEqual(byId.body)
    expectError(await call('/v1/sinks/snk_0000000000000000', { key: admin }), 404, 'sink_not_found')
    expectError(await call('/v1/sinks/no-such-sink', { key: admin }), 404, 'sink_not_found')
  })
})

describe('GET /v1/sinks a page at a time', () => {
  // A project of its own holding 250 sinks, named p000…p249: i % 5 < 3 in warehouse wa (150), the rest
  // in wb (100), so the two interleave by name. Both warehouses are maintenance "off" and every sink's
  // roll_seconds is the ceiling: no roller of the shared stack sweeps or rolls them (nothing is sent).
  const N = 250
  const PAGE = /^[A-Za-z0-9_-]+$/
  let key: string
  let made: Array<{ id: string; name: string; warehouse: string; table: string }>
  const nameOf = (i: number) => `p${String(i).padStart(3, '0')}`
  const warehouseOf = (i: number) => (i % 5 < 3 ? 'wa' : 'wb')
  const ids = (sinks: Array<{ id: string }>) => sinks.map((s) => s.id)

  /** Every page of GET /v1/sinks?<query>&limit=<limit>, and the sizes and cursors they answered. */
  async function pages(query: string, limit: number, from?: string) {
    const sinks: Array<{ id: string; name: string; state: string; warehouse: string }> = []
    const sizes: number[] = []
    const cursors: Array<string | null> = []
    let cursor: string | null = from ?? null
    do {
      const res = await call(`/v1/sinks?${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, { key })
      expect(res.status, res.text).toBe(200)
      expect(Object.keys(res.body)).toEqual(['sinks', 'next_cursor'])
      sinks.push(...res.body.sinks)
      sizes.push(res.body.sinks.length)
      cursor = res.body.next_cursor
      cursors.push(cursor)
      if (cursor !== null) expect(cursor).toMatch(PAGE)
    } while (cursor)
    return { sinks, sizes, cursors }
  }

  beforeAll(async () => {
    const p = await newProject()
    key = p.key
    for (const name of ['wa', 'wb']) expect((await call('/v1/warehouses', { key, json: { name, maintenance: 'off' } })).status).toBe(201)
    made = []
    const one = async (i: number) => {
      const warehouse = warehouseOf(i)
      const table = await createTable(key, { warehouse, namespace: 'paged', name: `t${i}` })
      const res = await postSink(key, { warehouse, name: nameOf(i), table, roll_seconds: 86_400 })
      expect(res.status, res.text).toBe(201)
      made.push({ id: res.body.id, name: nameOf(i), warehouse, table })
    }
    // The namespace first in each warehouse, then a few at a time.
    await one(0)
    await one(3)
    const rest = Array.from({ length: N }, (_, i) => i).filter((i) => i !== 0 && i !== 3)
    for (let at = 0; at < rest.length; at += 8) await Promise.all(rest.slice(at, at + 8).map(one))
    made.sort((a, b) => (a.name < b.name ? -1 : 1))
  }, 10 * 60_000)

  it('pages through 250 sinks 100 at a time: 100, 100, 50 by name, none twice, none missed, the last cursor null', async () => {
    const { sinks, sizes, cursors } = await pages('', 100)
    expect(sizes).toEqual([100, 100, 50])
    expect(cursors).toEqual([expect.stringMatching(PAGE), expect.stringMatching(PAGE), null])
    expect(ids(sinks)).toEqual(ids(made))
    expect(new Set(ids(sinks)).size).toBe(N)
    // Each sink as GET /v1/sinks/{id} shows it.
    expect(sinks[137]).toEqual((await call(`/v1/sinks/${made[137].id}`, { key })).body)

    // 100 when no limit is given; the cursor is the position, so the same page answers the same one.
    const first = await call('/v1/sinks', { key })
    expect(ids(first.body.sinks)).toEqual(ids(made.slice(0, 100)))
    expect(first.body.next_cursor).toBe(cursors[0])
    // A page that ends exactly at the last sink says so: no empty page after it.
    expect(await pages('', 250)).toMatchObject({ sizes: [250], cursors: [null] })
    expect(await pages('', 1000)).toMatchObject({ sizes: [250], cursors: [null] })
    const single = await call('/v1/sinks?limit=1', { key })
    expect(ids(single.body.sinks)).toEqual([made[0].id])
    // A page of 7 at a time meets the same sinks in the same order.
    expect(ids((await pages('', 7)).sinks)).toEqual(ids(made))
  })

  it('refuses a limit outside 1–1000 and a cursor no page gave, 400 invalid_request', async () => {
    for (const limit of ['0', '1001', 'x', '', '01', '1.5', '-1', '100abc'])
      expectError(await call(`/v1/sinks?limit=${encodeURIComponent(limit)}`, { key }), 400, 'invalid_request')
    const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')
    const rejectsCursor = b64({ batch: 'b', line: 0 })
    for (const cursor of [
      '',
      'x',
      '%%%',
      b64('not json'),
      b64({ name: 'p100' }),
      b64({ name: 'p100', created_us: -1, id: 'snk_0' }),
      b64({ name: 'p100', created_us: 1e300, id: 'snk_0' }),
      b64({ name: 'p\u0000', created_us: 0, id: 'snk_0' }),
      rejectsCursor,
    ]) {
      expectError(await call(`/v1/sinks?cursor=${encodeURIComponent(cursor)}`, { key }), 400, 'invalid_request')
    }
  })

  it('lhbox sink list reads every page; --limit N prints one and the command for the next', async () => {
    const env = { LHBOX_API_KEY: key }
    const json = await lhbox(['sink', 'list', '--json'], { env })
    expect(json.code, json.stderr).toBe(0)
    expect(ids(JSON.parse(json.stdout))).toEqual(ids(made))
    const human = await lhbox(['sink', 'list'], { env })
    expect(human.code, human.stderr).toBe(0)
    const lines = human.stdout.trim().split('\n')
    expect(lines[0]).toMatch(/^NAME\s+TABLE\s+STATE/)
    expect(lines.slice(1).map((l) => l.split(/\s+/)[0])).toEqual(made.map((s) => s.name))

    // One page at a time, in warehouse wa (150 sinks), following the printed command.
    const first = await lhbox(['sink', 'list', 'wa', '--limit', '100'], { env })
    expect(first.code, first.stderr).toBe(0)
    const more = first.stdout.trimEnd().match(/\nmore: lhbox sink list wa --limit 100 --cursor ([A-Za-z0-9_-]+)$/)
    expect(more, first.stdout.slice(-300)).not.toBeNull()
    expect(first.stdout.trim().split('\n')).toHaveLength(1 + 100 + 1)
    const second = await lhbox(['sink', 'list', 'wa', '--limit', '100', '--cursor', (more as RegExpMatchArray)[1], '--json'], { env })
    expect(second.code, second.stderr).toBe(0)
    const page = JSON.parse(second.stdout)
    expect(page.next_cursor).toBeNull()
    expect(ids(page.sinks)).toEqual(ids(made.filter((s) => s.warehouse === 'wa').slice(100)))

    const bad = await lhbox(['sink', 'list', '--limit', '0'], { env })
    expect(bad.code).toBe(1)
    expect(bad.stderr).toMatch(/^error: invalid_request: .*1 to 1000/)
  })

  it('the console’s overview shows 100 sinks a page, with a link to the next', async () => {
    const seen: string[] = []
    let href: string | null = '#/'
    const sizes: number[] = []
    while (href) {
      const query = href.slice('#/'.length)
      const res = await call(`/console/f/overview${query}`, { key })
      expect(res.status, res.text.slice(0, 300)).toBe(200)
      const rows = [...res.text.matchAll(/<tr data-sink="(snk_[0-9a-f]+)"/g)].map((m) => m[1])
      sizes.push(rows.length)
      seen.push(...rows)
      if (seen.length > rows.length) expect(res.text).toContain('href="#/">First page</a>')
      href = res.text.match(/<a href="(#\/\?cursor=[A-Za-z0-9_-]+)" id="next-sinks">/)?.[1] ?? null
    }
    expect(sizes).toEqual([100, 100, 50])
    expect(seen).toEqual(ids(made))
    expectError(await call('/console/f/overview?cursor=x', { key }), 400, 'invalid_request')
  })

  it('pages with ?warehouse= and ?include_deleted=true too, a deleted sink beside the live one of its name', async () => {
    const inA = made.filter((s) => s.warehouse === 'wa')
    const inB = made.filter((s) => s.warehouse === 'wb')
    const a = await pages('warehouse=wa', 100)
    expect(a.sizes).toEqual([100, 50])
    expect(ids(a.sinks)).toEqual(ids(inA))
    const b = await pages('warehouse=wb', 100)
    expect(b.sizes).toEqual([100])
    expect(ids(b.sinks)).toEqual(ids(inB))

    // Three sinks of wa deleted (p000, p001, p005); p000's table takes a new sink of the same name.
    const gone = [inA[0], inA[1], inA[3]]
    expect(gone.map((s) => s.name)).toEqual(['p000', 'p001', 'p005'])
    for (const s of gone) expect((await call(`/v1/sinks/${s.id}`, { key, method: 'DELETE' })).status).toBe(202)
    const again = await postSink(key, { warehouse: 'wa', name: 'p000', table: inA[0].table, roll_seconds: 86_400 })
    expect(again.status, again.text).toBe(201)
    const goneIds = ids(gone)
    const live = [{ ...inA[0], id: again.body.id }, ...made.slice(1).filter((s) => !goneIds.includes(s.id))]

    const liveAll = await pages('', 100)
    expect(liveAll.sizes).toEqual([100, 100, 48])
    expect(ids(liveAll.sinks)).toEqual(ids(live))
    const liveA = await pages('warehouse=wa', 100)
    expect(liveA.sizes).toEqual([100, 48])
    expect(ids(liveA.sinks)).toEqual(ids(live.filter((s) => s.warehouse === 'wa')))

    // With the deleted ones: 251, a name's sinks in the order they were made (the deleted p000 first).
    const everything = [inA[0], live[0], ...made.slice(1)]
    const all = await pages('include_deleted=true', 100)
    expect(all.sizes).toEqual([100, 100, 51])
    expect(ids(all.sinks)).toEqual(ids(everything))
    expect(all.sinks.filter((s) => s.state === 'deleted').map((s) => s.id)).toEqual(goneIds)
    expect(new Set(ids(all.sinks)).size).toBe(N + 1)

    // A page boundary between the two sinks named p000 loses neither: one a page, then the rest of wa.
    const oneByOne = await pages('include_deleted=true&warehouse=wa', 1)
    expect(oneByOne.sizes).toEqual(Array(151).fill(1))
    expect(ids(oneByOne.sinks.slice(0, 2))).toEqual([inA[0].id, again.body.id])
    expect(oneByOne.sinks[0]).toMatchObject({ name: 'p000', state: 'deleted' })
    expect(oneByOne.sinks[1]).toMatchObject({ name: 'p000', state: 'active' })
    const afterFirst = oneByOne.cursors[0] as string
    const rest = await pages('include_deleted=true&warehouse=wa', 100, afterFirst)
    expect(rest.sizes).toEqual([100, 50])
    expect(ids(rest.sinks)).toEqual(ids(everything.filter((s) => s.warehouse === 'wa').slice(1)))
    // wb's pages are as they were.
    expect(ids((await pages('include_deleted=true&warehouse=wb', 100)).sinks)).toEqual(ids(inB))
  })
})

describe('PATCH /v1/sinks/{id|name}', () => {
  it('changes the roll policy, checks its ranges, sets and unsets the key', async () => {
    const sink = await newSink(admin)
    const res = await call(`/v1/sinks/${sink.name}`, { key: admin, method: 'PATCH', json: { roll_seconds: 900, roll_bytes: 40 * MiB, inactivity_seconds: 30 } })
    expect(res.status).toBe(200)
    expect(res.body.roll).toEqual({ roll_seconds: 900, roll_bytes: 40 * MiB, inactivity_seconds: 30 })
    const cleared = await call(`/v1/sinks/${sink.id}`, { key: admin, method: 'PATCH', json: { inactivity_seconds: null } })
    expect(cleared.body.roll).toEqual({ roll_seconds: 900, roll_bytes: 40 * MiB, inactivity_seconds: null })
    for (const bad of [{ roll_seconds: 59 }, { roll_bytes: 65 * MiB }, { inactivity_seconds: 9 }, { name: 'renamed' }]) {
      expectError(await call(`/v1/sinks/${sink.id}`, { key: admin, method: 'PATCH', json: bad }), 400, 'invalid_request')
    }
    const keyed = await call(`/v1/sinks/${sink.id}`, { key: admin, method: 'PATCH', json: { key: ['who'] } })
    expect(keyed.status).toBe(200)
    expect(keyed.body.key).toEqual(['who'])
    expectError(await call(`/v1/sinks/${sink.id}`, { key: admin, method: 'PATCH', json: { key: ['nope'] } }), 400, 'unknown_column')
    const unkeyed = await call(`/v1/sinks/${sink.id}`, { key: admin, method: 'PATCH', json: { key: null } })
    expect(unkeyed.body.key).toBeNull()
    expect((await db.query('select key_columns from sinks where id = $1', [sink.id])).rows[0].key_columns).toBeNull()
    expectError(await call('/v1/sinks/no-such-sink', { key: admin, method: 'PATCH', json: { roll_seconds: 60 } }), 404, 'sink_not_found')
  })

  it('re-activates a sink disabled with an upsert_* reason when the key changes, and only then', async () => {
    const sink = await newSink(admin, { sink: { key: ['who'] } })
    await db.query(`update sinks set state = 'disabled', disabled_reason = 'upsert_rewrite_too_large' where id = $1`, [sink.id])
    const got = await call(`/v1/sinks/${sink.id}`, { key: admin })
    expect(got.body).toMatchObject({ state: 'disabled', disabled_reason: 'upsert_rewrite_too_large' })
    const policy = await call(`/v1/sinks/${sink.id}`, { key: admin, method: 'PATCH', json: { roll_seconds: 120 } })
    expect(policy.body).toMatchObject({ state: 'disabled', disabled_reason: 'upsert_rewrite_too_large' })
    const res = await call(`/v1/sinks/${sink.id}`, { key: admin, method: 'PATCH', json: { key: ['x'] } })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ state: 'active', disabled_reason: null, key: ['x'] })

    await db.query(`update sinks set state = 'disabled', disabled_reason = 'table_dropped' where id = $1`, [sink.id])
    const other = await call(`/v1/sinks/${sink.id}`, { key: admin, method: 'PATCH', json: { key: null } })
    expect(other.body).toMatchObject({ state: 'disabled', disabled_reason: 'table_dropped', key: null })
  })
})

describe('DELETE /v1/sinks/{id|name}', () => {
  it('discards the pending batches and their objects, stops the key, keeps the table; include_deleted lists it', async () => {
    const sink = await newSink(admin)
    for (const b of ['one', 'two']) expect((await send(sink, [{ x: 1 }], { batchId: b })).status).toBe(202)
    expect(await poll(async () => (await ledger(db, sink.id)).every((r) => r.state === 'pending'), 15_000, 'both batches pending')).toBe(true)
    expect(await intakeObjects(sink.id)).toEqual([`_sink/${sink.id}/one.ndjson`, `_sink/${sink.id}/two.ndjson`])

    const res = await call(`/v1/sinks/${sink.name}`, { key: admin, method: 'DELETE' })
    expect(res.status).toBe(202)
    expect(res.body).toEqual({ id: sink.id, state: 'deleted', pending_batches_discarded: 2 })
    expect(await intakeObjects(sink.id)).toEqual([])
    expect((await ledger(db, sink.id)).map((r) => r.state)).toEqual(['discarded', 'discarded'])
    expect401(await send(sink, [{ x: 1 }], { batchId: 'three' }))

    expectError(await call(`/v1/sinks/${sink.name}`, { key: admin }), 404, 'sink_not_found')
    expect((await call(`/v1/sinks/${sink.id}`, { key: admin })).body).toMatchObject({ state: 'deleted', deleted_at: expect.stringMatching(/Z$/) })
    expect((await listSinks(admin)).map((s: { id: string }) => s.id)).not.toContain(sink.id)
    const withDeleted = await listSinks(admin, 'include_deleted=true')
    expect(withDeleted.find((s: { id: string }) => s.id === sink.id)).toMatchObject({ state: 'deleted', name: sink.name })
    expectError(await call(`/v1/sinks/${sink.id}`, { key: admin, method: 'DELETE' }), 404, 'sink_not_found')
    expectError(await call(`/v1/sinks/${sink.id}`, { key: admin, method: 'PATCH', json: { roll_seconds: 60 } }), 404, 'sink_not_found')

    // The table is untouched, and takes a new sink (under the same name too).
    expect((await call(`/v1/tables/${stack().warehouse}.${sink.table}`, { key: admin })).status).toBe(200)
    const again = await postSink(admin, { name: sink.name, table: sink.table })
    expect(again.status).toBe(201)
    expect((await call(`/v1/sinks/${sink.name}`, { key: admin })).body.id).toBe(again.body.id)
  })

  it('records sink.create and sink.delete in the audit log', async () => {
    const sink = await newSink(admin)
    expect((await call(`/v1/sinks/${sink.id}`, { key: admin, method: 'DELETE' })).status).toBe(202)
    const { rows } = await db.query('select action, actor, details from audit_events where subject = $1 order by id', [sink.id])
    const keyId = admin.split('_')[2]
    expect(rows).toEqual([
      { action: 'sink.create', actor: keyId, details: { name: sink.name, warehouse: stack().warehouse, table: sink.table } },
      { action: 'sink.delete', actor: keyId, details: { pending_batches_discarded: 0, objects_deleted: 0 } },
    ])
  })
})

describe('POST /v1/sinks/{id|name}/dedupe', () => {
  it('refuses an unkeyed sink (409 sink_not_keyed) and a disabled one (409 sink_not_active)', async () => {
    const sink = await newSink(admin)
    expectError(await call(`/v1/sinks/${sink.id}/dedupe`, { key: admin, method: 'POST' }), 409, 'sink_not_keyed')
    const keyed = await newSink(admin, { sink: { key: ['who'] } })
    await db.query(`update sinks set state = 'disabled', disabled_reason = 'upsert_key_null' where id = $1`, [keyed.id])
    expectError(await call(`/v1/sinks/${keyed.id}/dedupe`, { key: admin, method: 'POST' }), 409, 'sink_not_active')
    expectError(await call('/v1/sinks/no-such-sink/dedupe', { key: admin, method: 'POST' }), 404, 'sink_not_found')
  })

  it('answers 202 {dedupe{requested_at, last}}, and the same request while it waits', async () => {
    const sink = await newSink(admin, { sink: { key: ['who'] } })
    const first = await call(`/v1/sinks/${sink.name}/dedupe`, { key: admin, method: 'POST' })
    expect(first.status).toBe(202)
    expect(first.body).toEqual({ dedupe: { requested_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z$/), last: null } })
    const again = await call(`/v1/sinks/${sink.id}/dedupe`, { key: admin, method: 'POST' })
    expect(again.status).toBe(202)
    expect(Date.parse(again.body.dedupe.requested_at)).toBe(Date.parse(first.body.dedupe.requested_at))
    expect((await call(`/v1/sinks/${sink.id}`, { key: admin })).body.dedupe.requested_at).toBe(again.body.dedupe.requested_at)
  })

  it('answers a repeated dedupe request with the very same requested_at string', async () => {
    const sink = await newSink(admin, { sink: { key: ['who'] } })
    const first = await call(`/v1/sinks/${sink.id}/dedupe`, { key: admin, method: 'POST' })
    const again = await call(`/v1/sinks/${sink.id}/dedupe`, { key: admin, method: 'POST' })
    expect(again.body).toEqual(first.body)
  })

  it('answers 409 dedupe_too_soon with Retry-After within an hour of the last dedupe', async () => {
    const sink = await newSink(admin, { sink: { key: ['who'] } })
    const set = Date.now()
    const at = new Date(set - 600_000).toISOString()
    await db.query(`update sinks set dedupe_last = $2::jsonb where id = $1`, [sink.id, JSON.stringify({ at, ok: true })])
    const res = await call(`/v1/sinks/${sink.id}/dedupe`, { key: admin, method: 'POST' })
    // 3,600 s after `at`, less the time this took (however long a busy machine made it), give or take a second's rounding.
    const took = Math.ceil((Date.now() - set) / 1000)
    expectError(res, 409, 'dedupe_too_soon')
    expect(res.body.error.retry_after_seconds).toBeGreaterThanOrEqual(3000 - took - 1)
    expect(res.body.error.retry_after_seconds).toBeLessThanOrEqual(3000)
    expect(res.headers.get('retry-after')).toBe(String(res.body.error.retry_after_seconds))
    await db.query(`update sinks set dedupe_last = $2::jsonb where id = $1`, [
      sink.id,
      JSON.stringify({ at: new Date(Date.now() - 3700_000).toISOString(), ok: true }),
    ])
    const ok = await call(`/v1/sinks/${sink.id}/dedupe`, { key: admin, method: 'POST' })
    expect(ok.status).toBe(202)
    expect(ok.body.dedupe.last).toMatchObject({ ok: true })
  })
})

describe('GET /v1/usage and GET /v1/connection', () => {
  it('counts ingest_bytes per project and per sink, enforced: false', async () => {
    const p = await newProject()
    expect(await usage(p.key)).toEqual({ month_to_date: 0, batches: 0, rows_accepted: 0, rows_rejected: 0, rate_limited: 0, by_sink: [], enforced: false })
    const sink = await newSink(p.key, { tableSpec: { warehouse: p.warehouse }, sink: { warehouse: p.warehouse } })
    const a = await send(sink, '[{"x":1},{"x":2},3]')
    const b = await send(sink, '[{"x":3}]')
    expect([a.status, b.status]).toEqual([202, 202])
    const bytes = a.body.bytes + b.body.bytes
    expect(bytes).toBe('{"x":1}\n{"x":2}\n'.length + '{"x":3}\n'.length)
    const res = await call('/v1/usage', { key: p.key })
    expect(res.body.month).toBe(new Date().toISOString().slice(0, 7))
    expect(res.body.ingest_bytes).toEqual({
      month_to_date: bytes,
      batches: 2,
      rows_accepted: 3,
      rows_rejected: 1,
      rate_limited: 0,
      enforced: false,
      by_sink: [{ sink_id: sink.id, name: sink.name, bytes, batches: 2, rows_accepted: 3, rows_rejected: 1, rate_limited: 0 }],
    })
    // A duplicate is not counted again.
    expect((await send(sink, '[{"x":3}]', { batchId: b.body.batch_id })).status).toBe(200)
    expect((await usage(p.key)).batches).toBe(2)
  })

  it('tells engines about sinks: sinks_note and ingest_url; a send key gets 403 send_only', async () => {
    const res = await call('/v1/connection', { key: admin })
    expect(res.status).toBe(200)
    expect(res.body.ingest_url).toBe(`${stack().apiUrl}/v1/sinks/{sink_id}`)
    expect(res.body.sinks_note).toMatch(/ingest_url/)
    expect(res.body.sinks_note).toMatch(/Idempotency-Key/)
    expect(res.body.warehouses.map((w: { name: string }) => w.name)).toContain(stack().warehouse)
    const sink = await newSink(admin)
    expectError(await call('/v1/connection', { key: sink.sendKey }), 403, 'send_only')
  })
})
