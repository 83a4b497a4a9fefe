// The crash matrix of the roller (roller-crash.test.ts), repeated on a keyed sink's overwrite path
// (issue 6, "Done when"): a first roll stores v1 of keys 1..5; the second roll's three batches replace
// some of them (a later batch over an earlier one, a partly replaced file rewritten) and the roller,
// a child process, is killed with SIGKILL at a step boundary (LHBOX_ROLLER_KILL_AT), then restarted
// (same roller id) and ticked until clean. Read with PyIceberg: each key once with the LATEST value,
// no replaced version resurrected; nothing in the intake, no marker; the ledger committed; lag 0.
import type pg from 'pg'
import { afterAll, beforeAll, describe, it } from 'vitest'
import { rollerTick, tickInProcess } from '../support/roller.ts'
import { ledgerStates, scan, rollerSetup, SETUP_TIMEOUT } from '../support/roller-check.ts'
import { bucket, intakeKey, newSink, send, uid } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

let db: pg.Client
let whId: string
beforeAll(async () => ({ db, whId } = await rollerSetup()), SETUP_TIMEOUT)
afterAll(() => db?.end())

const cols = [
  { name: 'x', type: 'long', required: true },
  { name: 'who', type: 'string' },
]

/**
 * Each case: the kills, in order (each tick must die by SIGKILL), before the healthy ticks; and how
 * many of the three batches the test deletes itself after them (a DeleteObjects applied in part).
 */
const CASES: Array<[string, string[], number?]> = [
  ['reload', ['reload']],
  ['rejects', ['rejects']],
  ['data-file', ['data-file']],
  ['commit', ['commit']],
  ['marker', ['marker']],
  ['batch-delete (the first)', ['batch-delete']],
  ['a DeleteObjects applied in part (killed at marker, 1 of 3 batches deleted)', ['marker'], 1],
  ['marker-delete', ['marker-delete']],
  ['before-report', ['before-report']],
  ['repair-delete (after a crash at marker)', ['marker', 'repair-delete']],
  ['data-file, then commit (two crashes)', ['data-file', 'commit']],
]

describe('the crash matrix of a keyed roll', () => {
  it.concurrent.for(CASES)(
    'killed at %s, then restarted: each key once with the latest value, nothing pending, the ledger committed',
    { timeout: 150_000 },
    async ([, kills, deletedByHand = 0], { expect }) => {
      const sink = await newSink(stack().adminKey, { tableSpec: { columns: cols }, sink: { key: ['x'] } })
      const rollerId = `kcrash-${uid()}`
      const first = `k0-${uid()}`
      expect(
        (
          await send(
            sink,
            [1, 2, 3, 4, 5].map((x) => ({ x, who: 'v1' })),
            { batchId: first },
          )
        ).status,
      ).toBe(202)
      const t0 = await tickInProcess({ sink: sink.id, rollerId })
      expect(t0.code, t0.stdout + t0.stderr).toBe(0)

      // Three batches, in arrival order: A replaces 1..3, B replaces 2..3 (over A), C replaces 3 and adds 6.
      // Each carries a key_null-free reject (a bad type). Key 4 and 5 stay v1 in the rewritten file.
      const batches: string[] = []
      for (const [name, rows] of [
        [
          'A',
          [
            { x: 1, who: 'A' },
            { x: 2, who: 'A' },
            { x: 3, who: 'A' },
          ],
        ],
        [
          'B',
          [
            { x: 2, who: 'B' },
            { x: 3, who: 'B' },
          ],
        ],
        [
          'C',
          [
            { x: 3, who: 'C0' },
            { x: 6, who: 'C' },
            { x: 3, who: 'C' },
          ],
        ],
      ] as const) {
        const batchId = `k${name}-${uid()}`
        const res = await send(sink, JSON.stringify([...rows, { x: 'bad', who: name }]), { batchId })
        expect(res.status).toBe(202)
        batches.push(batchId)
        await new Promise((r) => setTimeout(r, 20)) // distinct arrival times
      }
      for (const killAt of kills) {
        const t = await rollerTick({ sink: sink.id, killAt, rollerId })
        expect({ killAt, signal: t.signal }, t.stdout + t.stderr).toEqual({ killAt, signal: 'SIGKILL' })
      }
      for (const batchId of batches.slice(0, deletedByHand)) {
        expect(await bucket().head(intakeKey(sink.id, batchId)), batchId).not.toBeNull()
        await bucket().delete(intakeKey(sink.id, batchId))
      }
      // A later batch arrives while the roller is down: it replaces key 3 again, and must stay the winner
      // whether the crashed roll had committed (its batches then repaired, never rolled again) or not.
      const late = `kD-${uid()}`
      expect((await send(sink, [{ x: 3, who: 'D' }], { batchId: late })).status).toBe(202)
      for (const n of [1, 2]) {
        const t = await tickInProcess({ sink: sink.id, rollerId }) // restarted (in this process), same id
        expect({ n, code: t.code, signal: t.signal }, t.stdout + t.stderr).toEqual({ n, code: 0, signal: null })
      }

      // PyIceberg: each key once, the latest value; 4 and 5 kept from v1.
      const s = await scan({ sql: whId }, sink.table)
      expect(s.rows.map((r) => [Number(r.x), r.who])).toEqual([
        [1, 'A'],
        [2, 'B'],
        [3, 'D'],
        [4, 'v1'],
        [5, 'v1'],
        [6, 'C'],
      ])
      // Exactly one snapshot names the three batches (none committed twice), an overwrite; the late
      // batch is in it (a crash before the commit) or in the next one.
      const naming = s.snapshots.filter((x) => (x.summary['lakehousebox.sink.batches'] ?? '').split(',').some((b) => batches.includes(b)))
      expect(naming).toHaveLength(1)
      expect(naming[0].operation).toBe('overwrite')
      const named = naming[0].summary['lakehousebox.sink.batches'].split(',')
      expect(named.filter((b) => b !== late).sort()).toEqual([...batches].sort())
      expect(naming[0].summary).toMatchObject({
        'lakehousebox.sink.id': sink.id,
        'lakehousebox.sink.rows': '4',
        'lakehousebox.sink.rejected_rows': '3',
        'lakehousebox.sink.rewritten_files': '1',
      })
      const lateSnaps = s.snapshots.filter((x) => (x.summary['lakehousebox.sink.batches'] ?? '').split(',').includes(late))
      expect(lateSnaps).toHaveLength(1)
      expect(s.snapshots.at(-1)!.snapshot_id).toBe(lateSnaps[0].snapshot_id)

      // Nothing left: no batch in the intake, no marker; the rejects stay.
      const left: string[] = []
      for await (const o of bucket().list(`_sink/${sink.id}/`)) left.push(o.key)
      expect(left.sort()).toEqual(batches.map((b) => `_sink/${sink.id}/rejects/${b}.ndjson`).sort())

      // The ledger: every batch committed; lag 0.
      const states = await ledgerStates(db, sink.id)
      expect(states).toEqual(Object.fromEntries([first, ...batches, late].map((b) => [b, 'committed'])))
      const { rows } = await db.query('select batch_id, snapshot_id from batches where sink_id = $1 and batch_id = any($2)', [sink.id, batches])
      expect(rows.map((r) => String(r.snapshot_id))).toEqual(batches.map(() => String(naming[0].snapshot_id)))
      const view = (await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })).body
      expect(view.lag).toEqual({ batches_waiting: 0, bytes_waiting: 0, oldest_waiting_at: null, seconds_behind: 0 })
      expect(view.state).toBe('active')

      // A later roll replaces key 2 again: the crash left nothing that could bring an old version back.
      expect((await send(sink, [{ x: 2, who: 'E' }])).status).toBe(202)
      const t = await rollerTick({ sink: sink.id, rollerId })
      expect(t.code, t.stdout + t.stderr).toBe(0)
      const after = await scan({ sql: whId }, sink.table)
      expect(after.rows.map((r) => [Number(r.x), r.who])).toEqual([
        [1, 'A'],
        [2, 'E'],
        [3, 'D'],
        [4, 'v1'],
        [5, 'v1'],
        [6, 'C'],
      ])
    },
  )
})
