// The recovery rules through roll() (spec "Exactly once"): a batch still in the intake that a record
// names — a retained snapshot of the sink under either summary prefix, or a committed marker — and that
// was stored before the record (1 h tolerance) is deleted and reported, never rolled again.
import { describe, expect, it } from 'vitest'
import { currentSnapshot } from '../../../iceberg/spec/metadata.ts'
import { S3Error } from '../../../iceberg/io/s3.ts'
import { markerKey } from '../../../contract/bucket.ts'
import { markerBody } from '../../../roller/intake.ts'
import { commitRecord, consumedOf, HOUR, leftovers, markersOf, rollOnce, send, SINK, snapshots, world, xs, type World } from './harness.ts'

const DAY = 24 * HOUR

function putMarker(w: World, name: string, batchIds: string[], snapshotId: bigint | null, atMs: number): string {
  const key = markerKey(SINK, name)
  w.bucket.store(key, markerBody(batchIds, snapshotId, new Date(atMs).toISOString()), { contentType: 'application/json' })
  return key.slice(`_sink/${SINK}/`.length)
}

const lastSnapshotBatches = (w: World) => currentSnapshot(w.catalog.current.metadata)?.summary['lakehousebox.sink.batches']

describe('records in snapshot summaries', () => {
  it('under the current prefix, in any retained snapshot (a later commit by someone else does not hide it)', async () => {
    const w = await world({ prepared: true })
    send(w, 'a', ['{"x": 1}'])
    const rec = await commitRecord(w, ['a'], [1])
    await commitRecord(w, [], [50], { sinkId: 'snk_tenant' }) // the tenant's own write on top
    const result = await rollOnce(w)
    expect(result).toMatchObject({ batches: 0, repaired: 1 })
    expect(await xs(w)).toEqual([1, 50])
    expect(snapshots(w)).toHaveLength(2)
    expect(leftovers(w).intake).toEqual([])
    expect(w.ledger.reports[0].repaired).toEqual(['a'])
    expect(consumedOf(w.ledger.reports[0])).toEqual([{ batch_ids: ['a'], snapshot_id: rec.snapshotId }])
  })

  it('under the earlier prefix (tablemere.sink.): the older roller’s batch is deleted and reported, not rolled again', async () => {
    const w = await world({ prepared: true })
    send(w, 'old1', ['{"x": 1}'])
    send(w, 'old2', ['{"x": 2}'])
    const rec = await commitRecord(w, ['old1', 'old2'], [1, 2], { prefix: 'tablemere.sink.' })
    send(w, 'new', ['{"x": 3}'])
    await rollOnce(w)
    expect(await xs(w)).toEqual([1, 2, 3])
    expect(lastSnapshotBatches(w)).toBe('new')
    expect(w.ledger.reports[0].repaired).toEqual(['old1', 'old2'])
    expect(w.ledger.reports[0].consumed).toContainEqual({ batch_ids: ['old1', 'old2'], snapshot_id: rec.snapshotId })
    expect(w.ledger.pending).toEqual([])
  })

  it('a snapshot of another sink naming the same batch id is no record: the batch is rolled', async () => {
    for (const prefix of ['lakehousebox.sink.', 'tablemere.sink.']) {
      const w = await world({ prepared: true })
      send(w, 'a', ['{"x": 1}'])
      await commitRecord(w, ['a'], [100], { prefix, sinkId: 'snk_other' })
      await rollOnce(w)
      expect(await xs(w), prefix).toEqual([1, 100])
      expect(lastSnapshotBatches(w), prefix).toBe('a')
      expect(w.ledger.reports[0].repaired, prefix).toEqual([])
    }
  })
})

describe('the 1 h tolerance between the stored time and the record', () => {
  it('a snapshot record: consumed up to 1 h after it and however long before; from 1 h + 1 ms after, a new send that is rolled', async () => {
    const w = await world({ prepared: true })
    const rec = await commitRecord(w, ['edge', 'out', 'before', 'long-before', 'lm-in', 'lm-out'], [1])
    const T = rec.atMs
    send(w, 'edge', ['{"x": 10}'], { receivedMs: T + HOUR })
    send(w, 'out', ['{"x": 20}'], { receivedMs: T + HOUR + 1 })
    send(w, 'before', ['{"x": 30}'], { receivedMs: T - HOUR - 1 })
    send(w, 'long-before', ['{"x": 40}'], { receivedMs: T - 7 * DAY })
    // no x-amz-meta-received: the store's Last-Modified (whole seconds) is the stored time
    const lastWholeSecond = Math.floor((T + HOUR) / 1000) * 1000
    send(w, 'lm-in', ['{"x": 50}'], { receivedMs: null, lastModified: new Date(lastWholeSecond) })
    send(w, 'lm-out', ['{"x": 60}'], { receivedMs: null, lastModified: new Date(lastWholeSecond + 1000) })
    await rollOnce(w)

    expect(await xs(w)).toEqual([1, 20, 60])
    expect(lastSnapshotBatches(w)).toBe('out,lm-out')
    expect([...w.ledger.reports[0].repaired].sort()).toEqual(['before', 'edge', 'lm-in', 'long-before'])
    expect(leftovers(w)).toEqual({ intake: [], markers: [], rejects: [] })
  })

  it('a marker record: the same 1 h on either side of committed_at', async () => {
    const w = await world({ prepared: true })
    const T = Date.UTC(2026, 0, 5, 8, 0, 0)
    const marker = putMarker(w, 'earlier-file.parquet', ['m-edge', 'm-out', 'm-before'], 77n, T)
    send(w, 'm-edge', ['{"x": 1}'], { receivedMs: T + HOUR })
    send(w, 'm-out', ['{"x": 2}'], { receivedMs: T + HOUR + 1 })
    send(w, 'm-before', ['{"x": 3}'], { receivedMs: T - HOUR - 1 })
    await rollOnce(w)

    expect(await xs(w)).toEqual([2])
    expect(w.ledger.reports[0].repaired).toEqual(['m-before', 'm-edge']) // in listing (key) order
    expect(w.ledger.reports[0].consumed).toContainEqual({ batch_ids: ['m-before', 'm-edge'], snapshot_id: '77' })
    // m-out was still waiting when step 2 read the marker: the marker stays until a roll finds it settled
    expect(leftovers(w)).toEqual({ intake: [], markers: [marker], rejects: [] })
    await rollOnce(w)
    expect(await xs(w)).toEqual([2])
    expect(leftovers(w)).toEqual({ intake: [], markers: [], rejects: [] })
  })
})

describe('the newer record wins', () => {
  it('a marker newer than the snapshot naming the batch: its time counts (a batch the snapshot alone would call a new send is consumed)', async () => {
    const w = await world({ prepared: true })
    const rec = await commitRecord(w, ['a'], [1])
    putMarker(w, 'newer.parquet', ['a'], 9223372036854775807n, rec.atMs + 3 * HOUR)
    send(w, 'a', ['{"x": 2}'], { receivedMs: rec.atMs + 3 * HOUR + 30 * 60_000 })
    await rollOnce(w)
    expect(await xs(w)).toEqual([1])
    expect(w.ledger.reports[0].repaired).toEqual(['a'])
    expect(consumedOf(w.ledger.reports[0])).toEqual([{ batch_ids: ['a'], snapshot_id: '9223372036854775807' }])
    expect(leftovers(w)).toEqual({ intake: [], markers: [], rejects: [] })
  })

  it('a snapshot newer than a marker naming the batch: the snapshot’s time and id count', async () => {
    const w = await world({ prepared: true })
    const rec = await commitRecord(w, ['a'], [1])
    putMarker(w, 'older.parquet', ['a'], 5n, rec.atMs - 5 * HOUR)
    send(w, 'a', ['{"x": 2}'], { receivedMs: rec.atMs + 30 * 60_000 })
    await rollOnce(w)
    expect(await xs(w)).toEqual([1])
    expect(w.ledger.reports[0].repaired).toEqual(['a'])
    expect(consumedOf(w.ledger.reports[0])).toEqual([{ batch_ids: ['a'], snapshot_id: rec.snapshotId }])
  })

  it('two snapshots name the batch (an id sent again and rolled again): the newer one’s time counts', async () => {
    const w = await world({ prepared: true })
    const T = Date.UTC(2026, 0, 5, 8, 0, 0)
    w.catalog.snapshotClock = () => T
    const first = await commitRecord(w, ['a'], [1], { prefix: 'tablemere.sink.' })
    w.catalog.snapshotClock = () => T + 3 * HOUR
    const second = await commitRecord(w, ['a'], [2])
    w.catalog.snapshotClock = undefined
    expect([first.atMs, second.atMs]).toEqual([T, T + 3 * HOUR])
    // long past an hour after the first record, within an hour of the second
    send(w, 'a', ['{"x": 3}'], { receivedMs: T + 3 * HOUR + 30 * 60_000 })
    await rollOnce(w)
    expect(await xs(w)).toEqual([1, 2])
    expect(consumedOf(w.ledger.reports[0])).toEqual([{ batch_ids: ['a'], snapshot_id: second.snapshotId }])
  })
})

describe('markers as records', () => {
  it('a committed marker whose snapshot is past the retained history: the batches are deleted and reported with its snapshot id', async () => {
    const w = await world({ prepared: true })
    send(w, 'a', ['{"x": 1}'], { receivedMs: Date.now() - 8 * DAY })
    send(w, 'b', ['{"x": 2}'], { receivedMs: Date.now() - 8 * DAY })
    putMarker(w, 'expired-snapshot.parquet', ['a', 'b'], 4611686018427387905n, Date.now() - 7 * DAY)
    send(w, 'c', ['{"x": 3}'])
    await rollOnce(w)
    expect(await xs(w)).toEqual([3])
    expect(w.ledger.reports[0].repaired).toEqual(['a', 'b'])
    expect(w.ledger.reports[0].consumed).toContainEqual({ batch_ids: ['a', 'b'], snapshot_id: '4611686018427387905' })
    expect(w.ledger.committed.get('a')).toBe('4611686018427387905')
    expect(leftovers(w)).toEqual({ intake: [], markers: [], rejects: [] })
  })

  it('an empty roll’s marker (snapshot_id null): its batches are consumed; reported with no snapshot; deleted once reported', async () => {
    // the roller died after the empty roll's marker, before its deletes
    const w = await world({ prepared: true })
    send(w, 'e1', ['{"x": "bad"}'])
    send(w, 'ok', ['{"x": 5}'])
    const marker = putMarker(w, 'roll-0-empty-x', ['e1'], null, Date.now())
    await rollOnce(w)
    expect(await xs(w)).toEqual([5])
    expect(lastSnapshotBatches(w)).toBe('ok')
    expect(w.ledger.reports[0].repaired).toEqual(['e1'])
    expect(w.ledger.reports[0].consumed).toContainEqual({ batch_ids: ['e1'], snapshot_id: null })
    expect(w.ledger.committed.get('e1')).toBeNull()
    expect(leftovers(w).markers).not.toContain(marker)
    expect(leftovers(w)).toEqual({ intake: [], markers: [], rejects: [] })
  })

  it('a repair is reported again while the ledger holds its batches pending, and its marker kept until then', async () => {
    const w = await world({ prepared: true })
    send(w, 'a', ['{"x": 1}'])
    const marker = putMarker(w, 'f.parquet', ['a'], 12n, Date.now())
    w.ledger.refuse = 1
    await expect(rollOnce(w)).rejects.toThrow('the edge did not answer')
    expect(leftovers(w).intake).toEqual([])
    expect(markersOf(w)[marker]).toEqual(['a'])
    expect(w.ledger.pending).toEqual(['a'])

    await rollOnce(w)
    expect(w.ledger.reports.map((r) => r.repaired)).toEqual([['a']])
    expect(consumedOf(w.ledger.reports[0])).toEqual([{ batch_ids: ['a'], snapshot_id: '12' }])
    expect(w.ledger.pending).toEqual([])
    expect(leftovers(w)).toEqual({ intake: [], markers: [], rejects: [] })
    expect(snapshots(w)).toHaveLength(0)
  })

  it('a marker whose delete failed goes on the next roll; the roll that wrote it still reports its batches', async () => {
    const w = await world({ prepared: true })
    send(w, 'a', ['{"x": 1}'])
    w.bucket.fault = (op, key) => {
      if (op === 'delete' && key.includes('/committed/')) throw new S3Error(503, 'SlowDown', 'DELETE: 503')
    }
    // The marker is deleted while the report is made: its failure does not take the report back.
    await rollOnce(w)
    w.bucket.fault = null
    const snapshotId = currentSnapshot(w.catalog.current.metadata)!['snapshot-id'].toString()
    expect(leftovers(w).intake).toEqual([])
    expect(leftovers(w).markers).toHaveLength(1)
    expect(w.ledger.pending).toEqual([])
    expect(w.ledger.committed.get('a')).toBe(snapshotId)

    send(w, 'b', ['{"x": 2}'])
    await rollOnce(w)
    expect(await xs(w)).toEqual([1, 2])
    expect(w.ledger.reports.at(-1)?.repaired).toEqual([])
    expect(leftovers(w)).toEqual({ intake: [], markers: [], rejects: [] })
  })
})
