// The catch-up driver (roller/catch-up.ts): rolls again under the lease while a roll says batches it
// could not take wait, within the limits; carries the table; stops on a failure or a lost lease.
import { describe, expect, it } from 'vitest'
import type { LoadedTable } from '../../../iceberg/catalog/index.ts'
import type { SinkView } from '../../../roller/api.ts'
import { rollCatchingUp, type CatchUpDeps } from '../../../roller/catch-up.ts'
import { jsonLogger } from '../../../roller/log.ts'
import type { RollResult } from '../../../roller/roll.ts'

const sink = (extra: Partial<SinkView> = {}) => ({ id: 'snk_1', key: null, dedupe_requested_at: null, feed: null, ...extra }) as unknown as SinkView
const tableNo = (n: number) => ({ metadataLocation: `m${n}` }) as unknown as LoadedTable

/** A driver whose rolls are `behind[i]` (batches left after roll i), recording what each roll was given. */
function world(behind: boolean[], opts: { rolls?: number; ms?: number; leaseAgain?: (s: SinkView) => SinkView | null; fail?: number } = {}) {
  const calls: Array<{ table?: string; mayFollow: boolean; view: SinkView }> = []
  const points: string[] = []
  const logs: Array<Record<string, unknown>> = []
  const deps: CatchUpDeps = {
    limits: { rolls: opts.rolls ?? 4, ms: opts.ms ?? 30_000 },
    log: jsonLogger({}, (l) => logs.push(JSON.parse(l))),
    rollOnce: async (view, c) => {
      const n = calls.push({ table: c.table?.metadataLocation, mayFollow: c.mayFollow, view })
      if (opts.fail === n) return null
      const result: RollResult = { snapshotIds: [`${n}`], batches: 2, rows: 4, rejectedRows: 0, repaired: 0 }
      return { ...result, follows: c.mayFollow && behind[n - 1], table: tableNo(n) }
    },
    leaseAgain: async (s) => (opts.leaseAgain ? opts.leaseAgain(s) : { ...s }),
    checkpoint: (name) => {
      points.push(name)
    },
    stopping: () => false,
  }
  return { deps, calls, points, logs }
}

describe('rollCatchingUp', () => {
  it('rolls once when the roll took everything waiting', async () => {
    const w = world([false])
    expect(await rollCatchingUp(sink(), w.deps)).toBe(true)
    expect(w.calls.map((c) => [c.table, c.mayFollow])).toEqual([[undefined, true]])
    expect(w.points).toEqual([])
    expect(w.logs).toEqual([])
  })

  it('rolls again while behind, each roll from the table the one before left, a checkpoint between', async () => {
    const w = world([true, true, false])
    expect(await rollCatchingUp(sink(), w.deps)).toBe(true)
    expect(w.calls.map((c) => [c.table, c.mayFollow])).toEqual([
      [undefined, true],
      ['m1', true],
      ['m2', true],
    ])
    expect(w.points).toEqual(['catch-up', 'catch-up'])
    expect(w.logs).toMatchObject([{ msg: 'catch-up done', sink_id: 'snk_1', rolls: 3, batches: 6, rows: 12 }])
  })

  it('lets no roll past the limit keep the lease: at most `rolls`, none started after `ms`', async () => {
    const w = world([true, true, true, true, true], { rolls: 3 })
    await rollCatchingUp(sink(), w.deps)
    expect(w.calls.map((c) => c.mayFollow)).toEqual([true, true, false])
    const late = world([true, true], { ms: 0 })
    await rollCatchingUp(sink(), late.deps)
    expect(late.calls.map((c) => c.mayFollow)).toEqual([false])
    const off = world([true], { rolls: 1 })
    await rollCatchingUp(sink(), off.deps)
    expect(off.calls.map((c) => c.mayFollow)).toEqual([false])
  })

  it('never follows a roll that a dedupe or a feed run follows (they release the lease)', async () => {
    for (const extra of [{ dedupe_requested_at: '2026-12-03T00:00:00Z', key: ['id'] }, { feed: { run: { run_id: 'r', manual: true } } }]) {
      const w = world([true], {})
      await rollCatchingUp(sink(extra as Partial<SinkView>), w.deps)
      expect(w.calls.map((c) => c.mayFollow)).toEqual([false])
    }
  })

  it('rolls the fresh view the lease renewal answers; stops when there is none, or a roll fails', async () => {
    const fresh = sink({ name: 'fresh' } as Partial<SinkView>)
    const w = world([true, false], { leaseAgain: () => fresh })
    await rollCatchingUp(sink(), w.deps)
    expect(w.calls[1].view).toBe(fresh)
    const gone = world([true, true], { leaseAgain: () => null })
    expect(await rollCatchingUp(sink(), gone.deps)).toBe(true)
    expect(gone.calls).toHaveLength(1)
    const failed = world([true, true], { fail: 2 })
    expect(await rollCatchingUp(sink(), failed.deps)).toBe(false)
    expect(failed.calls).toHaveLength(2)
  })
})
