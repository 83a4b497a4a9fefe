// Faults (issue 5, "Done when": "Faults"): an HTTP proxy in front of the real S3 server fails the
// roller's deletes, lists, marker reads and data-file uploads; a proxy in front of a real Iceberg
// REST catalog answers its commits 409 or 503. Each time: the tick ends or recovers as the spec
// says, lag grows rather than a row being doubled, and the next healthy tick catches up. Every
// table is read back with PyIceberg.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePorts } from '../support/ports.ts'
import { startRestCatalog, type RestCatalogServer } from '../../dev/rest-catalog.ts'
import { startFaultProxy, type FaultAction, type FaultProxy } from '../support/fault-proxy.ts'
import { ensureVenv } from '../support/python.ts'
import { expectExactlyOnce, ledgerStates, proxiedWarehouse, rowsOf, scan, sinkSnapshots, type PyCatalog } from '../support/roller-check.ts'
import { rollerTick, tickInProcess, type TickResult } from '../support/roller.ts'
import { bucket, createTable, database, intakeObjects, newSink, send, uid, type Sink } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

let db: pg.Client
let proxy: FaultProxy
let proxied: { name: string; id: string }

beforeAll(async () => {
  await ensureVenv()
  db = await database()
  proxy = await startFaultProxy(stack().s3.endpoint)
  proxied = await proxiedWarehouse(proxy.url)
}, 15 * 60_000)

afterAll(async () => {
  await db?.end()
  await proxy?.stop()
})

// One roller id per sink: a tick that ends keeps its lease (no report), so the next tick is the same
// roller coming back, as `run` does every 10 s; another roller would wait out the lease.
type TestSink = Sink & { catalog: PyCatalog; rollerId: string }
// A kill needs the roller in a child process; any other tick runs in this one.
const tick = (sink: TestSink, killAt?: string) =>
  killAt ? rollerTick({ sink: sink.id, rollerId: sink.rollerId, killAt }) : tickInProcess({ sink: sink.id, rollerId: sink.rollerId })

async function sinkOn(warehouse: string, catalog: PyCatalog, namespace?: string): Promise<TestSink> {
  const key = stack().adminKey
  const table = await createTable(key, { warehouse, namespace })
  return { ...(await newSink(key, { table, sink: { warehouse } })), catalog, rollerId: `roller-${uid()}` }
}

async function sendRows(sink: Sink, batches: Array<[string, unknown[]]>): Promise<void> {
  for (const [id, rows] of batches) expect((await send(sink, rows, { batchId: id })).status).toBe(202)
}

const logged = (t: TickResult, msg: RegExp) => t.logs.filter((l) => msg.test(`${l.msg} ${l.error ?? ''}`))
const batchObjects = async (sinkId: string) => (await intakeObjects(sinkId)).filter((k) => !k.includes('/rejects/'))
const lag = async (sinkId: string) => (await call(`/v1/sinks/${sinkId}`, { key: stack().adminKey })).body.lag
const s3Error = (code: string, status: number): FaultAction => ({
  status,
  body: `<?xml version="1.0"?><Error><Code>${code}</Code><Message>injected</Message></Error>`,
})
const B = () => stack().s3.bucket
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** Healthy again: the next tick catches up, every row once, the ledger committed, the intake empty. */
async function healthyTick(sink: TestSink, expected: number[], snapshots: number): Promise<TickResult> {
  proxy.heal()
  const t = await tick(sink)
  expect(t.code, t.stdout).toBe(0)
  const s = await scan(sink.catalog, sink.table)
  expectExactlyOnce(s, expected)
  expect(sinkSnapshots(s, sink.id)).toHaveLength(snapshots)
  expect(Object.values(await ledgerStates(db, sink.id)).every((st) => st === 'committed')).toBe(true)
  expect(await batchObjects(sink.id)).toEqual([])
  expect((await lag(sink.id)).batches_waiting).toBe(0)
  return t
}

describe('S3 faults through a proxy in front of the S3 server', { timeout: 120_000 }, () => {
  it('failing deletes: the committed roll stays once, the next tick ends at the repair, lag grows; healthy, it repairs and catches up', async () => {
    const sink = await sinkOn(proxied.name, { sql: proxied.id })
    await sendRows(sink, [
      ['a', rowsOf(1, 2)],
      ['b', rowsOf(3, 2)],
    ])
    // Step 7 deletes a roll's batches with one DeleteObjects request; step 2's repair deletes them one by one.
    const batchDeletes = proxy.rule({
      method: 'POST',
      path: new RegExp(`^/${B()}\\?delete`),
      body: new RegExp(`_sink/${sink.id}/[^<]+\\.ndjson`),
      action: s3Error('InternalError', 500),
    })
    const deletes = proxy.rule({ method: 'DELETE', path: new RegExp(`^/${B()}/_sink/${sink.id}/[^/]+\\.ndjson$`), action: s3Error('InternalError', 500) })

    const first = await tick(sink)
    expect(first.code).toBe(1) // committed, then its step-7 delete failed: no report
    expect(batchDeletes.matched).toBeGreaterThan(0)
    // Ended, not failed: the rows are in, and the sink shows no roll error.
    expect(logged(first, /^tick ended; the sink waits for the next one committed \(snapshot \d+\); deleting its batches failed/)).toHaveLength(1)
    expect(logged(first, /^roll failed/)).toEqual([])
    expect((await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })).body.last_error ?? null).toBeNull()
    let s = await scan(sink.catalog, sink.table)
    expectExactlyOnce(s, [1, 2, 3, 4])
    expect(sinkSnapshots(s, sink.id)).toHaveLength(1)
    expect(await ledgerStates(db, sink.id)).toEqual({ a: 'pending', b: 'pending' })
    expect((await batchObjects(sink.id)).filter((k) => k.includes('/committed/'))).toHaveLength(1) // the marker stays

    await sendRows(sink, [['c', rowsOf(5, 2)]])
    deletes.action = 'drop' // now the connection drops (each of its four tries)
    const second = await tick(sink)
    expect(second.code).toBe(1)
    expect(logged(second, /cannot delete consumed batch/)).toHaveLength(1)
    s = await scan(sink.catalog, sink.table)
    expectExactlyOnce(s, [1, 2, 3, 4]) // c waits: nothing new is committed before the repair
    expect(sinkSnapshots(s, sink.id)).toHaveLength(1)
    expect((await lag(sink.id)).batches_waiting).toBe(3)

    const healed = await healthyTick(sink, [1, 2, 3, 4, 5, 6], 2)
    expect(
      logged(healed, /repaired a consumed batch/)
        .map((l) => l.batch_id)
        .sort(),
    ).toEqual(['a', 'b'])
  })

  it('failing list: the tick ends before anything is committed; the next healthy tick commits once', async () => {
    const sink = await sinkOn(proxied.name, { sql: proxied.id })
    await sendRows(sink, [['a', rowsOf(1, 3)]])
    const list = proxy.rule({ method: 'GET', path: new RegExp(`^/${B()}\\?.*prefix=_sink%2F${sink.id}%2F`), action: s3Error('InternalError', 500) })
    const t = await tick(sink)
    expect(t.code).toBe(1)
    expect(list.matched).toBeGreaterThan(0)
    expect(logged(t, /cannot list the intake/)).toHaveLength(1)
    const s = await scan(sink.catalog, sink.table)
    expect(s.snapshots).toEqual([])
    expect(s.properties['write.metadata.previous-versions-max']).toBeUndefined() // not even the first-roll changes
    expect((await lag(sink.id)).batches_waiting).toBe(1)
    await healthyTick(sink, [1, 2, 3], 1)
  })

  it('an unreadable marker ends the tick: nothing rolled, lag grows; once it is gone, the batches roll once', async () => {
    const sink = await sinkOn(proxied.name, { sql: proxied.id })
    await sendRows(sink, [
      ['a', rowsOf(1, 2)],
      ['b', rowsOf(3, 2)],
    ])
    const garbage = `_sink/${sink.id}/committed/x.parquet.json`
    await bucket().put(garbage, 'not a marker {', { contentType: 'application/json' }) // straight to the S3 server
    const t = await tick(sink)
    expect(t.code).toBe(1)
    expect(logged(t, /is unreadable/)).toHaveLength(1)
    expect((await scan(sink.catalog, sink.table)).snapshots).toEqual([])
    expect((await lag(sink.id)).batches_waiting).toBe(2)
    await bucket().delete(garbage) // an operator removes it
    await healthyTick(sink, [1, 2, 3, 4], 1)
  })

  it('a marker that cannot be read (connection dropped) after a crash ends the tick; healthy, the batch is repaired, not rolled again', async () => {
    const sink = await sinkOn(proxied.name, { sql: proxied.id })
    await sendRows(sink, [['a', rowsOf(1, 2)]])
    const killed = await tick(sink, 'marker')
    expect(killed.signal).toBe('SIGKILL')
    expect(await batchObjects(sink.id)).toHaveLength(2) // the batch and its marker
    const reads = proxy.rule({ method: 'GET', path: new RegExp(`^/${B()}/_sink/${sink.id}/committed/`), action: 'drop' })
    const t = await tick(sink)
    expect(t.code).toBe(1)
    expect(reads.matched).toBeGreaterThan(0)
    expect(logged(t, /cannot be read/)).toHaveLength(1)
    expect(sinkSnapshots(await scan(sink.catalog, sink.table), sink.id)).toHaveLength(1)
    const healed = await healthyTick(sink, [1, 2], 1)
    expect(logged(healed, /repaired a consumed batch/)).toHaveLength(1)
  })

  it('the store refuses the data file for quota: the batches wait, the sink shows quota_exceeded, lag grows; healthy, it rolls once', async () => {
    const sink = await sinkOn(proxied.name, { sql: proxied.id })
    await sendRows(sink, [['a', rowsOf(1, 3)]])
    const [ns, name] = sink.table.split('.')
    const put = proxy.rule({
      method: 'PUT',
      path: new RegExp(`^/${B()}/(?:[^?]*/)?${ns}/${name}/data/[^?]*\\.parquet$`),
      action: s3Error('QuotaExceeded', 403),
    })
    const t = await tick(sink)
    expect(t.code).toBe(1)
    expect(put.matched).toBeGreaterThan(0)
    expect(logged(t, /roll failed/)[0]).toMatchObject({ code: 'quota_exceeded' })
    const view = (await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })).body
    expect(view.last_error).toMatchObject({ code: 'quota_exceeded', at: expect.any(String) })
    expect(view.state).toBe('active')
    expect(view.lag.batches_waiting).toBe(1)
    // The gauge the sink_lag alert reads (roller/alerts.yml) keeps the waiting batch's age.
    expect(t.metrics).toMatch(new RegExp(`lhbox_sink_lag_seconds\\{sink="${sink.id}"\\} [0-9.]+`))
    expect(sinkSnapshots(await scan(sink.catalog, sink.table), sink.id)).toEqual([])
    await healthyTick(sink, [1, 2, 3], 1)
    expect((await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })).body.last_error).toBeNull()
  })

  it('a failing PUT of the data file (503): nothing is committed; the next tick commits once', async () => {
    const action = s3Error('ServiceUnavailable', 503)
    const sink = await sinkOn(proxied.name, { sql: proxied.id })
    await sendRows(sink, [
      ['a', rowsOf(1, 2)],
      ['b', rowsOf(3, 2)],
    ])
    const [ns, name] = sink.table.split('.')
    const put = proxy.rule({ method: 'PUT', path: new RegExp(`^/${B()}/(?:[^?]*/)?${ns}/${name}/data/[^?]*\\.parquet$`), action })
    const t = await tick(sink)
    expect(t.code).toBe(1)
    expect(put.matched).toBeGreaterThan(0)
    const s = await scan(sink.catalog, sink.table)
    expect(sinkSnapshots(s, sink.id)).toEqual([])
    expect(s.rows).toEqual([])
    expect((await batchObjects(sink.id)).sort()).toEqual([`_sink/${sink.id}/a.ndjson`, `_sink/${sink.id}/b.ndjson`]) // no marker
    expect((await lag(sink.id)).batches_waiting).toBe(2)
    await healthyTick(sink, [1, 2, 3, 4], 1)
  })
})

describe('catalog faults through a proxy in front of an Iceberg REST catalog', { timeout: 120_000 }, () => {
  let dir: string
  let fixture: RestCatalogServer
  let catalogProxy: FaultProxy
  let warehouse: string

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'lhbox-roller-faults-'))
    fixture = await startRestCatalog(join(dir, 'rest'), (await freePorts(1))[0], stack().s3, `s3://${stack().s3.bucket}/rest-faults-${uid()}`)
    catalogProxy = await startFaultProxy(fixture.uri)
    warehouse = `rest-${uid()}`
    const res = await call('/v1/warehouses', {
      key: stack().adminKey,
      json: { name: warehouse, catalog: { type: 'rest', uri: catalogProxy.url }, bucket: stack().s3.bucket },
    })
    expect(res.status, res.text).toBe(201)
  }, 180_000)

  afterAll(async () => {
    await catalogProxy?.stop()
    await fixture?.child.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  /** A sink on a fresh REST table, with a rule on the append commit of that table only. */
  async function restSink(action: FaultAction, times?: number) {
    const sink = await sinkOn(warehouse, { rest: fixture.uri }, `rf_${uid()}`)
    await sendRows(sink, [
      ['a', rowsOf(1, 2)],
      ['b', rowsOf(3, 2)],
    ])
    const [ns, name] = sink.table.split('.')
    const commitPath = new RegExp(`^/v1/namespaces/${escapeRegExp(ns)}/tables/${escapeRegExp(name)}$`)
    const rule = catalogProxy.rule({ method: 'POST', path: commitPath, body: /add-snapshot/, action, times })
    return { sink, rule, commits: () => catalogProxy.count('POST', commitPath) }
  }

  const restError = (status: number, type: string) => ({
    status,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ error: { message: 'injected', type, code: status } }),
  })

  it('409 once: the commit is retried on a fresh base and lands once', async () => {
    const { sink, rule, commits } = await restSink(restError(409, 'CommitFailedException'), 1)
    const t = await healthyTick(sink, [1, 2, 3, 4], 1)
    expect(rule.matched).toBe(1)
    expect(commits()).toBeGreaterThanOrEqual(3) // first-roll changes, the refused append, its retry
    expect(logged(t, /^rolled/)).toHaveLength(1)
  })

  it('503 after the catalog committed: the roller reloads, finds its snapshot, and reports it once', async () => {
    const { sink, rule } = await restSink({ ...restError(503, 'ServiceUnavailableException'), forward: true }, 1)
    const t = await tick(sink)
    expect(t.code, t.stdout).toBe(0)
    expect(rule.matched).toBe(1)
    expect(logged(t, /commit outcome was unknown; found it in the table/)).toHaveLength(1)
    const s = await scan(sink.catalog, sink.table)
    expectExactlyOnce(s, [1, 2, 3, 4])
    expect(sinkSnapshots(s, sink.id)).toHaveLength(1)
    expect(await ledgerStates(db, sink.id)).toEqual({ a: 'committed', b: 'committed' })
    expect(await batchObjects(sink.id)).toEqual([])
  })

  it('503 before the catalog committed: the tick ends without a blind retry; the next tick commits once', async () => {
    const { sink, rule, commits } = await restSink(restError(503, 'ServiceUnavailableException'), 1)
    const t = await tick(sink)
    expect(t.code).toBe(1)
    expect(rule.matched).toBe(1)
    expect(logged(t, /the table does not hold it/)).toHaveLength(1)
    const appends = commits()
    const s = await scan(sink.catalog, sink.table)
    expect(sinkSnapshots(s, sink.id)).toEqual([])
    expect((await lag(sink.id)).batches_waiting).toBe(2)
    catalogProxy.heal()
    await healthyTick(sink, [1, 2, 3, 4], 1)
    expect(commits()).toBe(appends + 1)
  })
})
