// lhbox sink list [<warehouse>] [--all] [--limit N] [--cursor C] [--json]: the project's sinks by name
// (GET /v1/sinks, a page at a time). Without --limit every page is read, following next_cursor, so a
// project of ten thousand sinks lists them all; --limit N prints one page of N and the command for the next.
import { api, type Connection } from '../http.ts'
import { json, table } from '../output.ts'

export const LIST_USAGE = 'lhbox sink list [<warehouse>] [--all] [--limit N] [--cursor C] [--json]'

/** The API's largest page: the fewest requests when every page is read. */
const WHOLE_LIST_PAGE = 1000

interface ListedSink {
  id: string
  name: string
  warehouse: string
  table: string
  state: string
  disabled_reason: string | null
  key: string[] | null
  lag: { batches_waiting: number; seconds_behind: number }
  last_roll: { at: string } | null
}

type Flags = Record<string, string | boolean | string[] | undefined>

export async function list(conn: Connection, warehouse: string | undefined, flags: Flags): Promise<string> {
  const onePage = typeof flags.limit === 'string'
  const qs = new URLSearchParams()
  if (warehouse) qs.set('warehouse', warehouse)
  if (flags.all) qs.set('include_deleted', 'true')
  // A bad --limit or --cursor is the API's 400, printed as any error.
  qs.set('limit', onePage ? (flags.limit as string) : String(WHOLE_LIST_PAGE))
  let cursor = typeof flags.cursor === 'string' ? flags.cursor : null
  const sinks: ListedSink[] = []
  do {
    if (cursor) qs.set('cursor', cursor)
    const page = await api<{ sinks: ListedSink[]; next_cursor: string | null }>(conn, 'GET', `/v1/sinks?${qs}`)
    sinks.push(...page.sinks)
    cursor = page.next_cursor
  } while (cursor && !onePage)
  // --json: every sink as an array; one page (--limit) as the API answered it, its next_cursor included.
  if (flags.json) return json(onePage ? { sinks, next_cursor: cursor } : sinks)
  const rows = sinks.map((s) => ({
    name: s.name,
    table: `${s.warehouse}.${s.table}`,
    state: s.state === 'disabled' && s.disabled_reason ? `disabled:${s.disabled_reason}` : s.state,
    key: s.key?.join(',') ?? '',
    waiting: s.lag.batches_waiting,
    behind: s.lag.batches_waiting ? `${s.lag.seconds_behind}s` : '',
    last_roll: s.last_roll?.at ?? '',
    id: s.id,
  }))
  const same = `${warehouse ? ` ${warehouse}` : ''}${flags.all ? ' --all' : ''} --limit ${flags.limit}`
  const more = onePage && cursor ? `more: lhbox sink list${same} --cursor ${cursor}` : ''
  return [table(rows, ['name', 'table', 'state', 'key', 'waiting', 'behind', 'last_roll', 'id']), more].filter(Boolean).join('\n')
}
