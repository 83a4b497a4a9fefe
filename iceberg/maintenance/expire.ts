// Snapshot expiry: one `remove-snapshots` commit bounded by two limits, whichever comes first: a
// snapshot beyond the newest `retainLast` (by timestamp) or older than `maxAgeMs` is expired — the
// current snapshot of main and every branch and tag head are always kept. (Java's ExpireSnapshots
// reads its count as a floor under the age limit instead; here either limit alone expires.) A commit
// that lands in between (a roll) only changes which snapshots are the newest: on CommitConflict the
// expiry is planned again on the fresh base. Files are deleted afterwards, by deleteUnreachable
// (cleanup.ts), and only from the metadata this commit produced.

import { CommitStateUnknown, type Catalog, type LoadedTable } from '../catalog/index.ts'
import { CommitAbandoned, commitWithRetry, DEFAULT_RETRY, type Change, type RetryPolicy, type TransactOptions } from '../transaction/transact.ts'
import { branchSnapshotId, type TableMetadata } from '../spec/metadata.ts'
import type { TableRequirement } from '../spec/updates.ts'

export { deleteUnreachable } from './cleanup.ts'

const DEFAULT_RETAIN_LAST = 20

/** What stays: at most `retainLast` snapshots, none older than `maxAgeMs`; ref heads whatever their rank or age. */
export interface RetentionPolicy {
  /** Snapshots to keep, newest first by timestamp (at least 1); default 20. */
  retainLast?: number
  /** Snapshots whose timestamp is more than this before `now` are expired; no age limit when unset. */
  maxAgeMs?: number
  /** The clock the age is measured on (ms since the epoch); default Date.now() when the expiry starts. */
  now?: number
}

export interface ExpireOptions extends RetentionPolicy {
  retry?: RetryPolicy
  onRetry?: TransactOptions['onRetry']
}

export interface ExpireResult {
  /** Ids removed by the commit, oldest first (empty: nothing was committed). */
  expired: bigint[]
  /** The table after the commit (or the freshest base seen, when nothing was committed). */
  table: LoadedTable
  /** The metadata the commit was applied to: pass it to deleteUnreachable as `before`. */
  base: TableMetadata
}

/** Snapshot ids no expiry may remove: main's current snapshot and every branch and tag head. */
function protectedSnapshotIds(metadata: TableMetadata): Set<bigint> {
  const ids = new Set<bigint>()
  const main = branchSnapshotId(metadata)
  if (main !== null) ids.add(main)
  for (const ref of Object.values(metadata.refs ?? {})) ids.add(ref['snapshot-id'])
  return ids
}

/**
 * The ids to expire: every snapshot beyond the newest `retainLast` (ties in timestamp broken by
 * sequence number, then by position in the metadata) or older than `maxAgeMs` before `now`, never a
 * protected one. Oldest first.
 */
export function planExpire(metadata: TableMetadata, policy: RetentionPolicy = {}): bigint[] {
  const { retainLast = DEFAULT_RETAIN_LAST, maxAgeMs, now = Date.now() } = policy
  if (!Number.isSafeInteger(retainLast) || retainLast < 1) throw new RangeError(`retainLast must be an integer of at least 1, got ${retainLast}`)
  if (maxAgeMs !== undefined && !(Number.isFinite(maxAgeMs) && maxAgeMs >= 0)) throw new RangeError(`maxAgeMs must be a duration of 0 or more, got ${maxAgeMs}`)
  if (!Number.isFinite(now)) throw new RangeError(`now must be a time in ms, got ${now}`)
  const keep = protectedSnapshotIds(metadata)
  const oldest = maxAgeMs === undefined ? Number.NEGATIVE_INFINITY : now - maxAgeMs
  const newestFirst = metadata.snapshots
    .map((s, index) => ({ s, index }))
    .sort((a, b) => {
      const t = b.s['timestamp-ms'] - a.s['timestamp-ms']
      if (t !== 0) return t
      const sa = a.s['sequence-number'] ?? 0n
      const sb = b.s['sequence-number'] ?? 0n
      if (sa !== sb) return sb > sa ? 1 : -1
      return b.index - a.index
    })
  return newestFirst
    .filter(({ s }, rank) => (rank >= retainLast || s['timestamp-ms'] < oldest) && !keep.has(s['snapshot-id']))
    .reverse()
    .map(({ s }) => s['snapshot-id'])
}

/**
 * The commit of an expiry planned on `base`: the same table, main and every ref where they were
 * (a ref moved or created meanwhile fails the commit, and the expiry is planned again).
 */
export function expireChange(base: TableMetadata, expired: bigint[]): Change {
  const requirements: TableRequirement[] = [
    { type: 'assert-table-uuid', uuid: base['table-uuid'] },
    { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': branchSnapshotId(base) },
  ]
  for (const [name, ref] of Object.entries(base.refs ?? {})) {
    if (name !== 'main') requirements.push({ type: 'assert-ref-snapshot-id', ref: name, 'snapshot-id': ref['snapshot-id'] })
  }
  return { requirements, updates: [{ action: 'remove-snapshots', 'snapshot-ids': expired }] }
}

/**
 * Removes the snapshots beyond the newest `retainLast` or older than `maxAgeMs` in one commit (the age
 * measured on one clock reading, `now`, for every attempt); nothing to expire → no commit. An unknown commit outcome is resolved by reloading: what is gone from the reloaded
 * metadata is reported as expired (deleteUnreachable stays safe either way, since it deletes only
 * what `table` no longer reaches).
 */
export async function expireSnapshots(catalog: Catalog, table: LoadedTable, opts: ExpireOptions = {}): Promise<ExpireResult> {
  const policy: RetentionPolicy = { retainLast: opts.retainLast ?? DEFAULT_RETAIN_LAST, maxAgeMs: opts.maxAgeMs, now: opts.now ?? Date.now() }
  let expired = planExpire(table.metadata, policy)
  if (expired.length === 0) return { expired, table, base: table.metadata }
  let base = table
  try {
    const committed = await commitWithRetry(
      catalog,
      table,
      async (fresh) => {
        base = fresh
        expired = planExpire(fresh.metadata, policy)
        if (expired.length === 0) throw new CommitAbandoned('nothing left to expire on the fresh base')
        return expireChange(fresh.metadata, expired)
      },
      opts.retry ?? DEFAULT_RETRY,
      opts.onRetry,
    )
    return { expired, table: committed, base: base.metadata }
  } catch (err) {
    if (err instanceof CommitAbandoned) return { expired: [], table: base, base: base.metadata }
    if (err instanceof CommitStateUnknown) {
      const reloaded = await catalog.loadTable(table.identifier)
      if (reloaded.metadata['table-uuid'] !== base.metadata['table-uuid']) throw err
      const present = new Set(reloaded.metadata.snapshots.map((s) => s['snapshot-id']))
      const gone = expired.filter((id) => !present.has(id))
      if (gone.length === 0) throw err // not committed; the next sweep tries again
      return { expired: gone, table: reloaded, base: base.metadata }
    }
    throw err
  }
}
