// Files to rows (issue 13): the objects dropped under a prefix become rows once each — a re-run adds
// nothing, a re-upload with a new etag adds one row, the pattern's parts are columns, x-amz-meta-*
// fill the columns the table has, and _sink/ and the table's own files are never indexed. A table
// keyed on path keeps one row per file. PyIceberg reads the tables back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureVenv } from '../support/python.ts'
import { rollerTick, tickInProcess } from '../support/roller.ts'
import { scan, warehouseId } from '../support/roller-check.ts'
import { bucket, createTable, feedSinksDeletedAfter, intakeObjects, newSink, poll, postSink, uid } from '../support/sinks.ts'
import { call, expectError, stack } from '../support/stack.ts'

const COLUMNS = [
  { name: 'x', type: 'long' },
  { name: 'path', type: 'string', required: true },
  { name: 'size', type: 'long' },
  { name: 'etag', type: 'string' },
  { name: 'last_modified', type: 'timestamptz' },
  { name: 'content_type', type: 'string' },
  { name: 'camera', type: 'string' },
  { name: 'day', type: 'string' },
  { name: 'name', type: 'string' },
  { name: 'owner', type: 'string' },
]

beforeAll(() => ensureVenv(), 15 * 60_000)
/** The stack warehouse's root (its prefix): a files sink lists only under it. */
let root = ''
beforeAll(async () => {
  root = (await call(`/v1/warehouses/${stack().warehouse}`, { key: stack().adminKey })).body.prefix
})
const under = (key: string) => (root ? `${root}/${key}` : key)
const feedSink = feedSinksDeletedAfter(afterAll)
const filesSink = async (opts: Parameters<typeof newSink>[1]) => {
  const sink = await newSink(stack().adminKey, opts)
  feedSink(sink.id)
  return sink
}

const s3 = () => stack().s3.bucket
const table = async (name: string) => (await scan({ sql: await warehouseId(stack().warehouse) }, name)).rows
const byPath = (rows: Array<Record<string, any>>) => [...rows].sort((a, b) => String(a.path).localeCompare(String(b.path)))

/** A re-upload, once the store lists its new size (s3rver, npm run dev's store, writes an object and its listing entry apart). */
async function replace(key: string, body: string, contentType = 'text/csv') {
  await bucket().put(key, body, { contentType })
  await poll(
    async () => {
      for await (const o of bucket().list(key)) if (o.key === key && o.size === body.length) return true
      return null
    },
    5_000,
    `the listing shows the new ${key}`,
  )
}

/** The next run now (a files sink's slot is minutes long). */
async function runNow(sinkId: string) {
  const asked = await call(`/v1/sinks/${sinkId}/run`, { key: stack().adminKey, method: 'POST' })
  expect(asked.status, asked.text).toBe(202)
  const t = await tickInProcess({ sink: sinkId })
  expect(t.code, t.stdout).toBe(0)
  return (await call(`/v1/sinks/${sinkId}`, { key: stack().adminKey })).body
}

describe.concurrent('files to rows', () => {
  it('indexes each object once, a new etag again, with the pattern parts and x-amz-meta columns; never _sink/', async () => {
    const prefix = under(`uploads-${uid()}/`)
    const jpg = (camera: string, day: string, name: string) => `${prefix}cams/${camera}/${day}/${name}.jpg`
    await bucket().put(jpg('front', '2026-12-01', 'a'), 'A', { contentType: 'image/jpeg', metadata: { owner: 'ana' } })
    await bucket().put(jpg('back', '2026-12-02', 'b'), 'BB', { contentType: 'image/jpeg' })
    await bucket().put(`${prefix}cams/notes.txt`, 'not a picture', { contentType: 'text/plain' })
    await bucket().put(`${prefix}_sink/fake/batch.ndjson`, '{}', { contentType: 'application/x-ndjson' })
    const sink = await filesSink({
      tableSpec: { columns: COLUMNS },
      sink: { files: { prefix, every_seconds: 300, pattern: 'cams/{camera}/{day}/{name}.jpg' } },
    })
    expect(sink.created.body).toMatchObject({ kind: 'files', files: { prefix, every_seconds: 300, pattern: 'cams/{camera}/{day}/{name}.jpg' } })
    expect(sink.created.body.send_key).toBeUndefined()

    // The first run: the sink's first slot is due at once.
    const t = await tickInProcess({ sink: sink.id })
    expect(t.code, t.stdout).toBe(0)
    expect(t.metrics).toContain('lhbox_files_runs_total{outcome="ok"} 1')
    const rows = byPath(await table(sink.table))
    expect(rows.map((r) => [r.path, Number(r.size), r.content_type, r.camera, r.day, r.name, r.owner])).toEqual([
      [`s3://${s3()}/${jpg('back', '2026-12-02', 'b')}`, 2, 'image/jpeg', 'back', '2026-12-02', 'b', null],
      [`s3://${s3()}/${jpg('front', '2026-12-01', 'a')}`, 1, 'image/jpeg', 'front', '2026-12-01', 'a', 'ana'],
    ])
    for (const r of rows) {
      expect(r.etag).toMatch(/^[0-9a-f]{32}$/)
      expect(Number.isNaN(Date.parse(String(r.last_modified)))).toBe(false)
    }

    // A run with nothing new adds nothing.
    expect((await runNow(sink.id)).files.last_run).toMatchObject({ outcome: 'ok', rows: 0, error: null })
    expect(await table(sink.table)).toHaveLength(2)

    // A new file and a re-upload with new content (a new etag): one row each.
    await replace(jpg('front', '2026-12-01', 'a'), 'A, again', 'image/jpeg')
    await bucket().put(jpg('side', '2026-12-03', 'c'), 'CCC', { contentType: 'image/jpeg' })
    expect((await runNow(sink.id)).files.last_run).toMatchObject({ outcome: 'ok', rows: 2 })
    const after = byPath(await table(sink.table))
    expect(after.map((r) => [r.name, Number(r.size)])).toEqual([
      ['b', 2],
      ['a', 1],
      ['a', 8],
      ['c', 3],
    ])
    // Never the intake or anything under _sink/, never the table's own files.
    expect(after.some((r) => String(r.path).includes('_sink/'))).toBe(false)
  }, 120_000)

  it('a table keyed on path keeps one row per file; without a pattern every object under the prefix is a row', async () => {
    const prefix = under(`drop-${uid()}/`)
    await bucket().put(`${prefix}one.csv`, '1', { contentType: 'text/csv' })
    await bucket().put(`${prefix}two.csv`, '22', { contentType: 'text/csv' })
    const columns = COLUMNS.filter((c) => ['x', 'path', 'size', 'etag'].includes(c.name))
    const sink = await filesSink({ tableSpec: { columns }, sink: { key: ['path'], files: { prefix, every_seconds: 60 } } })
    expect((await tickInProcess({ sink: sink.id })).code).toBe(0)
    await replace(`${prefix}one.csv`, '1111')
    expect((await runNow(sink.id)).files.last_run).toMatchObject({ outcome: 'ok', rows: 1 })
    const rows = byPath(await table(sink.table))
    expect(rows.map((r) => [String(r.path).split('/').at(-1), Number(r.size)])).toEqual([
      ['one.csv', 4],
      ['two.csv', 2],
    ])
  }, 120_000)

  it('a run killed after storing its batch is committed once by the next tick, and not run again', async () => {
    const prefix = under(`crash-${uid()}/`)
    await bucket().put(`${prefix}a.bin`, 'a')
    const columns = COLUMNS.filter((c) => ['x', 'path', 'size', 'etag'].includes(c.name))
    const sink = await filesSink({ tableSpec: { columns }, sink: { files: { prefix, every_seconds: 600 } } })
    const rollerId = `files-${uid()}`
    const dead = await rollerTick({ sink: sink.id, killAt: 'feed-batch', rollerId })
    expect(dead.signal, dead.stdout + dead.stderr).toBe('SIGKILL')
    expect((await intakeObjects(sink.id)).filter((k) => k.endsWith('.ndjson'))).toHaveLength(1)
    // The stored run waits in the ledger as a producer's batch would: lag shows it.
    const waiting = (await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })).body
    expect(waiting.lag).toMatchObject({ batches_waiting: 1, bytes_waiting: expect.any(Number), oldest_waiting_at: expect.any(String) })
    expect(waiting.lag.bytes_waiting).toBeGreaterThan(0)
    // The restart (same roller id: the dead one's lease is its own) rolls the stored run and finds the slot done.
    const restart = await tickInProcess({ sink: sink.id, rollerId })
    expect(restart.code, restart.stdout).toBe(0)
    const view = (await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })).body
    expect(view.files.last_run).toMatchObject({ outcome: 'done_before' })
    expect(view.lag).toMatchObject({ batches_waiting: 0, bytes_waiting: 0 })
    expect(await intakeObjects(sink.id)).toEqual([])
    // Asked again (a new run id), the listing finds the file in the table: nothing is added.
    expect((await runNow(sink.id)).files.last_run).toMatchObject({ outcome: 'ok', rows: 0 })
    expect((await table(sink.table)).map((r) => String(r.path))).toEqual([`s3://${s3()}/${prefix}a.bin`])
  }, 120_000)

  it('never indexes the table’s own data and metadata, even under the prefix', async () => {
    const namespace = `own_${uid()}`
    const columns = COLUMNS.filter((c) => ['x', 'path', 'size'].includes(c.name))
    // The table lives at s3://<bucket>/<warehouse prefix>/<namespace>/<table>/: the rule indexes the whole namespace folder.
    const folder = under(`${namespace}/`)
    const sink = await filesSink({ tableSpec: { namespace, columns }, sink: { files: { prefix: folder, every_seconds: 600 } } })
    await bucket().put(`${folder}drop/a.txt`, 'a')
    expect((await tickInProcess({ sink: sink.id })).code).toBe(0)
    // The first roll wrote the table's metadata and a data file under the prefix; the next run adds nothing.
    const own = []
    for await (const o of bucket().list(folder)) if (!o.key.startsWith(`${folder}drop/`)) own.push(o.key)
    expect(own.some((k) => k.endsWith('.parquet')) && own.some((k) => k.endsWith('.metadata.json'))).toBe(true)
    expect((await runNow(sink.id)).files.last_run).toMatchObject({ outcome: 'ok', rows: 0 })
    expect((await table(sink.table)).map((r) => String(r.path))).toEqual([`s3://${s3()}/${folder}drop/a.txt`])
  }, 120_000)

  it('refuses a malformed pattern, a prefix under _sink/ or outside the warehouse root, and a table without a path column', async () => {
    const tableName = await createTable(stack().adminKey, { columns: COLUMNS })
    const body = (files: Record<string, unknown>) => ({ name: `f_${uid()}`, table: tableName, files: { prefix: under('x/'), every_seconds: 300, ...files } })
    expectError(await postSink(stack().adminKey, body({ pattern: 'cams/{camera' })), 400, 'invalid_pattern')
    expectError(await postSink(stack().adminKey, body({ pattern: 'cams/{path}' })), 400, 'invalid_pattern')
    expectError(await postSink(stack().adminKey, body({ prefix: '_sink/' })), 400, 'invalid_request')
    // Only under the warehouse's root: the bucket holds other warehouses' files (a prefix one letter longer is another root).
    for (const prefix of ['', 'x/', `${root}x/`, root]) expectError(await postSink(stack().adminKey, body({ prefix })), 400, 'invalid_request')
    // PATCH checks the rule again.
    const made = await postSink(stack().adminKey, body({ pattern: 'cams/{camera}.jpg' }))
    expect(made.status, made.text).toBe(201)
    feedSink(made.body.id)
    expectError(
      await call(`/v1/sinks/${made.body.id}`, { key: stack().adminKey, method: 'PATCH', json: { files: { pattern: 'x/{a}/{a}' } } }),
      400,
      'invalid_pattern',
    )
    expectError(await call(`/v1/sinks/${made.body.id}`, { key: stack().adminKey, method: 'PATCH', json: { files: { prefix: 'x/' } } }), 400, 'invalid_request')
    const noPath = await createTable(stack().adminKey)
    expectError(
      await postSink(stack().adminKey, { name: `f_${uid()}`, table: noPath, files: { prefix: under('x/'), every_seconds: 300 } }),
      409,
      'files_table_unsupported',
    )
  }, 60_000)
})
