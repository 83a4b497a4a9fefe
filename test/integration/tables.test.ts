// Table routes: create (columns or a schema; v2/v3; time partitions), list, get, document — and a clear
// 400 for bad input. Also the ledger pruning: the Worker's cron, or the Node edge's start.
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { edgeDb } from '../../db/edge.ts'
import { pruneLedger } from '../../edge/roller-ledger.ts'
import { startEdge } from '../support/edge.ts'
import { uid } from '../support/sinks.ts'
import { call, edgeHost, expectError, newApiKey, stack } from '../support/stack.ts'

/** This run's namespace: the file runs on both edges against one stack. */
const NS = `tbl_${uid()}`

const create = (json: Record<string, unknown>, key = stack().adminKey) => call('/v1/tables', { key, json: { warehouse: stack().warehouse, ...json } })

describe('POST /v1/tables', () => {
  it('creates a v2 table with fresh field ids, a namespace with its first table', async () => {
    const res = await create({
      table: `${NS}.events`,
      columns: [
        { name: 'x', type: 'long', required: true },
        { name: 'who', type: 'string', doc: 'who sent it' },
      ],
      doc: 'garden events',
    })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      table: `${NS}.events`,
      format_version: 2,
      doc: 'garden events',
      partition_spec: [],
      snapshot_count: 0,
      current_snapshot_id: null,
      undocumented_columns: ['x'],
    })
    expect(res.body.schema.fields).toEqual([
      { id: 1, name: 'x', type: 'long', required: true },
      { id: 2, name: 'who', type: 'string', required: false, doc: 'who sent it' },
    ])
    const list = await call(`/v1/tables?warehouse=${stack().warehouse}&namespace=${NS}`, { key: stack().adminKey })
    expect(list.body.tables).toEqual([{ namespace: NS, name: 'events', table: `${NS}.events` }])
  })

  it('creates a v3 table partitioned by day(ts) and one with nested types from a schema', async () => {
    const day = await create({
      table: `${NS}.by_day`,
      format_version: 3,
      partition: ['day(ts)'],
      columns: [
        { name: 'ts', type: 'timestamptz', required: true },
        { name: 'g', type: 'geometry' },
      ],
    })
    expect(day.status).toBe(201)
    expect(day.body.partition_spec).toEqual([{ name: 'ts_day', transform: 'day', source: 'ts' }])
    const nested = await create({
      table: `${NS}.nested`,
      schema: {
        fields: [
          { id: 1, name: 'tags', required: false, type: { type: 'list', 'element-id': 2, element: 'string', 'element-required': false } },
          { id: 3, name: 'amount', required: true, type: 'decimal(38, 10)' },
        ],
      },
    })
    expect(nested.status).toBe(201)
    expect(nested.body.schema.fields[0].type).toEqual({ type: 'list', 'element-id': 3, element: 'string', 'element-required': false })
    expect(nested.body.schema.fields[1]).toMatchObject({ id: 2, type: 'decimal(38, 10)' })
  })

  it('answers bad columns, types and partitions with a clear 400', async () => {
    expectError(await create({ table: `${NS}.bad1`, columns: [{ name: 'x', type: 'longg' }] }), 400, 'invalid_schema')
    expectError(await create({ table: `${NS}.bad2`, columns: [{ name: 'x', type: 'decimal(39, 1)' }] }), 400, 'invalid_schema')
    expectError(await create({ table: `${NS}.bad3`, columns: [{ name: 't', type: 'timestamp_ns' }] }), 400, 'invalid_schema')
    expectError(
      await create({
        table: `${NS}.bad4`,
        columns: [
          { name: 'x', type: 'long' },
          { name: 'x', type: 'string' },
        ],
      }),
      400,
      'invalid_schema',
    )
    expectError(await create({ table: `${NS}.bad5`, columns: [{ name: 'x', type: 'long' }], partition: ['day(x)'] }), 400, 'invalid_partition')
    expectError(await create({ table: `${NS}.bad6`, columns: [{ name: 'x', type: 'long' }], partition: ['day(nope)'] }), 400, 'invalid_partition')
    expectError(await create({ table: `${NS}.bad7`, columns: [{ name: 'x', type: 'long' }], partition: ['sideways(x)'] }), 400, 'invalid_partition')
    expectError(await create({ table: 'no_namespace', columns: [{ name: 'x', type: 'long' }] }), 400, 'invalid_request')
    expectError(await create({ table: `${NS}.bad8`, columns: [{ name: '1x', type: 'long' }] }), 400, 'invalid_request')
    expectError(await create({ table: `${NS}.bad9` }), 400, 'invalid_request')
    expectError(
      await call('/v1/tables', { key: stack().adminKey, json: { warehouse: 'nope', table: 'a.b', columns: [{ name: 'x', type: 'long' }] } }),
      404,
      'warehouse_not_found',
    )
  })

  it('answers 409 table_exists for a second create', async () => {
    const body = { table: `${NS}.twice`, columns: [{ name: 'x', type: 'long' }] }
    expect((await create(body)).status).toBe(201)
    expectError(await create(body), 409, 'table_exists')
  })

  it('needs a write key to create, a read key to look', async () => {
    const read = await newApiKey('read')
    expectError(await create({ table: `${NS}.ro`, columns: [{ name: 'x', type: 'long' }] }, read), 403, 'forbidden')
    expect((await call(`/v1/tables/${stack().warehouse}.${NS}.events`, { key: read })).status).toBe(200)
  })
})

describe('GET and PATCH /v1/tables/{warehouse}.{namespace}.{table}', () => {
  it('gets a table and documents it in one commit', async () => {
    const ref = `${stack().warehouse}.${NS}.docs`
    expect(
      (
        await create({
          table: `${NS}.docs`,
          columns: [
            { name: 'x', type: 'long' },
            { name: 'y', type: 'string' },
          ],
        })
      ).status,
    ).toBe(201)
    const doc = await call(`/v1/tables/${ref}/docs`, { method: 'PATCH', key: stack().adminKey, json: { doc: 'a table', columns: { x: 'the x', y: 'the y' } } })
    expect(doc.status).toBe(200)
    expect(doc.body).toMatchObject({ doc: 'a table', undocumented_columns: [] })
    expect(doc.body.schema.fields.map((f: { doc?: string }) => f.doc)).toEqual(['the x', 'the y'])
    const got = await call(`/v1/tables/${ref}`, { key: stack().adminKey })
    expect(got.body.schema.schema_id).toBe(1)
    expectError(await call(`/v1/tables/${ref}/docs`, { method: 'PATCH', key: stack().adminKey, json: { columns: { nope: 'x' } } }), 400, 'unknown_column')
    // columns is an object of name → doc: an array (even an empty one) is refused, never taken as no change.
    expectError(await call(`/v1/tables/${ref}/docs`, { method: 'PATCH', key: stack().adminKey, json: { columns: [], doc: 'x' } }), 400, 'invalid_request')
    expectError(await call(`/v1/tables/${stack().warehouse}.${NS}.missing`, { key: stack().adminKey }), 404, 'table_not_found')
    expectError(await call(`/v1/tables/just-one`, { key: stack().adminKey }), 400, 'invalid_request')
  })
})

describe('the ledger pruning cron', () => {
  let db: pg.Client
  beforeAll(async () => {
    db = new pg.Client(stack().databaseUrl)
    await db.connect()
  })
  afterAll(() => db.end())

  it('prunes ledger rows 7 days after commit, and keeps the rest', async () => {
    expect((await create({ table: `${NS}.pruned`, columns: [{ name: 'x', type: 'long' }] })).status).toBe(201)
    const sink = await call('/v1/sinks', { key: stack().adminKey, json: { name: `pruned_in_${NS}`, table: `${NS}.pruned`, warehouse: stack().warehouse } })
    expect(sink.status).toBe(201)
    const send = (id: string) =>
      call(`/v1/sinks/${sink.body.id}`, { key: sink.body.send_key, body: '[{"x": 1}]', headers: { 'content-type': 'application/json', 'idempotency-key': id } })
    for (const id of ['old', 'recent', 'waiting']) expect((await send(id)).status).toBe(202)
    await db.query(`update batches set state = 'committed', committed_at = now() - interval '8 days' where sink_id = $1 and batch_id = 'old'`, [sink.body.id])
    await db.query(`update batches set state = 'committed', committed_at = now() - interval '6 days' where sink_id = $1 and batch_id = 'recent'`, [
      sink.body.id,
    ])
    await db.query(`update batches set received_at = now() - interval '30 days' where sink_id = $1 and batch_id = 'waiting'`, [sink.body.id])
    if (edgeHost() === 'workerd') {
      const cron = await fetch(`${stack().apiUrl}/__scheduled?cron=17+*+*+*+*`)
      expect(cron.status).toBe(200)
    } else {
      // No cron on Node: the edge prunes when it starts and every hour after.
      await (await startEdge('node')).stop()
    }
    const deadline = Date.now() + 10_000
    let ids: string[] = []
    do {
      ids = (await db.query('select batch_id from batches where sink_id = $1 order by batch_id', [sink.body.id])).rows.map((r) => r.batch_id)
      if (!ids.includes('old')) break
      await new Promise((r) => setTimeout(r, 200))
    } while (Date.now() < deadline)
    expect(ids).toEqual(['recent', 'waiting'])
  })

  it('prunes in bounded deletes, and a deleted sink’s discarded batches 7 days after its delete', async () => {
    const key = stack().adminKey
    const made: Array<{ id: string; send_key: string }> = []
    for (const name of ['many', 'gone_long', 'gone_lately']) {
      const table = `${NS}.prune_${name}`
      expect((await create({ table, columns: [{ name: 'x', type: 'long' }] })).status).toBe(201)
      const res = await call('/v1/sinks', { key, json: { name: `prune_${name}_${NS}`, table, warehouse: stack().warehouse } })
      expect(res.status).toBe(201)
      made.push(res.body)
    }
    const [many, goneLong, goneLately] = made
    const sendTo = (s: { id: string; send_key: string }, id: string) =>
      call(`/v1/sinks/${s.id}`, { key: s.send_key, body: '[{"x": 1}]', headers: { 'content-type': 'application/json', 'idempotency-key': id } })
    for (const id of ['a', 'b', 'c', 'd', 'e']) expect((await sendTo(many, id)).status).toBe(202)
    for (const s of [goneLong, goneLately]) {
      expect((await sendTo(s, 'left')).status).toBe(202)
      expect((await call(`/v1/sinks/${s.id}`, { method: 'DELETE', key })).status).toBe(202)
    }
    await db.query(`update batches set state = 'committed', committed_at = now() - interval '8 days' where sink_id = $1`, [many.id])
    await db.query(`update sinks set deleted_at = now() - interval '8 days' where id = $1`, [goneLong.id])
    await db.query(`update sinks set deleted_at = now() - interval '6 days' where id = $1`, [goneLately.id])
    // Two rows a statement: the five old ones go in three deletes, and nothing else of these sinks.
    const client = new pg.Client(stack().databaseUrl)
    await client.connect()
    try {
      await pruneLedger(edgeDb(client as unknown as Parameters<typeof edgeDb>[0]), 2)
    } finally {
      await client.end()
    }
    const left = await db.query('select sink_id, batch_id, state from batches where sink_id = any($1) order by sink_id', [made.map((s) => s.id)])
    expect(left.rows).toEqual([{ sink_id: goneLately.id, batch_id: 'left', state: 'discarded' }])
  })
})
