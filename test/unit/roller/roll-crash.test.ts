// The crash matrix in memory (the unit twin of test/integration/roller-crash.test.ts): a roll stopped at
// each step boundary by its checkpoint, then rolled again with a fresh context, as a restarted roller
// would be. Every good row exactly once in exactly one append, nothing left in the intake, no marker,
// every batch committed in the ledger with that append's snapshot id.
import { describe, expect, it } from 'vitest'
import { currentSnapshot } from '../../../iceberg/spec/metadata.ts'
import { S3Error } from '../../../iceberg/io/s3.ts'
import { batchKey } from '../../../contract/bucket.ts'
import { EndTick } from '../../../roller/intake.ts'
import { consumedOf, Crash, leftovers, markersOf, rejectsOf, rollOnce, send, SINK, snapshots, tableRows, world, type World } from './harness.ts'

const BATCHES = ['c1', 'c2', 'c3']

async function threeBatches(): Promise<World> {
  const w = await world() // not prepared: the first roll's changes are a step too
  for (const [i, id] of BATCHES.entries()) {
    const n = i + 1
    send(w, id, [`{"x": ${n * 10 + 1}}`, `{"x": ${n * 10 + 2}, "who": "w${n}"}`, '{"x": "bad"}'])
  }
  return w
}

async function expectExactlyOnce(w: World): Promise<void> {
  const rows = (await tableRows(w)).sort((a, b) => Number(a.x) - Number(b.x))
  expect(rows.map((r) => [Number(r.x), r.who])).toEqual([
    [11, null],
    [12, 'w1'],
    [21, null],
    [22, 'w2'],
    [31, null],
    [32, 'w3'],
  ])
  expect(snapshots(w)).toHaveLength(1)
  const snap = currentSnapshot(w.catalog.current.metadata)!
  expect(snap.summary['lakehousebox.sink.batches'].split(',').sort()).toEqual(BATCHES)
  expect(snap.summary).toMatchObject({
    'lakehousebox.sink.id': SINK,
    'lakehousebox.sink.rows': '6',
    'lakehousebox.sink.rejected_rows': '3',
    'added-records': '6',
  })
  expect(leftovers(w)).toEqual({ intake: [], markers: [], rejects: BATCHES })
  for (const id of BATCHES)
    expect(
      rejectsOf(w, id).map((r) => [r.reason, r.index]),
      id,
    ).toEqual([['type_mismatch', 2]])
  expect(w.ledger.pending).toEqual([])
  const id = snap['snapshot-id'].toString()
  expect(Object.fromEntries(w.ledger.committed)).toEqual({ c1: id, c2: id, c3: id })
}

/** [name, the crash points in order (`name:n` — the n-th pass), batches the store deleted in part before the restart] */
const CASES: Array<[string, string[], number?]> = [
  ['reload', ['reload']],
  ['first-roll-commit', ['first-roll-commit']],
  ['rejects', ['rejects']],
  ['data-file', ['data-file']],
  ['commit', ['commit']],
  ['marker', ['marker']],
  ['batch-delete', ['batch-delete']],
  ['a DeleteObjects applied in part (stopped at marker, 1 of 3 batches deleted)', ['marker'], 1],
  ['marker-delete', ['marker-delete']],
  ['before-report', ['before-report']],
  ['after-report', ['after-report']],
  ['settled-marker-delete', ['settled-marker-delete']],
  ['repair-delete (after a stop at marker)', ['marker', 'repair-delete']],
  ['repair-delete:2 (after a stop at commit)', ['commit', 'repair-delete:2']],
  ['every step once, one after another', ['reload', 'first-roll-commit', 'rejects', 'data-file', 'commit', 'repair-delete:2', 'before-report']],
]

describe('stopped at a step boundary, then rolled again', () => {
  it.each(CASES)('at %s: every good row exactly once, nothing pending, the ledger committed', async (_, crashes, deletedInPart = 0) => {
    const w = await threeBatches()
    for (const crashAt of crashes) {
      const steps: string[] = []
      await expect(rollOnce(w, { crashAt, steps }), crashAt).rejects.toThrow(Crash)
      expect(steps.at(-1), crashAt).toBe(crashAt.split(':')[0])
    }
    for (const id of BATCHES.slice(0, deletedInPart)) {
      expect(w.bucket.objects.has(batchKey(SINK, id)), id).toBe(true)
      w.bucket.objects.delete(batchKey(SINK, id))
    }
    await rollOnce(w)
    await rollOnce(w) // a second healthy roll changes nothing
    await expectExactlyOnce(w)
  })

  it('a DeleteObjects the store applies in part ends the roll (committed, not failed); the next roll repairs the rest', async () => {
    const w = await threeBatches()
    w.bucket.fault = (op, key) => {
      if (op === 'deleteMany' && key !== batchKey(SINK, 'c2')) throw new S3Error(500, 'InternalError', 'not deleted')
    }
    const ended = await rollOnce(w).catch((e) => e)
    // Ended, not failed: the rows are in the table, and a failure would show as the sink's error.
    expect(ended).toBeInstanceOf(EndTick)
    expect(ended.message).toMatch(/^committed \(snapshot \d+\); deleting its batches failed: DELETE .*InternalError; the next roll settles them$/)
    expect(ended.cause).toBeInstanceOf(S3Error)
    w.bucket.fault = null
    expect(leftovers(w).intake).toEqual(['c1', 'c3'])
    expect(leftovers(w).markers).toHaveLength(1)
    await rollOnce(w)
    expect(w.ledger.reports).toHaveLength(1)
    expect(w.ledger.reports[0].repaired).toEqual(['c1', 'c3', 'c2'])
    await expectExactlyOnce(w)
  })

  it('an empty roll stopped after its deletes, before its report: the marker is the record, reported by the next roll', async () => {
    const w = await world({ prepared: true })
    send(w, 'e1', ['{"x": "bad"}'])
    await expect(rollOnce(w, { crashAt: 'before-report' })).rejects.toThrow(Crash)
    expect(leftovers(w).intake).toEqual([])
    expect(Object.values(markersOf(w))).toEqual([['e1']])
    expect(w.ledger.pending).toEqual(['e1'])
    await rollOnce(w)
    expect(w.ledger.reports[0].repaired).toEqual(['e1'])
    expect(consumedOf(w.ledger.reports[0])).toEqual([{ batch_ids: ['e1'], snapshot_id: null }])
    expect(w.ledger.pending).toEqual([])
    expect(leftovers(w)).toEqual({ intake: [], markers: [], rejects: ['e1'] })
    expect(snapshots(w)).toHaveLength(0)
  })
})
