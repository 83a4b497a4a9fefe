// Prometheus metrics and the roller's /healthz, on LHBOX_ROLLER_PORT.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { SinkLag } from '../contract/internal.ts'

export class RollerMetrics {
  readonly registry = new Registry()
  readonly lagSeconds = new Gauge({
    name: 'lhbox_sink_lag_seconds',
    help: 'Seconds since the oldest batch still waiting, per sink',
    labelNames: ['sink'],
    registers: [this.registry],
  })
  readonly rollSeconds = new Gauge({
    name: 'lhbox_sink_roll_seconds_policy',
    help: 'The sink’s roll_seconds (the sink_lag alert fires at 3x)',
    labelNames: ['sink'],
    registers: [this.registry],
  })
  readonly rolls = new Counter({ name: 'lhbox_rolls_total', help: 'Rolls by outcome', labelNames: ['outcome'], registers: [this.registry] })
  readonly rowsCommitted = new Counter({ name: 'lhbox_rows_committed_total', help: 'Rows appended to tables', registers: [this.registry] })
  readonly rowsRejected = new Counter({ name: 'lhbox_rows_rejected_total', help: 'Rows written to rejects files', registers: [this.registry] })
  readonly commitRetries = new Counter({ name: 'lhbox_commit_retries_total', help: 'Commits retried after a conflict', registers: [this.registry] })
  readonly repairs = new Counter({ name: 'lhbox_repairs_total', help: 'Batches found consumed by an earlier roll and repaired', registers: [this.registry] })
  readonly rollDuration = new Histogram({
    name: 'lhbox_roll_duration_seconds',
    help: 'Roll duration',
    buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120],
    registers: [this.registry],
  })
  readonly snapshotsExpired = new Counter({
    name: 'lhbox_maintenance_snapshots_expired_total',
    help: 'Snapshots removed by the maintenance sweep',
    registers: [this.registry],
  })
  readonly filesDeleted = new Counter({
    name: 'lhbox_maintenance_files_deleted_total',
    help: 'Files deleted after expiry (and orphans)',
    registers: [this.registry],
  })
  readonly rejectsDeleted = new Counter({
    name: 'lhbox_rejects_files_deleted_total',
    help: 'Rejects files deleted by the maintenance sweep, past LHBOX_REJECTS_RETENTION_DAYS',
    registers: [this.registry],
  })
  readonly bytesCompacted = new Counter({
    name: 'lhbox_maintenance_bytes_compacted_total',
    help: 'Bytes of small files rewritten by compaction',
    registers: [this.registry],
  })
  readonly maintenanceDuration = new Histogram({
    name: 'lhbox_maintenance_duration_seconds',
    help: 'Maintenance duration per table',
    buckets: [0.5, 1, 5, 15, 60, 300, 900],
    registers: [this.registry],
  })
  readonly sqlRuns = new Counter({
    name: 'lhbox_sql_runs_total',
    help: 'Scheduled SQL runs by outcome (ok, done_before: the slot was committed already, failed)',
    labelNames: ['outcome'],
    registers: [this.registry],
  })
  readonly filesRuns = new Counter({
    name: 'lhbox_files_runs_total',
    help: 'Files-to-rows runs by outcome (ok, done_before, failed)',
    labelNames: ['outcome'],
    registers: [this.registry],
  })
  readonly storageBytes = new Gauge({
    name: 'lhbox_warehouse_storage_bytes',
    help: 'Bytes in the warehouse bucket at its last storage figure (_sink/ included)',
    labelNames: ['warehouse'],
    registers: [this.registry],
  })
  readonly sinksDue = new Gauge({
    name: 'lhbox_sinks_due',
    help: 'Sinks due to roll and not leased by any roller (at the end of this roller’s last tick): scale rollers on it',
    registers: [this.registry],
  })
  readonly slotsBusy = new Gauge({
    name: 'lhbox_roll_slots_busy',
    help: 'Roll slots of this roller in use (LHBOX_ROLLER_CONCURRENCY in all)',
    registers: [this.registry],
  })
  readonly leaseRenewals = new Counter({
    name: 'lhbox_lease_renewals_total',
    help: 'Lease renewals of rolls under way, by outcome (renewed; lost: another roller holds the sink; failed: the edge did not answer)',
    labelNames: ['outcome'],
    registers: [this.registry],
  })
  readonly roundTrips = new Histogram({
    name: 'lhbox_roll_round_trips',
    help: 'Requests in a row per roll (store, catalog, edge; requests that overlap count once)',
    buckets: [4, 6, 8, 10, 12, 16, 24, 32, 64],
    registers: [this.registry],
  })
  lastTickAt: Date | null = null

  /**
   * The per-sink gauges from a view of every sink (disabled ones included): lag is the age of the
   * oldest waiting batch, 0 when none waits. A sink no longer in the view (deleted) loses its series,
   * so the sink_lag alert neither sticks after a drain nor outlives the sink.
   */
  async setSinks(sinks: SinkLag[], now = Date.now()): Promise<void> {
    const listed = new Set<string>()
    this.sinksDue.set(sinks.filter((s) => s.due && s.state === 'active' && !s.leased).length)
    for (const s of sinks) {
      listed.add(s.id)
      const oldest = s.batches > 0 && s.oldest_at ? Date.parse(s.oldest_at) : null
      // never negative: the ledger's clock may run a little ahead of this host's
      this.lagSeconds.set({ sink: s.id }, oldest === null ? 0 : Math.max(0, (now - oldest) / 1000))
      this.rollSeconds.set({ sink: s.id }, s.roll_seconds)
    }
    for (const gauge of [this.lagSeconds, this.rollSeconds]) {
      for (const { labels } of (await gauge.get()).values) {
        const sink = String(labels.sink)
        if (!listed.has(sink)) gauge.remove({ sink })
      }
    }
  }
}

/** Also on the port: POST /sql/check (roller/feeds/sql-check.ts), when given. */
export function serveMetrics(metrics: RollerMetrics, port: number, sqlCheck?: (req: IncomingMessage, res: ServerResponse) => void): Server {
  const server = createServer(async (req, res) => {
    if (req.url === '/sql/check' && sqlCheck) sqlCheck(req, res)
    else if (req.url === '/metrics') {
      res.writeHead(200, { 'content-type': metrics.registry.contentType })
      res.end(await metrics.registry.metrics())
    } else if (req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ ok: true, last_tick_at: metrics.lastTickAt?.toISOString() ?? null }))
    } else {
      res.writeHead(404, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { code: 'not_found', message: 'GET /healthz or /metrics' } }))
    }
  })
  server.listen(port, '0.0.0.0')
  return server
}
