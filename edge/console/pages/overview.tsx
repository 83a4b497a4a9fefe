// The overview: the project's warehouses and its live sinks, a page at a time by name, each with its
// state, lag against its policy, last roll, the last day's rejects, and rows committed per roll over the day.
import type { sinkView } from '../../sink-view.ts'
import type { storageView } from '../../storage.ts'
import { Sparkline } from '../charts.tsx'
import { noRolls, type RollBins } from '../data.ts'
import { ago, bytes, count, duration, lagState } from '../format.ts'
import { overviewHref, sinkHref, tableHref } from '../links.ts'

type SinkView = ReturnType<typeof sinkView>

export interface WarehouseLine {
  name: string
  bucket: string
  catalog: string
  maintenance: string
  storage: ReturnType<typeof storageView>
}

export function Overview(props: {
  warehouses: WarehouseLine[]
  sinks: SinkView[]
  bins: Map<string, RollBins>
  /** The next page's cursor (GET /v1/sinks's next_cursor); null on the last page. */
  next: string | null
  /** Whether this is a page after the first. */
  paged: boolean
  now: number
}) {
  const { warehouses, sinks, bins, next, paged, now } = props
  return (
    <section>
      <h1>Overview</h1>
      <h2>Warehouses</h2>
      {warehouses.length === 0 ? (
        <p class="empty">No warehouse yet: create one with lhbox warehouse create.</p>
      ) : (
        <div class="scroll">
          <table class="list stack" id="warehouses">
            <thead>
              <tr>
                <th>Warehouse</th>
                <th>Bucket</th>
                <th>Catalog</th>
                <th>Maintenance</th>
                <th class="num">Stored</th>
                <th>Measured</th>
              </tr>
            </thead>
            <tbody>
              {warehouses.map((w) => (
                <tr>
                  <td data-label="Warehouse">{w.name}</td>
                  <td data-label="Bucket">{w.bucket}</td>
                  <td data-label="Catalog">{w.catalog}</td>
                  <td data-label="Maintenance">{w.maintenance}</td>
                  <td data-label="Stored" class="num">
                    {bytes(w.storage.bytes)}
                  </td>
                  <td data-label="Measured">{ago(w.storage.measured_at, now)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2>Sinks</h2>
      {sinks.length === 0 ? (
        <p class="empty">{paged ? 'No more sinks.' : 'No sink yet: create one with lhbox sink create NAME --table NS.TABLE.'}</p>
      ) : (
        <div class="scroll">
          <table class="list stack" id="sinks">
            <thead>
              <tr>
                <th>Sink</th>
                <th>Table</th>
                <th>State</th>
                <th class="num">Waiting</th>
                <th class="num">Behind</th>
                <th>Last roll</th>
                <th class="num">Rejects 24 h</th>
                <th>Rows per roll, 24 h</th>
              </tr>
            </thead>
            <tbody>
              {sinks.map((s) => {
                const day = bins.get(s.id) ?? noRolls()
                const rejected = day.rejected.reduce((a, b) => a + b, 0)
                const lag = lagState(s.lag.seconds_behind, s.roll.roll_seconds)
                return (
                  <tr data-sink={s.id}>
                    <td data-label="Sink">
                      <a href={sinkHref(s.id)}>{s.name}</a>
                    </td>
                    <td data-label="Table">
                      <a href={tableHref(s.warehouse, s.table)}>
                        {s.warehouse}.{s.table}
                      </a>
                    </td>
                    <td data-label="State">
                      <span class={`state ${s.state}`}>{s.state}</span>
                      {s.disabled_reason ? <span class="reason"> {s.disabled_reason}</span> : null}
                      {s.last_error ? <span class="state error"> {s.last_error.code}</span> : null}
                    </td>
                    <td data-label="Waiting" class="num">
                      {count(s.lag.batches_waiting)} · {bytes(s.lag.bytes_waiting)}
                    </td>
                    <td data-label="Behind" class={`num lag ${lag}`} title={`roll_seconds ${s.roll.roll_seconds}`}>
                      {duration(s.lag.seconds_behind)}
                    </td>
                    <td data-label="Last roll">{s.last_roll ? `${ago(s.last_roll.at, now)} · ${count(s.last_roll.rows)} rows` : 'never'}</td>
                    <td data-label="Rejects 24 h" class={rejected > 0 ? 'num warn' : 'num'}>
                      {count(rejected)}
                    </td>
                    <td data-label="Rows per roll">
                      <Sparkline values={day.rows} label={`rows committed per half hour, last 24 h: ${count(day.rows.reduce((a, b) => a + b, 0))} in all`} />
                    </td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </div>
      )}
      <p class="pager">
        {paged ? <a href={overviewHref()}>First page</a> : null}
        {next ? (
          <a href={overviewHref(next)} id="next-sinks">
            Next page
          </a>
        ) : null}
      </p>
    </section>
  )
}
