// A roll's request counts: by kind, and in a row (overlapping requests count once).
import { describe, expect, it } from 'vitest'
import { RollRequests } from '../../../roller/requests.ts'

describe('RollRequests', () => {
  it('counts each request by kind, and requests in a row', async () => {
    const r = new RollRequests()
    await r.track('s3', async () => 'list')
    await r.track('catalog', async () => 'load')
    await r.track('edge', async () => 'report')
    expect(r.summary()).toEqual({ s3: 1, catalog: 1, edge: 1, total: 3, sequential: 3 })
  })

  it('counts requests issued at once as one round trip', async () => {
    const r = new RollRequests()
    await Promise.all([r.track('s3', async () => 1), r.track('s3', async () => 2), r.track('s3', async () => 3)])
    const ends = [r.start('s3'), r.start('catalog')]
    for (const end of ends) end()
    expect(r.summary()).toEqual({ s3: 4, catalog: 1, edge: 0, total: 5, sequential: 2 })
  })

  it('ends a request once, whatever calls its end twice, and counts a failed one', async () => {
    const r = new RollRequests()
    const end = r.observer('s3')()
    end()
    end()
    await expect(r.track('catalog', async () => Promise.reject(new Error('409')))).rejects.toThrow('409')
    const sql = r.sql({ query: async () => ({ rows: [], rowCount: 0 }) })
    await sql.query('select 1')
    expect(r.summary()).toEqual({ s3: 1, catalog: 2, edge: 0, total: 3, sequential: 3 })
  })
})
