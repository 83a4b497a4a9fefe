// A key the roller cannot apply (issue 6, "Done when"): the sink is disabled with an upsert_* reason,
// nothing is committed, the batches wait and the send route keeps accepting; PATCH {key} makes it
// active again and the next tick rolls the waiting batches. Tables read with PyIceberg.
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SqlCatalog } from '../../iceberg/catalog/sql.ts'
import { S3FileIO } from '../../iceberg/io/file-io.ts'
import { currentSchema } from '../../iceberg/spec/metadata.ts'
import { tickInProcess } from '../support/roller.ts'
import { ledgerStates, scan, rollerSetup, SETUP_TIMEOUT } from '../support/roller-check.ts'
import { intakeObjects, newSink, send, uid, type Sink } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

let db: pg.Client
let pool: pg.Pool
let whId: string
beforeAll(async () => {
  ;({ db, whId } = await rollerSetup())
  pool = new pg.Pool({ connectionString: stack().databaseUrl, max: 2 })
}, SETUP_TIMEOUT)
afterAll(async () => {
  await db?.end()
  await pool?.end()
})

const cols = [
  { name: 'x', type: 'long', required: true },
  { name: 'who', type: 'string' },
]

async function tick(sinkId: string, env: Record<string, string> = {}, rollerId = `kdisable-${sinkId}`) {
  const r = await tickInProcess({ sink: sinkId, rollerId, env })
  expect(r.code, r.stdout + r.stderr).toBe(0)
  return r
}

async function sendOk(sink: Sink, rows: unknown[]): Promise<string> {
  const batchId = `b-${uid()}`
  const res = await send(sink, rows, { batchId })
  expect(res.status, res.text).toBe(202)
  return batchId
}

const view = async (sink: Sink) => (await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })).body
const patch = (sink: Sink, json: unknown) => call(`/v1/sinks/${sink.id}`, { method: 'PATCH', key: stack().adminKey, json })

describe('disabled by its key', () => {
  it('upsert_rewrite_too_large: nothing committed, the batches wait, sends accepted; PATCH {key} re-activates and the next tick rolls them', async () => {
    const sink = await newSink(stack().adminKey, { tableSpec: { columns: cols }, sink: { key: ['x'] } })
    const wh = { sql: whId }
    await sendOk(
      sink,
      [1, 2, 3, 4].map((x) => ({ x, who: 'v1' })),
    )
    await tick(sink.id)
    const before = await scan(wh, sink.table)

    // Key 2 only: the v1 file is partly replaced; its rewrite is past a 10-byte limit.
    const b1 = await sendOk(sink, [
      { x: 2, who: 'v2' },
      { x: 5, who: 'v2' },
    ])
    const t = await tick(sink.id, { LHBOX_UPSERT_MAX_REWRITE_BYTES: '10' })
    expect(
      t.logs.some((l) => l.msg === 'sink disabled: its key cannot be applied' || JSON.stringify(l).includes('upsert_rewrite_too_large')),
      t.stdout,
    ).toBe(true)
    const after = await scan(wh, sink.table)
    expect(after.snapshots.map((s) => s.snapshot_id)).toEqual(before.snapshots.map((s) => s.snapshot_id))
    expect(after.rows.map((r) => [Number(r.x), r.who])).toEqual([
      [1, 'v1'],
      [2, 'v1'],
      [3, 'v1'],
      [4, 'v1'],
    ])

    const disabled = await view(sink)
    expect(disabled).toMatchObject({ state: 'disabled', disabled_reason: 'upsert_rewrite_too_large' })
    expect(disabled.lag.batches_waiting).toBe(1)
    expect(disabled.lag.bytes_waiting).toBeGreaterThan(0)
    // The send route keeps accepting; a dedupe is refused while disabled.
    const b2 = await sendOk(sink, [{ x: 3, who: 'v3' }])
    expect((await view(sink)).lag.batches_waiting).toBe(2)
    const dd = await call(`/v1/sinks/${sink.id}/dedupe`, { method: 'POST', key: stack().adminKey })
    expect([dd.status, dd.body?.error?.code]).toEqual([409, 'sink_not_active'])
    // A disabled sink is not leased: a tick (even with the normal limit) leaves it as it is.
    await tick(sink.id)
    expect((await view(sink)).state).toBe('disabled')
    expect((await scan(wh, sink.table)).snapshots).toHaveLength(before.snapshots.length)
    expect(Object.values(await ledgerStates(db, sink.id)).filter((s) => s !== 'committed')).toHaveLength(2)

    // PATCH {key} (the same key): active again; the next tick, normal limit, rolls both batches.
    const p = await patch(sink, { key: ['x'] })
    expect(p.status, p.text).toBe(200)
    expect(p.body).toMatchObject({ state: 'active', key: ['x'] })
    expect(p.body.disabled_reason ?? null).toBeNull()
    // Another roller (a restarted service has a new id): the disabling roll gave its lease back.
    await tick(sink.id, {}, `kdisable-other-${uid()}`)
    const rolled = await scan(wh, sink.table)
    expect(rolled.rows.map((r) => [Number(r.x), r.who])).toEqual([
      [1, 'v1'],
      [2, 'v2'],
      [3, 'v3'],
      [4, 'v1'],
      [5, 'v2'],
    ])
    expect(rolled.snapshots.at(-1)!.summary['lakehousebox.sink.batches'].split(',').sort()).toEqual([b1, b2].sort())
    expect(rolled.snapshots.at(-1)!.summary).toMatchObject({ 'lakehousebox.sink.rewritten_files': '1' })
    const active = await view(sink)
    expect(active).toMatchObject({ state: 'active', lag: { batches_waiting: 0 } })
    expect(await intakeObjects(sink.id)).toEqual([])
  })

  it('a key set on an unpartitioned table that was partitioned since: upsert_table_unsupported; PATCH {key: null} appends again', async () => {
    const sink = await newSink(stack().adminKey, { tableSpec: { columns: cols }, sink: { key: ['x'] } })
    const wh = { sql: whId }
    await sendOk(sink, [{ x: 1, who: 'v1' }])
    await tick(sink.id)

    // Another writer partitions the table (identity on x): a key needs an unpartitioned table.
    const { endpoint, region, accessKeyId, secretAccessKey, bucket } = stack().s3
    const catalog = new SqlCatalog({
      name: whId,
      sql: pool,
      warehouseLocation: `s3://${bucket}`,
      io: new S3FileIO({ endpoint, region, accessKeyId, secretAccessKey }),
    })
    const [ns, name] = sink.table.split('.')
    const table = await catalog.loadTable({ namespace: [ns], name })
    const xId = currentSchema(table.metadata).fields.find((f) => f.name === 'x')!.id
    await catalog.commitTable(
      table,
      [{ type: 'assert-table-uuid', uuid: table.metadata['table-uuid'] }],
      [
        { action: 'add-spec', spec: { 'spec-id': 1, fields: [{ 'source-id': xId, 'field-id': 1000, name: 'x', transform: 'identity' }] } },
        { action: 'set-default-spec', 'spec-id': -1 },
      ],
    )

    await sendOk(sink, [
      { x: 1, who: 'v2' },
      { x: 2, who: 'v2' },
    ])
    await tick(sink.id)
    expect(await view(sink)).toMatchObject({ state: 'disabled', disabled_reason: 'upsert_table_unsupported', lag: { batches_waiting: 1 } })
    expect((await scan(wh, sink.table)).rows.map((r) => [Number(r.x), r.who])).toEqual([[1, 'v1']])
    await sendOk(sink, [{ x: 3, who: 'v3' }])

    // The same key cannot be set again on the partitioned table (the edge checks it too).
    const again = await patch(sink, { key: ['x'] })
    expect([again.status, again.body?.error?.code]).toEqual([409, 'key_unsupported'])
    expect((await view(sink)).state).toBe('disabled')
    // No key: active, and the waiting batches are appended (duplicates of key 1 and all).
    const p = await patch(sink, { key: null })
    expect(p.status, p.text).toBe(200)
    expect(p.body).toMatchObject({ state: 'active', key: null })
    await tick(sink.id)
    const s = await scan(wh, sink.table)
    expect(s.rows.map((r) => [Number(r.x), r.who]).sort()).toEqual([
      [1, 'v1'],
      [1, 'v2'],
      [2, 'v2'],
      [3, 'v3'],
    ])
    expect(s.snapshots.at(-1)!.operation).toBe('append')
    expect(await view(sink)).toMatchObject({ state: 'active', lag: { batches_waiting: 0 } })
  })
})
