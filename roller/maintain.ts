// The maintenance sweep (spec: "every 6 hours: it expires the table back to 20 snapshots and compacts
// the small files"): compact, rewrite the small manifests, expire, delete what no retained snapshot
// reaches. The retained history is "20 snapshots or 168 h": a snapshot beyond the newest 20 or older
// than 168 h is expired, the current one never. The roller runs it under the sink's lease (loop.ts).
// Its commits carry no lakehousebox.sink.* keys; exactly-once holds through them because step 2 of
// every roll reads every retained snapshot AND the committed markers, which cover history that expiry
// removed (the spec: "past the retained history (20 snapshots or 168 h), a roll is still known").
// Its crash points, each after a commit or a step that made one: 'compact-commit', 'manifest-rewrite',
// 'expire' (the expiry committed, its files not yet deleted) and 'cleanup'. A sweep killed between the
// expiry and the clean-up leaves files no retained snapshot reaches: the next sweep's incremental pass
// no longer knows them (their snapshots are gone from the metadata), its orphan pass deletes them once
// they are older than orphanOlderThanMs.
import type { Catalog } from '../iceberg/catalog/index.ts'
import type { TransactOptions } from '../iceberg/transaction/transact.ts'
import { compactTable } from '../iceberg/maintenance/compact.ts'
import { deleteUnreachable, expireSnapshots } from '../iceberg/maintenance/expire.ts'
import { rewriteManifests } from '../iceberg/maintenance/rewrite-manifests.ts'
import type { SinkView } from './api.ts'
import type { Logger } from './log.ts'

/** The spec's 168 h. */
const DEFAULT_MAX_SNAPSHOT_AGE_MS = 168 * 3600_000

export interface MaintenancePolicy {
  /** The newest snapshots kept (spec: 20). */
  retainSnapshots: number
  /** Snapshots older than this are expired too, whichever limit comes first; default 168 h. */
  maxSnapshotAgeMs?: number
  targetFileSizeBytes: number
  /** Unreachable files younger than this are kept: they may belong to a commit in flight. */
  orphanOlderThanMs: number
}

export interface MaintenanceResult {
  snapshotsExpired: number
  filesDeleted: number
  bytesDeleted: number
  filesCompacted: number
  bytesCompacted: number
  /** Data manifests replaced by the manifest rewrite, and the manifests it wrote. */
  manifestsRewritten: number
  manifestsCreated: number
  seconds: number
}

export async function maintainTable(
  sink: SinkView,
  catalog: Catalog,
  policy: MaintenancePolicy,
  log: Logger,
  commits: TransactOptions = {},
  /** A step boundary (tests kill the roller here). */
  checkpoint: (name: string) => void | Promise<void> = () => {},
): Promise<MaintenanceResult> {
  const started = Date.now()
  const id = { namespace: [sink.table.namespace], name: sink.table.name }
  const table = await catalog.loadTable(id)
  // Compact first: its replace snapshot then counts among the ones kept, and the small files only
  // the expired snapshots reach are deleted in this same sweep.
  const compacted = await compactTable(catalog, table, { targetFileSizeBytes: policy.targetFileSizeBytes, ...commits })
  if (compacted) await checkpoint('compact-commit')
  // Then the manifests: the ones compaction left with only dead entries are dropped, and small ones
  // (files not compacted, appends since the last merge) are folded into a few.
  const rewritten = await rewriteManifests(catalog, compacted?.table ?? table, commits)
  if (rewritten) await checkpoint('manifest-rewrite')
  const expired = await expireSnapshots(catalog, rewritten?.table ?? compacted?.table ?? table, {
    retainLast: policy.retainSnapshots,
    maxAgeMs: policy.maxSnapshotAgeMs ?? DEFAULT_MAX_SNAPSHOT_AGE_MS,
    ...commits,
  })
  if (expired.expired.length > 0) await checkpoint('expire')
  // Files are deleted only after the commit that unreferenced them succeeded.
  const cleanup = await deleteUnreachable(expired.base, expired.table, { orphanOlderThanMs: policy.orphanOlderThanMs })
  await checkpoint('cleanup')
  if (cleanup.failed.length > 0) log.warn('some unreachable files could not be deleted', { failed: cleanup.failed.length })
  const result: MaintenanceResult = {
    snapshotsExpired: expired.expired.length,
    filesDeleted: cleanup.deleted.length,
    bytesDeleted: cleanup.bytes,
    filesCompacted: compacted?.rewrittenFiles ?? 0,
    bytesCompacted: compacted?.bytesCompacted ?? 0,
    manifestsRewritten: rewritten?.replaced ?? 0,
    manifestsCreated: rewritten?.created ?? 0,
    seconds: (Date.now() - started) / 1000,
  }
  log.info('maintained', { ...result, compaction_snapshot: compacted?.snapshotId ?? null, manifest_rewrite_snapshot: rewritten?.snapshotId ?? null })
  return result
}
