// lhbox sink rejects <sink> [--reason R] [--batch-id B] [--limit N] [--cursor C] [--json]: a page of
// the rows the roller rejected (GET /v1/sinks/{id}/rejects). --json prints the page as the API
// answered it, the producers' rows byte for byte; the table shows the roller's fields only.
import { apiText, CliError, type Connection } from '../http.ts'
import { table } from '../output.ts'

export const REJECTS_USAGE = 'lhbox sink rejects <sink> [--reason R] [--batch-id B] [--limit N] [--cursor C] [--json]'

export const REJECTS_FLAGS = { reason: { type: 'string' }, limit: { type: 'string' }, cursor: { type: 'string' } } as const

interface RejectLine {
  batch_id: string
  index: number | null
  reason: string
  field?: string
  expected?: string
  got?: string
  error?: string
}

type Flags = Record<string, string | boolean | string[] | undefined>

export async function rejects(conn: Connection, ref: string | undefined, flags: Flags): Promise<string> {
  if (!ref) throw new CliError('usage', REJECTS_USAGE)
  const qs = new URLSearchParams()
  for (const [flag, param] of [
    ['reason', 'reason'],
    ['batch-id', 'batch_id'],
    ['limit', 'limit'],
    ['cursor', 'cursor'],
  ] as const) {
    if (typeof flags[flag] === 'string') qs.set(param, flags[flag])
  }
  const text = await apiText(conn, 'GET', `/v1/sinks/${encodeURIComponent(ref)}/rejects${qs.size ? `?${qs}` : ''}`)
  if (flags.json) return text
  // For the table only: the roller's fields, never the rows, are shown.
  const page = JSON.parse(text) as { rejects: RejectLine[]; next_cursor: string | null }
  // The same filters, from where this page ended.
  const filters = ['reason', 'batch-id', 'limit'].flatMap((f) => (typeof flags[f] === 'string' ? [` --${f} ${flags[f]}`] : [])).join('')
  const more = page.next_cursor ? `more: lhbox sink rejects ${ref} --cursor ${page.next_cursor}${filters}` : ''
  if (page.rejects.length === 0)
    return [`no rejected rows${filters ? ` matching${filters}` : ''} in sink ${ref}${more ? ' on this page' : ''}`, more].filter(Boolean).join('\n')
  const rows = page.rejects.map((r) => ({ ...r, got: r.got ?? r.error }))
  return [table(rows, ['batch_id', 'index', 'reason', 'field', 'expected', 'got']), more].filter(Boolean).join('\n')
}
