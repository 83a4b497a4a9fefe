// The token bucket under the rate limits (edge/limits/bucket.ts) and the PATCH merge of a sink's
// limits (edge/limits/settings.ts), with the clock given.
import { describe, expect, it } from 'vitest'
import { TokenBucket } from '../../../edge/limits/bucket.ts'
import { patchedLimits, projectRates, sinkRates } from '../../../edge/limits/settings.ts'
import type { Env } from '../../../edge/env.ts'

describe('TokenBucket', () => {
  it('starts full with one second’s worth, refills at its rate, holds no more', () => {
    const b = new TokenBucket(3, 0)
    for (let i = 0; i < 3; i++) {
      expect(b.waitFor(1, 0)).toBe(0)
      b.take(1, 0)
    }
    expect(b.waitFor(1, 0)).toBeCloseTo(1000 / 3)
    expect(b.waitFor(1, 1000 / 3)).toBe(0)
    // A long quiet fills it to its capacity, not beyond.
    const q = new TokenBucket(2, 0)
    expect(q.waitFor(1, 60_000)).toBe(0)
    q.take(1, 60_000)
    q.take(1, 60_000)
    expect(q.waitFor(1, 60_000)).toBe(500)
  })

  it('a rate under one a second holds one token: one request, then 1/rate seconds', () => {
    const b = new TokenBucket(0.01, 0)
    expect(b.waitFor(1, 0)).toBe(0)
    b.take(1, 0)
    expect(b.waitFor(1, 0)).toBeCloseTo(100_000)
  })

  it('a cost bigger than a second’s budget passes on a full bucket and leaves a debt', () => {
    const b = new TokenBucket(1024, 0)
    expect(b.waitFor(4096, 0)).toBe(0)
    b.take(4096, 0)
    // 3072 bytes in debt, then 10 more wanted: (3072 + 10) / 1024 s.
    expect(b.waitFor(10, 0)).toBeCloseTo(((3072 + 10) / 1024) * 1000)
    expect(b.waitFor(10, 4000)).toBe(0)
  })

  it('gives back what a refused request took', () => {
    const b = new TokenBucket(1, 0)
    b.take(1, 0)
    expect(b.waitFor(1, 0)).toBe(1000)
    b.give(1)
    expect(b.waitFor(1, 0)).toBe(0)
  })
})

describe('limits', () => {
  it('a PATCH merges member by member; null drops one; null for both is none', () => {
    expect(patchedLimits(null, { requests_per_second: 5 })).toEqual({ requests_per_second: 5, bytes_per_second: null })
    expect(patchedLimits({ requests_per_second: 5, bytes_per_second: null }, { bytes_per_second: 2048 })).toEqual({
      requests_per_second: 5,
      bytes_per_second: 2048,
    })
    expect(patchedLimits({ requests_per_second: 5, bytes_per_second: 2048 }, { requests_per_second: null })).toEqual({
      requests_per_second: null,
      bytes_per_second: 2048,
    })
    expect(patchedLimits({ requests_per_second: 5, bytes_per_second: null }, { requests_per_second: null })).toBeNull()
    expect(patchedLimits({ requests_per_second: 5, bytes_per_second: 2048 }, null)).toBeNull()
  })

  it('a sink’s own limits, else the configured defaults; the project ceiling from configuration; nothing configured is none', () => {
    const env = { LHBOX_SINK_REQUESTS_PER_SECOND: '10', LHBOX_PROJECT_BYTES_PER_SECOND: '1048576' } as unknown as Env
    expect(sinkRates(env, null)).toEqual({ requests: 10, bytes: null })
    expect(sinkRates(env, { requests_per_second: 2, bytes_per_second: 4096 })).toEqual({ requests: 2, bytes: 4096 })
    expect(projectRates(env)).toEqual({ requests: null, bytes: 1048576 })
    expect(sinkRates({} as Env, null)).toEqual({ requests: null, bytes: null })
    expect(sinkRates({ LHBOX_SINK_REQUESTS_PER_SECOND: 'none' } as unknown as Env, null)).toEqual({ requests: null, bytes: null })
  })
})
