// Dedupe (issue 6, "Done when"): rows stored before the key was set keep their duplicates (except
// where a later roll carries the key) until POST /v1/sinks/{id}/dedupe and a tick: then one row per
// key, the newest by __ingest_ts, a tie going to the later commit; dedupe.last says what was done; a
// second dedupe within the hour is 409 dedupe_too_soon. `lhbox sink dedupe <sink> --wait` waits for
// it. The refusal limits, lowered, by calling the roller's dedupeTable. Tables read with PyIceberg.
import { spawn } from 'node:child_process'
import { beforeAll, describe, expect, it } from 'vitest'
import { currentSchema } from '../../iceberg/spec/metadata.ts'
import { loadZstd } from '../../iceberg/parquet/zstd.ts'
import { EdgeApi } from '../../roller/api.ts'
import { Warehouses } from '../../roller/catalogs.ts'
import { jsonLogger } from '../../roller/log.ts'
import { loadConfig } from '../../roller/config.ts'
import { dedupeTable } from '../../roller/dedupe.ts'
import { ensureVenv, runPython, toExact } from '../support/python.ts'
import { rollerEnv, tickInProcess } from '../support/roller.ts'
import { pyAppend, pyCatalogArgs, scan, warehouseId, type PyCatalog } from '../support/roller-check.ts'
import { newSink, poll, send, uid, type Sink } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

let whId: string
beforeAll(async () => {
  await ensureVenv()
  whId = await warehouseId(stack().warehouse)
}, 15 * 60_000)

const cols = [
  { name: 'x', type: 'long', required: true },
  { name: 'who', type: 'string' },
]

async function tick(sinkId: string) {
  const r = await tickInProcess({ sink: sinkId, rollerId: `kdedupe-${sinkId}` })
  expect(r.code, r.stdout + r.stderr).toBe(0)
  return r
}

async function sendOk(sink: Sink, rows: unknown[]): Promise<void> {
  const res = await send(sink, rows)
  expect(res.status, res.text).toBe(202)
}

const view = async (sink: Sink) => (await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })).body
const askDedupe = (sink: Sink) => call(`/v1/sinks/${sink.id}/dedupe`, { method: 'POST', key: stack().adminKey })
const pairs = (rows: Array<Record<string, any>>) => rows.map((r) => [Number(r.x), r.who])
/** PyIceberg's read with the current snapshot's live files and their entries' sequence numbers. */
const filesScan = async (wh: PyCatalog, table: string): Promise<any> =>
  toExact(await runPython('pyiceberg_scan.py', [...pyCatalogArgs(wh), table, '--order-by', 'x']))

/** `lhbox sink dedupe <sink> --wait`, the bin entry as a child process, polling every 100 ms. */
function lhboxDedupeWait(sink: Sink) {
  const env: Record<string, string | undefined> = {
    ...process.env,
    LHBOX_URL: stack().apiUrl,
    LHBOX_API_KEY: stack().adminKey,
    LHBOX_DEDUPE_POLL_MS: '100',
    LHBOX_SEND_KEY: undefined,
  }
  for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k]
  const child = spawn(process.execPath, ['bin/lhbox.js', 'sink', 'dedupe', sink.name, '--wait'], { env: env as NodeJS.ProcessEnv })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  // A bound for a slow machine (a tick may take long under load), not a timing assert.
  const timer = setTimeout(() => child.kill('SIGKILL'), 150_000)
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    }),
  )
  return { child, done, stderr: () => stderr }
}

describe('dedupe', () => {
  it('rows stored before the key keep their duplicates; a dedupe keeps the newest per key (a tie: the later commit, then the later row)', {
    timeout: 180_000,
  }, async () => {
    const sink = await newSink(stack().adminKey, { tableSpec: { columns: cols } })
    const wh = { sql: whId }
    // Unkeyed: three appends. 5 is twice in one batch (a tie in one file: the later row wins).
    await sendOk(sink, [
      { x: 1, who: 'a1' },
      { x: 1, who: 'a2' },
      { x: 2, who: 'a' },
      { x: 5, who: 'e1' },
      { x: 5, who: 'e2' },
    ])
    await tick(sink.id)
    await sendOk(sink, [
      { x: 1, who: 'b' },
      { x: 3, who: 'b' },
    ])
    await tick(sink.id)
    await sendOk(sink, [{ x: 3, who: 'c' }])
    await tick(sink.id)
    const stored = await scan(wh, sink.table)
    const ts3c = stored.rows.find((r) => r.who === 'c')!.__ingest_ts
    // A foreign append: 3 with the very __ingest_ts of 3/c (a tie, the later commit wins), an old 1,
    // a 4 without __ingest_ts.
    await pyAppend(wh, sink.table, [
      { x: 3, who: 'py-tie', __ingest_ts: ts3c },
      { x: 1, who: 'py-old', __ingest_ts: '2000-01-01T00:00:00.000000+00:00' },
      { x: 4, who: 'py-null' },
    ])

    // Dedupe needs a key.
    const notKeyed = await askDedupe(sink)
    expect([notKeyed.status, notKeyed.body?.error?.code]).toEqual([409, 'sink_not_keyed'])
    const p = await call(`/v1/sinks/${sink.id}`, { method: 'PATCH', key: stack().adminKey, json: { key: ['x'] } })
    expect(p.status, p.text).toBe(200)
    expect(p.body.key).toEqual(['x'])

    // A keyed roll carrying 2 replaces every stored 2; the other duplicates stay.
    await sendOk(sink, [{ x: 2, who: 'd' }])
    await tick(sink.id)
    const keyed = await scan(wh, sink.table)
    const count = (x: number) => keyed.rows.filter((r) => Number(r.x) === x).length
    expect([1, 2, 3, 4, 5].map(count)).toEqual([4, 1, 3, 1, 2])
    const ts2d = keyed.rows.find((r) => r.who === 'd')!.__ingest_ts
    const ts1b = keyed.rows.find((r) => r.who === 'b' && Number(r.x) === 1)!.__ingest_ts

    // Asked: 202, and asked again while waiting, answered as it is.
    const asked = await askDedupe(sink)
    expect(asked.status, asked.text).toBe(202)
    expect(asked.body.dedupe.requested_at).toEqual(expect.any(String))
    expect(asked.body.dedupe.last).toBeNull()
    const repeat = await askDedupe(sink)
    expect([repeat.status, repeat.body]).toEqual([202, asked.body])
    expect((await view(sink)).dedupe).toEqual({ requested_at: asked.body.dedupe.requested_at, last: null })

    // The next tick: one row per key, the newest; every kept row exactly as it was (__ingest_ts included).
    await tick(sink.id)
    const deduped = await scan(wh, sink.table)
    expect(pairs(deduped.rows)).toEqual([
      [1, 'b'],
      [2, 'd'],
      [3, 'py-tie'],
      [4, 'py-null'],
      [5, 'e2'],
    ])
    expect(deduped.rows.find((r) => r.who === 'd')!.__ingest_ts).toBe(ts2d)
    expect(deduped.rows.find((r) => r.who === 'b')!.__ingest_ts).toBe(ts1b)
    expect(deduped.rows.find((r) => r.who === 'py-tie')!.__ingest_ts).toBe(ts3c)
    expect(deduped.rows.find((r) => r.who === 'py-null')!.__ingest_ts).toBeNull()
    const snap = deduped.snapshots.at(-1)!
    expect(snap.operation).toBe('overwrite')
    expect(snap.summary).toMatchObject({ 'lakehousebox.dedupe.sink': sink.id, 'lakehousebox.dedupe.rows_removed': '6', 'deleted-records': expect.any(String) })
    expect(deduped.snapshots).toHaveLength(keyed.snapshots.length + 1)

    // dedupe.last: rows removed 6 (1: a1, a2, py-old; 3: b, c; 5: e1); files: the first roll's (rewritten
    // by the keyed roll: 1, 1, 5, 5 → 5/e2), the second's (1/b kept), the foreign one (1/py-old out)
    // rewritten; the third's (3/c) dropped.
    const after = await view(sink)
    expect(after.dedupe.requested_at).toBeNull()
    expect(after.dedupe.last).toMatchObject({
      rows_removed: 6,
      files_rewritten: 3,
      files_dropped: 1,
      snapshot_id: String(snap.snapshot_id),
      at: expect.any(String),
    })

    // Within the hour: 409 dedupe_too_soon, with a Retry-After.
    const soon = await askDedupe(sink)
    expect([soon.status, soon.body?.error?.code]).toEqual([409, 'dedupe_too_soon'])
    expect(Number(soon.headers.get('retry-after'))).toBeGreaterThan(3500)
  })

  // A copy-on-write rewrite keeps its source's data sequence number (iceberg/transaction/replace.ts), so
  // the row a keyed roll carried over still counts as of the first commit: the later commit wins the tie.
  it('a tie between a row of a file a keyed roll rewrote and a row committed after the original: the later commit wins', async () => {
    const sink = await newSink(stack().adminKey, { tableSpec: { columns: cols } })
    const wh = { sql: whId }
    await sendOk(sink, [
      { x: 1, who: 'first commit' },
      { x: 9, who: 'v1' },
    ])
    await tick(sink.id)
    const first = await filesScan(wh, sink.table)
    const ts = first.rows.find((r: any) => Number(r.x) === 1)!.__ingest_ts
    const [original] = first.files
    await pyAppend(wh, sink.table, [{ x: 1, who: 'later commit', __ingest_ts: ts }])
    expect((await call(`/v1/sinks/${sink.id}`, { method: 'PATCH', key: stack().adminKey, json: { key: ['x'] } })).status).toBe(200)
    // The keyed roll replaces 9: the first file is rewritten (its 1 kept, in a file of a newer commit).
    await sendOk(sink, [{ x: 9, who: 'v2' }])
    await tick(sink.id)
    // PyIceberg reads the rewritten file with the first roll's data sequence number and the keyed
    // roll's file sequence number; the keyed roll's own rows and the foreign append keep theirs.
    const keyed = await filesScan(wh, sink.table)
    const keyedSeq = keyed.snapshots.find((s: any) => s.snapshot_id === keyed.current_snapshot_id).sequence_number
    const seqs = keyed.files.map((f: any) => [f.record_count, f.sequence_number, f.file_sequence_number]).sort((a: any, b: any) => (a[1] < b[1] ? -1 : 1))
    expect(seqs).toEqual([
      [1n, original.sequence_number, keyedSeq], // the rewrite: 1/first commit
      [1n, original.sequence_number + 1n, original.sequence_number + 1n], // the foreign append
      [1n, keyedSeq, keyedSeq], // the roll's 9/v2
    ])
    expect((await askDedupe(sink)).status).toBe(202)
    await tick(sink.id)
    const s = await scan(wh, sink.table)
    expect(pairs(s.rows)).toEqual([
      [1, 'later commit'],
      [9, 'v2'],
    ])
  })

  it('`lhbox sink dedupe <sink> --wait` waits while a tick runs, then prints the result', { timeout: 180_000 }, async () => {
    const sink = await newSink(stack().adminKey, { tableSpec: { columns: cols }, sink: { key: ['x'] } })
    const wh = { sql: whId }
    await sendOk(sink, [
      { x: 1, who: 'roll' },
      { x: 2, who: 'roll' },
    ])
    await tick(sink.id)
    await pyAppend(wh, sink.table, [
      { x: 1, who: 'py' },
      { x: 3, who: 'py' },
    ])

    const cli = lhboxDedupeWait(sink)
    // Requested, and the CLI still waiting, until the tick runs the dedupe.
    expect(await poll(async () => (await view(sink)).dedupe.requested_at !== null, 10_000)).toBe(true)
    await poll(async () => cli.stderr().includes('waiting for the roller'), 30_000, 'the CLI saying it waits')
    expect(cli.child.exitCode).toBeNull()
    await tick(sink.id)
    const { code, stdout, stderr } = await cli.done
    expect(code, stdout + stderr).toBe(0)
    expect(stdout).toContain(`dedupe of sink ${sink.name} done`)
    expect(stdout).toContain('rows_removed=1')
    expect(stdout).toContain('files_rewritten=1')

    const s = await scan(wh, sink.table)
    expect(pairs(s.rows)).toEqual([
      [1, 'roll'],
      [2, 'roll'],
      [3, 'py'],
    ])
    expect((await view(sink)).dedupe).toMatchObject({ requested_at: null, last: { rows_removed: 1 } })
  })

  it('a dedupe the roller cannot run: dedupe.last says why not, and `--wait` prints it', async () => {
    const sink = await newSink(stack().adminKey, { tableSpec: { columns: cols }, sink: { key: ['x'] } })
    await sendOk(sink, [{ x: 1, who: 'roll' }])
    await tick(sink.id)
    // Partitioned by another writer (a key needs an unpartitioned table).
    const config = loadConfig(rollerEnv({ LHBOX_ROLLER_ID: `kdedupe-part-${uid()}` }))
    const warehouses = new Warehouses(config, jsonLogger())
    try {
      const catalog = warehouses.catalog((await new EdgeApi(config).view()).find((v) => v.id === sink.id)!)
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
    } finally {
      await warehouses.close()
    }
    const cli = lhboxDedupeWait(sink)
    expect(await poll(async () => (await view(sink)).dedupe.requested_at !== null, 10_000)).toBe(true)
    await tick(sink.id)
    const { code, stderr } = await cli.done
    // A refused dedupe is a failure for `--wait`: the code and the reason, exit 1.
    expect(code).toBe(1)
    expect(stderr).toMatch(/^error: dedupe_failed: .*refused=upsert_table_unsupported/m)
    const v = await view(sink)
    expect(v.dedupe).toMatchObject({ requested_at: null, last: { refused: 'upsert_table_unsupported', message: expect.any(String), at: expect.any(String) } })
    expect(v).toMatchObject({ state: 'disabled', disabled_reason: 'upsert_table_unsupported' })
  })

  it('refused past the limits (lowered): too_large (bytes of the files it would rewrite), too_many_rows; nothing committed', async () => {
    const sink = await newSink(stack().adminKey, { tableSpec: { columns: cols }, sink: { key: ['x'] } })
    const wh = { sql: whId }
    await sendOk(sink, [
      { x: 1, who: 'roll' },
      { x: 2, who: 'roll' },
    ])
    await tick(sink.id)
    // PyIceberg's rows carry no __ingest_ts: the roll's rows win. Its file keeps x=3, so it is rewritten.
    await pyAppend(wh, sink.table, [
      { x: 1, who: 'py' },
      { x: 3, who: 'py' },
    ])
    const before = await scan(wh, sink.table)

    const config = loadConfig(rollerEnv({ LHBOX_ROLLER_ID: `kdedupe-limits-${uid()}` }))
    const warehouses = new Warehouses(config, jsonLogger())
    try {
      const view = (await new EdgeApi(config).view()).find((v) => v.id === sink.id)!
      expect(view.key).toEqual(['x'])
      const catalog = warehouses.catalog(view)
      const compression = await loadZstd()
      const big = await dedupeTable(view, catalog, { rollId: `t-${uid()}`, compression, maxBytes: 100 })
      expect(big).toMatchObject({ refused: 'too_large', message: expect.stringContaining('to rewrite, past the 100-byte limit') })
      const many = await dedupeTable(view, catalog, { rollId: `t-${uid()}`, compression, maxRows: 3 })
      expect(many).toMatchObject({ refused: 'too_many_rows', message: expect.stringContaining('4 rows') })
      expect((await scan(wh, sink.table)).snapshots).toHaveLength(before.snapshots.length)
      // At the limits exactly: done.
      const ok = await dedupeTable(view, catalog, { rollId: `t-${uid()}`, compression, maxRows: 4 })
      expect(ok).toMatchObject({ rows_removed: 1, files_dropped: 0, files_rewritten: 1 })
      expect(pairs((await scan(wh, sink.table)).rows)).toEqual([
        [1, 'roll'],
        [2, 'roll'],
        [3, 'py'],
      ])

      // A table far over the byte limit whose dedupe only drops a file (every row of it lost): not refused.
      await pyAppend(wh, sink.table, [{ x: 2, who: 'py again' }])
      const dropOnly = await dedupeTable(view, catalog, { rollId: `t-${uid()}`, compression, maxBytes: 1 })
      expect(dropOnly).toMatchObject({ rows_removed: 1, files_dropped: 1, files_rewritten: 0 })
      expect(pairs((await scan(wh, sink.table)).rows)).toEqual([
        [1, 'roll'],
        [2, 'roll'],
        [3, 'py'],
      ])
    } finally {
      await warehouses.close()
    }
  })
})
