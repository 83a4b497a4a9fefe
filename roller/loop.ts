// Ticks: lease due sinks as roll slots free up, roll them side by side, and keep going whatever one sink does.
import { loadPageCodecs } from '../iceberg/parquet/codecs-node.ts'
import { CatalogUnauthorized } from '../iceberg/catalog/index.ts'
import { S3Error } from '../iceberg/io/s3.ts'
import { EdgeApi, type RollReport, type SinkList, type SinkView } from './api.ts'
import { Warehouses } from './catalogs.ts'
import type { RollerConfig } from './config.ts'
import { EndTick, LeaseLost } from './intake.ts'
import { Leases } from './leases.ts'
import { RollRequests } from './requests.ts'
import { isLarge, RollSlots } from './slots.ts'
import { errorText, type Logger } from './log.ts'
import type { RollerMetrics } from './metrics.ts'
import { dedupeTable } from './dedupe.ts'
import { measureBucket, measureTables } from './measure.ts'
import { roll, type RollContext, type RollResult } from './roll.ts'
import { rollCatchingUp } from './catch-up.ts'
import { FeedWaits, runFeed, type FeedRunReport } from './feeds/run.ts'
import { ScanPool } from './scan-pool.ts'
import { StageCpu } from './stage-cpu.ts'
import { createSweep } from './sweep.ts'

export interface Roller {
  /**
   * Leases due sinks (or `sink`; `force` ignores the policy) as roll slots free up, most overdue first,
   * and rolls up to LHBOX_ROLLER_CONCURRENCY of them at once, each sink once a tick. It ends when
   * nothing more is due and its rolls are done; past `leaseForMs` it leases nothing more and ends when
   * the rolls under way are done. Once `signal` is aborted (the service is stopping) no other roll
   * starts: the rolls under way finish, and the sinks leased but not started are given back at once.
   */
  tick(opts?: { force?: boolean; sink?: string; signal?: AbortSignal; leaseForMs?: number }): Promise<{ rolled: number; failed: number }>
  /**
   * The maintenance sweep over every active or disabled sink's table (or one), where the warehouse says
   * `roller`, each under the sink's lease; `skipped`: sinks another roller held. Once `signal` is
   * aborted no other table's sweep starts. Every sink's rejects files past LHBOX_REJECTS_RETENTION_DAYS
   * are deleted in it too, whoever maintains the table; `now` is the clock that retention reads (a test
   * passes a later one: no store lets it backdate Last-Modified).
   */
  maintain(opts?: { sink?: string; signal?: AbortSignal; now?: number }): Promise<{ maintained: number; failed: number; skipped: number }>
  /** The storage meter: the warehouses whose figure is due or asked for (or one, due or not), measured and reported. */
  measure(opts?: { warehouse?: string; signal?: AbortSignal }): Promise<{ measured: number; failed: number }>
  close(): Promise<void>
}

/** A lease slower than this is logged ('slow lease'). */
const SLOW_LEASE_MS = 500

export function createRoller(config: RollerConfig, log: Logger, metrics: RollerMetrics, checkpoint: (name: string) => void | Promise<void>): Roller {
  const api = new EdgeApi(config)
  const warehouses = new Warehouses(config, log)
  const compression = loadPageCodecs()
  const onRetry = () => metrics.commitRetries.inc()
  const scanPool = config.scanThreads > 0 ? new ScanPool(config.scanThreads, config.egress) : null
  const slots = new RollSlots(config.concurrency)
  const leases = new Leases(api, config.leaseSeconds * 1000, log, metrics)
  // The sinks this roller rolls or sweeps now: the service runs its sweep beside its ticks, and both
  // would get a sink's lease (the same owner), so they keep out of each other's sinks here.
  const busy = new Set<string>()
  const sweep = createSweep({ config, log, metrics, api, warehouses, slots, busy, checkpoint, onRetry })
  // Threads load their code before the first lease, not inside the first roll: a lease is taken
  // only when the roller can roll at once.
  const warm = scanPool?.warm().catch((err) => log.warn('scan threads did not start; batches wait for them', { error: String(err) }))

  /** One roll of a leased sink (a catch-up's `catchUp`); null when it failed or ended early (its lease given back). */
  async function rollOne(sink: SinkView, catchUp?: RollContext['catchUp']): Promise<RollResult | null> {
    const rollId = `roll-${Date.now().toString(36)}-${crypto.randomUUID().slice(0, 8)}`
    const slog = log.child({ sink_id: sink.id, roll_id: rollId })
    const end = metrics.rollDuration.startTimer()
    // When each step boundary was last passed (ms since the roll began): where a slow roll spends its time.
    const began = Date.now()
    const cpu = process.cpuUsage()
    const stages = new StageCpu(config.stageCpu)
    const reached: Record<string, number> = {}
    const requests = new RollRequests()
    // A lease lost meanwhile (another roller took the sink) ends the roll at its next step boundary,
    // as a crash there would: recovery makes that safe, and the other roller's roll goes on alone.
    const timed = async (name: string) => {
      reached[name] = Date.now() - began
      await checkpoint(name)
      if (leases.lost(sink.id)) throw new LeaseLost(`the lease of ${sink.id} was lost at ${name}`)
    }
    try {
      const rollCtx: RollContext = {
        rollId,
        rollerId: config.rollerId,
        catalog: warehouses.catalog(sink, requests),
        bucket: warehouses.bucket(sink, requests),
        compression: stages.codecs(await compression),
        scanPool,
        stageCpu: stages,
        retry: config.retry,
        onRetry,
        maxRewriteBytes: config.maxRewriteBytes,
        log: slog,
        checkpoint: timed,
        catchUp,
        report: async (r) => {
          await requests.track('edge', () => api.report(sink.id, r))
          // Given back: no renewal of it from now on (the roll's last steps need no lease).
          if (r.release !== false) leases.drop(sink.id)
        },
      }
      const result = await roll(sink, rollCtx)
      if (sink.dedupe_requested_at && sink.key) {
        // The dedupe asked for runs once, at this tick, after the roll; its answer goes to dedupe.last.
        const dedupe = await dedupeTable(sink, warehouses.catalog(sink), {
          rollId,
          compression: await compression,
          retry: config.retry,
          onRetry,
          checkpoint: timed,
        })
        slog.info('dedupe', dedupe)
        await api.report(sink.id, { roller: config.rollerId, roll_id: rollId, consumed: [], repaired: [], dedupe, release: !sink.feed?.run })
      }
      // A feed's run rolls its batch at once: its rows count with this roll's.
      const fed = sink.feed?.run ? await runFeedOf(sink, rollCtx, slog) : null
      if (fed) {
        result.rows += fed.rows
        result.rejectedRows += fed.rejectedRows
        result.batches += fed.batches
        result.snapshotIds.push(...fed.snapshotIds)
      }
      metrics.rolls.inc({ outcome: 'ok' })
      metrics.rowsCommitted.inc(result.rows)
      metrics.rowsRejected.inc(result.rejectedRows)
      metrics.repairs.inc(result.repaired)
      const counted = requests.summary()
      metrics.roundTrips.observe(counted.sequential)
      slog.info('rolled', {
        batches: result.batches,
        rows: result.rows,
        rejected_rows: result.rejectedRows,
        snapshots: result.snapshotIds,
        repaired: result.repaired,
        steps_ms: reached,
        requests: counted,
        cpu_ms: cpuMs(cpu),
        ...(stages.enabled ? { cpu_stages_ms: stages.ms() } : {}),
        ...(result.follows ? { follows: true } : {}),
      })
      return result
    } catch (err) {
      const ended = err instanceof EndTick
      const error = ended ? null : rollFailure(err)
      metrics.rolls.inc({ outcome: ended ? 'ended' : 'failed' })
      slog.error(ended ? 'tick ended; the sink waits for the next one' : 'roll failed', { error: errorText(err), ...(error ? { code: error.code } : {}) })
      // Give the lease back, so another roller (or this one restarted) may try at once; the reason shows in GET /v1/sinks/{id}.
      await api.report(sink.id, { roller: config.rollerId, roll_id: rollId, consumed: [], repaired: [], release: true, error }).catch(() => undefined)
      return null
    } finally {
      end()
    }
  }

  /** The feed's run due now (roller/feeds/run.ts), after the roll of what waited; its report releases the lease. */
  async function runFeedOf(sink: SinkView, rollCtx: RollContext, slog: Logger): Promise<RollResult | null> {
    const due = sink as Parameters<typeof runFeed>[0]
    const release = { roller: config.rollerId, roll_id: rollCtx.rollId, consumed: [], repaired: [], release: true }
    let run: FeedRunReport
    let rolled: RollResult | null = null
    try {
      // The run's batch is committed by a second roll of the same sink, under the same lease.
      const rollRun = async () => {
        rolled = await roll(sink, { ...rollCtx, rollId: `${rollCtx.rollId}-feed`, catchUp: undefined })
      }
      const recordBatch = (batch: Parameters<EdgeApi['recordFeedBatch']>[1]) => api.recordFeedBatch(sink.id, batch)
      run = await runFeed(due, { ...rollCtx, log: slog, sql: config.sql, recordBatch, roll: rollRun })
    } catch (err) {
      if (!(err instanceof FeedWaits)) throw err
      slog.info('feed run waits', { run_id: due.feed.run.run_id, reason: err.message })
      await api.report(sink.id, release)
      return null
    }
    ;(due.feed.kind === 'sql' ? metrics.sqlRuns : metrics.filesRuns).inc({ outcome: run.outcome })
    slog[run.outcome === 'failed' ? 'error' : 'info'](`${due.feed.kind} run ${run.outcome}`, { ...run })
    await api.report(sink.id, { ...release, feed_run: run })
    return rolled
  }

  /** A lease taken but not rolled under (the roller is stopping, or the lease is about to end): released, so another roller may roll the sink now. */
  async function giveBack(sink: SinkView, why: string): Promise<void> {
    const rollId = `stop-${Date.now().toString(36)}-${crypto.randomUUID().slice(0, 8)}`
    const slog = log.child({ sink_id: sink.id, roll_id: rollId })
    await api.report(sink.id, { roller: config.rollerId, roll_id: rollId, consumed: [], repaired: [], release: true }).then(
      () => slog.info(`not rolled: ${why}; its lease given back`, {}),
      (err) => slog.warn(`not rolled: ${why}; its lease expires by itself`, { error: errorText(err) }),
    )
  }

  /**
   * A catch-up's next roll: the sink's fresh view (its ledger's waiting batches, policy, key, state),
   * its lease renewed by the same request (a forced lease by id, which only its holder gets); or
   * null, the lease given back, when it is no longer to be rolled (disabled, deleted, taken over, or the roller is stopping).
   */
  async function leaseAgain(sink: SinkView, signal?: AbortSignal): Promise<SinkView | null> {
    if (signal?.aborted) {
      await giveBack(sink, 'the roller is stopping')
      return null
    }
    const askedAt = Date.now()
    try {
      const next = (await api.lease({ sink: sink.id, force: true })).sinks.find((s) => s.id === sink.id)
      if (next && next.lease?.owner === config.rollerId) {
        leases.take([sink.id], askedAt)
        return next
      }
    } catch (err) {
      log.warn('catch-up lease failed; the sink waits for a tick', { sink_id: sink.id, error: errorText(err) })
    }
    await giveBack(sink, 'its catch-up ends')
    return null
  }

  /** A leased sink in its slot: rolled, unless the roller is stopping or its lease cannot be kept. */
  async function rollLeased(sink: SinkView, signal?: AbortSignal): Promise<'rolled' | 'failed' | 'given back'> {
    metrics.slotsBusy.set(slots.used)
    try {
      if (signal?.aborted) {
        await giveBack(sink, 'the roller is stopping')
        return 'given back'
      }
      if (!(await leases.ready(sink.id))) {
        await giveBack(sink, 'its lease is about to end and could not be renewed')
        return 'given back'
      }
      const rolled = await rollCatchingUp(sink, {
        limits: config.catchUp,
        log,
        rollOnce: rollOne,
        leaseAgain: (s) => leaseAgain(s, signal),
        checkpoint,
        stopping: () => signal?.aborted ?? false,
      })
      return rolled ? 'rolled' : 'failed'
    } finally {
      leases.drop(sink.id)
    }
  }

  return {
    async tick(opts = {}) {
      metrics.lastTickAt = new Date()
      await warm
      const counts = { rolled: 0, failed: 0, 'given back': 0 }
      const running = new Set<Promise<void>>()
      const began = Date.now()
      // The ledger's clock at this tick's first lease: later leases leave out what this tick leased.
      let leasedBefore: string | undefined
      const leasing = () => config.sinksEnabled && !opts.signal?.aborted && (!opts.leaseForMs || Date.now() - began < opts.leaseForMs)
      while (leasing()) {
        if (slots.free > 0) {
          const askedAt = Date.now()
          let got: SinkList
          try {
            got = await api.lease({ force: opts.force, sink: opts.sink, limit: slots.free, leasedBefore })
            // A lease is one statement: one that takes long holds every free slot idle (a lead for bench:sinks' stalls).
            if (Date.now() - askedAt > SLOW_LEASE_MS) log.info('slow lease', { ms: Date.now() - askedAt, leased: got.sinks.length, free: slots.free })
          } catch (err) {
            if (running.size === 0) throw err
            log.error('lease failed; the rolls under way go on', { error: errorText(err) })
            break
          }
          leasedBefore ??= got.now_us
          leases.take(
            got.sinks.map((s) => s.id),
            askedAt,
          )
          for (const sink of got.sinks) {
            // Its sweep holds it: rolled at the next tick (the sweep's release ends the lease).
            if (busy.has(sink.id)) {
              leases.drop(sink.id)
              log.info('not rolled this tick: this roller is sweeping the sink', { sink_id: sink.id })
              continue
            }
            busy.add(sink.id)
            const roll = slots
              .run(isLarge(sink, config.largeRollBytes), () => rollLeased(sink, opts.signal))
              .catch((err) => {
                log.error('roll failed outside its steps', { sink_id: sink.id, error: errorText(err) })
                return 'failed' as const
              })
              .then((outcome) => {
                counts[outcome]++
                busy.delete(sink.id)
                running.delete(roll)
                metrics.slotsBusy.set(slots.used)
              })
            running.add(roll)
          }
          if (opts.sink) break
          // Slots left and more may be due: ask again at once.
          if (got.sinks.length > 0 && slots.free > 0) continue
        }
        if (running.size === 0) break
        // A slot frees up, or, with nothing due, another tick's time passes (sinks fall due meanwhile).
        const pause = sleep(config.tickSeconds * 1000, opts.signal)
        await Promise.race([...running, pause.done])
        pause.cancel()
      }
      await Promise.all(running)
      // The gauges from one fresh view of every sink, after the rolls: a drained sink reads 0, a
      // disabled one its waiting batches' age, a deleted one is gone. A failed view leaves them as they are.
      await api.lags().then(
        (all) => {
          metrics.setSinks(all)
          // Due sinks no roller holds when a tick ends wait a tick more: worth a line (sinks this tick rolled are not leased again in it).
          // Only from a roller that serves every warehouse: the view holds every sink, and one kept to some would name others'.
          const free = all.filter((x) => x.due && !x.leased)
          if (free.length > 0 && config.warehouseIds.length === 0 && !opts.sink && !opts.signal?.aborted)
            log.info('tick ended with sinks due and free', {
              due_free: free.length,
              first: free.slice(0, 3).map((x) => x.id),
              seconds: (Date.now() - began) / 1000,
              rolled: counts.rolled,
            })
        },
        (err) => log.warn('the sink view failed; the lag gauges keep their last values', { error: errorText(err) }),
      )
      return { rolled: counts.rolled, failed: counts.failed }
    },
    maintain: sweep,
    async measure(opts = {}) {
      let measured = 0
      let failed = 0
      if (!config.sinksEnabled) return { measured, failed }
      for (const m of await api.leaseMeasures({ warehouse: opts.warehouse })) {
        if (opts.signal?.aborted) break
        const wlog = log.child({ warehouse_id: m.warehouse.id })
        const startedAt = new Date().toISOString()
        try {
          const [bucket, tables] = await Promise.all([measureBucket(warehouses.bucket(m)), measureTables(warehouses.catalog(m))])
          const figure = { ...bucket, tables, measured_at: new Date().toISOString() }
          await api.reportStorage(m.warehouse.id, { roller: config.rollerId, started_at: startedAt, figure })
          metrics.storageBytes.set({ warehouse: m.warehouse.id }, figure.bytes)
          wlog.info('storage measured', { bytes: figure.bytes, intake_bytes: figure.intake_bytes, objects: figure.objects, tables: Object.keys(tables).length })
          measured++
        } catch (err) {
          failed++
          wlog.error('storage not measured', { error: errorText(err) })
          await api
            .reportStorage(m.warehouse.id, { roller: config.rollerId, started_at: startedAt, figure: null, error: errorText(err) })
            .catch(() => undefined)
        }
      }
      return { measured, failed }
    },
    close: async () => {
      await leases.close()
      await scanPool?.close()
      await warehouses.close()
    },
  }
}

/**
 * Why a roll failed, as GET /v1/sinks/{id} shows it (its batches wait either way): the catalog refused
 * the warehouse's credentials, the store refused a write for quota, or anything else.
 */
function rollFailure(err: unknown): NonNullable<RollReport['error']> {
  const message = errorText(err).slice(0, 1000)
  for (let e = err; e instanceof Error; e = e.cause) {
    if (e instanceof CatalogUnauthorized) return { code: 'catalog_unauthorized', message }
    if (e instanceof S3Error && e.quotaExceeded) return { code: 'quota_exceeded', message }
  }
  return { code: 'roll_failed', message }
}

/** CPU time the whole process (scan threads included) spent since `from`, in ms. */
function cpuMs(from: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(from)
  return Math.round((used.user + used.system) / 1000)
}

/** Resolves after `ms`, or at once when `signal` is aborted; cancel() drops the timer (it would hold the process). */
function sleep(ms: number, signal?: AbortSignal): { done: Promise<void>; cancel: () => void } {
  let timer: ReturnType<typeof setTimeout> | undefined
  let wake: () => void = () => {}
  const done = new Promise<void>((resolve) => {
    wake = resolve
    timer = setTimeout(resolve, ms)
  })
  const cancel = () => {
    clearTimeout(timer)
    signal?.removeEventListener('abort', onAbort)
    wake()
  }
  const onAbort = () => cancel()
  signal?.addEventListener('abort', onAbort, { once: true })
  return { done, cancel }
}
