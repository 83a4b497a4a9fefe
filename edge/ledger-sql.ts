// SQL over the ledger that GET /v1/sinks (sink-view.ts) and the roller's view (roller-ledger.ts) share.

/**
 * A sink's lag: one fragment over the sink `s`, giving lag.batches, lag.bytes, lag.oldest and
 * lag.newest of its batches still waiting (receiving or pending).
 */
export const LAG = `cross join lateral (
  select count(*)::int as batches, coalesce(sum(bytes), 0)::float8 as bytes, min(received_at) as oldest, max(received_at) as newest
  from batches b where b.sink_id = s.id and b.state in ('receiving', 'pending')) lag`

/**
 * Every sink's waiting batches grouped once (the partial index batches_pending), as a CTE body named
 * `lag` by its user: sink_id, batches, bytes, oldest, newest. Its cost follows what waits, not the
 * number of sinks. `$n` (text, may be null) keeps it to one sink.
 */
export const pendingBySink = (sinkParam: string) => `
  select b.sink_id, count(*)::int as batches, sum(b.bytes)::float8 as bytes, min(b.received_at) as oldest, max(b.received_at) as newest
  from batches b where b.state in ('receiving', 'pending') and (${sinkParam}::text is null or b.sink_id = ${sinkParam})
  group by b.sink_id`

/**
 * How far past its policy a sink `s` is, in seconds, over `lag` (pendingBySink, left-joined): the
 * largest of the triggers that fired (roll_seconds since the oldest waiting batch, inactivity_seconds
 * since the newest, a dedupe or a feed's run asked for or scheduled; roll_bytes or 1,000 batches
 * waiting count from now). Due is overdue >= 0; null when nothing waits and nothing is asked — the
 * same triggers as the roller's view's `due`.
 */
export const OVERDUE = `greatest(
  extract(epoch from now() - lag.oldest) - s.roll_seconds,
  extract(epoch from now() - lag.newest) - s.inactivity_seconds,
  case when lag.bytes >= s.roll_bytes or lag.batches >= 1000 then 0 end,
  extract(epoch from now() - s.dedupe_requested_at),
  case when s.feed is not null then extract(epoch from now() - coalesce(s.feed_run_requested_at, s.feed_next_run_at)) end)`

/** A timestamptz column as the API answers it: RFC 3339, UTC, microseconds. */
export const iso = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`
