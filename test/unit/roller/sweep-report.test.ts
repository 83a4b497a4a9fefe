// What the roller reports at the end of a sink's sweep (roller/maintain.ts sweepReport): the sweep's
// counts in the contract's names, the next sweep everyHours after this one, and a failure's reason.
import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { MaintenanceSweep } from '../../../contract/internal.ts'
import { SweepFailed, sweepReport, type MaintenanceResult } from '../../../roller/maintain.ts'

const result: MaintenanceResult = {
  snapshotsExpired: 82,
  filesDeleted: 181,
  bytesDeleted: 654_321,
  filesCompacted: 100,
  bytesCompacted: 123_456,
  manifestsRewritten: 3,
  manifestsCreated: 1,
  seconds: 1.25,
}
const at = new Date('2026-12-02T14:00:00.000Z')

describe('sweepReport', () => {
  it('names the counts as the contract does, and the next sweep everyHours on', () => {
    const r = sweepReport(result, 6, undefined, at)
    expect(r).toEqual({
      at: '2026-12-02T14:00:00.000Z',
      next_at: '2026-12-02T20:00:00.000Z',
      snapshots_expired: 82,
      files_compacted: 100,
      bytes_compacted: 123_456,
      manifests_rewritten: 3,
      manifests_created: 1,
      files_deleted: 181,
      bytes_deleted: 654_321,
      seconds: 1.25,
    })
    expect(v.parse(MaintenanceSweep, r)).toEqual(r)
    expect(sweepReport(result, 0.5, undefined, at).next_at).toBe('2026-12-02T14:30:00.000Z')
  })

  it('a failed sweep: its reason (causes included, cut to 1,000 characters, no NUL) and what its finished steps did', () => {
    const failed = new SweepFailed(
      { ...result, snapshotsExpired: 0, filesDeleted: 0, bytesDeleted: 0 },
      new Error('commit failed', { cause: new Error('ECONNRESET') }),
    )
    expect(failed.message).toBe('commit failed: ECONNRESET')
    const r = sweepReport(failed.done, 6, failed, at)
    expect(r).toMatchObject({ error: 'commit failed: ECONNRESET', files_compacted: 100, snapshots_expired: 0, files_deleted: 0 })
    expect(v.parse(MaintenanceSweep, r)).toEqual(r)
    // One that never began (no catalog): nothing done.
    const never = sweepReport(null, 6, new Error(`bad\u0000${'x'.repeat(2000)}`), at)
    expect(never).toMatchObject({ files_compacted: 0, snapshots_expired: 0, seconds: 0 })
    expect(never.error).toHaveLength(1000)
    expect(never.error).not.toContain('\u0000')
    expect(v.parse(MaintenanceSweep, never)).toEqual(never)
  })
})
