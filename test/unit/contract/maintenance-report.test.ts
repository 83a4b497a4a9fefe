// The sweep's end on the wire (contract/internal.ts): the report that releases a maintenance lease may
// say what the sweep did; the schema holds its times to RFC 3339 and its counts to whole numbers.
import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { MaintenanceSweep, RollReport } from '../../../contract/internal.ts'

const sweep = {
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
}
const issues = (schema: v.GenericSchema, input: unknown) => {
  const got = v.safeParse(schema, input)
  return got.success ? [] : got.issues.map((i) => `${v.getDotPath(i)}: ${i.message}`)
}

describe('MaintenanceSweep', () => {
  it('takes a sweep’s end, an error optional, and keeps nothing it does not name', () => {
    expect(v.parse(MaintenanceSweep, sweep)).toEqual(sweep)
    expect(v.parse(MaintenanceSweep, { ...sweep, error: 'catalog unavailable' })).toEqual({ ...sweep, error: 'catalog unavailable' })
    expect(v.parse(MaintenanceSweep, { ...sweep, extra: 1 })).toEqual(sweep)
    // Microseconds, and an offset, are RFC 3339 too.
    expect(issues(MaintenanceSweep, { ...sweep, at: '2026-12-02T14:00:00.123456Z', next_at: '2026-12-02T20:00:00+02:00' })).toEqual([])
  })

  it('refuses times that are not RFC 3339, counts that are not whole and ≥ 0, a missing count, a NUL in the error', () => {
    expect(issues(MaintenanceSweep, { ...sweep, at: '2026-12-02' })).toEqual(['at: times are RFC 3339'])
    expect(issues(MaintenanceSweep, { ...sweep, next_at: 1796220000000 })[0]).toMatch(/^next_at: /)
    expect(issues(MaintenanceSweep, { ...sweep, files_compacted: 1.5 })[0]).toMatch(/^files_compacted: /)
    expect(issues(MaintenanceSweep, { ...sweep, snapshots_expired: -1 })[0]).toMatch(/^snapshots_expired: /)
    expect(issues(MaintenanceSweep, { ...sweep, seconds: -0.1 })[0]).toMatch(/^seconds: /)
    const { files_deleted: _, ...missing } = sweep
    expect(issues(MaintenanceSweep, missing)[0]).toMatch(/^files_deleted: /)
    expect(issues(MaintenanceSweep, { ...sweep, error: 'a\u0000b' })).toEqual(['error: error may not contain U+0000 (NUL)'])
    expect(issues(MaintenanceSweep, { ...sweep, error: 'x'.repeat(1001) })[0]).toMatch(/^error: /)
  })

  it('rides on the report as `maintenance`, optional; the purpose defaults to a roll', () => {
    const release = { roller: 'r1', roll_id: 'sweep-1', purpose: 'maintenance', maintenance: sweep }
    expect(v.parse(RollReport, release)).toMatchObject({ purpose: 'maintenance', maintenance: sweep, release: true, consumed: [] })
    expect(v.parse(RollReport, { roller: 'r1', roll_id: 'roll-1' })).not.toHaveProperty('maintenance')
    expect(v.parse(RollReport, { roller: 'r1', roll_id: 'roll-1' }).purpose).toBe('roll')
    expect(issues(RollReport, { ...release, maintenance: { ...sweep, at: 'yesterday' } })).toEqual(['maintenance.at: times are RFC 3339'])
  })
})
