// A table: its schema with the column docs, its partition spec, its snapshots with their summaries
// (which sink batches each holds), and sample rows from its newest data file; for a SQL-catalog
// warehouse, the DuckDB lines that query it through lhbox's Iceberg REST catalog.
import { SUMMARY_PREFIXES } from '../../../contract/summary.ts'
import type { LoadedTable } from '../../../iceberg/catalog/index.ts'
import { typeName } from '../../../iceberg/spec/describe.ts'
import { currentSchema, currentSnapshot, defaultSpec, type Snapshot } from '../../../iceberg/spec/metadata.ts'
import { API_KEY } from '../../engine-recipes.ts'
import { count } from '../format.ts'
import { sinkHref } from '../links.ts'

/** Sample rows as the sample route gives them: each row's JSON text, never parsed (lossless numbers). */
export interface Sample {
  file: string | null
  rows: string[]
  /** Why the newest data file could not be read. */
  error?: string
}

const SNAPSHOTS_SHOWN = 50

/** The sink that wrote a snapshot, and the batches it holds, from the summary keys a roll writes. */
function sinkOf(s: Snapshot): { sinkId: string; batches: string[] } | null {
  for (const prefix of SUMMARY_PREFIXES) {
    const id = s.summary[`${prefix}id`]
    if (id) return { sinkId: id, batches: (s.summary[`${prefix}batches`] ?? '').split(',').filter(Boolean) }
  }
  return null
}

export function TablePage(props: { warehouse: string; table: LoadedTable; sample: Sample; duckdb: string[] | null }) {
  const { warehouse, table, sample, duckdb } = props
  const m = table.metadata
  const schema = currentSchema(m)
  const byId = new Map(schema.fields.map((f) => [f.id, f.name]))
  const current = currentSnapshot(m)?.['snapshot-id']
  const snapshots = [...m.snapshots].sort((a, b) => b['timestamp-ms'] - a['timestamp-ms']).slice(0, SNAPSHOTS_SHOWN)
  const name = `${table.identifier.namespace.join('.')}.${table.identifier.name}`
  return (
    <section>
      <p class="crumbs">
        <a href="#/">Overview</a> › table
      </p>
      <h1>
        {warehouse}.{name}
      </h1>
      {m.properties.comment ? <p class="doc">{m.properties.comment}</p> : null}
      <p>
        Format v{m['format-version']} · <code>{m.location}</code>
      </p>
      {duckdb ? (
        <>
          <h2>Query it with DuckDB</h2>
          <pre class="code" id="duckdb">
            {duckdb.join('\n')}
          </pre>
          <button type="button" data-copy={duckdb.join('\n')} id="copy-duckdb">
            Copy the DuckDB lines
          </button>
          <p>
            Replace <code>{API_KEY}</code> with an API key of this project and the store's S3 keys; <code>lhbox connect</code> also prints PyIceberg's and
            Spark's.
          </p>
        </>
      ) : null}
      <h2>Schema</h2>
      <div class="scroll">
        <table class="list" id="schema">
          <thead>
            <tr>
              <th class="num">Id</th>
              <th>Column</th>
              <th>Type</th>
              <th>Required</th>
              <th>Doc</th>
            </tr>
          </thead>
          <tbody>
            {schema.fields.map((f) => (
              <tr>
                <td class="num">{f.id}</td>
                <td>{f.name}</td>
                <td>
                  <code>{typeName(f.type)}</code>
                </td>
                <td>{f.required ? 'yes' : 'no'}</td>
                <td class={f.doc ? '' : 'empty'}>{f.doc ?? 'undocumented'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h2>Partitioning</h2>
      {defaultSpec(m).fields.length === 0 ? (
        <p class="empty">Not partitioned.</p>
      ) : (
        <ul id="partition">
          {defaultSpec(m).fields.map((f) => (
            <li>
              <code>
                {f.transform}({byId.get(f['source-id']) ?? `#${f['source-id']}`})
              </code>{' '}
              as {f.name}
            </li>
          ))}
        </ul>
      )}
      <h2>Sample rows</h2>
      {sample.error ? (
        <p class="alert">The newest data file could not be read: {sample.error}</p>
      ) : sample.rows.length === 0 ? (
        <p class="empty">No data file yet.</p>
      ) : (
        <>
          <p>
            The first {sample.rows.length} rows of the newest data file, <code>{sample.file}</code>, as written (delete files not applied).
          </p>
          <ol class="rows" id="sample">
            {sample.rows.map((r) => (
              <li>
                <code>{r}</code>
              </li>
            ))}
          </ol>
        </>
      )}
      <h2>Snapshots</h2>
      <p>
        {count(m.snapshots.length)} retained{m.snapshots.length > SNAPSHOTS_SHOWN ? `; the newest ${SNAPSHOTS_SHOWN}` : ''}.
      </p>
      <div class="scroll">
        <table class="list" id="snapshots">
          <thead>
            <tr>
              <th>Snapshot</th>
              <th>At (UTC)</th>
              <th>Operation</th>
              <th class="num">Added rows</th>
              <th class="num">Total rows</th>
              <th>Sink batches</th>
            </tr>
          </thead>
          <tbody>
            {snapshots.map((s) => {
              const by = sinkOf(s)
              return (
                <tr class={s['snapshot-id'] === current ? 'current' : ''}>
                  <td>
                    <code>{s['snapshot-id'].toString()}</code>
                  </td>
                  <td>{new Date(s['timestamp-ms']).toISOString().slice(0, 19).replace('T', ' ')}</td>
                  <td>{s.summary.operation}</td>
                  <td class="num">{s.summary['added-records'] ?? '—'}</td>
                  <td class="num">{s.summary['total-records'] ?? '—'}</td>
                  <td>
                    {by ? (
                      <>
                        <a href={sinkHref(by.sinkId)}>{by.sinkId}</a>: {by.batches.join(', ')}
                      </>
                    ) : (
                      '—'
                    )}
                  </td>
                </tr>
              )
            })}
          </tbody>
        </table>
      </div>
    </section>
  )
}
