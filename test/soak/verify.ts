// The soak's end: each table read back by PyIceberg (never our reader) and compared with what the
// producers' 2xx answers acknowledged; the rejects files with the bad rows sent; the ledger with both.
import type pg from 'pg'
import type { S3Client } from '../../iceberg/io/s3.ts'
import { runPython, toExact } from '../support/python.ts'
import type { SoakSink } from './producer.ts'

export interface Verdict {
  sink: string
  kind: SoakSink['kind']
  tableRows: number
  problems: string[]
}

export interface Where {
  bucket: S3Client
  db: pg.Client
  /** How PyIceberg reaches the sink's catalog (pyiceberg_scan.py's connection options). */
  catalogArgs: (sink: SoakSink) => string[]
}

async function scanRows(w: Where, sink: SoakSink, orderBy: string): Promise<Array<Record<string, any>>> {
  const out = toExact(await runPython('pyiceberg_scan.py', [...w.catalogArgs(sink), sink.table, '--order-by', orderBy, '--no-files']))
  return out.rows ?? []
}

/** Every `row` of the sink's rejects files, as the bytes the producer sent. */
async function rejectedRows(w: Where, sinkId: string): Promise<string[]> {
  const rows: string[] = []
  for await (const o of w.bucket.list(`_sink/${sinkId}/rejects/`)) {
    const got = await w.bucket.get(o.key)
    for (const line of new TextDecoder().decode(got!.body).split('\n')) {
      const m = /,"row":(.*)\}$/.exec(line)
      if (m) rows.push(m[1])
    }
  }
  return rows
}

/** The same multiset? Answers a few of the differences. */
function sameMultiset(label: string, want: string[], got: string[]): string[] {
  const count = new Map<string, number>()
  for (const x of want) count.set(x, (count.get(x) ?? 0) + 1)
  for (const x of got) count.set(x, (count.get(x) ?? 0) - 1)
  const diff = [...count].filter(([, n]) => n !== 0)
  if (diff.length === 0) return []
  const missing = diff.filter(([, n]) => n > 0)
  const extra = diff.filter(([, n]) => n < 0)
  return [
    `${label}: ${missing.length} missing (e.g. ${missing.slice(0, 3).map(([x]) => x)}), ${extra.length} extra or doubled (e.g. ${extra.slice(0, 3).map(([x]) => x)})`,
  ]
}

/**
 * One sink: its table holds every acknowledged good row exactly once (keyed: one row per key, the
 * latest), plus `alsoIds` (an engine's own writes beside the rollers; `maybeIds` at most once: a
 * write whose answer was lost); its rejects files hold exactly the bad rows sent; its ledger has every acknowledged
 * batch committed and nothing else.
 */
export async function verifySink(w: Where, sink: SoakSink, alsoIds: bigint[] = [], maybeIds: bigint[] = []): Promise<Verdict> {
  const problems: string[] = []
  let tableRows: number
  if (sink.kind === 'keyed') {
    const rows = await scanRows(w, sink, 'k')
    tableRows = rows.length
    const seen = new Map<bigint, bigint[]>()
    for (const r of rows) seen.set(r.k, [...(seen.get(r.k) ?? []), r.v])
    const doubled = [...seen].filter(([, vs]) => vs.length > 1)
    if (doubled.length > 0) problems.push(`${doubled.length} keys have more than one row (e.g. k=${doubled[0][0]}: ${doubled[0][1]})`)
    const wrong = [...sink.latest].filter(([k, v]) => seen.get(k)?.[0] !== v)
    if (wrong.length > 0)
      problems.push(`${wrong.length} keys do not hold their latest value (e.g. k=${wrong[0][0]} want ${wrong[0][1]} got ${seen.get(wrong[0][0])})`)
    const extra = [...seen.keys()].filter((k) => !sink.latest.has(k))
    if (extra.length > 0) problems.push(`${extra.length} keys nobody acknowledged (e.g. ${extra.slice(0, 3)})`)
  } else {
    const rows = await scanRows(w, sink, 'id')
    tableRows = rows.length
    const maybe = new Set(maybeIds)
    const got = rows.map((r) => r.id as bigint).filter((id) => !maybe.has(id))
    problems.push(...sameMultiset('rows', [...sink.ids, ...alsoIds].map(String), got.map(String)))
    const maybeDoubled = rows.filter((r) => maybe.has(r.id)).length - new Set(rows.filter((r) => maybe.has(r.id)).map((r) => r.id)).size
    if (maybeDoubled > 0) problems.push(`${maybeDoubled} of an engine's unanswered writes' rows are doubled`)
  }
  problems.push(...sameMultiset('rejected rows', sink.bad, await rejectedRows(w, sink.id)))
  const { rows: ledger } = await w.db.query('select batch_id, state from batches where sink_id = $1', [sink.id])
  const notCommitted = ledger.filter((r) => r.state !== 'committed')
  if (notCommitted.length > 0) problems.push(`${notCommitted.length} ledger rows not committed (e.g. ${notCommitted[0].batch_id} ${notCommitted[0].state})`)
  problems.push(
    ...sameMultiset(
      'ledger batches',
      [...sink.batches],
      ledger.map((r) => r.batch_id as string),
    ),
  )
  return { sink: sink.id, kind: sink.kind, tableRows, problems }
}
