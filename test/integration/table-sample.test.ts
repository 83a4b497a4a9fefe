// GET /v1/tables/{warehouse}.{namespace}.{table}/sample (issue 16): the first rows of the table's
// newest data file, read in the edge (the runtime-neutral Parquet reader, ZSTD in pure JS), each row
// in the form a producer sends it and never through a double.
import { beforeAll, describe, expect, it } from 'vitest'
import { tickInProcess } from '../support/roller.ts'
import { createTable, newProject, newSink, send, type Sink } from '../support/sinks.ts'
import { call, expectError, newApiKey } from '../support/stack.ts'

let owner: { project: string; key: string; warehouse: string }
let sink: Sink
const COLUMNS = [
  { name: 'x', type: 'long', required: true },
  { name: 'who', type: 'string' },
  { name: 'at', type: 'timestamptz' },
  { name: 'amount', type: 'decimal(10, 2)' },
]

async function roll(body: string, batchId: string): Promise<void> {
  expect((await send(sink, body, { batchId })).status).toBe(202)
  const tick = await tickInProcess({ sink: sink.id })
  expect(tick.code, tick.stdout).toBe(0)
}

beforeAll(async () => {
  owner = await newProject()
  sink = await newSink(owner.key, { tableSpec: { warehouse: owner.warehouse, namespace: 'sample', columns: COLUMNS }, sink: { warehouse: owner.warehouse } })
  await roll('[{"x":1,"who":"first roll"}]', 'roll-1')
  await roll('[{"x":9007199254740993,"who":"north","at":"2026-12-02T10:00:00.000001Z","amount":12.3},{"x":-2,"who":null},{"x":3,"amount":"0.05"}]', 'roll-2')
}, 180_000)

const sample = (query = '', key = owner.key) => call(`/v1/tables/${owner.warehouse}.${sink.table}/sample${query}`, { key })

/** Each row's text up to its arrival time (which the roll stamps): cut from the answer, never parsed. */
const rowsIn = (text: string) => [...text.matchAll(/\{"x":.*?(?=,"__ingest_ts":)/g)].map((m) => m[0])

describe('GET /v1/tables/{…}/sample', () => {
  it('answers the newest data file’s rows as sent, a long past 2^53 exact, decimals and times as text', async () => {
    const res = await sample()
    expect(res.status, res.text).toBe(200)
    expect(res.body).toMatchObject({
      warehouse: owner.warehouse,
      table: sink.table,
      snapshot_id: expect.stringMatching(/^\d+$/),
      file: expect.stringMatching(/\.parquet$/),
    })
    expect(rowsIn(res.text)).toEqual([
      '{"x":9007199254740993,"who":"north","at":"2026-12-02T10:00:00.000001+00:00","amount":"12.30"',
      '{"x":-2,"who":null,"at":null,"amount":null',
      '{"x":3,"who":null,"at":null,"amount":"0.05"',
    ])
    expect(res.body.rows[0].__ingest_ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/)
    // The current snapshot is the sample's.
    const table = await call(`/v1/tables/${owner.warehouse}.${sink.table}`, { key: owner.key })
    expect(res.body.snapshot_id).toBe(table.body.current_snapshot_id)
  })

  it('takes a limit of 1 to 100; anything else is 400 invalid_request', async () => {
    expect(rowsIn((await sample('?limit=1')).text)).toHaveLength(1)
    for (const bad of ['0', '101', 'abc', '-1', '1.5']) expectError(await sample(`?limit=${bad}`), 400, 'invalid_request')
  })

  it('answers no rows for a table without a snapshot', async () => {
    const empty = await createTable(owner.key, { warehouse: owner.warehouse, namespace: 'sample' })
    const res = await call(`/v1/tables/${owner.warehouse}.${empty}/sample`, { key: owner.key })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ warehouse: owner.warehouse, table: empty, snapshot_id: null, file: null, rows: [] })
  })

  it('levels and projects: a read key looks; a send key 403 send_only; no key 401; another project 404', async () => {
    expect((await sample('', await newApiKey('read', owner.project))).status).toBe(200)
    expectError(await sample('', sink.sendKey), 403, 'send_only')
    expect((await call(`/v1/tables/${owner.warehouse}.${sink.table}/sample`)).status).toBe(401)
    expectError(await sample('', (await newProject()).key), 404, 'table_not_found')
    expectError(await call('/v1/tables/nodots/sample', { key: owner.key }), 400, 'invalid_request')
  })
})
