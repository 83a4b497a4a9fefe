// What the console's pages read beyond the API's sink view: the rolls of the last day (the roller's
// reports, kept as sink.roll audit events), the lag a sink had over it (the ledger's received and
// committed times), and ingest per day (the ledger). Each is one query, aggregated in Postgres.
import type { EdgeDb } from '../../db/edge.ts'

/** The last day in half-hour bins, oldest first. */
const BIN_SECONDS = 1800
const BINS = 48

export interface RollBins {
  rolls: number[]
  rows: number[]
  rejected: number[]
}

const emptyBins = (): RollBins => ({ rolls: Array(BINS).fill(0), rows: Array(BINS).fill(0), rejected: Array(BINS).fill(0) })

/** Per sink of those given (a page of the overview, or one sink): rolls, rows committed and rows rejected per bin, last day. */
export async function rollBins(db: EdgeDb, projectId: string, sinkIds: string[]): Promise<Map<string, RollBins>> {
  const { rows } = await db.$client.query(
    `select subject as sink_id, floor(extract(epoch from now() - at) / ${BIN_SECONDS})::int as ago, count(*)::int as rolls,
            coalesce(sum((details->'last_roll'->>'rows')::float8), 0)::float8 as rows,
            coalesce(sum((details->'last_roll'->>'rejected_rows')::float8), 0)::float8 as rejected
     from audit_events
     where project_id = $1 and action = 'sink.roll' and at > now() - make_interval(secs => ${BIN_SECONDS * BINS})
       and subject = any($2::text[])
     group by 1, 2`,
    [projectId, sinkIds],
  )
  const bySink = new Map<string, RollBins>()
  for (const r of rows) {
    const i = BINS - 1 - Math.min(BINS - 1, r.ago)
    const b = bySink.get(r.sink_id) ?? emptyBins()
    b.rolls[i] += r.rolls
    b.rows[i] += r.rows
    b.rejected[i] += r.rejected
    bySink.set(r.sink_id, b)
  }
  return bySink
}

export const noRolls = emptyBins

export interface RollEvent {
  at: string
  roller: string
  batches: number | null
  rows: number | null
  rejected: number | null
  snapshotId: string | null
  seconds: number | null
  repaired: number
}

/** A sink's newest rolls, newest first, as the roller reported them. */
export async function rollHistory(db: EdgeDb, projectId: string, sinkId: string, limit: number): Promise<RollEvent[]> {
  const { rows } = await db.$client.query(
    `select to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as at, actor, details from audit_events
     where project_id = $1 and action = 'sink.roll' and subject = $2 order by at desc, id desc limit $3`,
    [projectId, sinkId, limit],
  )
  return rows.map((r) => {
    const last = r.details?.last_roll ?? null
    return {
      at: r.at,
      roller: String(r.actor).replace(/^roller:/, ''),
      batches: last?.batches ?? r.details?.batches_committed ?? null,
      rows: last?.rows ?? null,
      rejected: last?.rejected_rows ?? null,
      // A string in the report (63-bit ids do not survive JSON numbers).
      snapshotId: last?.snapshot_id ?? null,
      seconds: last?.seconds ?? null,
      repaired: r.details?.repaired ?? 0,
    }
  })
}

/**
 * Batches waiting at the end of each bin, oldest first: received by then less committed by then. Rows
 * pruned from the ledger were received and committed long before the day, so they count in neither.
 */
export async function lagBins(db: EdgeDb, sinkId: string): Promise<number[]> {
  const { rows } = await db.$client.query(
    `with ev as (
       select received_at as at, 1 as d from batches where sink_id = $1 and state <> 'discarded'
       union all
       select committed_at, -1 from batches where sink_id = $1 and committed_at is not null)
     select least(floor(extract(epoch from now() - at) / ${BIN_SECONDS})::int, ${BINS}) as ago, sum(d)::int as d from ev group by 1`,
    [sinkId],
  )
  // An event `ago` bins back counts at every bin end from its own on, towards the newest.
  const delta = Array(BINS + 1).fill(0)
  for (const r of rows) delta[Math.max(0, r.ago)] += r.d
  const out: number[] = []
  let waiting = delta[BINS]
  for (let ago = BINS - 1; ago >= 0; ago--) {
    waiting += delta[ago]
    out.push(Math.max(0, waiting))
  }
  return out
}

export interface DayIngest {
  day: string
  sinkId: string
  name: string | null
  batches: number
  rows: number
  bytes: number
}

/** Ingest per sink per UTC day over the ledger's last `days` (the ledger keeps 7 days after commit). */
export async function ingestByDay(db: EdgeDb, projectId: string, days: number): Promise<DayIngest[]> {
  const { rows } = await db.$client.query(
    `select to_char(b.received_at at time zone 'UTC', 'YYYY-MM-DD') as day, b.sink_id, s.name,
            count(*)::float8 as batches, sum(b.rows)::float8 as rows, sum(b.bytes)::float8 as bytes
     from batches b join sinks s on s.id = b.sink_id
     where s.project_id = $1 and b.state <> 'discarded'
       and b.received_at >= date_trunc('day', now() at time zone 'UTC') at time zone 'UTC' - make_interval(days => $2 - 1)
     group by 1, 2, 3 order by 1 desc, 6 desc`,
    [projectId, days],
  )
  return rows.map((r) => ({ day: r.day, sinkId: r.sink_id, name: r.name, batches: r.batches, rows: r.rows, bytes: r.bytes }))
}

/** "HH:MM" UTC at the end of each bin, oldest first: the charts' labels. */
export function binLabels(now: number): string[] {
  return Array.from({ length: BINS }, (_, i) => new Date(now - (BINS - 1 - i) * BIN_SECONDS * 1000).toISOString().slice(11, 16))
}
