// lhbox sink update --limit-rps N --limit-bps N (or `none`; --no-limits drops both): a sink's rate
// limits on its producer routes (PATCH /v1/sinks/{id} `limits`), and their lines in `sink get`.
import { CliError } from '../http.ts'

export const LIMIT_FLAGS = {
  'limit-rps': { type: 'string' },
  'limit-bps': { type: 'string' },
  'no-limits': { type: 'boolean' },
} as const

export const LIMIT_USAGE = '[--limit-rps N|none] [--limit-bps BYTES|none | --no-limits]'

export interface LimitsView {
  limits?: { requests_per_second: number | null; bytes_per_second: number | null }
  received: { rate_limited?: number }
}

type Flags = Record<string, string | boolean | string[] | undefined>

/** A flag's number, `none` for null (the deployment's default); undefined when not given. The API checks the ranges. */
function limit(flags: Flags, name: string, whole: boolean): number | null | undefined {
  const raw = flags[name]
  if (raw === undefined) return undefined
  if (raw === 'none') return null
  const ok = whole ? /^\d+$/ : /^\d+(\.\d+)?$/
  if (!ok.test(String(raw))) throw new CliError('usage', `--${name} ${raw}: give ${whole ? 'a whole number' : 'a number'}, or none`)
  return Number(raw)
}

/** The PATCH body's `limits`, when a flag asks for a change. */
export function limitFields(flags: Flags): { limits?: Record<string, number | null> | null } {
  const rps = limit(flags, 'limit-rps', false)
  const bps = limit(flags, 'limit-bps', true)
  if (flags['no-limits']) {
    if (rps !== undefined || bps !== undefined) throw new CliError('usage', 'give --no-limits alone, or --limit-rps/--limit-bps')
    return { limits: null }
  }
  if (rps === undefined && bps === undefined) return {}
  return { limits: { ...(rps !== undefined ? { requests_per_second: rps } : {}), ...(bps !== undefined ? { bytes_per_second: bps } : {}) } }
}

/** `limits` in `sink get`: the sink's own, or the defaults; and how many requests were refused 429. */
export function limitLines(s: LimitsView): string[] {
  if (!s.limits) return []
  const { requests_per_second: rps, bytes_per_second: bps } = s.limits
  const own = [rps === null ? null : `${rps} requests/s`, bps === null ? null : `${bps} bytes/s`].filter(Boolean).join(', ')
  const refused = s.received.rate_limited ? `; ${s.received.rate_limited} requests refused (429)` : ''
  return [`limits     ${own || 'the defaults (none unless the edge is configured with some)'}${refused}`]
}
