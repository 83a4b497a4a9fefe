// The storage meter (issue 14 §4; spec "What it costs and where it is counted"): POST
// /v1/warehouses/{id}/measure asks for a figure, the roller lists the bucket and reads each table's
// snapshot summary, and GET /v1/usage shows what a boto3 listing of the same bucket counts, _sink/
// included, and each table's committed Parquet bytes as PyIceberg's scan plan sums them. A bucket of
// its own, so no other test's objects move the figure while it is compared.
import { beforeAll, describe, expect, it } from 'vitest'
import { S3Client } from '../../iceberg/io/s3.ts'
import { lhbox } from '../support/cli.ts'
import { ensureVenv, runBoto3, runPython, s3Args, sqlCatalogArgs } from '../support/python.ts'
import { inProcessRoller, tickInProcess } from '../support/roller.ts'
import { createTable, newProject, newSink, poll, send, uid } from '../support/sinks.ts'
import { call, expectError, newApiKey, stack } from '../support/stack.ts'

const BUCKET = `lhbox-meter-${uid()}`
let warehouse: { name: string; id: string }

beforeAll(async () => {
  await ensureVenv()
  await new S3Client({ ...stack().s3, bucket: BUCKET }).createBucket()
  const name = `meter-${uid()}`
  const res = await call('/v1/warehouses', { key: stack().adminKey, json: { name, catalog: { type: 'sql' }, bucket: BUCKET } })
  expect(res.status, res.text).toBe(201)
  warehouse = { name, id: res.body.id }
}, 10 * 60_000)

/** What boto3 counts in the bucket. */
const boto3Figure = () => runBoto3('boto3_bucket.py', [...s3Args(stack().s3), BUCKET]) as Promise<{ bytes: number; objects: number; intake_bytes: number }>

/** The table's live data files' bytes, as PyIceberg plans a scan of it. */
async function pyDataBytes(table: string): Promise<number> {
  const args = sqlCatalogArgs({ databaseUrl: stack().databaseUrl, catalogName: warehouse.id, s3: stack().s3 })
  const out = (await runPython('pyiceberg_scan.py', [...args, table, '--no-rows'])) as { files: Array<{ file_size_in_bytes: bigint | number }> }
  return out.files.reduce((n, f) => n + Number(f.file_size_in_bytes), 0)
}

describe('the storage meter', { timeout: 120_000 }, () => {
  let tables: string[]

  beforeAll(async () => {
    // Two tables with committed rows, one batch still waiting and one rejected row: every kind of object.
    tables = []
    for (let t = 0; t < 2; t++) {
      const table = await createTable(stack().adminKey, { warehouse: warehouse.name, namespace: `meter_${uid()}` })
      const sink = await newSink(stack().adminKey, { table, sink: { warehouse: warehouse.name } })
      for (const id of ['a', 'b']) {
        const rows = Array.from({ length: 50 }, (_, i) => ({ x: i, who: `${id}-${i}-${'w'.repeat(i)}` }))
        expect((await send(sink, id === 'b' ? [...rows, { x: 'not a long' }] : rows, { batchId: id })).status).toBe(202)
      }
      expect((await tickInProcess({ sink: sink.id })).code).toBe(0)
      expect((await send(sink, [{ x: 1 }], { batchId: 'waiting' })).status).toBe(202)
      tables.push(table)
    }
  })

  it('POST /measure, then GET /v1/usage: the bytes boto3 counts, _sink/ included, and each table’s Parquet bytes', async () => {
    const before = (await call(`/v1/warehouses/${warehouse.name}`, { key: stack().adminKey })).body
    expect(before.storage).toMatchObject({ bytes: null, measured_at: null, requested_at: null })

    const asked = await call(`/v1/warehouses/${warehouse.id}/measure`, { method: 'POST', key: stack().adminKey })
    expect(asked.status, asked.text).toBe(202)
    expect(asked.body.storage.requested_at).toEqual(expect.any(String))

    const measureNow = async () => {
      const roller = inProcessRoller()
      try {
        expect(await roller.roller.measure({ warehouse: warehouse.id })).toEqual({ measured: 1, failed: 0 })
        return roller
      } finally {
        await roller.roller.close()
      }
    }
    const roller = await measureNow()
    const listed = await boto3Figure()
    const answered = await call('/v1/usage', { key: stack().adminKey })
    expect(answered.status).toBe(200)
    const figure = answered.body.storage
    const mine = figure.warehouses[warehouse.name]
    expect(mine).toMatchObject({ bytes: listed.bytes, objects: listed.objects, intake_bytes: listed.intake_bytes, requested_at: null })
    expect(listed.intake_bytes).toBeGreaterThan(0) // the waiting batches, the rejects, the markers
    expect(listed.bytes).toBeGreaterThan(listed.intake_bytes)
    expect(Object.keys(mine.tables).sort()).toEqual([...tables].sort())
    for (const t of tables) {
      const bytes = await pyDataBytes(t)
      expect(bytes).toBeGreaterThan(0)
      expect(mine.tables[t]).toBe(bytes)
      expect(figure.tables[t]).toBe(bytes)
    }
    // The project's figure sums its warehouses' (each one measured at most once here; others may be unmeasured).
    const sums = Object.values(figure.warehouses as Record<string, { bytes: number | null }>).reduce((n, w) => n + (w.bytes ?? 0), 0)
    expect(figure.bytes).toBe(sums)
    expect(roller.logs.find((l) => l.msg === 'storage measured')).toMatchObject({ warehouse_id: warehouse.id, bytes: listed.bytes })
    expect(await roller.metrics.registry.getSingleMetricAsString('lhbox_warehouse_storage_bytes')).toContain(
      `lhbox_warehouse_storage_bytes{warehouse="${warehouse.id}"} ${listed.bytes}`,
    )

    // `lhbox warehouse measure --wait` asks, and polls until a roller has measured.
    const waiting = lhbox(['warehouse', 'measure', warehouse.name, '--wait', '--json'], { env: { LHBOX_MEASURE_POLL_MS: '100' } })
    await poll(async () => (await call(`/v1/warehouses/${warehouse.name}`, { key: stack().adminKey })).body.storage.requested_at)
    await measureNow()
    const cli = await waiting
    expect(cli.code, cli.stderr).toBe(0)
    expect(JSON.parse(cli.stdout)).toMatchObject({ bytes: listed.bytes, intake_bytes: listed.intake_bytes, requested_at: null })
    expect(cli.stderr).toMatch(/waiting for the roller/)
  })

  it('a figure not asked for is not made by a roller whose periodic figures are off; another project’s warehouse is not found', async () => {
    // Other files' warehouses may have figures asked for (the fuzzer asks): this one's figure is the test.
    const storage = async () => (await call(`/v1/warehouses/${warehouse.name}`, { key: stack().adminKey })).body.storage
    const before = await storage()
    expect(before).toMatchObject({ measured_at: expect.any(String), requested_at: null })
    const roller = inProcessRoller()
    try {
      await roller.roller.measure()
      expect(roller.logs.filter((l) => l.msg === 'storage measured' && l.warehouse_id === warehouse.id)).toEqual([])
    } finally {
      await roller.roller.close()
    }
    expect(await storage()).toEqual(before)
    const other = await newProject()
    const refused = await call(`/v1/warehouses/${warehouse.id}/measure`, { method: 'POST', key: other.key })
    expect(refused.status).toBe(404)
    expect(refused.body.error.code).toBe('warehouse_not_found')
    expect((await call(`/v1/warehouses/${warehouse.name}`, { key: other.key })).status).toBe(404)
  })

  it('levels: read looks, write asks for a figure, admin changes a catalog secret; /internal takes the bootstrap secret only', async () => {
    const read = await newApiKey('read')
    const write = await newApiKey('write')
    const path = `/v1/warehouses/${warehouse.name}`
    expect((await call(path, { key: read })).status).toBe(200)
    expectError(await call(`${path}/measure`, { method: 'POST', key: read }), 403, 'forbidden')
    expect((await call(`${path}/measure`, { method: 'POST', key: write })).status).toBe(202)
    const patch = { method: 'PATCH', json: { catalog: { token: 't' } } }
    expectError(await call(path, { ...patch, key: write }), 403, 'forbidden')
    expectError(await call(path, { ...patch, key: stack().adminKey }), 409, 'not_a_rest_catalog')
    expectError(await call('/internal/warehouses/measure?roller=x', { key: stack().adminKey }), 403, 'forbidden')
    expectError(
      await call(`/internal/warehouses/${warehouse.id}/storage`, { key: write, json: { roller: 'x', started_at: new Date().toISOString(), figure: null } }),
      403,
      'forbidden',
    )
    // The request made here is answered, so no figure stays asked for after this file.
    const roller = inProcessRoller()
    try {
      expect(await roller.roller.measure({ warehouse: warehouse.id })).toEqual({ measured: 1, failed: 0 })
    } finally {
      await roller.roller.close()
    }
  })
})
