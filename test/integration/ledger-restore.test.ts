// The ledger lost or restored (issue 31, part 3). Exactly-once comes from recovery (the table's retained
// snapshots and the committed markers), not from the ledger: (a) a committed batch replayed after its
// ledger row is gone (pruned, or lost to a restore) is found in the retained snapshots and committed
// once when stored within the spec's 1 h of the roll that named it, and is a new batch, rolled again,
// when stored later; (b) the batches table restored to a copy from before some rolls: no row lost or
// doubled, lag and usage right after one tick. Rows are read back with PyIceberg.
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureVenv } from '../support/python.ts'
import { expectExactlyOnce, ledgerStates, rowsOf, scan, sinkSnapshots, warehouseId, type PyCatalog } from '../support/roller-check.ts'
import { rollerTick, type TickResult } from '../support/roller.ts'
import { bucket, createTable, database, intakeKey, intakeObjects, newSink, poll, send, type Sink } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

const HOUR = 3600_000
const DAY = 24 * HOUR

let db: pg.Client
let catalog: PyCatalog

beforeAll(async () => {
  await ensureVenv()
  db = await database()
  catalog = { sql: await warehouseId(stack().warehouse) }
}, 15 * 60_000)

afterAll(async () => {
  await db?.end()
})

async function sinkOf(): Promise<Sink> {
  const key = stack().adminKey
  return newSink(key, { table: await createTable(key, { warehouse: stack().warehouse }), sink: { warehouse: stack().warehouse } })
}

async function sendAll(sink: Sink, batches: Array<[string, unknown[]]>): Promise<void> {
  for (const [id, rows] of batches) {
    const res = await send(sink, rows, { batchId: id })
    expect(res.status, res.text).toBe(202)
  }
}

async function tick(sink: Sink): Promise<TickResult> {
  const t = await rollerTick({ sink: sink.id })
  expect(t.code, t.stderr).toBe(0)
  return t
}

/** The ledger rows' states, once the edge has marked the batches stored (it does so after answering). */
async function ledgerSettles(sink: Sink, want: Record<string, string>): Promise<void> {
  const sorted = (o: Record<string, string>) => JSON.stringify(Object.entries(o).sort())
  await poll(async () => sorted(await ledgerStates(db, sink.id)) === sorted(want), 15_000, `the ledger rows ${sorted(want)}`)
}

const repairs = (t: TickResult) => t.logs.filter((l) => l.msg === 'repaired a consumed batch').map((l) => l.batch_id)
const batchObjects = async (sinkId: string) => (await intakeObjects(sinkId)).filter((k) => !k.includes('/rejects/'))

/**
 * The intake object as the edge would have stored it `laterMs` from now: the same bytes and headers,
 * x-amz-meta-received moved on (no store lets a test set Last-Modified; the roller reads `received`).
 */
async function storedLater(sinkId: string, batchId: string, laterMs: number): Promise<void> {
  const s3 = bucket()
  const got = await s3.get(intakeKey(sinkId, batchId))
  if (!got) throw new Error(`no intake object for ${batchId}`)
  const received = new Date(Date.now() + laterMs).toISOString()
  await s3.put(intakeKey(sinkId, batchId), got.body, { contentType: got.head.contentType ?? undefined, metadata: { ...got.head.metadata, received } })
}

async function sinkView(sink: Sink): Promise<Record<string, any>> {
  const res = await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })
  expect(res.status).toBe(200)
  return res.body
}

async function usageOf(sinkId: string): Promise<Record<string, number> | undefined> {
  const res = await call('/v1/usage', { key: stack().adminKey })
  expect(res.status).toBe(200)
  const mine = res.body.ingest_bytes.by_sink.find((s: { sink_id: string }) => s.sink_id === sinkId)
  return mine && { batches: mine.batches, bytes: mine.bytes, rows_accepted: mine.rows_accepted, rows_rejected: mine.rows_rejected }
}

describe('(a) a committed batch replayed after its ledger row is gone', () => {
  // A replay the intake takes again (its ledger row pruned, or lost to a restore) and stores anew. The
  // spec ("Exactly once"): a batch is consumed when a retained snapshot names it and "the object was
  // stored before that snapshot, with 1 h of tolerance for clock skew" (roller/recovery.ts CLOCK_SKEW_MS).
  async function replayed(laterMs: number): Promise<{ sink: Sink; t: TickResult }> {
    const sink = await sinkOf()
    await sendAll(sink, [
      ['one', rowsOf(1, 2)],
      ['two', rowsOf(3, 2)],
    ])
    await tick(sink)
    expectExactlyOnce(await scan(catalog, sink.table), [1, 2, 3, 4])

    await db.query('delete from batches where sink_id = $1', [sink.id])
    await sendAll(sink, [
      ['one', rowsOf(1, 2)],
      ['two', rowsOf(3, 2)],
      ['three', rowsOf(5, 1)],
    ])
    if (laterMs > 0) for (const id of ['one', 'two', 'three']) await storedLater(sink.id, id, laterMs)
    // taken as new: pending again
    await ledgerSettles(sink, { one: 'pending', two: 'pending', three: 'pending' })
    return { sink, t: await tick(sink) }
  }

  it.each([
    ['at once', 0],
    ['50 min later', 50 * 60_000],
  ])('stored %s (within the 1 h): found in the retained snapshots, deleted and reported, committed once', { timeout: 120_000 }, async (_when, laterMs) => {
    const { sink, t } = await replayed(laterMs)
    expect(repairs(t).sort()).toEqual(['one', 'two'])
    const s = await scan(catalog, sink.table)
    expectExactlyOnce(s, [1, 2, 3, 4, 5])
    expect(sinkSnapshots(s, sink.id).map((x) => x.summary['lakehousebox.sink.batches'])).toEqual(['one,two', 'three'])
    expect(await ledgerStates(db, sink.id)).toEqual({ one: 'committed', two: 'committed', three: 'committed' })
    expect(await batchObjects(sink.id)).toEqual([])
    expect((await sinkView(sink)).lag.batches_waiting).toBe(0)
  })

  it.each([
    ['2 h later', 2 * HOUR],
    ['past 7 days (after the ledger would have pruned the row anyway)', 7 * DAY + HOUR],
  ])('stored %s (past the 1 h): a new batch by the spec, rolled again', { timeout: 120_000 }, async (_when, laterMs) => {
    const { sink, t } = await replayed(laterMs)
    // The spec's bound, on purpose: "the object was stored before that snapshot, with 1 h of tolerance
    // for clock skew". Stored later than that, with no ledger row to refuse it, the id is a new batch:
    // its rows are appended a second time (DEPLOY.md "After restoring the database from a backup").
    expect(repairs(t)).toEqual([])
    const s = await scan(catalog, sink.table)
    expect(s.rows.map((r) => Number(r.x)).sort((a, b) => a - b)).toEqual([1, 1, 2, 2, 3, 3, 4, 4, 5])
    const rolls = sinkSnapshots(s, sink.id).map((x) => String(x.summary['lakehousebox.sink.batches']).split(',').sort())
    expect(rolls).toEqual([
      ['one', 'two'],
      ['one', 'three', 'two'],
    ])
    expect(await ledgerStates(db, sink.id)).toEqual({ one: 'committed', two: 'committed', three: 'committed' })
    expect(await batchObjects(sink.id)).toEqual([])
    expect((await sinkView(sink)).lag.batches_waiting).toBe(0)
  })
})

describe('(b) the batches table restored to a copy from before some rolls', () => {
  it('no row lost, none doubled; lag and usage right after one tick', { timeout: 180_000 }, async () => {
    const sink = await sinkOf()
    const backup = `batches_backup_${sink.id.replace(/[^a-z0-9_]/gi, '_')}`
    await sendAll(sink, [
      ['a', rowsOf(1, 2)],
      ['b', rowsOf(3, 2)],
    ])
    await tick(sink)
    await sendAll(sink, [
      ['c', rowsOf(5, 2)],
      ['d', rowsOf(7, 2)],
    ])
    await ledgerSettles(sink, { a: 'committed', b: 'committed', c: 'pending', d: 'pending' })
    // The backup: taken with c and d waiting. (The stand-in restores this sink's rows only: the stack's
    // ledger is shared with other files' sinks.)
    await db.query(`create table ${backup} as select * from batches where sink_id = $1`, [sink.id])
    try {
      await tick(sink) // c, d committed
      await sendAll(sink, [['e', rowsOf(9, 2)]])
      await tick(sink) // e committed
      await sendAll(sink, [['f', rowsOf(11, 2)]]) // f waiting
      const usageBefore = await usageOf(sink.id)
      expect(usageBefore).toMatchObject({ batches: 6, rows_accepted: 12, rows_rejected: 0 })

      // The restore: c and d pending again, e and f unknown to the ledger.
      await db.query('begin')
      await db.query('delete from batches where sink_id = $1', [sink.id])
      await db.query(`insert into batches select * from ${backup}`)
      await db.query('commit')
      expect(await ledgerStates(db, sink.id)).toEqual({ a: 'committed', b: 'committed', c: 'pending', d: 'pending' })
      expect((await sinkView(sink)).lag.batches_waiting).toBe(2) // wrong until the tick: c and d are in the table

      // One tick (the operator's forced tick after a restore, DEPLOY.md).
      const t = await tick(sink)
      expect(repairs(t)).toEqual([]) // c and d are out of the intake: reported again from the ledger's pending list
      const s = await scan(catalog, sink.table)
      expectExactlyOnce(s, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
      expect(sinkSnapshots(s, sink.id).map((x) => x.summary['lakehousebox.sink.batches'])).toEqual(['a,b', 'c,d', 'e', 'f'])
      // c and d committed again in the ledger, with the snapshot that holds them; e and f stay unknown to it.
      const { rows } = await db.query('select batch_id, state, snapshot_id::text as snapshot_id from batches where sink_id = $1 order by batch_id', [sink.id])
      const cd = sinkSnapshots(s, sink.id)[1].snapshot_id.toString()
      expect(rows.map((r) => [r.batch_id, r.state, r.batch_id === 'c' || r.batch_id === 'd' ? r.snapshot_id : 'kept'])).toEqual([
        ['a', 'committed', 'kept'],
        ['b', 'committed', 'kept'],
        ['c', 'committed', cd],
        ['d', 'committed', cd],
      ])
      expect(await batchObjects(sink.id)).toEqual([])
      const view = await sinkView(sink)
      expect(view.lag).toMatchObject({ batches_waiting: 0, bytes_waiting: 0, oldest_waiting_at: null })
      expect(view.last_roll).toMatchObject({ batches: 1, rows: 2 })
      expect(await usageOf(sink.id)).toEqual(usageBefore) // counted at the send, in usage_counters: no restore touched it
    } finally {
      await db.query(`drop table if exists ${backup}`)
    }
  })
})
