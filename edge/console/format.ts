// How the console writes figures for a person: sizes, durations and times, short and exact enough.

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB']

/** 1536 → "1.5 KiB"; bytes below 1 KiB stay exact. */
export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—'
  let v = n
  let u = 0
  while (Math.abs(v) >= 1024 && u < UNITS.length - 1) {
    v /= 1024
    u++
  }
  return u === 0 ? `${v} B` : `${v.toFixed(v < 10 ? 1 : 0)} ${UNITS[u]}`
}

/** 0 → "0 s", 75 → "1 m 15 s", 7260 → "2 h 1 m", 190000 → "2 d 4 h": the two largest parts. */
export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '—'
  let s = Math.max(0, Math.round(seconds))
  const parts: string[] = []
  for (const [unit, size] of [
    ['d', 86400],
    ['h', 3600],
    ['m', 60],
  ] as const) {
    if (s >= size) {
      parts.push(`${Math.floor(s / size)} ${unit}`)
      s %= size
    }
  }
  if (s > 0 || parts.length === 0) parts.push(`${s} s`)
  return parts.slice(0, 2).join(' ')
}

/** An RFC 3339 time as "<duration> ago" from `now`; "—" for none. */
export function ago(at: string | null | undefined, now: number): string {
  if (!at) return '—'
  const t = Date.parse(at)
  return Number.isNaN(t) ? at : `${duration((now - t) / 1000)} ago`
}

/** 1234567 → "1,234,567". */
export const count = (n: number | null | undefined): string => (n === null || n === undefined ? '—' : Math.round(n).toLocaleString('en-US'))

/**
 * How far behind a sink is against its policy: ok within one roll_seconds, behind within three, late past
 * that (the "coloured against 3× roll_seconds"; a roll is due after one).
 */
export function lagState(secondsBehind: number, rollSeconds: number): 'ok' | 'behind' | 'late' {
  if (secondsBehind <= rollSeconds) return 'ok'
  return secondsBehind <= 3 * rollSeconds ? 'behind' : 'late'
}
