// The ledger as the roller sees it: which sinks are due (the roll policy over the ledger's lag),
// leases (FOR UPDATE SKIP LOCKED, so several rollers share the sinks), and the roll reports.
import type { FeedBatch, LeasePurpose, RollReportBody } from '../contract/internal.ts'
import type { EdgeDb } from '../db/edge.ts'
import type { WarehouseCore } from './catalogs.ts'
import { iso, LAG, OVERDUE, pendingBySink } from './ledger-sql.ts'

export type RollerSinkRow = Record<string, any> & { warehouse: WarehouseCore }

// Due: roll_seconds since the oldest waiting batch, roll_bytes waiting, inactivity_seconds since the
// newest, 1,000 batches waiting, a dedupe request, or a feed's run (its slot, or one asked for) — whichever first.
const SELECT = `
select s.id, s.name, s.project_id, s.state, s.table_namespace, s.table_name, s.roll_seconds, s.roll_bytes,
       s.inactivity_seconds, s.key_columns, s.lease_owner, ${iso('s.lease_expires_at')} as lease_expires_at,
       ${iso('s.dedupe_requested_at')} as dedupe_requested_at,
       s.feed, round(extract(epoch from s.feed_run_requested_at) * 1000)::float8 as feed_requested_ms,
       s.feed_next_run_at <= now() as feed_scheduled_due, extract(epoch from now())::float8 * 1000 as now_ms,
       w.id as w_id, w.project_id as w_project_id, w.name as w_name, w.catalog as w_catalog, w.bucket as w_bucket,
       w.endpoint as w_endpoint, w.region as w_region, w.prefix as w_prefix, w.maintenance as w_maintenance, w.created_at as w_created_at,
       w.catalog_secret as w_catalog_secret,
       array(select b.batch_id from batches b where b.sink_id = s.id and b.state in ('receiving', 'pending')
             order by b.received_at limit 1000) as ledger_pending,
       lag.batches as lag_batches, lag.bytes as lag_bytes, ${iso('lag.oldest')} as lag_oldest, ${iso('lag.newest')} as lag_newest,
       (lag.batches > 0 and (
           lag.oldest <= now() - make_interval(secs => s.roll_seconds)
        or lag.bytes >= s.roll_bytes
        or (s.inactivity_seconds is not null and lag.newest <= now() - make_interval(secs => s.inactivity_seconds))
        or lag.batches >= 1000)) or s.dedupe_requested_at is not null
       or (s.feed is not null and (s.feed_run_requested_at is not null or s.feed_next_run_at <= now())) as due
from sinks s
join warehouses w on w.id = s.warehouse_id
${LAG}
`

function withWarehouse(r: Record<string, any>): RollerSinkRow {
  const warehouse: WarehouseCore = {
    id: r.w_id,
    projectId: r.w_project_id,
    name: r.w_name,
    catalog: r.w_catalog,
    catalogSecret: r.w_catalog_secret,
    bucket: r.w_bucket,
    endpoint: r.w_endpoint,
    region: r.w_region,
    prefix: r.w_prefix,
    maintenance: r.w_maintenance,
    createdAt: new Date(r.w_created_at),
  }
  return { ...r, warehouse }
}

/** Every sink not deleted (or one), disabled ones included (their batches wait: lag), with its due flag; no lease taken. */
export async function viewSinks(db: EdgeDb, sinkId: string | null): Promise<RollerSinkRow[]> {
  const { rows } = await db.$client.query(`${SELECT} where s.state <> 'deleted' and ($1::text is null or s.id = $1) order by s.id`, [sinkId])
  return rows.map(withWarehouse)
}

/** What a roller asks to lease (GET /internal/sinks?roller=…). */
export interface LeaseAsk {
  roller: string
  leaseSeconds: number
  sinkId: string | null
  force: boolean
  purpose?: LeasePurpose
  /** At most this many (the roller's free roll slots); all due sinks when absent. */
  limit?: number
  /** Leave out sinks leased at or after this time (µs since 1970; the tick's start): one lease of a sink per tick. */
  leasedBefore?: string
  /** Only sinks of these warehouses. */
  warehouseIds?: string[]
}

/**
 * Every sink not deleted as the roller's gauges need it (lhbox_sink_lag_seconds, lhbox_sinks_due):
 * its waiting batches and the oldest's arrival, its policy, due, held by a roller now. One pass over
 * the sinks and one over what waits: no per-sink lookups, no warehouse, no batch ids.
 */
export async function sinkLags(db: EdgeDb): Promise<Array<Record<string, unknown>>> {
  const { rows } = await db.$client.query(
    // Materialized: grouped once even where the planner takes it for one row (see leaseSinks).
    `with lag as materialized (${pendingBySink('$1')})
     select s.id, s.state, s.roll_seconds, coalesce(lag.batches, 0) as batches, ${iso('lag.oldest')} as oldest_at,
            coalesce(${OVERDUE} >= 0, false) as due, coalesce(s.lease_expires_at > now(), false) as leased
     from sinks s left join lag on lag.sink_id = s.id
     where s.state <> 'deleted' order by s.id`,
    [null],
  )
  return rows
}

/**
 * Leases what a roller will start now: at most `limit` sinks, most overdue first (then the oldest
 * waiting), so several rollers ticking together split the due sinks between them. One sink asked for
 * by id (`force` ignores the policy). For the maintenance sweep: any active or disabled sink, due or
 * not. Either way a sink another roller holds is not leased, and both purposes hold the same lease,
 * so a roll and a sweep never overlap. Also answers `nowUs`, the ledger's clock that stamped these
 * leases (their leased_at): a tick passes it back as leased_before, so it leases none of them twice.
 */
export async function leaseSinks(db: EdgeDb, o: LeaseAsk): Promise<{ sinks: RollerSinkRow[]; nowUs: string | null }> {
  // The waiting batches grouped once, not a count per sink. Rows another roller is leasing right now are
  // skipped (theirs) and the limit counts only what this roller gets. One sink asked for by id waits
  // for that lease instead: a roll and a sweep of the same roller asking at the same moment both get
  // it (same owner), and another roller's lease is then seen and respected.
  //
  // The plan must not depend on the planner's statistics: right after a burst of new sinks and
  // batches (before autovacuum's analyze) it took both sides for one row and grouped the waiting
  // batches again for every sink, 1.5–2.9 s a lease at 1,000 sinks (bench:sinks, auto_explain). So
  // what waits drives the candidates (grouped once, each group's sink found by its key: the lateral
  // with OFFSET 0 keeps that order), and the candidates are materialized once.
  const where = `(s.state = 'active' or ($5::boolean and s.state = 'disabled')) and ($3::text is null or s.id = $3)
         and ($8::text[] is null or s.warehouse_id = any($8::text[]))`
  const { rows } = await db.$client.query(
    `with lag as (${pendingBySink('$3')}
     ), candidates as materialized (
       select s.id, ${OVERDUE} as overdue, lag.oldest
       from lag cross join lateral (select * from sinks s where s.id = lag.sink_id offset 0) s
       where ${where}
       union all
       -- Nothing waiting: due by a dedupe or a feed's run alone, or the one sink asked for by id (forced, or its sweep).
       select s.id, ${OVERDUE} as overdue, null
       from sinks s cross join (select null::int as batches, null::float8 as bytes, null::timestamptz as oldest, null::timestamptz as newest) lag
       where (s.dedupe_requested_at is not null or s.feed is not null or s.id = $3)
         and not exists (select 1 from batches b where b.sink_id = s.id and b.state in ('receiving', 'pending'))
         and ${where}
     ), picked as (
       -- The lease conditions are here, on the row locked: a row another roller leased since this
       -- statement began is re-checked in its new version and passed over, and the limit goes on.
       select s.id from sinks s join candidates c on c.id = s.id
       where (c.overdue >= 0 or $4::boolean or $5::boolean)
         and ($7::bigint is null or s.leased_at is null or s.leased_at < 'epoch'::timestamptz + $7::bigint * interval '1 microsecond')
         and (s.lease_expires_at is null or s.lease_expires_at < now() or s.lease_owner = $1)
       order by c.overdue desc nulls last, c.oldest nulls last, s.id
       limit $6
       for update of s ${o.sinkId ? '' : 'skip locked'}
     )
     update sinks set lease_owner = $1, lease_expires_at = now() + make_interval(secs => $2), leased_at = now()
     where id in (select id from picked)
       and (lease_expires_at is null or lease_expires_at < now() or lease_owner = $1)
     returning id, (extract(epoch from now()) * 1000000)::bigint::text as now_us`,
    [o.roller, o.leaseSeconds, o.sinkId, o.force, o.purpose === 'maintenance', o.limit ?? null, o.leasedBefore ?? null, o.warehouseIds ?? null],
  )
  if (rows.length === 0) return { sinks: [], nowUs: null }
  const ids = rows.map((r: { id: string }) => r.id)
  const view = await db.$client.query(`${SELECT} where s.id = any($1::text[]) order by s.id`, [ids])
  return { sinks: view.rows.map(withWarehouse), nowUs: rows[0].now_us }
}

/** Renews the leases this roller still holds among `sinkIds` (a roll that outlives part of its lease); the ids renewed. */
export async function renewLeases(db: EdgeDb, o: { roller: string; leaseSeconds: number; sinkIds: string[] }): Promise<string[]> {
  if (o.sinkIds.length === 0) return []
  const { rows } = await db.$client.query(
    `update sinks set lease_expires_at = now() + make_interval(secs => $2)
     where id = any($3::text[]) and lease_owner = $1 and state <> 'deleted'
     returning id`,
    [o.roller, o.leaseSeconds, o.sinkIds],
  )
  return rows.map((r: { id: string }) => r.id)
}

/**
 * A feed run's stored batch, pending in the ledger (FeedBatch). Null when the sink is not leased by
 * `roller` (gone, deleted, or taken over); false when the ledger holds the id already (a run retried).
 */
export async function recordFeedBatch(db: EdgeDb, sinkId: string, b: FeedBatch): Promise<boolean | null> {
  const { rows } = await db.$client.query(
    `with sink as (select id from sinks where id = $1 and lease_owner = $2 and state <> 'deleted'),
     added as (
       insert into batches (sink_id, batch_id, body_sha256, bytes, rows, received_at, state)
       select id, $3, $4, $5, $6, $7::timestamptz, 'pending' from sink
       on conflict (sink_id, batch_id) do nothing
       returning batch_id)
     select (select count(*) from sink)::int as leased, (select count(*) from added)::int as added`,
    [sinkId, b.roller, b.batch_id, b.body_sha256, b.bytes, b.rows, b.received_at],
  )
  return rows[0].leased === 0 ? null : rows[0].added === 1
}

/**
 * The roller's report: consumed batches → committed; last roll, rejects, state, dedupe; a sweep's end
 * (maintenance_last, kept even if its lease was lost: the work was done); lease released.
 */
export async function applyRollReport(db: EdgeDb, sinkId: string, r: RollReportBody): Promise<{ projectId: string; marked: number } | null> {
  const consumed = r.consumed.flatMap((c) => c.batch_ids.map((id) => ({ id, snapshot: c.snapshot_id })))
  const { rows } = await db.$client.query(
    `with marked as (
       update batches b set state = 'committed', snapshot_id = c.snapshot::bigint, committed_at = now()
       from jsonb_to_recordset($2::jsonb) as c(id text, snapshot text)
       where b.sink_id = $1 and b.batch_id = c.id and b.state <> 'committed'
       returning b.batch_id
     ), sink as (
       update sinks s set
         last_roll = coalesce($3::jsonb, s.last_roll),
         rejects = case when $4::jsonb is null or ($4::jsonb->>'rows')::bigint = 0 then s.rejects else jsonb_build_object(
           'rows_total', coalesce((s.rejects->>'rows_total')::bigint, 0) + ($4::jsonb->>'rows')::bigint,
           'batches_with_rejects', coalesce((s.rejects->>'batches_with_rejects')::bigint, 0) + ($4::jsonb->>'batches')::bigint,
           'last_at', ${iso('now()')}) end,
         state = case when $5::text is not null and s.state = 'active' then 'disabled' else s.state end,
         disabled_reason = case when $5::text is not null and s.state = 'active' then $5::text else s.disabled_reason end,
         dedupe_last = case when $6::jsonb is not null then $6::jsonb else s.dedupe_last end,
         dedupe_requested_at = case when $6::jsonb is not null then null else s.dedupe_requested_at end,
         last_error = case when $11::jsonb is not null then $11::jsonb || jsonb_build_object('at', ${iso('now()')})
                           when $3::jsonb is not null then null else s.last_error end,
         maintenance_last = coalesce($12::jsonb, s.maintenance_last),
         lease_owner = case when $7 and s.lease_owner = $8 then null else s.lease_owner end,
         lease_expires_at = case when $7 and s.lease_owner = $8 then null else s.lease_expires_at end
       where s.id = $1
       returning s.project_id
     ), report as (
       insert into roll_reports (sink_id, roll_id, batches, rows, rejected_rows, snapshot_id, seconds, details)
       select $1, $9, ($3::jsonb->>'batches')::int, ($3::jsonb->>'rows')::bigint, ($3::jsonb->>'rejected_rows')::bigint,
              ($3::jsonb->>'snapshot_id')::bigint, round(($3::jsonb->>'seconds')::numeric)::int, $10::jsonb
       from sink where $3::jsonb is not null
     )
     select (select project_id from sink) as project_id, (select count(*)::int from marked) as marked`,
    [
      sinkId,
      JSON.stringify(consumed),
      r.last_roll ? JSON.stringify(r.last_roll) : null,
      r.rejects ? JSON.stringify(r.rejects) : null,
      r.disabled_reason ?? null,
      r.dedupe ? JSON.stringify(r.dedupe) : null,
      r.release,
      r.roller,
      r.roll_id,
      JSON.stringify({ repaired: r.repaired }),
      r.error ? JSON.stringify(r.error) : null,
      r.maintenance ? JSON.stringify(r.maintenance) : null,
    ],
  )
  const row = rows[0]
  if (!row?.project_id) return null
  return { projectId: row.project_id, marked: row.marked }
}

/**
 * Ledger rows are pruned 7 days after commit (and discarded ones 7 days after the sink's delete), in
 * batches of `batchRows`: each delete is a short statement of its own, so pruning ten million rows
 * never holds locks long enough to stall a send (a send touches a pending row, never a pruned one).
 */
export async function pruneLedger(db: EdgeDb, batchRows = 10_000): Promise<number> {
  let pruned = 0
  // Each found through an index: the committed ones by commit time (batches_prune), the discarded
  // ones through their deleted sinks (the primary key), never by a scan of the whole ledger.
  for (const old of [
    `select ctid from batches where state = 'committed' and committed_at < now() - interval '7 days' limit $1`,
    `select b.ctid from sinks s join batches b on b.sink_id = s.id
     where s.state = 'deleted' and s.deleted_at < now() - interval '7 days' and b.state = 'discarded' limit $1`,
  ]) {
    for (;;) {
      const { rowCount } = await db.$client.query(`delete from batches where ctid = any(array(${old}))`, [batchRows])
      pruned += rowCount ?? 0
      if ((rowCount ?? 0) < batchRows) break
    }
  }
  return pruned
}

/**
 * A feed's run as the roller reported it: last_run, and the schedule moved on — the next slot after a
 * scheduled run (done, found done, or failed: a failing query keeps its schedule), or the request
 * cleared after a run asked for.
 */
export async function applyFeedRun(db: EdgeDb, sinkId: string, run: NonNullable<RollReportBody['feed_run']>): Promise<void> {
  const at = new Date(run.run_id)
  await db.$client.query(
    `update sinks set
       feed_last_run = $2::jsonb,
       feed_next_run_at = case when $3 then feed_next_run_at
         else greatest(to_timestamp($4::float8 / 1000) + make_interval(secs => (feed->>'every_seconds')::int), feed_next_run_at) end,
       feed_run_requested_at = case when $3 and round(extract(epoch from feed_run_requested_at) * 1000) <= $4::float8 then null else feed_run_requested_at end
     where id = $1 and feed is not null`,
    [
      sinkId,
      JSON.stringify({ run_id: run.run_id, at: run.at, rows: run.rows, seconds: run.seconds, error: run.error, outcome: run.outcome }),
      run.manual,
      at.getTime(),
    ],
  )
}
