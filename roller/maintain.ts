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
// they are older than orphanOlderThanMs. Each sink's sweep ends with sweepReport, sent with the
// release of its lease: the edge keeps it (GET /v1/sinks: maintenance.last and next_at).
import type { Catalog } from '../iceberg/catalog/index.ts'
import type { TransactOptions } from '../iceberg/transaction/transact.ts'
import { compactTable } from '../iceberg/maintenance/compact.ts'
import { deleteUnreachable, expireSnapshots } from '../iceberg/maintenance/expire.ts'
import { rewriteManifests } from '../iceberg/maintenance/rewrite-manifests.ts'
import type { MaintenanceSweep } from '../contract/internal.ts'
import type { SinkView } from './api.ts'
import { errorText, type Logger } from './log.ts'

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
  // What the finished steps did: a sweep that fails part way reports it (their commits stand).
  const done = noWork()
  try {
    const id = { namespace: [sink.table.namespace], name: sink.table.name }
    const table = await catalog.loadTable(id)
    // Compact first: its replace snapshot then counts among the ones kept, and the small files only
    // the expired snapshots reach are deleted in this same sweep.
    const compacted = await compactTable(catalog, table, { targetFileSizeBytes: policy.targetFileSizeBytes, ...commits })
    done.filesCompacted = compacted?.rewrittenFiles ?? 0
    done.bytesCompacted = compacted?.bytesCompacted ?? 0
    if (compacted) await checkpoint('compact-commit')
    // Then the manifests: the ones compaction left with only dead entries are dropped, and small ones
    // (files not compacted, appends since the last merge) are folded into a few.
    const rewritten = await rewriteManifests(catalog, compacted?.table ?? table, commits)
    done.manifestsRewritten = rewritten?.replaced ?? 0
    done.manifestsCreated = rewritten?.created ?? 0
    if (rewritten) await checkpoint('manifest-rewrite')
    const expired = await expireSnapshots(catalog, rewritten?.table ?? compacted?.table ?? table, {
      retainLast: policy.retainSnapshots,
      maxAgeMs: policy.maxSnapshotAgeMs ?? DEFAULT_MAX_SNAPSHOT_AGE_MS,
      ...commits,
    })
    done.snapshotsExpired = expired.expired.length
    if (expired.expired.length > 0) await checkpoint('expire')
    // Files are deleted only after the commit that unreferenced them succeeded.
    const cleanup = await deleteUnreachable(expired.base, expired.table, { orphanOlderThanMs: policy.orphanOlderThanMs })
    done.filesDeleted = cleanup.deleted.length
    done.bytesDeleted = cleanup.bytes
    await checkpoint('cleanup')
    if (cleanup.failed.length > 0) log.warn('some unreachable files could not be deleted', { failed: cleanup.failed.length })
    done.seconds = (Date.now() - started) / 1000
    log.info('maintained', { ...done, compaction_snapshot: compacted?.snapshotId ?? null, manifest_rewrite_snapshot: rewritten?.snapshotId ?? null })
    return done
  } catch (err) {
    done.seconds = (Date.now() - started) / 1000
    throw new SweepFailed(done, err)
  }
}

const noWork = (): MaintenanceResult => ({
  snapshotsExpired: 0,
  filesDeleted: 0,
  bytesDeleted: 0,
  filesCompacted: 0,
  bytesCompacted: 0,
  manifestsRewritten: 0,
  manifestsCreated: 0,
  seconds: 0,
})

/** A sweep that failed part way: `done`, what its finished steps did; the message is its cause's. */
export class SweepFailed extends Error {
  constructor(
    readonly done: MaintenanceResult,
    cause: unknown,
  ) {
    super(errorText(cause), { cause })
    this.name = 'SweepFailed'
  }
}

/** The sink's rejects files the same sweep deleted (loop.ts: past LHBOX_REJECTS_RETENTION_DAYS). */
export interface RejectsSwept {
  rejectsDeleted: number
  rejectsBytesDeleted: number
}

/**
 * The sweep's end as the edge records it (GET /v1/sinks maintenance.last): ended `at`, the next due
 * everyHours later; a failed sweep (`error` given) says why, with what it did before (`done`, null if
 * it never began).
 */
export function sweepReport(done: (MaintenanceResult & Partial<RejectsSwept>) | null, everyHours: number, error?: unknown, at = new Date()): MaintenanceSweep {
  const r: MaintenanceResult & Partial<RejectsSwept> = done ?? noWork()
  return {
    at: at.toISOString(),
    next_at: new Date(at.getTime() + everyHours * 3600_000).toISOString(),
    snapshots_expired: r.snapshotsExpired,
    files_compacted: r.filesCompacted,
    bytes_compacted: r.bytesCompacted,
    manifests_rewritten: r.manifestsRewritten,
    manifests_created: r.manifestsCreated,
    files_deleted: r.filesDeleted,
    bytes_deleted: r.bytesDeleted,
    seconds: r.seconds,
    ...(r.rejectsDeleted === undefined ? {} : { rejects_deleted: r.rejectsDeleted, rejects_bytes_deleted: r.rejectsBytesDeleted ?? 0 }),
    // Postgres holds no NUL in jsonb (the edge refuses one).
    ...(error === undefined ? {} : { error: errorText(error).replaceAll('\u0000', '').slice(0, 1000) }),
  }
}
