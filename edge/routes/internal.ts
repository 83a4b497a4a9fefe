// The roller's routes (bootstrap secret only; never served publicly):
// GET /internal/sinks — the roller's view, and with ?roller= a lease of the due sinks (with
// ?purpose=maintenance, of the sinks the sweep covers); POST /internal/sinks/{id}/roll — the roller's
// report, or the release that ends a sweep (with what the sweep did); GET /internal/lag — every sink's lag
// for the roller's gauges; POST /internal/leases — renewals of
// the leases a roller's rolls still need; GET /internal/warehouses/measure and POST
// /internal/warehouses/{id}/storage — the storage meter's lease and figure.
import { Hono } from 'hono'
import {
  FeedBatch,
  type FeedBatchRecorded,
  type LagList,
  type SinkLag,
  LeaseRenewal,
  type LeaseRenewed,
  MeasureQuery,
  RollReport,
  SinksQuery,
  StorageReport,
  type MeasureList,
  type RollAnswer,
  type SinkList,
  type SinkView,
  type WarehouseView,
} from '../../contract/internal.ts'
import { requireBootstrap } from '../auth.ts'
import { audit } from '../audit.ts'
import { openCatalogSecret, sqlCatalogName, warehouseLocation, type WarehouseCore } from '../catalogs.ts'
import { sinksEnabled } from '../../contract/switch.ts'
import type { AppEnv, Env } from '../env.ts'
import { ApiError } from '../errors.ts'
import { jsonBody, query } from '../validate.ts'
import { runId, slotStart } from '../../contract/feeds.ts'
import { applyFeedRun, applyRollReport, leaseSinks, recordFeedBatch, renewLeases, sinkLags, viewSinks, type RollerSinkRow } from '../roller-ledger.ts'
import { leaseMeasures, applyStorage } from '../storage-ledger.ts'

type Secrets = Map<string, Partial<Record<'token' | 'credential' | 'secret_error', string>>>

/**
 * A warehouse as the roller reaches it. `secrets` (opened for a lease only) adds a REST catalog's
 * token or credential, or why it could not be opened.
 */
function warehouseView(w: WarehouseCore, secrets: Secrets | null): WarehouseView {
  const { token: _t, credential: _c, auth: _a, ...catalog } = w.catalog as Record<string, unknown>
  return {
    id: w.id,
    name: w.name,
    catalog: { ...catalog, ...(catalog.type === 'sql' ? { catalog_name: sqlCatalogName(w) } : secrets?.get(w.id)) } as WarehouseView['catalog'],
    location: warehouseLocation(w),
    bucket: w.bucket,
    endpoint: w.endpoint,
    region: w.region,
    maintenance: w.maintenance,
  }
}

/** The leased warehouses' REST catalog secrets, each opened once; one that does not open is named, not fatal. */
async function openSecrets(env: Env, ws: WarehouseCore[]): Promise<Secrets> {
  const out: Secrets = new Map()
  for (const w of ws) {
    if ((w.catalog as { type: string }).type !== 'rest' || out.has(w.id)) continue
    const opened = await openCatalogSecret(env, w).then(
      (s) => ({ ...(s.token ? { token: s.token } : {}), ...(s.credential ? { credential: s.credential } : {}) }),
      (err: Error) => ({ secret_error: err.message }),
    )
    out.set(w.id, opened)
  }
  return out
}

function rollerView(r: RollerSinkRow, secrets: Secrets | null): SinkView {
  return {
    id: r.id,
    name: r.name,
    project_id: r.project_id,
    state: r.state,
    table: { namespace: r.table_namespace, name: r.table_name },
    warehouse: warehouseView(r.warehouse, secrets),
    policy: { roll_seconds: r.roll_seconds, roll_bytes: Number(r.roll_bytes), inactivity_seconds: r.inactivity_seconds, max_batches: 1000 },
    key: r.key_columns,
    lag: { batches: r.lag_batches, bytes: r.lag_bytes, oldest_at: r.lag_oldest, newest_at: r.lag_newest },
    // The oldest 1,000 batch ids the ledger still holds waiting: a repair is reported until they are committed.
    ledger_pending: r.ledger_pending,
    due: r.due,
    dedupe_requested_at: r.dedupe_requested_at,
    feed: r.feed ? { ...r.feed, run: dueRun(r) } : null,
    lease: r.lease_owner ? { owner: r.lease_owner, expires_at: r.lease_expires_at } : null,
  }
}

/** The feed's run due now: one asked for (its id the request's time), else the current slot's. */
function dueRun(r: RollerSinkRow): { run_id: string; manual: boolean } | null {
  if (r.feed_requested_ms !== null) return { run_id: runId(new Date(r.feed_requested_ms)), manual: true }
  if (r.feed_scheduled_due) return { run_id: runId(slotStart(new Date(r.now_ms), r.feed.every_seconds)), manual: false }
  return null
}

export const internalRoutes = new Hono<AppEnv>()
  .use('/internal/*', requireBootstrap)
  .get('/internal/sinks', async (c) => {
    const q = query(c, SinksQuery)
    const enabled = sinksEnabled(c.env)
    // Switched off: the view still answers (the lag gauges), and nothing is leased, so nothing rolls.
    if (q.roller && !enabled) return c.json({ sinks: [], enabled } satisfies SinkList)
    const db = await c.var.db()
    if (!q.roller) return c.json({ sinks: (await viewSinks(db, q.sink ?? null)).map((r) => rollerView(r, null)), enabled } satisfies SinkList)
    const leased = await leaseSinks(db, {
      roller: q.roller,
      leaseSeconds: q.lease_seconds as unknown as number,
      sinkId: q.sink ?? null,
      force: q.force === 'true',
      purpose: q.purpose,
      limit: q.limit as unknown as number | undefined,
      leasedBefore: q.leased_before,
      warehouseIds: q.warehouses?.split(','),
    })
    const secrets = await openSecrets(
      c.env,
      leased.sinks.map((r) => r.warehouse),
    )
    return c.json({ sinks: leased.sinks.map((r) => rollerView(r, secrets)), enabled, ...(leased.nowUs ? { now_us: leased.nowUs } : {}) } satisfies SinkList)
  })
  .get('/internal/lag', async (c) => {
    const sinks = (await sinkLags(await c.var.db())) as SinkLag[]
    return c.json({ sinks } satisfies LagList)
  })
  .post('/internal/leases', async (c) => {
    const body = await jsonBody(c, LeaseRenewal)
    const renewed = await renewLeases(await c.var.db(), { roller: body.roller, leaseSeconds: body.lease_seconds, sinkIds: body.sink_ids })
    return c.json({ renewed } satisfies LeaseRenewed)
  })
  .post('/internal/sinks/:id/batches', async (c) => {
    const body = await jsonBody(c, FeedBatch)
    const recorded = await recordFeedBatch(await c.var.db(), c.req.param('id'), body)
    if (recorded === null) throw new ApiError(409, 'lease_lost', `sink ${c.req.param('id')} is not leased by roller ${body.roller}`)
    return c.json({ recorded } satisfies FeedBatchRecorded)
  })
  .post('/internal/sinks/:id/roll', async (c) => {
    const body = await jsonBody(c, RollReport)
    // The end of a sweep gives the lease back and says what the sweep did: it reports no roll, so it
    // can never be taken for one; and a roll's report never says a sweep happened.
    if (
      body.purpose === 'maintenance' &&
      (body.consumed.length || body.repaired.length || body.last_roll || body.rejects || body.disabled_reason || body.dedupe || body.feed_run || body.error)
    )
      throw new ApiError(
        400,
        'invalid_request',
        'a maintenance report releases the lease and says what the sweep did: it carries no batches, roll, rejects, state or dedupe',
      )
    if (body.purpose === 'roll' && body.maintenance)
      throw new ApiError(400, 'invalid_request', 'maintenance comes only with a maintenance report (purpose: maintenance), never with a roll')
    const db = await c.var.db()
    const result = await applyRollReport(db, c.req.param('id'), body)
    if (!result) throw new ApiError(404, 'sink_not_found', `no sink ${c.req.param('id')}`)
    if (body.feed_run) await applyFeedRun(db, c.req.param('id'), body.feed_run)
    // A report that only releases the lease (an ended tick, a finished sweep) is not a roll.
    if (body.purpose === 'roll' && (body.last_roll || body.consumed.length > 0 || body.disabled_reason || body.dedupe || body.feed_run))
      await audit(db, {
        projectId: result.projectId,
        actor: `roller:${body.roller}`,
        action: 'sink.roll',
        subject: c.req.param('id'),
        details: {
          roll_id: body.roll_id,
          batches_committed: result.marked,
          repaired: body.repaired.length,
          last_roll: body.last_roll ?? null,
          ...(body.feed_run ? { feed_run: body.feed_run } : {}),
        },
      })
    return c.json({ ok: true, batches_committed: result.marked } satisfies RollAnswer)
  })
  .get('/internal/warehouses/measure', async (c) => {
    const q = query(c, MeasureQuery)
    if (!sinksEnabled(c.env)) return c.json({ warehouses: [] } satisfies MeasureList)
    const rows = await leaseMeasures(await c.var.db(), {
      everySeconds: q.every_seconds as unknown as number,
      leaseSeconds: q.lease_seconds as unknown as number,
      warehouseId: q.warehouse ?? null,
    })
    const secrets = await openSecrets(c.env, rows)
    return c.json({
      warehouses: rows.map((w) => ({
        warehouse: warehouseView(w, secrets),
        requested_at: w.measureRequestedAt ? new Date(w.measureRequestedAt).toISOString() : null,
      })),
    } satisfies MeasureList)
  })
  .post('/internal/warehouses/:id/storage', async (c) => {
    const body = await jsonBody(c, StorageReport)
    const found = await applyStorage(await c.var.db(), c.req.param('id'), body)
    if (!found) throw new ApiError(404, 'warehouse_not_found', `no warehouse ${c.req.param('id')}`)
    return c.json({ ok: true })
  })
