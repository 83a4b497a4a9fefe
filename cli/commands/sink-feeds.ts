// The feed flags of `lhbox sink create|update` (--sql, --files-prefix, --pattern, --every) and
// `lhbox sink run`: sinks the roller feeds itself, a scheduled SQL query or files-to-rows.
import { api, CliError, type Connection } from '../http.ts'
import { json } from '../output.ts'

export const FEED_FLAGS = {
  sql: { type: 'string' },
  every: { type: 'string' },
  'files-prefix': { type: 'string' },
  pattern: { type: 'string' },
} as const

export const FEED_USAGE = {
  create: "[--sql 'SELECT …' --every 1h | --files-prefix PREFIX --every 5m [--pattern 'dir/{part}/{name}.jpg']]",
  update: "[--sql 'SELECT …'] [--every 1h] [--files-prefix PREFIX] [--pattern P]",
  run: 'lhbox sink run <sink>',
}

type Flags = Record<string, string | boolean | string[] | undefined>
type Kind = 'sql' | 'files'

interface LastRun {
  run_id: string
  at: string
  rows: number
  seconds: number
  error: string | null
  outcome: string
}

export interface FeedView {
  kind?: 'send' | Kind
  sql?: { query: string; every_seconds: number; next_run_at: string | null; last_run: LastRun | null }
  files?: { prefix: string; pattern: string | null; every_seconds: number; next_run_at: string | null; last_run: LastRun | null }
  run_requested_at?: string | null
}

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 }

/** `90s`, `5m`, `1h`, `1d` or plain seconds → seconds. */
export function everySeconds(text: string): number {
  const m = /^(\d+)([smhd]?)$/.exec(text.trim())
  if (!m) throw new CliError('usage', `--every ${text}: give seconds, or a number with s, m, h or d (5m, 1h)`)
  return Number(m[1]) * UNITS[m[2] || 's']
}

const str = (flags: Flags, name: string) => (typeof flags[name] === 'string' ? (flags[name] as string) : undefined)

/** The feed a create's flags ask for: {sql} or {files}, or nothing for a send sink. */
export function feedCreateFields(flags: Flags): Record<string, unknown> {
  const sql = str(flags, 'sql')
  const prefix = str(flags, 'files-prefix')
  if (sql === undefined && prefix === undefined) {
    if (flags.every !== undefined || flags.pattern !== undefined) throw new CliError('usage', '--every and --pattern go with --sql or --files-prefix')
    return {}
  }
  if (sql !== undefined && prefix !== undefined) throw new CliError('usage', 'give one of --sql and --files-prefix: a sink runs a query or indexes files')
  const every = str(flags, 'every')
  if (every === undefined) throw new CliError('usage', `--every is required with ${sql !== undefined ? '--sql' : '--files-prefix'} (e.g. --every 1h)`)
  if (sql !== undefined) {
    if (flags.pattern !== undefined) throw new CliError('usage', '--pattern goes with --files-prefix')
    return { sql: { query: sql, every_seconds: everySeconds(every) } }
  }
  const pattern = str(flags, 'pattern')
  return { files: { prefix, every_seconds: everySeconds(every), ...(pattern !== undefined ? { pattern } : {}) } }
}

/** Whether the flags make a feed sink (it has no send key to save). */
export const isFeed = (flags: Flags) => flags.sql !== undefined || flags['files-prefix'] !== undefined

/** The feed fields of a PATCH; `kind` is the sink's (asked for when only --every is given). */
export function feedUpdateFields(flags: Flags, kind: Kind | undefined): Record<string, unknown> {
  const sql = str(flags, 'sql')
  const files = { prefix: str(flags, 'files-prefix'), pattern: str(flags, 'pattern') }
  const every = str(flags, 'every')
  if (sql === undefined && files.prefix === undefined && files.pattern === undefined && every === undefined) return {}
  if (sql !== undefined && (files.prefix !== undefined || files.pattern !== undefined))
    throw new CliError('usage', 'a sink runs a query or indexes files, not both')
  const which: Kind | undefined = sql !== undefined ? 'sql' : files.prefix !== undefined || files.pattern !== undefined ? 'files' : kind
  if (!which) throw new CliError('usage', '--every changes a SQL or files sink; this sink is a send sink')
  const change = which === 'sql' ? { query: sql } : files
  const fields = Object.fromEntries(
    Object.entries({ ...change, every_seconds: every !== undefined ? everySeconds(every) : undefined }).filter(([, v]) => v !== undefined),
  )
  return { [which]: fields }
}

/** Only --every among the feed flags: the sink's kind decides where it goes. */
export const needsKind = (flags: Flags) =>
  flags.every !== undefined && flags.sql === undefined && flags['files-prefix'] === undefined && flags.pattern === undefined

/** `lhbox sink run <sink>`: POST /v1/sinks/{id}/run. */
export async function runNow(conn: Connection, path: string | undefined, ref: string | undefined, flags: Flags): Promise<string> {
  if (!ref || !path) throw new CliError('usage', FEED_USAGE.run)
  const asked = await api<{ run: { requested_at: string } }>(conn, 'POST', `${path}/run`)
  if (flags.json) return json(asked)
  return `run of sink ${ref} requested at ${asked.run.requested_at}; the roller runs it at its next tick (lhbox sink get ${ref})`
}

/** `lhbox sink get`'s lines for a feed sink. */
export function feedLines(s: FeedView): string[] {
  const lastRun = (r: LastRun | null) =>
    r ? `${r.run_id}: ${r.outcome}, ${r.rows} rows in ${r.seconds.toFixed(1)} s${r.error ? `; error: ${r.error}` : ''}` : 'none yet'
  const lines: string[] = []
  if (s.sql)
    lines.push(
      `query      ${s.sql.query}`,
      `every      ${s.sql.every_seconds} s; next run ${s.sql.next_run_at ?? '—'}`,
      `last run   ${lastRun(s.sql.last_run)}`,
    )
  if (s.files)
    lines.push(
      `files      ${s.files.prefix}${s.files.pattern ? ` (pattern ${s.files.pattern})` : ''}`,
      `every      ${s.files.every_seconds} s; next run ${s.files.next_run_at ?? '—'}`,
      `last run   ${lastRun(s.files.last_run)}`,
    )
  if (s.run_requested_at) lines.push(`run asked  ${s.run_requested_at}`)
  return lines
}
