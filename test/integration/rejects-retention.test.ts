// Rejects retention (issue 31, part 5): the maintenance sweep deletes a sink's rejects files older than
// LHBOX_REJECTS_RETENTION_DAYS (default 7, the spec's; 0 keeps them), on a `roller` warehouse and on one whose
// catalog maintains its tables itself; rejects.rows_total keeps counting; the storage figure shows
// what the rejects files cost (rejects_bytes) and that they are gone. No store lets a test backdate
// Last-Modified: the sweep is given a later clock (Roller.maintain's `now`). A bucket of its own, so
// no other test's objects move the figure.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { S3Client } from '../../iceberg/io/s3.ts'
import { proxiedWarehouse } from '../support/roller-check.ts'
import { inProcessRoller, type InProcessRoller } from '../support/roller.ts'
import { createTable, newSink, send, uid, type Sink } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

const DAY = 86_400_000
const BUCKET = `lhbox-rejects-${uid()}`
let warehouse: { name: string; id: string }
let store: S3Client

beforeAll(async () => {
  store = new S3Client({ ...stack().s3, bucket: BUCKET })
  await store.createBucket()
  const name = `rejects-${uid()}`
  const res = await call('/v1/warehouses', { key: stack().adminKey, json: { name, catalog: { type: 'sql' }, bucket: BUCKET } })
  expect(res.status, res.text).toBe(201)
  warehouse = { name, id: res.body.id }
}, 10 * 60_000)

const rollers: InProcessRoller[] = []
afterAll(async () => {
  for (const r of rollers) await r.roller.close()
})

function roller(env: Record<string, string> = {}): InProcessRoller {
  const r = inProcessRoller(env)
  rollers.push(r)
  return r
}

async function sinkOn(warehouseName: string): Promise<Sink> {
  const key = stack().adminKey
  return newSink(key, { table: await createTable(key, { warehouse: warehouseName }), sink: { warehouse: warehouseName } })
}

/** Two batches with rejected rows (3 in all), rolled: two rejects files. */
async function rollRejects(p: InProcessRoller, sink: Sink): Promise<void> {
  expect((await send(sink, [{ x: 1 }, { x: 'not a long' }], { batchId: 'r1' })).status).toBe(202)
  expect((await send(sink, [{ x: 'no' }, { x: 2 }, { who: 'no x' }], { batchId: 'r2' })).status).toBe(202)
  expect(await p.roller.tick({ sink: sink.id, force: true })).toEqual({ rolled: 1, failed: 0 })
}

async function sinkView(sink: Sink): Promise<Record<string, any>> {
  const res = await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })
  expect(res.status).toBe(200)
  return res.body
}

async function rejectsFiles(s3: S3Client, sink: Sink): Promise<Array<{ key: string; size: number }>> {
  const out: Array<{ key: string; size: number }> = []
  for await (const o of s3.list(`_sink/${sink.id}/rejects/`)) out.push({ key: o.key, size: o.size })
  return out
}

async function measure(p: InProcessRoller): Promise<Record<string, any>> {
  expect((await call(`/v1/warehouses/${warehouse.id}/measure`, { method: 'POST', key: stack().adminKey })).status).toBe(202)
  expect(await p.roller.measure({ warehouse: warehouse.id })).toEqual({ measured: 1, failed: 0 })
  const res = await call('/v1/usage', { key: stack().adminKey })
  expect(res.status).toBe(200)
  return res.body.storage.warehouses[warehouse.name]
}

describe('rejects retention', () => {
  it('files older than 7 days (the default, the spec’s) go in the sweep; rows_total keeps counting; the storage figure says what they cost', {
    timeout: 180_000,
  }, async () => {
    const p = roller()
    const sink = await sinkOn(warehouse.name)
    await rollRejects(p, sink)
    const files = await rejectsFiles(store, sink)
    expect(files.map((f) => f.key)).toEqual([`_sink/${sink.id}/rejects/r1.ndjson`, `_sink/${sink.id}/rejects/r2.ndjson`])
    const cost = files.reduce((n, f) => n + f.size, 0)
    expect((await sinkView(sink)).rejects).toMatchObject({ rows_total: 3, batches_with_rejects: 2 })

    // What they cost: counted in bytes and intake_bytes, and apart as rejects_bytes.
    const before = await measure(p)
    expect(before.rejects_bytes).toBe(cost)
    expect(before.intake_bytes).toBeGreaterThanOrEqual(cost)

    // 6 days on: kept.
    expect(await p.roller.maintain({ sink: sink.id, now: Date.now() + 6 * DAY })).toEqual({ maintained: 1, failed: 0, skipped: 0 })
    expect(await rejectsFiles(store, sink)).toHaveLength(2)
    expect((await sinkView(sink)).maintenance.last).toMatchObject({ rejects_deleted: 0, rejects_bytes_deleted: 0 })

    // 8 days on: deleted, and said so; the counter stays.
    expect(await p.roller.maintain({ sink: sink.id, now: Date.now() + 8 * DAY })).toEqual({ maintained: 1, failed: 0, skipped: 0 })
    expect(await rejectsFiles(store, sink)).toEqual([])
    const view = await sinkView(sink)
    expect(view.maintenance.last).toMatchObject({ rejects_deleted: 2, rejects_bytes_deleted: cost })
    expect(view.rejects).toMatchObject({ rows_total: 3, batches_with_rejects: 2 })
    expect(p.logs.find((l) => l.msg === 'old rejects files deleted')).toMatchObject({ sink_id: sink.id, files: 2, bytes: cost, retention_days: 7 })
    expect(await p.metrics.registry.getSingleMetricAsString('lhbox_rejects_files_deleted_total')).toContain('lhbox_rejects_files_deleted_total 2')
    const page = await call(`/v1/sinks/${sink.id}/rejects`, { key: stack().adminKey })
    expect(page.status).toBe(200)
    expect(page.body.rejects).toEqual([])

    // rows_total keeps counting after the sweep.
    expect((await send(sink, [{ x: 'again' }], { batchId: 'r3' })).status).toBe(202)
    expect(await p.roller.tick({ sink: sink.id, force: true })).toEqual({ rolled: 1, failed: 0 })
    expect((await sinkView(sink)).rejects).toMatchObject({ rows_total: 4, batches_with_rejects: 3 })
    expect((await measure(p)).rejects_bytes).toBe((await rejectsFiles(store, sink)).reduce((n, f) => n + f.size, 0))
  })

  it('LHBOX_REJECTS_RETENTION_DAYS sets the age; 0 keeps them for ever', { timeout: 180_000 }, async () => {
    const sink = await sinkOn(warehouse.name)
    const keep = roller({ LHBOX_REJECTS_RETENTION_DAYS: '0' })
    await rollRejects(keep, sink)
    expect(await keep.roller.maintain({ sink: sink.id, now: Date.now() + 3650 * DAY })).toEqual({ maintained: 1, failed: 0, skipped: 0 })
    expect(await rejectsFiles(store, sink)).toHaveLength(2)
    expect((await sinkView(sink)).maintenance.last).toMatchObject({ rejects_deleted: 0 })

    const month = roller({ LHBOX_REJECTS_RETENTION_DAYS: '30' })
    expect(await month.roller.maintain({ sink: sink.id, now: Date.now() + 29 * DAY })).toEqual({ maintained: 1, failed: 0, skipped: 0 })
    expect(await rejectsFiles(store, sink)).toHaveLength(2)
    expect(await month.roller.maintain({ sink: sink.id, now: Date.now() + 31 * DAY })).toEqual({ maintained: 1, failed: 0, skipped: 0 })
    expect(await rejectsFiles(store, sink)).toEqual([])
    expect((await sinkView(sink)).rejects).toMatchObject({ rows_total: 3 })
  })

  it('a refused value stops the roller at start', () => {
    for (const bad of ['-1', '1.5', 'thirty']) expect(() => inProcessRoller({ LHBOX_REJECTS_RETENTION_DAYS: bad })).toThrow(/LHBOX_REJECTS_RETENTION_DAYS/)
  })

  it('on a warehouse whose catalog maintains its tables (maintenance: off): the rejects still go, the table is untouched', { timeout: 180_000 }, async () => {
    const off = await proxiedWarehouse(stack().s3.endpoint, { maintenance: 'off' })
    const sink = await sinkOn(off.name)
    const p = roller()
    await rollRejects(p, sink)
    const s3 = new S3Client(stack().s3)
    expect(await rejectsFiles(s3, sink)).toHaveLength(2)
    expect(await p.roller.maintain({ sink: sink.id, now: Date.now() + 31 * DAY })).toEqual({ maintained: 0, failed: 0, skipped: 0 })
    expect(await rejectsFiles(s3, sink)).toEqual([])
    expect((await sinkView(sink)).maintenance).toEqual({ last: null, next_at: null })
    expect((await sinkView(sink)).rejects).toMatchObject({ rows_total: 3 })
  })
})
