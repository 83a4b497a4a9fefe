// A sink: what it is (policy, key, mapping, where to send), how it has rolled over the last day (rows
// and rejects per roll, lag), its roll history, dedupe and maintenance, and, for a write key, actions.
import { stringifyLossless } from '../../../iceberg/spec/json.ts'
import type { sinkView } from '../../sink-view.ts'
import { Bars } from '../charts.tsx'
import type { RollBins, RollEvent } from '../data.ts'
import { ago, bytes, count, duration, lagState } from '../format.ts'
import { rejectsHref, tableHref } from '../links.ts'
import { SinkActions } from './sink-actions.tsx'

type SinkView = ReturnType<typeof sinkView>

/** The DuckDB line that reads every rejects file of the sink. */
export const duckdbRejects = (s: SinkView) => `SELECT * FROM read_json('${s.rejects.prefix}*.ndjson', format = 'newline_delimited');`

const curlLine = (s: SinkView) =>
  [
    `curl -X POST ${s.ingest_url} \\`,
    `     -H "Authorization: Bearer $LHBOX_SEND_KEY" -H "Idempotency-Key: $(date -u +%Y-%m-%dT%H:%M:%SZ)-0001" \\`,
    '     -H "Content-Type: application/json" --data-binary @batch.json',
  ].join('\n')

/** The last sweep of the sink's table (roller/maintain.ts's counts) and when the next is due. */
function sweepText(m: SinkView['maintenance'], now: number): string {
  const last = m.last as { at: string; error?: string; snapshots_expired: number; files_compacted: number; files_deleted: number } | null
  const done = last
    ? `${last.error ? 'failed' : 'swept'} ${ago(last.at, now)}: ${last.files_compacted} files compacted, ${last.snapshots_expired} snapshots expired, ${last.files_deleted} files deleted${last.error ? ` (${last.error})` : ''}`
    : 'no sweep yet'
  const next = m.next_at ? `; next ${Date.parse(m.next_at) > now ? `in ${duration((Date.parse(m.next_at) - now) / 1000)}` : 'due now'}` : ''
  return done + next
}

const json = (v: unknown) => (v === null || v === undefined ? '—' : stringifyLossless(v)) // a mapping's constants exact

/** The sink's own rate limits; what is not set falls to the deployment's defaults. */
function limitsText(l: SinkView['limits']): string {
  const parts = [
    l.requests_per_second === null ? null : `${l.requests_per_second} requests/s`,
    l.bytes_per_second === null ? null : `${bytes(l.bytes_per_second)}/s`,
  ].filter((p) => p !== null)
  return parts.length ? parts.join(' · ') : 'the defaults (none unless configured)'
}

export function SinkPage(props: { sink: SinkView; bins: RollBins; lag: number[]; history: RollEvent[]; labels: string[]; canWrite: boolean; now: number }) {
  const { sink: s, bins, lag, history, labels, canWrite, now } = props
  const state = lagState(s.lag.seconds_behind, s.roll.roll_seconds)
  return (
    <section>
      <p class="crumbs">
        <a href="#/">Overview</a> › sink
      </p>
      <h1>
        {s.name} <span class={`state ${s.state}`}>{s.state}</span>
        {s.disabled_reason ? <span class="reason"> {s.disabled_reason}</span> : null}
      </h1>
      {s.last_error ? (
        <p class="alert" id="last-error">
          The last roll failed ({s.last_error.code}, {ago(s.last_error.at, now)}): {s.last_error.message}. The batches wait.
        </p>
      ) : null}
      <div class="cards">
        <dl class="card" id="sink-facts">
          <dt>Id</dt>
          <dd>
            <code>{s.id}</code>
          </dd>
          <dt>Table</dt>
          <dd>
            <a href={tableHref(s.warehouse, s.table)}>
              {s.warehouse}.{s.table}
            </a>
          </dd>
          <dt>Kind</dt>
          <dd>{s.kind}</dd>
          <dt>Roll policy</dt>
          <dd id="policy">
            every {duration(s.roll.roll_seconds)} or {bytes(s.roll.roll_bytes)}
            {s.roll.inactivity_seconds ? `, or after ${duration(s.roll.inactivity_seconds)} quiet` : ''}
          </dd>
          <dt>Key</dt>
          <dd>{s.key ? s.key.join(', ') : 'none (append)'}</dd>
          {s.kind === 'send' ? (
            <>
              <dt>Rate limits</dt>
              <dd id="limits">{limitsText(s.limits)}</dd>
            </>
          ) : null}
          {s.mapping ? (
            <>
              <dt>Mapping</dt>
              <dd>
                <code>{json(s.mapping)}</code>
              </dd>
            </>
          ) : null}
          <dt>Created</dt>
          <dd>{ago(s.created_at, now)}</dd>
        </dl>
        <dl class="card" id="sink-lag">
          <dt>Waiting</dt>
          <dd>
            {count(s.lag.batches_waiting)} batches · {bytes(s.lag.bytes_waiting)}
          </dd>
          <dt>Behind</dt>
          <dd class={`lag ${state}`} id="behind">
            {duration(s.lag.seconds_behind)}
          </dd>
          <dt>Received</dt>
          <dd>
            {count(s.received.batches)} batches · {count(s.received.rows)} rows · {bytes(s.received.bytes)}
          </dd>
          <dt>Rate limited</dt>
          <dd id="rate-limited">{count(s.received.rate_limited)} requests refused (429)</dd>
          <dt>Last roll</dt>
          <dd>{s.last_roll ? `${ago(s.last_roll.at, now)}: ${count(s.last_roll.rows)} rows, ${count(s.last_roll.rejected_rows)} rejected` : 'never'}</dd>
          <dt>Rejects</dt>
          <dd>
            <a href={rejectsHref(s.id)} id="rejects-link">
              {count(s.rejects.rows_total)} rows in {count(s.rejects.batches_with_rejects)} batches
            </a>
          </dd>
          <dt>Dedupe</dt>
          <dd id="dedupe">
            {s.dedupe.requested_at ? `requested ${ago(s.dedupe.requested_at, now)}` : s.dedupe.last ? `last ${json(s.dedupe.last)}` : 'never run'}
          </dd>
          <dt>Maintenance</dt>
          <dd id="maintenance">{sweepText(s.maintenance, now)}</dd>
        </dl>
      </div>
      {s.kind === 'send' ? (
        <>
          <h2>Send to it</h2>
          <pre class="code" id="curl">
            {curlLine(s)}
          </pre>
          <button type="button" data-copy={curlLine(s)}>
            Copy the curl line
          </button>
        </>
      ) : null}
      <h2>The last 24 hours</h2>
      <Bars
        label="rows committed and rows rejected per half hour"
        binLabels={labels}
        series={[
          { name: 'rows', kind: 'rows', values: bins.rows },
          { name: 'rejected', kind: 'rejects', values: bins.rejected },
        ]}
      />
      <Bars label="batches waiting at the end of each half hour" binLabels={labels} series={[{ name: 'batches waiting', kind: 'lag', values: lag }]} />
      <h2>Rolls</h2>
      {history.length === 0 ? (
        <p class="empty">No roll yet.</p>
      ) : (
        <div class="scroll">
          <table class="list" id="rolls">
            <thead>
              <tr>
                <th>At (UTC)</th>
                <th class="num">Batches</th>
                <th class="num">Rows</th>
                <th class="num">Rejected</th>
                <th>Snapshot</th>
                <th class="num">Seconds</th>
                <th>Roller</th>
              </tr>
            </thead>
            <tbody>
              {history.map((r) => (
                <tr>
                  <td>{r.at}</td>
                  <td class="num">{count(r.batches)}</td>
                  <td class="num">{count(r.rows)}</td>
                  <td class={r.rejected ? 'num warn' : 'num'}>{count(r.rejected)}</td>
                  <td>
                    <code>{r.snapshotId ?? '—'}</code>
                  </td>
                  <td class="num">{r.seconds === null ? '—' : r.seconds.toFixed(2)}</td>
                  <td>{r.roller}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {canWrite ? <SinkActions sink={s} /> : null}
    </section>
  )
}
