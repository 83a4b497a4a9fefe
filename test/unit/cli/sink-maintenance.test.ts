// lhbox sink get's maintenance line: the last sweep and the next.
import { describe, expect, it } from 'vitest'
import { maintenanceLines } from '../../../cli/commands/sink-maintenance.ts'

const last = {
  at: '2026-12-02T14:00:00.000Z',
  next_at: '2026-12-02T20:00:00.000Z',
  snapshots_expired: 82,
  files_compacted: 100,
  manifests_rewritten: 3,
  files_deleted: 181,
  seconds: 1.25,
}

describe('maintenanceLines', () => {
  it('says what the last sweep did and when the next is due', () => {
    expect(maintenanceLines({ maintenance: { last, next_at: last.next_at } })).toEqual([
      'sweeps     last 2026-12-02T14:00:00.000Z: 82 snapshots expired, 100 files compacted, 3 manifests rewritten, 181 files deleted in 1.3 s; next due 2026-12-02T20:00:00.000Z',
    ])
  })

  it('a failed sweep, none yet, none due; nothing from an edge that does not say', () => {
    expect(maintenanceLines({ maintenance: { last: { ...last, error: 'catalog unavailable', files_compacted: 0 }, next_at: last.next_at } })[0]).toBe(
      'sweeps     last 2026-12-02T14:00:00.000Z failed after 1.3 s (catalog unavailable); before it: 82 snapshots expired, 0 files compacted, 3 manifests rewritten, 181 files deleted; next due 2026-12-02T20:00:00.000Z',
    )
    expect(maintenanceLines({ maintenance: { last: null, next_at: null } })).toEqual(['sweeps     none yet'])
    expect(maintenanceLines({ maintenance: { last, next_at: null } })[0]).toMatch(/ in 1\.3 s; none due$/)
    expect(maintenanceLines({})).toEqual([])
  })
})
