// Races and unknowns of the roll (issue 5, "Done when": "Plus: ..."): two rollers on one sink, a
// PyIceberg append landing during a roll, a marker outliving the expired snapshot history, and a
// batch id replayed after its ledger row was pruned. Exactly-once is checked with PyIceberg.
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts'
import { ensureVenv } from '../support/python.ts'
import {
  expectExactlyOnce,
  ledgerStates,
  proxiedWarehouse,
  pyAppend,
  pyExpireAllButCurrent,
  rowsOf,
  scan,
  sinkSnapshots,
  warehouseId,
  type PyCatalog,
} from '../support/roller-check.ts'
import { inProcessRoller, rollerTick, type TickResult } from '../support/roller.ts'
import { bucket, createTable, database, intakeKey, intakeObjects, newSink, poll, send, type Sink } from '../support/sinks.ts'
import { stack } from '../support/stack.ts'

let db: pg.Client
let proxy: FaultProxy
let proxied: { name: string; id: string }
let stackWarehouseId: string

beforeAll(async () => {
  await ensureVenv()
  db = await database()
  proxy = await startFaultProxy(stack().s3.endpoint)
  proxied = await proxiedWarehouse(proxy.url)
  stackWarehouseId = await warehouseId(stack().warehouse)
}, 15 * 60_000)

afterAll(async () => {
  await db?.end()
  await proxy?.stop()
})

/** A table and a sink on it, in the admin project, on the stack's warehouse or the proxied one. */
async function sinkOn(warehouse: string): Promise<Sink & { catalog: PyCatalog }> {
  const key = stack().adminKey
  const table = await createTable(key, { warehouse })
  const sink = await newSink(key, { table, sink: { warehouse } })
  return { ...sink, catalog: { sql: warehouse === proxied.name ? proxied.id : stackWarehouseId } }
}

async function sendRows(sink: Sink, batches: Array<{ id: string; rows: unknown[] }>): Promise<void> {
  for (const b of batches) expect((await send(sink, b.rows, { batchId: b.id })).status).toBe(202)
}

const logged = (t: TickResult, msg: string | RegExp) =>
  t.logs.filter((l) => (typeof msg === 'string' ? l.msg === msg : msg.test(String(l.msg) + ' ' + String(l.error ?? ''))))
const batchObjects = async (sinkId: string) => (await intakeObjects(sinkId)).filter((k) => !k.includes('/rejects/'))
const dataPut = (table: string) => new RegExp(`^/${stack().s3.bucket}/(?:[^?]*/)?${table.replace('.', '/')}/data/[^?]*\\.parquet$`)

/** A gate a proxy rule holds requests on until it is opened. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void
  const wait = new Promise<void>((r) => (open = r))
  return { wait, open }
}

describe('two rollers on one sink', () => {
  it('ticking at once (both forced, leases in place): the rows are committed exactly once', async () => {
    const sink = await sinkOn(stack().warehouse)
    await sendRows(sink, [
      { id: 'a', rows: rowsOf(1, 2) },
      { id: 'b', rows: rowsOf(3, 2) },
      { id: 'c', rows: rowsOf(5, 2) },
    ])
    const [one, two] = await Promise.all([rollerTick({ sink: sink.id, rollerId: 'race-one' }), rollerTick({ sink: sink.id, rollerId: 'race-two' })])
    expect([one.signal, two.signal]).toEqual([null, null])
    const s = await scan(sink.catalog, sink.table)
    expectExactlyOnce(s, [1, 2, 3, 4, 5, 6])
    expect(sinkSnapshots(s, sink.id)).toHaveLength(1)
    expect(await ledgerStates(db, sink.id)).toEqual({ a: 'committed', b: 'committed', c: 'committed' })
    expect(await batchObjects(sink.id)).toEqual([])
  })

  it('lease expired under a roller held in its data-file upload: the other rolls, the first commits nothing', async () => {
    const sink = await sinkOn(proxied.name)
    await sendRows(sink, [
      { id: 'a', rows: rowsOf(1, 3) },
      { id: 'b', rows: rowsOf(4, 3) },
    ])
    const held = gate()
    const rule = proxy.rule({ method: 'PUT', path: dataPut(sink.table), action: { delay: held.wait }, times: 1 })
    try {
      const first = rollerTick({ sink: sink.id, rollerId: 'slow-one' })
      expect(await poll(async () => rule.matched === 1, 30_000)).toBe(true)
      await db.query(`update sinks set lease_expires_at = now() - interval '1 second' where id = $1`, [sink.id])
      const second = await rollerTick({ sink: sink.id, rollerId: 'fast-two' })
      expect(second.code).toBe(0)
      expect(logged(second, 'rolled')).toHaveLength(1)
      held.open()
      const slow = await first
      // the slow roller's commit conflicts, its recheck finds the other's snapshot: it commits nothing
      expect(slow.code).toBe(1)
      expect(logged(slow, /already holds batch/)).toHaveLength(1)
    } finally {
      held.open()
      proxy.heal(rule)
    }
    const s = await scan(sink.catalog, sink.table)
    expectExactlyOnce(s, [1, 2, 3, 4, 5, 6])
    expect(sinkSnapshots(s, sink.id)).toHaveLength(1)
    expect(await ledgerStates(db, sink.id)).toEqual({ a: 'committed', b: 'committed' })
    expect(await batchObjects(sink.id)).toEqual([])
    // a third tick finds nothing to do
    const third = await rollerTick({ sink: sink.id })
    expect(third.code).toBe(0)
    expect(sinkSnapshots(await scan(sink.catalog, sink.table), sink.id)).toHaveLength(1)
  })
})

it('PyIceberg appends while a roll uploads its data file: the roll re-commits on the new base, both are present once', async () => {
  const sink = await sinkOn(proxied.name)
  await sendRows(sink, [
    { id: 'a', rows: rowsOf(1, 2) },
    { id: 'b', rows: rowsOf(3, 2) },
  ])
  const held = gate()
  const rule = proxy.rule({ method: 'PUT', path: dataPut(sink.table), action: { delay: held.wait }, times: 1 })
  let tick: TickResult
  let pySnapshot: bigint
  try {
    const rolling = rollerTick({ sink: sink.id })
    expect(await poll(async () => rule.matched === 1, 30_000)).toBe(true)
    pySnapshot = await pyAppend(sink.catalog, sink.table, [{ x: 100, who: 'pyiceberg' }])
    held.open()
    tick = await rolling
  } finally {
    held.open()
    proxy.heal(rule)
  }
  expect(tick.code).toBe(0)
  const s = await scan(sink.catalog, sink.table)
  expectExactlyOnce(s, [1, 2, 3, 4, 100])
  const ours = sinkSnapshots(s, sink.id)
  expect(ours).toHaveLength(1)
  expect(ours[0].parent).toBe(pySnapshot) // committed on PyIceberg's snapshot, not beside it
  expect(ours[0].summary['lakehousebox.sink.batches'].split(',').sort()).toEqual(['a', 'b'])
  expect(s.snapshots).toHaveLength(2)
  expect(await ledgerStates(db, sink.id)).toEqual({ a: 'committed', b: 'committed' })
})

it('the snapshot history expired while a marker remains: the marker keeps the batches consumed', async () => {
  const sink = await sinkOn(stack().warehouse)
  await sendRows(sink, [
    { id: 'a', rows: rowsOf(1, 2) },
    { id: 'b', rows: rowsOf(3, 2) },
  ])
  const s3 = bucket()
  const saved = await Promise.all(['a', 'b'].map(async (id) => ({ key: intakeKey(sink.id, id), got: (await s3.get(intakeKey(sink.id, id)))! })))
  // killed after the batch deletes, before the marker delete and the report (restarted under the
  // same roller id below: the dead roller's lease is still held)
  const killed = await rollerTick({ sink: sink.id, killAt: 'batch-delete', rollerId: 'marker-roller' })
  expect(killed.signal).toBe('SIGKILL')
  const left = await batchObjects(sink.id)
  expect(left).toHaveLength(1)
  expect(left[0]).toMatch(new RegExp(`^_sink/${sink.id}/committed/.*\\.parquet\\.json$`))

  // the tenant writes, and the history naming the batches is expired (maintenance past 20 snapshots)
  await pyAppend(sink.catalog, sink.table, [{ x: 50, who: 'tenant' }])
  const expired = await pyExpireAllButCurrent(sink.catalog, sink.table)
  expect(expired.snapshots).toHaveLength(1)
  let s = await scan(sink.catalog, sink.table)
  expect(sinkSnapshots(s, sink.id)).toEqual([])
  expectExactlyOnce(s, [1, 2, 3, 4, 50])

  // the batch objects come back as if their deletes had failed, with their original metadata
  for (const { key, got } of saved) await s3.put(key, got.body, { contentType: 'application/x-ndjson', metadata: got.head.metadata })
  const tick = await rollerTick({ sink: sink.id, rollerId: 'marker-roller' })
  expect(tick.code).toBe(0)
  expect(
    logged(tick, 'repaired a consumed batch')
      .map((l) => [l.batch_id, l.source])
      .sort(),
  ).toEqual([
    ['a', 'marker'],
    ['b', 'marker'],
  ])
  s = await scan(sink.catalog, sink.table)
  expectExactlyOnce(s, [1, 2, 3, 4, 50])
  expect(await ledgerStates(db, sink.id)).toEqual({ a: 'committed', b: 'committed' })
  expect(await batchObjects(sink.id)).toEqual([]) // the marker too, once the repair was reported
})

describe('a batch id replayed after its ledger row was pruned', () => {
  it('is accepted again (202, a new received_at); rolled again once the history no longer names it', async () => {
    const sink = await sinkOn(stack().warehouse)
    const rows = rowsOf(1, 2)
    const first = await send(sink, rows, { batchId: 'again' })
    expect(first.status).toBe(202)
    expect((await rollerTick({ sink: sink.id })).code).toBe(0)
    expectExactlyOnce(await scan(sink.catalog, sink.table), [1, 2])

    // pruned (7 days after commit), then replayed: the intake takes it as a new send
    await db.query('delete from batches where sink_id = $1 and batch_id = $2', [sink.id, 'again'])
    const replay = await send(sink, rows, { batchId: 'again' })
    expect(replay.status).toBe(202)
    expect(replay.body.duplicate).toBeUndefined()
    expect(Date.parse(replay.body.received_at)).toBeGreaterThan(Date.parse(first.body.received_at))

    // while a retained snapshot names the id and the replay is within its 1 h of tolerance, it counts as
    // consumed (spec "Exactly once"); a real replay comes 7 days later, past the retained history
    const within = await rollerTick({ sink: sink.id })
    expect(within.code).toBe(0)
    expect(logged(within, 'repaired a consumed batch')).toHaveLength(1)
    expectExactlyOnce(await scan(sink.catalog, sink.table), [1, 2])
    expect(await ledgerStates(db, sink.id)).toEqual({ again: 'committed' })

    // pruned and replayed again, now with the history expired as it is after 7 days
    await db.query('delete from batches where sink_id = $1 and batch_id = $2', [sink.id, 'again'])
    expect((await send(sink, rows, { batchId: 'again' })).status).toBe(202)
    await pyAppend(sink.catalog, sink.table, [{ x: 50, who: 'tenant' }])
    await pyExpireAllButCurrent(sink.catalog, sink.table)
    const later = await rollerTick({ sink: sink.id })
    expect(later.code).toBe(0)
    const s = await scan(sink.catalog, sink.table)
    expect(s.rows.map((r) => Number(r.x))).toEqual([1, 1, 2, 2, 50]) // stored twice, as the spec says
    expect(sinkSnapshots(s, sink.id)).toHaveLength(1)
    expect(await ledgerStates(db, sink.id)).toEqual({ again: 'committed' })
    expect(await batchObjects(sink.id)).toEqual([])
  })
})

// Found by the chaos test (rollers-chaos): a roll whose first-roll commit met a conflict went on from
// the fresher table it committed on, which already held another roll of its batch, and appended it
// again — the append re-checked only after a conflict of its own. Two rolls of one sink, the first
// held after reading the table while the second commits the batch.
describe('a roll whose first-roll commit lands after another roll committed its batch', () => {
  it('commits nothing: the batch is in the table once', { timeout: 120_000 }, async () => {
    const sink = await newSink(stack().adminKey)
    expect((await send(sink, '[{"x": 1}]', { batchId: 'b1' })).status).toBe(202)
    const gate = () => {
      let open: () => void = () => {}
      const passed = new Promise<void>((r) => {
        open = r
      })
      return { passed, open }
    }
    const [xRead, xGo, yCommitted, yGo] = [gate(), gate(), gate(), gate()]
    // One lease owner for both (a roller restarted while its old process still runs): no lease keeps them apart.
    const owner = `race-${sink.id}`
    const x = inProcessRoller({ LHBOX_ROLLER_ID: owner }, async (name) => {
      if (name !== 'reload') return
      xRead.open()
      await xGo.passed
    })
    const y = inProcessRoller({ LHBOX_ROLLER_ID: owner }, async (name) => {
      if (name !== 'commit') return
      yCommitted.open()
      await yGo.passed
    })
    try {
      const xTick = x.roller.tick({ sink: sink.id, force: true })
      await xRead.passed // x read the table: no snapshot yet, no __ingest_ts
      const yTick = y.roller.tick({ sink: sink.id, force: true })
      await yCommitted.passed // y added __ingest_ts and appended b1, and has not deleted it from the intake
      xGo.open()
      expect(await xTick).toEqual({ rolled: 0, failed: 1 })
      expect(x.logs.find((l) => l.msg === 'tick ended; the sink waits for the next one')?.error).toMatch(/already holds batch/)
      yGo.open()
      expect(await yTick).toEqual({ rolled: 1, failed: 0 })
    } finally {
      xGo.open()
      yGo.open()
      await x.roller.close()
      await y.roller.close()
    }
    const s = await scan({ sql: stackWarehouseId }, sink.table)
    expectExactlyOnce(s, [1])
    expect(sinkSnapshots(s, sink.id).map((snap) => snap.summary['lakehousebox.sink.batches'])).toEqual(['b1'])
  })
})
