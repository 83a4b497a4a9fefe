// lhbox connect: GET /v1/connection — how engines reach the project's tables (per warehouse), and
// where producers send rows (ingest_url, sinks_note). --json for the raw answer.
import { api, type Connection } from '../http.ts'
import { json } from '../output.ts'

type Flags = Record<string, string | boolean | string[] | undefined>

interface ConnectionView {
  warehouses: Array<{
    name: string
    catalog: { type: 'sql'; catalog_name: string; note?: string } | { type: 'rest'; uri: string; warehouse: string | null }
    storage: { bucket: string; endpoint: string; region: string; path_style: boolean }
  }>
  ingest_url: string
  sinks_note: string
}

function showConnection(c: ConnectionView): string {
  const lines: string[] = []
  if (c.warehouses.length === 0) lines.push('no warehouses yet (lhbox warehouse create <name>)')
  for (const w of c.warehouses) {
    lines.push(`warehouse ${w.name}`)
    if (w.catalog.type === 'sql') {
      lines.push(`  catalog  sql, catalog name ${w.catalog.catalog_name}`)
      if (w.catalog.note) lines.push(`           ${w.catalog.note}`)
    } else {
      lines.push(`  catalog  rest, ${w.catalog.uri}${w.catalog.warehouse ? ` (warehouse ${w.catalog.warehouse})` : ''}`)
    }
    lines.push(`  storage  s3://${w.storage.bucket} at ${w.storage.endpoint}, region ${w.storage.region}${w.storage.path_style ? ', path-style' : ''}`)
    lines.push('')
  }
  lines.push(`ingest_url ${c.ingest_url}`, `sinks      ${c.sinks_note}`)
  return lines.join('\n')
}

export async function connect(conn: Connection, _args: string[], flags: Flags): Promise<string> {
  const c = await api<ConnectionView>(conn, 'GET', '/v1/connection')
  return flags.json ? json(c) : showConnection(c)
}
