// The maintenance sweep over the sinks' tables (roller/maintain.ts does one table): each under its
// sink's lease and in the large turn, beside the rolls; and the sinks' old rejects files.
import type { EdgeApi, SinkView } from './api.ts'
import type { Warehouses } from './catalogs.ts'
import type { RollerConfig } from './config.ts'
import { errorText, type Logger } from './log.ts'
import { maintainTable, SweepFailed, sweepReport } from './maintain.ts'
import type { RollerMetrics } from './metrics.ts'
import { sweepRejects } from './rejects.ts'
import type { RollSlots } from './slots.ts'

export interface SweepParts {
  config: RollerConfig
  log: Logger
  metrics: RollerMetrics
  api: EdgeApi
  warehouses: Warehouses
  slots: RollSlots
  /** The sinks this roller rolls or sweeps now (roller/loop.ts): a sweep leaves a sink being rolled alone. */
  busy: Set<string>
  checkpoint: (name: string) => void | Promise<void>
  onRetry: () => void
}

export type Sweep = (opts?: { sink?: string; signal?: AbortSignal; now?: number }) => Promise<{ maintained: number; failed: number; skipped: number }>

/** Roller.maintain: see its doc in roller/loop.ts. */
export function createSweep(parts: SweepParts): Sweep {
  const { config, log, metrics, api, warehouses, slots, busy, checkpoint, onRetry } = parts

  /** The sink's rejects files past their retention (0 days: kept), deleted; a failure waits for the next sweep. */
  async function sweepOldRejects(sink: SinkView, slog: Logger, now = Date.now()): Promise<{ rejectsDeleted: number; rejectsBytesDeleted: number }> {
    const days = config.rejectsRetentionDays
    if (days === 0) return { rejectsDeleted: 0, rejectsBytesDeleted: 0 }
    try {
      const { files, bytes } = await sweepRejects(warehouses.bucket(sink), sink.id, days * 86_400_000, now)
      metrics.rejectsDeleted.inc(files)
      if (files > 0) slog.info('old rejects files deleted', { files, bytes, retention_days: days })
      return { rejectsDeleted: files, rejectsBytesDeleted: bytes }
    } catch (err) {
      slog.warn('old rejects files not deleted; the next sweep tries again', { error: errorText(err) })
      return { rejectsDeleted: 0, rejectsBytesDeleted: 0 }
    }
  }

  /**
   * One table's sweep under its sink's lease (the one its rolls take: no roll of it and no other
   * roller's sweep meanwhile), in the large turn; its release says what it did. Null: nothing counted
   * (the rejects files only, where the catalog maintains the table).
   */
  async function sweepSink(listed: SinkView, tables: boolean, now?: number): Promise<'maintained' | 'failed' | 'skipped' | null> {
    const slog = log.child({ sink_id: listed.id })
    let sink: SinkView | undefined
    try {
      ;[sink] = (await api.lease({ sink: listed.id, purpose: 'maintenance' })).sinks
    } catch (err) {
      slog.error('maintenance failed: no lease', { error: errorText(err) })
      return 'failed'
    }
    if (!sink) {
      slog.info('maintenance skipped this sweep: another roller holds the sink', { lease: listed.lease })
      return 'skipped'
    }
    const leased = sink
    const sweepId = `sweep-${Date.now().toString(36)}-${crypto.randomUUID().slice(0, 8)}`
    // A long sweep keeps its lease, renewed at a third of its term; the release waits for a renewal in flight.
    let renewing: Promise<unknown> = Promise.resolve()
    const renew = setInterval(
      () => {
        renewing = api.lease({ sink: leased.id, purpose: 'maintenance' }).then(
          (got) => got.sinks.length === 0 && slog.warn('the sweep lost its lease', {}),
          (err) => slog.warn('the sweep could not renew its lease', { error: errorText(err) }),
        )
      },
      (config.leaseSeconds * 1000) / 3,
    )
    renew.unref()
    const end = metrics.maintenanceDuration.startTimer()
    // What the release reports (GET /v1/sinks/{id}: maintenance.last), a failed sweep's too.
    let sweep: ReturnType<typeof sweepReport> | undefined
    try {
      const rejects = await sweepOldRejects(leased, slog, now)
      if (!tables) return null
      const r = await slots.inLargeTurn(() =>
        maintainTable(leased, warehouses.catalog(leased), config.maintenance, slog, { retry: config.retry, onRetry }, checkpoint),
      )
      metrics.snapshotsExpired.inc(r.snapshotsExpired)
      metrics.filesDeleted.inc(r.filesDeleted)
      metrics.bytesCompacted.inc(r.bytesCompacted)
      sweep = sweepReport({ ...r, ...rejects }, config.maintenance.everyHours)
      return 'maintained'
    } catch (err) {
      log.error('maintenance failed', { sink_id: leased.id, error: errorText(err) })
      sweep = sweepReport(err instanceof SweepFailed ? err.done : null, config.maintenance.everyHours, err)
      return 'failed'
    } finally {
      end()
      clearInterval(renew)
      await renewing
      // A release that fails leaves the lease to expire: the sink's rolls wait at most one lease term.
      await api.releaseMaintenance(leased.id, sweepId, sweep).catch((err) => slog.warn('the sweep could not release its lease', { error: errorText(err) }))
    }
  }

  return async (opts = {}) => {
    const counts = { maintained: 0, failed: 0, skipped: 0 }
    for (const listed of await api.view()) {
      if (opts.signal?.aborted) break
      if (opts.sink && listed.id !== opts.sink) continue
      // A disabled sink's table is maintained too (its history still grows old); a deleted one's is not.
      if (listed.state !== 'active' && listed.state !== 'disabled') continue
      // `off` where the catalog maintains its tables itself (R2 Data Catalog, for one): only the
      // sink's old rejects files are the roller's to delete there.
      const tables = listed.warehouse.maintenance === 'roller'
      if (!tables && config.rejectsRetentionDays === 0) continue
      // A roller kept to some warehouses sweeps only theirs.
      if (config.warehouseIds.length > 0 && !config.warehouseIds.includes(listed.warehouse.id)) continue
      // A lease is the roller's, not the job's: its sweep would get the lease of a sink it is rolling
      // and overlap the roll. That table waits for the next sweep.
      if (busy.has(listed.id)) {
        counts.skipped++
        log.info('maintenance skipped this sweep: this roller is rolling the sink', { sink_id: listed.id })
        continue
      }
      busy.add(listed.id)
      try {
        const outcome = await sweepSink(listed, tables, opts.now)
        if (outcome) counts[outcome]++
      } finally {
        busy.delete(listed.id)
      }
    }
    return counts
  }
}
