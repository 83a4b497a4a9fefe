// The roller's routes (bootstrap secret only; never served publicly):
// GET /internal/sinks — the roller's view, and with ?roller= a lease of the due sinks (with
// ?purpose=maintenance, of the sinks the sweep covers); POST /internal/sinks/{id}/roll — the roller's
// report, or the release that ends a sweep.
import { Hono } from 'hono'
import { RollReport, SinksQuery, type RollAnswer, type SinkList, type SinkView } from '../../contract/internal.ts'
import { requireBootstrap } from '../auth.ts'
import { audit } from '../audit.ts'
import { sqlCatalogName, warehouseLocation, type WarehouseRow } from '../catalogs.ts'
import type { AppEnv } from '../env.ts'
import { ApiError } from '../errors.ts'
import { jsonBody, query } from '../validate.ts'
import { runId, slotStart } from '../../contract/feeds.ts'
import { applyFeedRun, applyRollReport, leaseSinks, viewSinks, type RollerSinkRow } from '../roller-ledger.ts'

function rollerView(r: RollerSinkRow): SinkView {
  const w: WarehouseRow = r.warehouse
  const catalog = w.catalog as Record<string, unknown>
  const { token: _t, credential: _c, ...publicCatalog } = catalog
  return {
    id: r.id,
    name: r.name,
    project_id: r.project_id,
    state: r.state,
    table: { namespace: r.table_namespace, name: r.table_name },
    warehouse: {
      id: w.id,
      name: w.name,
      catalog: { ...publicCatalog, ...(catalog.type === 'sql' ? { catalog_name: sqlCatalogName(w) } : {}) } as SinkView['warehouse']['catalog'],
      location: warehouseLocation(w),
      bucket: w.bucket,
      endpoint: w.endpoint,
      region: w.region,
      maintenance: w.maintenance,
    },
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
    const db = await c.var.db()
    const rows = q.roller
      ? await leaseSinks(db, {
          roller: q.roller,
          leaseSeconds: q.lease_seconds as unknown as number,
          sinkId: q.sink ?? null,
          force: q.force === 'true',
          purpose: q.purpose,
        })
      : await viewSinks(db, q.sink ?? null)
    return c.json({ sinks: rows.map(rollerView) } satisfies SinkList)
  })
  .post('/internal/sinks/:id/roll', async (c) => {
    const body = await jsonBody(c, RollReport)
    // The end of a sweep only gives the lease back: it reports no roll, so it can never be taken for one.
    if (
      body.purpose === 'maintenance' &&
      (body.consumed.length || body.repaired.length || body.last_roll || body.rejects || body.disabled_reason || body.dedupe || body.feed_run)
    )
      throw new ApiError(400, 'invalid_request', 'a maintenance report only releases the lease: it carries no batches, roll, rejects, state or dedupe')
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
