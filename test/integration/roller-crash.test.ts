// The crash matrix (issue 5, "Done when"): the roller, a child process, is killed with SIGKILL at every
// step boundary of roller/roll.ts (LHBOX_ROLLER_KILL_AT), then restarted (same roller id, as a
// restarted service would be) and ticked twice more. Read with PyIceberg: every good row exactly once
// in exactly one append; nothing left in the intake, no marker; the ledger committed; lag 0.
import type pg from 'pg'
import { afterAll, beforeAll, describe, it } from 'vitest'
import { runPython, sqlCatalogArgs, toExact } from '../support/python.ts'
import { killThenRestart } from '../support/roller.ts'
import { bucket, ledger, newSink, send, uid } from '../support/sinks.ts'
import { rollerSetup, SETUP_TIMEOUT } from '../support/roller-check.ts'
import { call, stack } from '../support/stack.ts'

let db: pg.Client
let whId: string
beforeAll(async () => ({ db, whId } = await rollerSetup()), SETUP_TIMEOUT)
afterAll(() => db?.end())

/**
 * Each case: the kills, in order (each tick must die by SIGKILL), before the healthy ticks; and how
 * many of the three batches the test deletes itself after them — a roller killed inside its one
 * DeleteObjects request, which the store applied in part.
 */
const CASES: Array<[string, string[], number?]> = [
  ['reload', ['reload']],
  ['first-roll-commit', ['first-roll-commit']],
  ['rejects', ['rejects']],
  ['data-file', ['data-file']],
  ['commit', ['commit']],
  ['marker', ['marker']],
  ['batch-delete (the first)', ['batch-delete']],
  ['a DeleteObjects applied in part (killed at marker, 1 of 3 batches deleted)', ['marker'], 1],
  ['marker-delete', ['marker-delete']],
  ['before-report', ['before-report']],
  // Step 2 finds consumed batches only after a crash between the commit and the batch deletes.
  ['repair-delete (after a crash at marker)', ['marker', 'repair-delete']],
  ['repair-delete:2 (after a crash at commit)', ['commit', 'repair-delete:2']],
]

// Concurrent (vitest's maxConcurrency, 5): each case has its own sink and table, and a tick leases only its sink.
describe('the crash matrix', () => {
  it.concurrent.for(CASES)(
    'killed at %s, then restarted: every good row exactly once, nothing pending, the ledger committed, lag 0',
    { timeout: 150_000 },
    async ([, kills, deletedByHand = 0], { expect }) => {
      const sink = await newSink(stack().adminKey)
      const batches: string[] = []
      for (const i of [1, 2, 3]) {
        const batchId = `c${i}-${uid()}`
        const res = await send(sink, `[{"x": ${i * 10 + 1}}, {"x": ${i * 10 + 2}, "who": "w${i}"}, {"x": "bad"}]`, { batchId })
        expect(res.status).toBe(202)
        batches.push(batchId)
      }
      await killThenRestart(sink.id, batches, kills, deletedByHand, expect)

      // PyIceberg: each good row once, in exactly one append naming the three batches once.
      const scan = toExact(
        await runPython('pyiceberg_scan.py', [
          ...sqlCatalogArgs({ databaseUrl: stack().databaseUrl, catalogName: whId, s3: stack().s3 }),
          sink.table,
          '--order-by',
          'x',
          '--no-files',
        ]),
      )
      const counts: Record<string, number> = {}
      for (const r of scan.rows) counts[String(r.x)] = (counts[String(r.x)] ?? 0) + 1
      expect(counts).toEqual({ 11: 1, 12: 1, 21: 1, 22: 1, 31: 1, 32: 1 })
      expect(scan.rows.map((r: any) => r.who)).toEqual([null, 'w1', null, 'w2', null, 'w3'])
      expect(scan.snapshots).toHaveLength(1)
      const [snap] = scan.snapshots
      expect(snap.snapshot_id).toBe(scan.current_snapshot_id)
      expect(snap.summary['lakehousebox.sink.batches'].split(',').sort()).toEqual([...batches].sort())
      expect(snap.summary).toMatchObject({ 'lakehousebox.sink.id': sink.id, 'lakehousebox.sink.rows': '6', 'added-records': '6' })

      // Nothing left: no batch in the intake, no committed marker; the rejects stay.
      const left: string[] = []
      for await (const o of bucket().list(`_sink/${sink.id}/`)) left.push(o.key)
      expect(left.filter((k) => !k.startsWith(`_sink/${sink.id}/rejects/`))).toEqual([])
      expect(left.sort()).toEqual(batches.map((b) => `_sink/${sink.id}/rejects/${b}.ndjson`).sort())

      // The ledger: committed, with the snapshot id; the sink's view: lag 0.
      const rows = await ledger(db, sink.id)
      expect(rows.map((r) => [r.batch_id, r.state, String(r.snapshot_id)]).sort()).toEqual(
        batches.map((b) => [b, 'committed', String(scan.current_snapshot_id)]).sort(),
      )
      const view = (await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })).body
      expect(view.lag).toEqual({ batches_waiting: 0, bytes_waiting: 0, oldest_waiting_at: null, seconds_behind: 0 })
    },
  )
})

// An empty roll (every row rejected) commits no snapshot, so nothing in the table names its batches:
// its marker (snapshot_id null) is the record, kept until the report is made.
const EMPTY_CASES: Array<[string, string[], number?]> = [
  ['rejects', ['rejects']],
  ['marker', ['marker']],
  ['a DeleteObjects applied in part (killed at marker, 2 of 3 batches deleted)', ['marker'], 2],
  ['batch-delete', ['batch-delete']],
  ['before-report', ['before-report']],
]

describe('the crash matrix of an empty roll', () => {
  it.concurrent.for(EMPTY_CASES)(
    'killed at %s, then restarted: no snapshot, the rejects written, nothing pending, the ledger committed, lag 0',
    { timeout: 150_000 },
    async ([, kills, deletedByHand = 0], { expect }) => {
      const sink = await newSink(stack().adminKey)
      const batches: string[] = []
      for (const i of [1, 2, 3]) {
        const batchId = `e${i}-${uid()}`
        const res = await send(sink, `[{"x": "bad ${i}"}, {"who": "no x"}]`, { batchId })
        expect(res.status).toBe(202)
        batches.push(batchId)
      }
      await killThenRestart(sink.id, batches, kills, deletedByHand, expect)
      const scan = toExact(
        await runPython('pyiceberg_scan.py', [
          ...sqlCatalogArgs({ databaseUrl: stack().databaseUrl, catalogName: whId, s3: stack().s3 }),
          sink.table,
          '--no-files',
        ]),
      )
      expect(scan.snapshots).toEqual([])
      expect(scan.rows).toEqual([])
      const left: string[] = []
      for await (const o of bucket().list(`_sink/${sink.id}/`)) left.push(o.key)
      expect(left.sort()).toEqual(batches.map((b) => `_sink/${sink.id}/rejects/${b}.ndjson`).sort())
      const rows = await ledger(db, sink.id)
      expect(rows.map((r) => [r.batch_id, r.state, r.snapshot_id]).sort()).toEqual(batches.map((b) => [b, 'committed', null]).sort())
      const view = (await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })).body
      expect(view.lag).toEqual({ batches_waiting: 0, bytes_waiting: 0, oldest_waiting_at: null, seconds_behind: 0 })
    },
  )
})
