// transact (iceberg/transaction/transact.ts), the one plan → write → commit primitive, on the in-memory
// catalog with faults put in front of its commit: conflicts re-apply the same plan, a stale plan is
// planned again, an unknown outcome is resolved by looking for the plan's snapshot, and the retry
// policy (attempts, backoff bounds) and onRetry hold.
import { describe, expect, it, vi } from 'vitest'
import { CommitConflict, CommitStateUnknown, type LoadedTable } from '../../../iceberg/catalog/index.ts'
import type { DataFile } from '../../../iceberg/manifest/manifest.ts'
import { currentSnapshot } from '../../../iceberg/spec/metadata.ts'
import { fastAppend } from '../../../iceberg/transaction/append.ts'
import { assertUnmoved, type Change, CommitAbandoned, commitWithRetry, PlanStale, transact } from '../../../iceberg/transaction/transact.ts'
import { LOC, type MemoryCatalog, partitionedTable } from './memory-catalog.ts'

const FAST = { attempts: 5, minBackoffMs: 1, maxBackoffMs: 4 }
let n = 0
const file = (): DataFile => ({ filePath: `${LOC}/data/t${n++}.parquet`, fileFormat: 'PARQUET', partition: { d: 1 }, recordCount: 1, fileSizeInBytes: 10 })

/** A racing writer: before each of the next `times` commits, another append lands first (the head moves). */
function race(catalog: MemoryCatalog, times: number): void {
  let left = times
  const next = async () => {
    catalog.beforeCommit = undefined
    await fastAppend(catalog, catalog.current, [file()], { retry: FAST })
    left--
    catalog.beforeCommit = left > 0 ? next : undefined
  }
  catalog.beforeCommit = next
}

const head = (t: LoadedTable) => currentSnapshot(t.metadata)?.['snapshot-id'] ?? null

/** Sets properties, but only on the head the change was built on (so a racing append conflicts). */
const onHead = (base: LoadedTable, properties: Record<string, string>): Change => ({
  requirements: [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': head(base) }],
  updates: [{ action: 'set-properties', updates: properties }],
})

describe('transact', () => {
  it('a conflict re-applies the same plan on the fresh table; onRetry is told each time', async () => {
    const catalog = await partitionedTable()
    let plans = 0
    const retries: string[] = []
    race(catalog, 2)
    const done = await transact(
      catalog,
      catalog.current,
      {
        plan: async () => ++plans,
        change: async (_p, base) => onHead(base, { mine: 'yes' }),
      },
      { retry: FAST, onRetry: (cause, attempt) => retries.push(`${cause.name}@${attempt}`) },
    )
    expect(plans).toBe(1)
    expect(retries).toEqual(['CommitConflict@0', 'CommitConflict@1'])
    expect(done!.table.metadata.properties.mine).toBe('yes')
    expect(done!.table.metadata.snapshots).toHaveLength(2) // both racing appends kept
  })

  it('gives up after the policy’s attempts with the conflict, and discards the plan', async () => {
    const catalog = await partitionedTable()
    race(catalog, 10)
    const discarded: number[] = []
    const attempt = transact(
      catalog,
      catalog.current,
      { plan: async () => 7, change: async (_p, base) => onHead(base, { mine: 'yes' }), discard: async (p) => void discarded.push(p) },
      { retry: { attempts: 3, minBackoffMs: 1, maxBackoffMs: 2 } },
    )
    await expect(attempt).rejects.toBeInstanceOf(CommitConflict)
    expect(catalog.conflicts).toBe(3)
    expect(discarded).toEqual([7])
    expect(catalog.current.metadata.properties.mine).toBeUndefined()
  })

  it('a stale plan is discarded and planned again on the fresh table, without a second reload', async () => {
    const catalog = await partitionedTable()
    await fastAppend(catalog, catalog.current, [file()], { retry: FAST })
    const planned: Array<bigint | null> = []
    const discarded: Array<bigint | null> = []
    race(catalog, 1) // a commit lands between the plan and its commit: the plan goes stale
    const loads = countLoads(catalog)
    const done = await transact(
      catalog,
      catalog.current,
      {
        plan: async (base) => {
          planned.push(head(base))
          return head(base)
        },
        change: async (planHead, base) => {
          assertUnmoved(base, planHead)
          return onHead(base, { planned_on: String(planHead) })
        },
        discard: async (p) => void discarded.push(p),
      },
      { retry: FAST },
    )
    expect(planned).toHaveLength(2)
    expect(discarded).toEqual([planned[0]])
    expect(done!.table.metadata.properties.planned_on).toBe(String(planned[1]))
    expect(loads()).toBe(1) // the reload after the conflict served the new plan too
  })

  it('CommitAbandoned stops at once: nothing committed, no retry', async () => {
    const catalog = await partitionedTable()
    let tries = 0
    const attempt = transact(catalog, catalog.current, {
      plan: async () => true,
      change: async () => {
        tries++
        throw new CommitAbandoned('not any more')
      },
    })
    await expect(attempt).rejects.toBeInstanceOf(CommitAbandoned)
    expect(tries).toBe(1)
    expect(catalog.commits).toBe(0)
  })

  it('an unknown outcome whose snapshot landed is a success, flagged unknownOutcome', async () => {
    const catalog = await partitionedTable()
    losesAnswer(catalog, true)
    const done = await fastAppend(catalog, catalog.current, [file()], { retry: FAST })
    expect(done.unknownOutcome).toBeInstanceOf(CommitStateUnknown)
    expect(currentSnapshot(catalog.current.metadata)?.['snapshot-id']).toBe(done.snapshotId)
  })

  it('an unknown outcome whose snapshot did not land goes to the caller, never retried', async () => {
    const catalog = await partitionedTable()
    losesAnswer(catalog, false)
    await expect(fastAppend(catalog, catalog.current, [file()], { retry: FAST })).rejects.toThrow(/does not hold it/)
    expect(catalog.current.metadata.snapshots).toHaveLength(0)
  })

  it('waits between tries within the policy’s minimum and maximum (doubling from the minimum)', async () => {
    const catalog = await partitionedTable()
    race(catalog, 4)
    const waits: number[] = []
    const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms: number) => {
      waits.push(ms)
      fn()
      return 0
    }) as unknown as typeof setTimeout)
    try {
      await commitWithRetry(catalog, catalog.current, async (b) => onHead(b, { k: 'v' }), {
        attempts: 5,
        minBackoffMs: 100,
        maxBackoffMs: 250,
      })
    } finally {
      spy.mockRestore()
    }
    expect(catalog.current.metadata.properties.k).toBe('v')
    expect(waits).toHaveLength(4)
    // the ceilings: 100, 200, 250 (capped), 250
    expect(waits.every((ms) => ms >= 100 && ms <= 250)).toBe(true)
    expect(waits[0]).toBe(100)
  })

  it('PlanStale thrown by plan itself ends the transaction (it is not a retry of a plan)', async () => {
    const catalog = await partitionedTable()
    await expect(
      transact(catalog, catalog.current, {
        plan: async () => {
          throw new PlanStale('no')
        },
        change: async () => ({ requirements: [], updates: [] }),
      }),
    ).rejects.toBeInstanceOf(PlanStale)
  })
})

function countLoads(catalog: MemoryCatalog): () => number {
  let loads = 0
  const load = catalog.loadTable.bind(catalog)
  catalog.loadTable = async (id) => {
    loads++
    return load(id)
  }
  return () => loads
}

/** The next commit's answer is lost: after it was applied (`applied`), or before. */
function losesAnswer(catalog: MemoryCatalog, applied: boolean): void {
  const commit = catalog.commitTable.bind(catalog)
  let once = true
  catalog.commitTable = async (table: LoadedTable, requirements, updates) => {
    if (!once) return commit(table, requirements, updates)
    once = false
    if (applied) await commit(table, requirements, updates)
    throw new CommitStateUnknown('the answer was lost')
  }
}
