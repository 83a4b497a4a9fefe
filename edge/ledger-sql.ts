// SQL over the ledger that GET /v1/sinks (sink-view.ts) and the roller's view (roller-ledger.ts) share.

/**
 * A sink's lag: one fragment over the sink `s`, giving lag.batches, lag.bytes, lag.oldest and
 * lag.newest of its batches still waiting (receiving or pending).
 */
export const LAG = `cross join lateral (
  select count(*)::int as batches, coalesce(sum(bytes), 0)::float8 as bytes, min(received_at) as oldest, max(received_at) as newest
  from batches b where b.sink_id = s.id and b.state in ('receiving', 'pending')) lag`

/** A timestamptz column as the API answers it: RFC 3339, UTC, microseconds. */
export const iso = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`
