// What GET /v1/sinks[/{id}] answers of each sink (the list's paging: sink-page.ts): the sink, its policy,
// lag (ledger), received (usage), the last roll and rejects (the roller's reports), dedupe, the last
// maintenance sweep and the next.
import { rejectsPrefix } from '../contract/bucket.ts'
import type { EdgeDb } from '../db/edge.ts'
import { parseExact } from './exact-json.ts'
import { iso, LAG } from './ledger-sql.ts'

/**
 * The view's columns over `s`, the sinks `chosen` picked: a subquery holding its own order and limit,
 * so the lag and usage laterals run for the rows answered only (a page of ten thousand sinks costs a
 * page). `chosen` is built of fixed clauses (here and sink-page.ts), never caller text.
 */
export const viewOf = (chosen: string) => `
select s.id, s.name, s.project_id, s.warehouse_id, s.table_namespace, s.table_name, s.state, s.disabled_reason,
       s.roll_seconds, s.roll_bytes, s.inactivity_seconds, s.key_columns, s.limits, s.device::text as device, s.feed, s.feed_last_run, ${iso('s.feed_next_run_at')} as feed_next_run_at,
       ${iso('s.feed_run_requested_at')} as feed_run_requested_at, s.last_roll, s.last_error, s.rejects, s.dedupe_last, s.maintenance_last,
       ${iso('s.dedupe_requested_at')} as dedupe_requested_at, ${iso('s.created_at')} as created_at, ${iso('s.deleted_at')} as deleted_at,
       case when s.previous_send_key_retires_at > now() and s.previous_send_key_sha256 is not null then ${iso('s.previous_send_key_retires_at')} end as previous_key_retires_at,
       (extract(epoch from s.created_at) * 1000000)::bigint as created_us,
       w.name as warehouse, w.bucket, w.endpoint as bucket_endpoint, w.region as bucket_region, w.maintenance as warehouse_maintenance,
       lag.batches as lag_batches, lag.bytes as lag_bytes, ${iso('lag.oldest')} as lag_oldest,
       extract(epoch from (now() - lag.oldest))::float8 as lag_seconds,
       rcv.batches as rcv_batches, rcv.rows as rcv_rows, rcv.bytes as rcv_bytes, rcv.rate_limited as rcv_rate_limited, ${iso('last.at')} as rcv_last_at
from (${chosen}) s
join warehouses w on w.id = s.warehouse_id
${LAG}
cross join lateral (
  select coalesce(sum(batches), 0)::float8 as batches, coalesce(sum(rows_accepted), 0)::float8 as rows, coalesce(sum(bytes), 0)::float8 as bytes,
         coalesce(sum(rate_limited), 0)::float8 as rate_limited
  -- project_id first: the counters' key is (project_id, sink_id, month), so this is an index lookup.
  from usage_counters u where u.project_id = s.project_id and u.sink_id = s.id) rcv
cross join lateral (select max(received_at) as at from batches b where b.sink_id = s.id) last
`

export type SinkRow = Record<string, any>

/** A row of viewOf as the routes read it: its device settings from their text, numbers exact (a mapping's constants). */
export const viewRow = (r: SinkRow): SinkRow => ({ ...r, device: r.device === null ? null : parseExact(r.device) })

/** The sink of project $1 named by $2, its id or its name (the live one: a name is reused after a delete). */
export const SINK_BY_REF = `select * from sinks s where s.project_id = $1 and (s.id = $2 or (s.name = $2 and s.state <> 'deleted'))
    order by s.state = 'deleted', s.created_at desc limit 1`

/** One sink of the project by id, or by name. */
export async function selectSink(db: EdgeDb, projectId: string, ref: string): Promise<SinkRow | undefined> {
  const { rows } = await db.$client.query(viewOf(SINK_BY_REF), [projectId, ref])
  return rows[0] && viewRow(rows[0])
}

export function sinkView(r: SinkRow, apiOrigin: string) {
  const rejects = r.rejects ?? { rows_total: 0, batches_with_rejects: 0, last_at: null }
  return {
    id: r.id,
    name: r.name,
    warehouse: r.warehouse,
    table: `${r.table_namespace}.${r.table_name}`,
    state: r.state,
    disabled_reason: r.disabled_reason,
    roll: { roll_seconds: r.roll_seconds, roll_bytes: Number(r.roll_bytes), inactivity_seconds: r.inactivity_seconds },
    key: r.key_columns,
    ingest_url: `${apiOrigin}/v1/sinks/${r.id}`,
    device_url: `${apiOrigin}/v1/sinks/${r.id}/devices/{device_id}`,
    mapping: r.device?.mapping ?? null,
    device_require: r.device?.require ?? null,
    device_strip: r.device?.strip ?? null,
    lag: {
      batches_waiting: r.lag_batches,
      bytes_waiting: r.lag_bytes,
      oldest_waiting_at: r.lag_oldest,
      seconds_behind: r.lag_oldest ? Math.max(0, Math.round(r.lag_seconds)) : 0,
    },
    // rate_limited: requests refused 429 (counted by each isolate or process as it refuses: see edge/limits).
    received: { batches: r.rcv_batches, rows: r.rcv_rows, bytes: r.rcv_bytes, last_at: r.rcv_last_at, rate_limited: r.rcv_rate_limited },
    // The sink's own rate limits; null, or a member null: the deployment's defaults (none unless configured).
    limits: { requests_per_second: r.limits?.requests_per_second ?? null, bytes_per_second: r.limits?.bytes_per_second ?? null },
    last_roll: r.last_roll,
    // Why the last roll failed ({at, code, message}), until one succeeds; the batches wait meanwhile.
    last_error: r.last_error ?? null,
    rejects: { ...rejects, prefix: `s3://${r.bucket}/${rejectsPrefix(r.id)}` },
    dedupe: { requested_at: r.dedupe_requested_at, last: r.dedupe_last },
    maintenance: maintenanceView(r),
    kind: r.feed?.kind ?? 'send',
    ...feedView(r),
    // After a rotation: when the previous send key stops working (null when none works).
    previous_send_key_retires_at: r.previous_key_retires_at ?? null,
    created_at: r.created_at,
    deleted_at: r.deleted_at,
  }
}

/**
 * The last maintenance sweep of the sink's table, as the roller reported it, and when the next is due
 * (the roller said, at the last); none is due for a deleted sink or on a warehouse whose catalog
 * maintains its tables itself (`maintenance: off`).
 */
function maintenanceView(r: SinkRow): { last: Record<string, unknown> | null; next_at: string | null } {
  const last = r.maintenance_last ?? null
  const swept = r.state !== 'deleted' && r.warehouse_maintenance === 'roller'
  return { last, next_at: swept ? (last?.next_at ?? null) : null }
}

/** A feed sink's settings and schedule: `sql {query, …}` or `files {prefix, pattern, …}`, with next_run_at and last_run. */
function feedView(r: SinkRow): { sql?: Record<string, unknown>; files?: Record<string, unknown>; run_requested_at?: string | null } {
  if (!r.feed) return {}
  const { kind, ...settings } = r.feed
  const schedule = { next_run_at: r.feed_next_run_at, last_run: r.feed_last_run ?? null }
  return { [kind]: { ...settings, ...schedule }, run_requested_at: r.feed_run_requested_at }
}
