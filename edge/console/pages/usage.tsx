// Usage: ingest this month by sink (the usage counters), ingest per sink per day over the ledger's
// week, and storage per warehouse and table (the storage meter's last figures).
import type { usageView } from '../../routes/usage.ts'
import type { DayIngest } from '../data.ts'
import { ago, bytes, count } from '../format.ts'
import { sinkHref } from '../links.ts'

export function UsagePage(props: { usage: Awaited<ReturnType<typeof usageView>>; days: DayIngest[]; now: number }) {
  const { usage, days, now } = props
  const ingest = usage.ingest_bytes
  return (
    <section>
      <p class="crumbs">
        <a href="#/">Overview</a> › usage
      </p>
      <h1>Usage</h1>
      <h2>Ingest in {usage.month}</h2>
      <p id="month-total">
        {bytes(ingest.month_to_date)} in {count(ingest.batches)} batches: {count(ingest.rows_accepted)} rows accepted, {count(ingest.rows_rejected)} rejected
        (metered, not enforced).
      </p>
      <div class="scroll">
        <table class="list" id="usage-month">
          <thead>
            <tr>
              <th>Sink</th>
              <th class="num">Bytes</th>
              <th class="num">Batches</th>
              <th class="num">Rows</th>
              <th class="num">Rejected</th>
            </tr>
          </thead>
          <tbody>
            {ingest.by_sink.map((s) => (
              <tr>
                <td>
                  <a href={sinkHref(s.sink_id)}>{s.name ?? s.sink_id}</a>
                </td>
                <td class="num">{bytes(s.bytes)}</td>
                <td class="num">{count(s.batches)}</td>
                <td class="num">{count(s.rows_accepted)}</td>
                <td class="num">{count(s.rows_rejected)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h2>Ingest per day (UTC), last 7 days</h2>
      {days.length === 0 ? (
        <p class="empty">Nothing received in the last 7 days.</p>
      ) : (
        <div class="scroll">
          <table class="list" id="usage-days">
            <thead>
              <tr>
                <th>Day</th>
                <th>Sink</th>
                <th class="num">Bytes</th>
                <th class="num">Batches</th>
                <th class="num">Rows</th>
              </tr>
            </thead>
            <tbody>
              {days.map((d) => (
                <tr>
                  <td>{d.day}</td>
                  <td>
                    <a href={sinkHref(d.sinkId)}>{d.name ?? d.sinkId}</a>
                  </td>
                  <td class="num">{bytes(d.bytes)}</td>
                  <td class="num">{count(d.batches)}</td>
                  <td class="num">{count(d.rows)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2>Storage</h2>
      <p id="storage-total">
        {usage.storage.measured_at
          ? `${bytes(usage.storage.bytes)} in all, measured ${ago(usage.storage.measured_at, now)}`
          : 'Not measured yet (lhbox warehouse measure NAME).'}
      </p>
      <div class="scroll">
        <table class="list" id="storage">
          <thead>
            <tr>
              <th>Warehouse</th>
              <th class="num">Bytes</th>
              <th class="num">Intake waiting</th>
              <th class="num">Objects</th>
              <th>Measured</th>
            </tr>
          </thead>
          <tbody>
            {Object.entries(usage.storage.warehouses).map(([name, w]) => (
              <tr>
                <td>{name}</td>
                <td class="num">{bytes(w.bytes)}</td>
                <td class="num">{bytes(w.intake_bytes)}</td>
                <td class="num">{count(w.objects)}</td>
                <td>{ago(w.measured_at, now)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  )
}
