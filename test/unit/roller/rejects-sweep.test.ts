// Rejects retention (issue 31, part 5; roller/rejects.ts sweepRejects): a sink's rejects files last
// modified more than the retention before the sweep's clock go, at most `limit` a sweep, and only the
// sink's own; the sweep says how many and how many bytes.
import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { rejectsKey } from '../../../contract/bucket.ts'
import { MaintenanceSweep } from '../../../contract/internal.ts'
import { sweepReport } from '../../../roller/maintain.ts'
import { REJECTS_SWEEP_LIMIT, sweepRejects } from '../../../roller/rejects.ts'
import { MemoryBucket } from './memory-bucket.ts'

const DAY = 86_400_000
const NOW = Date.parse('2026-12-03T12:00:00Z')
const SINK = 'snk_unit'

function bucketWith(ages: Record<string, number>): MemoryBucket {
  const b = new MemoryBucket()
  for (const [id, days] of Object.entries(ages)) b.store(rejectsKey(SINK, id), `{"batch_id":"${id}"}\n`, { lastModified: new Date(NOW - days * DAY) })
  return b
}

const left = (b: MemoryBucket) => [...b.objects.keys()].filter((k) => k.startsWith(`_sink/${SINK}/rejects/`)).map((k) => k.split('/').at(-1))

describe('sweepRejects', () => {
  it('deletes files older than the retention, keeps the rest and other sinks’ and the intake', async () => {
    const b = bucketWith({ old: 31, edge: 30, young: 29 })
    b.store(rejectsKey('snk_other', 'old'), '{}\n', { lastModified: new Date(NOW - 90 * DAY) })
    b.store(`_sink/${SINK}/waiting.ndjson`, '{"x":1}\n', { lastModified: new Date(NOW - 90 * DAY) })
    const size = b.objects.get(rejectsKey(SINK, 'old'))!.body.byteLength
    expect(await sweepRejects(b, SINK, 30 * DAY, NOW)).toEqual({ files: 1, bytes: size })
    expect(left(b)).toEqual(['edge.ndjson', 'young.ndjson'])
    expect(b.objects.has(rejectsKey('snk_other', 'old'))).toBe(true)
    expect(b.objects.has(`_sink/${SINK}/waiting.ndjson`)).toBe(true)
  })

  it('is bounded: at most `limit` files a sweep, the rest at the next', async () => {
    const b = bucketWith(Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`b${i}`, 40])))
    expect((await sweepRejects(b, SINK, 30 * DAY, NOW, 3)).files).toBe(3)
    expect(left(b)).toHaveLength(4)
    expect((await sweepRejects(b, SINK, 30 * DAY, NOW, 3)).files).toBe(3)
    expect((await sweepRejects(b, SINK, 30 * DAY, NOW, 3)).files).toBe(1)
    expect(left(b)).toEqual([])
    expect(await sweepRejects(b, SINK, 30 * DAY, NOW, 3)).toEqual({ files: 0, bytes: 0 })
    expect(REJECTS_SWEEP_LIMIT).toBe(10_000)
  })
})

describe('the sweep report', () => {
  const done = {
    snapshotsExpired: 0,
    filesDeleted: 0,
    bytesDeleted: 0,
    filesCompacted: 0,
    bytesCompacted: 0,
    manifestsRewritten: 0,
    manifestsCreated: 0,
    seconds: 1,
  }

  it('says what the rejects retention deleted, in the contract’s names', () => {
    const r = sweepReport({ ...done, rejectsDeleted: 2, rejectsBytesDeleted: 321 }, 6)
    expect(r).toMatchObject({ rejects_deleted: 2, rejects_bytes_deleted: 321 })
    expect(v.parse(MaintenanceSweep, r)).toEqual(r)
  })

  it('a sweep that never reached it says nothing of it (an older roller’s report validates too)', () => {
    const r = sweepReport(done, 6)
    expect(r).not.toHaveProperty('rejects_deleted')
    expect(v.parse(MaintenanceSweep, r)).toEqual(r)
  })
})
