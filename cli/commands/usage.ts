// lhbox usage: GET /v1/usage — this month's ingest_bytes for the project, by sink (metered, not
// enforced). --json for the raw answer.
import { api, type Connection } from '../http.ts'
import { json, table as grid } from '../output.ts'
import { bytes } from './sink.ts'

type Flags = Record<string, string | boolean | string[] | undefined>

interface SinkUsage {
  sink_id: string
  name: string | null
  bytes: number
  batches: number
  rows_accepted: number
  rows_rejected: number
}

interface UsageView {
  month: string
  ingest_bytes: { month_to_date: number; batches: number; rows_accepted: number; rows_rejected: number; by_sink: SinkUsage[]; enforced: boolean }
}

function showUsage(u: UsageView): string {
  const i = u.ingest_bytes
  const lines = [
    `ingest_bytes ${u.month}  (${i.enforced ? 'enforced' : 'metered, not enforced'})`,
    `month to date  ${i.month_to_date} bytes (${bytes(i.month_to_date)}) in ${i.batches} batches; ${i.rows_accepted} rows accepted, ${i.rows_rejected} rejected`,
  ]
  if (i.by_sink.length > 0) {
    lines.push(
      '',
      grid(
        i.by_sink.map((s) => ({
          sink: s.name ?? '(unknown)',
          bytes: s.bytes,
          batches: s.batches,
          accepted: s.rows_accepted,
          rejected: s.rows_rejected,
          id: s.sink_id,
        })),
        ['sink', 'bytes', 'batches', 'accepted', 'rejected', 'id'],
      ),
    )
  }
  return lines.join('\n')
}

export async function usage(conn: Connection, _args: string[], flags: Flags): Promise<string> {
  const u = await api<UsageView>(conn, 'GET', '/v1/usage')
  return flags.json ? json(u) : showUsage(u)
}
