// The rejects browser: a sink's rejected rows a page at a time (the rejects route's reader), each with
// its reason, field, expected and got, batch and index, and the producer's row as it was sent.
import { REJECT_REASONS, rejectHead, rejectRow } from '../../../contract/rejects.ts'
import type { sinkView } from '../../sink-view.ts'
import { rejectsHref, sinkHref } from '../links.ts'
import { duckdbRejects } from './sink.tsx'

type SinkView = ReturnType<typeof sinkView>

export interface RejectsFilter {
  reason?: string
  batch_id?: string
}

export function RejectsPage(props: { sink: SinkView; lines: string[]; filter: RejectsFilter; next: string | null; paged: boolean }) {
  const { sink: s, lines, filter, next, paged } = props
  const duckdb = duckdbRejects(s)
  return (
    <section>
      <p class="crumbs">
        <a href="#/">Overview</a> › <a href={sinkHref(s.id)}>{s.name}</a> › rejects
      </p>
      <h1>Rejected rows of {s.name}</h1>
      <p>
        {s.rejects.rows_total} rows in {s.rejects.batches_with_rejects} batches, kept in <code>{s.rejects.prefix}</code> for 7 days.
      </p>
      <pre class="code" id="duckdb">
        {duckdb}
      </pre>
      <button type="button" data-copy={duckdb} id="copy-duckdb">
        Copy the DuckDB line
      </button>
      <form data-nav={rejectsHref(s.id)} class="inline" id="rejects-filter">
        <label>
          reason
          <select name="reason">
            <option value="">any</option>
            {REJECT_REASONS.map((r) => (
              <option value={r} selected={filter.reason === r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <label>
          batch
          <input name="batch_id" value={filter.batch_id ?? ''} placeholder="any batch id" />
        </label>
        <button type="submit">Filter</button>
      </form>
      {lines.length === 0 ? (
        <p class="empty">{next ? 'No match in the files read so far; the next page reads on.' : 'No rejected row matches.'}</p>
      ) : (
        <div class="scroll">
          <table class="list" id="rejects">
            <thead>
              <tr>
                <th>Batch</th>
                <th class="num">Index</th>
                <th>Reason</th>
                <th>Field</th>
                <th>Expected</th>
                <th>Got</th>
                <th>Row as sent</th>
              </tr>
            </thead>
            <tbody>
              {lines.map((line) => {
                const head = rejectHead(line)
                const more = (head?.problems?.length ?? 1) - 1
                return (
                  <tr>
                    <td>
                      <code>{head?.batch_id ?? '?'}</code>
                    </td>
                    <td class="num">{head?.index ?? '—'}</td>
                    <td class="reason">
                      {head?.reason ?? 'unreadable line'}
                      {more > 0 ? <span class="more"> +{more} more</span> : null}
                    </td>
                    <td>{head?.field ?? ''}</td>
                    <td>{head?.expected ?? ''}</td>
                    <td>{head?.got ?? head?.error ?? ''}</td>
                    <td>
                      <code class="row">{rejectRow(line) ?? line}</code>
                    </td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </div>
      )}
      <p class="pager">
        {paged ? <a href={rejectsHref(s.id, filter)}>First page</a> : null}
        {next ? (
          <a href={rejectsHref(s.id, { ...filter, cursor: next })} id="next-page">
            Next page
          </a>
        ) : null}
      </p>
    </section>
  )
}
