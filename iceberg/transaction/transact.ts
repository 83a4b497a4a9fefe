// The one way a change reaches a table: plan → write → commit, with bounded retries.
//   - a CommitConflict: the same plan's change is built again on the freshly loaded table;
//   - a PlanStale (thrown by `change`): the plan no longer fits the fresh table — it is discarded
//     and made again;
//   - a CommitAbandoned (thrown by `plan` or `change`): the change must not be made at all;
//   - an unknown outcome (CommitStateUnknown, or any error the catalog did not classify): the table is
//     reloaded and searched for the plan's own snapshot id; found, the commit stands, otherwise the
//     error goes to the caller — never a blind retry.
// Every retry waits a jittered backoff within the policy's minimum and maximum.
import { CatalogError, CommitConflict, CommitStateUnknown, type Catalog, type LoadedTable } from '../catalog/index.ts'
import { currentSnapshot } from '../spec/metadata.ts'
import type { TableRequirement, TableUpdate } from '../spec/updates.ts'

export interface RetryPolicy {
  /** commits tried at most (the spec: 5), and plans made at most */
  attempts: number
  minBackoffMs: number
  maxBackoffMs: number
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 5, minBackoffMs: 500, maxBackoffMs: 8000 }

export interface Change {
  requirements: TableRequirement[]
  updates: TableUpdate[]
  /** Writes the updates name still in flight: the catalog finishes them before the commit is visible (CommitOptions). */
  ready?: Promise<unknown>
}

/** The change must not be made at all (seen on a fresh base, or refused by the plan). */
export class CommitAbandoned extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'CommitAbandoned'
  }
}

/** The plan was made on a table that has moved in a way it cannot absorb: plan again. */
export class PlanStale extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'PlanStale'
  }
}

export interface Transaction<P> {
  /**
   * Plans on `base` and writes what the plan needs (data files, manifests). Null: nothing to do.
   * `round` counts the plans made before this one (0 for the first).
   */
  plan(base: LoadedTable, round: number): Promise<P | null>
  /**
   * The change that commits `plan` on `base`: the table it was planned on, or a fresher one after a
   * conflict (`attempt` > 0). Throws PlanStale to plan again, CommitAbandoned to commit nothing.
   */
  change(plan: P, base: LoadedTable, attempt: number): Promise<Change>
  /** The snapshot this plan adds, if any: an unknown outcome is resolved by looking for it. */
  snapshotId?(plan: P): bigint | null
  /** Removes what the plan wrote, once it is certain not to be committed. */
  discard?(plan: P): Promise<void>
}

export interface TransactOptions {
  retry?: RetryPolicy
  /** Called before each retry with its cause (the roller counts lhbox_commit_retries_total here). */
  onRetry?: (cause: CommitConflict | PlanStale, attempt: number) => void
}

export interface Committed<P> {
  table: LoadedTable
  plan: P
  /** Set when the commit's answer was lost and the table was found to hold the plan's snapshot. */
  unknownOutcome?: Error
}

export async function transact<P>(catalog: Catalog, table: LoadedTable, tx: Transaction<P>, opts: TransactOptions = {}): Promise<Committed<P> | null> {
  const policy = opts.retry ?? DEFAULT_RETRY
  let base = table
  let plan: P | null = null
  let plannedOn = table
  let rounds = 0 // plans made
  let commits = 0 // commits tried
  for (let attempt = 0; ; attempt++) {
    if (plan === null) {
      plannedOn = base
      plan = await tx.plan(base, rounds++)
      if (plan === null) return null
    }
    let committing = false
    // A write the change was waiting for failed: nothing was committed, whatever the catalog says.
    let notMade: unknown
    try {
      const change = await tx.change(plan, base, attempt)
      const ready = change.ready?.catch((err: unknown) => {
        notMade = err
        throw err
      })
      committing = true
      commits++
      return { table: await catalog.commitTable(base, change.requirements, change.updates, ready ? { ready } : undefined), plan }
    } catch (err) {
      if (notMade !== undefined && err === notMade) {
        await tx.discard?.(plan)
        throw err
      }
      // The catalog's answer is lost (an unknown outcome, or a failure it did not classify).
      if (committing && (err instanceof CommitStateUnknown || !(err instanceof CatalogError))) return resolveUnknown(catalog, base, tx, plan, err as Error)
      const again = (err instanceof CommitConflict && commits < policy.attempts) || (err instanceof PlanStale && rounds < policy.attempts)
      if (!again || err instanceof PlanStale) await tx.discard?.(plan)
      if (!again) throw err
      opts.onRetry?.(err as CommitConflict | PlanStale, attempt)
      if (err instanceof PlanStale) {
        plan = null // planned again at once, on a table loaded after the stale plan was made
        if (base === plannedOn) base = await catalog.loadTable(table.identifier)
      } else {
        await backoff(policy, commits - 1)
        base = await catalog.loadTable(table.identifier)
      }
    }
  }
}

/**
 * Throws PlanStale when `base` is not at the snapshot a plan read (`planned`): for plans that any
 * other commit may invalidate (a keyed roll, a dedupe: new rows may hold the same keys).
 */
export function assertUnmoved(base: LoadedTable, planned: bigint | null): void {
  if ((currentSnapshot(base.metadata)?.['snapshot-id'] ?? null) !== planned) throw new PlanStale('the table moved since the plan')
}

/** Builds a change on `table` and commits it; on a conflict, builds it again on the reloaded table. */
export async function commitWithRetry(
  catalog: Catalog,
  table: LoadedTable,
  build: (base: LoadedTable, attempt: number) => Promise<Change>,
  policy: RetryPolicy = DEFAULT_RETRY,
  onRetry?: TransactOptions['onRetry'],
): Promise<LoadedTable> {
  const done = await transact(catalog, table, { plan: async () => true, change: (_plan, base, attempt) => build(base, attempt) }, { retry: policy, onRetry })
  return done!.table
}

/** An unknown outcome: the reloaded table holds the plan's snapshot (committed), or the error stands. */
async function resolveUnknown<P>(catalog: Catalog, base: LoadedTable, tx: Transaction<P>, plan: P, cause: Error): Promise<Committed<P>> {
  const snapshotId = tx.snapshotId?.(plan) ?? null
  if (snapshotId === null) throw cause
  let fresh: LoadedTable
  try {
    fresh = await catalog.loadTable(base.identifier)
  } catch (err) {
    throw new CommitStateUnknown(`${cause.message}; the table cannot be reloaded to look for snapshot ${snapshotId}: ${(err as Error).message}`)
  }
  if (fresh.metadata.snapshots.some((s) => s['snapshot-id'] === snapshotId)) return { table: fresh, plan, unknownOutcome: cause }
  // Not committed: what the plan wrote is garbage, unless a late commit still lands (then it is not).
  throw new CommitStateUnknown(`${cause.message}; the table does not hold it (snapshot ${snapshotId})`)
}

function backoff(policy: RetryPolicy, attempt: number): Promise<void> {
  const ceiling = Math.min(policy.maxBackoffMs, policy.minBackoffMs * 2 ** attempt)
  const ms = policy.minBackoffMs + Math.random() * Math.max(0, ceiling - policy.minBackoffMs)
  return new Promise((r) => setTimeout(r, ms))
}
