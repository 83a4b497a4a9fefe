// The ledger on the send route: ONE statement authenticates the send key's sink, inserts the batch
// row (or finds the one this batch id already has) and counts usage. Everything else on the hot
// path is the one PUT. The device route uses the same statement: it maps the payload with the sink's
// device settings as it last saw them, and the statement inserts only if those are still the sink's
// (a digest compared in SQL); otherwise it answers the settings and the route maps again. Before
// the statement, the rate limits (edge/limits/limiter.ts): a request over them is 429 with no statement.
import type { Context } from 'hono'
import type { EdgeDb } from '../db/edge.ts'
import type { AppEnv } from './env.ts'
import { parseExact } from './exact-json.ts'
import { timingSafeEqual } from './keys.ts'
import type { SinkLimits } from './limits/settings.ts'

export interface BatchInput {
  sinkId: string
  batchId: string
  bodySha256: string
  bytes: number
  rows: number
  rejected: number
  reasons: unknown[]
  sendKeySha256: string
}

export interface DeviceCheck {
  /** The digest of the device settings the payload was mapped with ('' when none is known yet). */
  version: string
  /** Only authenticate: nothing is inserted (a payload device_require dropped whole). */
  authOnly?: boolean
}

export interface LedgerAnswer {
  /** Null: no live sink with this id. */
  sink: null | { id: string; sendKeySha256: string; bucket: string; endpoint: string; region: string; projectId: string; limits: SinkLimits | null }
  /** Device route only: the settings' digest, and the settings when they differ from the version sent. */
  device?: { version: string; settings?: unknown }
  /** Null when the key did not match (nothing was inserted or read). */
  batch: null | {
    inserted: boolean
    state: 'receiving' | 'pending' | 'committed' | 'discarded'
    bodySha256: string
    bytes: number
    rows: number
    rejected: number
    reasons: unknown[]
    /** RFC 3339 with microseconds, UTC: the intake's clock (Postgres's). */
    receivedAt: string
  }
}

// ON CONFLICT DO UPDATE (a no-op SET) rather than DO NOTHING: it waits for a concurrent insert of
// the same batch id and returns that row, so two racing sends see one row. xmax = 0 ⇔ inserted.
// send_key_sha256 is the key the request's matches, when one does: the current key, or the previous
// one until it retires (a rotation's overlap); otherwise the current, which the route then refuses.
const STATEMENT = `
with sink as (
  select s.id, s.project_id, w.bucket, w.endpoint, w.region, s.device, s.limits,
         case when s.previous_send_key_sha256 = $8 and s.previous_send_key_retires_at > now()
              then s.previous_send_key_sha256 else s.send_key_sha256 end as send_key_sha256,
         md5(coalesce(s.device::text, '')) as device_version
  from sinks s join warehouses w on w.id = s.warehouse_id
  where s.id = $1 and s.state <> 'deleted'
), ins as (
  insert into batches as b (sink_id, batch_id, body_sha256, bytes, rows, rejected, reasons, received_at, state)
  select sink.id, $2, $3, $4, $5, $6, $7::jsonb, date_trunc('microseconds', clock_timestamp()), 'receiving'
  from sink where sink.send_key_sha256 = $8 and ($9::text is null or (sink.device_version = $9 and not $10::boolean))
  on conflict (sink_id, batch_id) do update set batch_id = b.batch_id
  returning b.*, (xmax = 0) as inserted
), usage as (
  -- The batch when inserted, and $11 requests this isolate refused 429 since it last counted them.
  insert into usage_counters as u (project_id, sink_id, month, batches, bytes, rows_accepted, rows_rejected, rate_limited)
  select sink.project_id, sink.id, to_char(now() at time zone 'UTC', 'YYYY-MM-01')::date, k.n, k.n * $4::bigint, k.n * $5::int, k.n * $6::int, $11::bigint
  from sink left join ins on true cross join lateral (select case when ins.inserted then 1 else 0 end as n) k
  where sink.send_key_sha256 = $8 and (ins.inserted or $11::bigint > 0)
  on conflict (project_id, sink_id, month) do update set
    batches = u.batches + excluded.batches, bytes = u.bytes + excluded.bytes,
    rows_accepted = u.rows_accepted + excluded.rows_accepted, rows_rejected = u.rows_rejected + excluded.rows_rejected,
    rate_limited = u.rate_limited + excluded.rate_limited
)
select sink.id, sink.send_key_sha256, sink.bucket, sink.endpoint, sink.region, sink.device_version, sink.project_id, sink.limits,
       case when $9::text is not null and sink.device_version <> $9 then sink.device::text end as device,
       ins.inserted, ins.state, ins.body_sha256, ins.bytes, ins.rows, ins.rejected, ins.reasons,
       to_char(ins.received_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as received_at
from sink left join ins on true`

/**
 * The send path's ledger step, for every producer route: the rate limits (429 rate_limited before any
 * statement), then the one statement; the request's database is opened here (c.var.db()).
 */
export async function recordBatch(c: Context<AppEnv>, b: BatchInput, device?: DeviceCheck): Promise<LedgerAnswer> {
  const limiter = c.var.limiter
  await limiter.admit(c, b.sinkId, b.sendKeySha256, b.bytes)
  const db = await c.var.db()
  const refused = limiter.takeRefusals(b.sinkId)
  let answer: LedgerAnswer
  try {
    answer = await ledgerStatement(db, b, device, refused)
  } catch (err) {
    limiter.giveRefusals(b.sinkId, refused)
    throw err
  }
  const taken = answer.sink !== null && timingSafeEqual(b.sendKeySha256, answer.sink.sendKeySha256)
  // A key that matched no live sink counted nothing: its refusals wait for a statement that does.
  if (!taken) limiter.giveRefusals(b.sinkId, refused)
  limiter.seen(c, b.sinkId, b.sendKeySha256, taken && answer.sink ? { projectId: answer.sink.projectId, limits: answer.sink.limits } : null)
  return answer
}

/** The statement alone (the benchmarks' baseline measures it without the route); `refused`: 429s to count. */
export async function ledgerStatement(db: EdgeDb, b: BatchInput, device?: DeviceCheck, refused = 0): Promise<LedgerAnswer> {
  const { rows } = await db.$client.query(STATEMENT, [
    b.sinkId,
    b.batchId,
    b.bodySha256,
    b.bytes,
    b.rows,
    b.rejected,
    JSON.stringify(b.reasons),
    b.sendKeySha256,
    device?.version ?? null,
    device?.authOnly ?? false,
    refused,
  ])
  const r = rows[0]
  if (!r) return { sink: null, batch: null }
  const sink = {
    id: r.id,
    sendKeySha256: r.send_key_sha256,
    bucket: r.bucket,
    endpoint: r.endpoint,
    region: r.region,
    projectId: r.project_id,
    limits: r.limits,
  }
  const settings =
    device && r.device_version !== device.version
      ? { version: r.device_version, settings: r.device === null ? null : parseExact(r.device) }
      : device && { version: r.device_version }
  if (r.inserted === null) return { sink, batch: null, ...(settings ? { device: settings } : {}) }
  return {
    sink,
    ...(settings ? { device: settings } : {}),
    batch: {
      inserted: r.inserted,
      state: r.state,
      bodySha256: r.body_sha256,
      bytes: Number(r.bytes),
      rows: Number(r.rows),
      rejected: Number(r.rejected),
      reasons: r.reasons,
      receivedAt: r.received_at,
    },
  }
}

/** After a failed PUT of a new batch: nothing half-stored — the row and its usage go. */
export async function forgetBatch(db: EdgeDb, b: BatchInput): Promise<void> {
  await db.$client.query(
    `with gone as (delete from batches where sink_id = $1 and batch_id = $2 and state = 'receiving' returning sink_id)
     update usage_counters set batches = batches - 1, bytes = bytes - $3, rows_accepted = rows_accepted - $4, rows_rejected = rows_rejected - $5
     where sink_id = $1 and month = to_char(now() at time zone 'UTC', 'YYYY-MM-01')::date and exists (select 1 from gone)`,
    [b.sinkId, b.batchId, b.bytes, b.rows, b.rejected],
  )
}

/** The object is stored: receiving → pending (after the answer; a retry of a receiving row is safe). */
export async function markStored(db: EdgeDb, sinkId: string, batchId: string): Promise<void> {
  await db.$client.query(`update batches set state = 'pending' where sink_id = $1 and batch_id = $2 and state = 'receiving'`, [sinkId, batchId])
}
