// Roll slots: up to `size` rolls at once; large ones one at a time, small ones beside them.
import { describe, expect, it } from 'vitest'
import type { SinkView } from '../../../roller/api.ts'
import { isLarge, RollSlots } from '../../../roller/slots.ts'

/** A roll that runs until the test lets it end, recording when it started. */
function gate() {
  let open: () => void = () => {}
  const ended = new Promise<void>((r) => {
    open = r
  })
  return { ended, open }
}

describe('RollSlots', () => {
  it('runs small rolls side by side and counts the slots in use', async () => {
    const slots = new RollSlots(3)
    const started: string[] = []
    const gates = [gate(), gate()]
    const runs = gates.map((g, i) =>
      slots.run(false, async () => {
        started.push(`s${i}`)
        await g.ended
        return i
      }),
    )
    await Promise.resolve()
    expect(started).toEqual(['s0', 's1'])
    expect({ used: slots.used, free: slots.free }).toEqual({ used: 2, free: 1 })
    for (const g of gates) g.open()
    expect(await Promise.all(runs)).toEqual([0, 1])
    expect({ used: slots.used, free: slots.free }).toEqual({ used: 0, free: 3 })
  })

  it('takes large rolls in turns, holding their slots while they wait, while small ones go on', async () => {
    const slots = new RollSlots(4)
    const started: string[] = []
    const [l1, l2, s1] = [gate(), gate(), gate()]
    const runs = [
      slots.run(true, async () => {
        started.push('large-1')
        await l1.ended
      }),
      slots.run(true, async () => {
        started.push('large-2')
        await l2.ended
      }),
      slots.run(false, async () => {
        started.push('small')
        await s1.ended
      }),
    ]
    await new Promise((r) => setTimeout(r, 0))
    expect([...started].sort()).toEqual(['large-1', 'small'])
    expect(slots.used).toBe(3)
    l1.open()
    await runs[0]
    await new Promise((r) => setTimeout(r, 0))
    expect(started.at(-1)).toBe('large-2')
    expect(started).toHaveLength(3)
    l2.open()
    s1.open()
    await Promise.all(runs)
    expect(slots.used).toBe(0)
  })

  it('runs a sweep in the large turn without a roll slot: after the large roll before it, beside small ones', async () => {
    const slots = new RollSlots(1)
    const started: string[] = []
    const [large, sweep] = [gate(), gate()]
    const roll = slots.run(true, async () => {
      started.push('large')
      await large.ended
    })
    const swept = slots.inLargeTurn(async () => {
      started.push('sweep')
      await sweep.ended
    })
    await new Promise((r) => setTimeout(r, 0))
    expect(started).toEqual(['large'])
    large.open()
    await roll
    await new Promise((r) => setTimeout(r, 0))
    expect(started).toEqual(['large', 'sweep'])
    // The sweep holds no slot: a small roll runs beside it, a large one waits for it.
    expect(slots.free).toBe(1)
    expect(await slots.run(false, async () => 'small')).toBe('small')
    const next = slots.run(true, async () => started.push('large-2'))
    await new Promise((r) => setTimeout(r, 0))
    expect(started).toEqual(['large', 'sweep'])
    sweep.open()
    await Promise.all([swept, next])
    expect(started).toEqual(['large', 'sweep', 'large-2'])
  })

  it('frees the slot and the large turn when a roll throws', async () => {
    const slots = new RollSlots(1)
    await expect(slots.run(true, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom')
    expect(slots.free).toBe(1)
    expect(await slots.run(true, async () => 'next')).toBe('next')
  })
})

describe('isLarge', () => {
  const sink = (o: Partial<SinkView>) =>
    ({ lag: { batches: 1, bytes: 100, oldest_at: null, newest_at: null }, key: null, dedupe_requested_at: null, feed: null, ...o }) as SinkView
  it('is more bytes waiting than the limit, a keyed roll, a dedupe or a feed run', () => {
    expect(isLarge(sink({}), 1000)).toBe(false)
    expect(isLarge(sink({ lag: { batches: 1, bytes: 1001, oldest_at: null, newest_at: null } }), 1000)).toBe(true)
    expect(isLarge(sink({ key: ['id'] }), 1000)).toBe(true)
    expect(isLarge(sink({ dedupe_requested_at: '2026-01-01T00:00:00Z' }), 1000)).toBe(true)
    expect(isLarge(sink({ feed: { kind: 'sql', every_seconds: 60, run: { run_id: 'r', manual: true } } }), 1000)).toBe(true)
    expect(isLarge(sink({ feed: { kind: 'sql', every_seconds: 60, run: null } }), 1000)).toBe(false)
  })
})
