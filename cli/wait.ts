// How long a --wait polls, and how often: LHBOX_<WHAT>_POLL_MS and LHBOX_<WHAT>_TIMEOUT_MS (tests shorten them).
import { CliError } from './http.ts'

export function waitSettings(what: 'DEDUPE' | 'MEASURE', timeoutMs: number, env: NodeJS.ProcessEnv = process.env): { pollMs: number; timeoutMs: number } {
  const num = (name: string, fallback: number) => {
    const raw = env[name]
    if (raw === undefined || raw === '') return fallback
    const n = Number(raw)
    if (!Number.isFinite(n) || n <= 0) throw new CliError('usage', `${name}=${raw}: give a positive number of milliseconds`)
    return n
  }
  return { pollMs: num(`LHBOX_${what}_POLL_MS`, 2000), timeoutMs: num(`LHBOX_${what}_TIMEOUT_MS`, timeoutMs) }
}

export const seconds = (ms: number) => (ms < 10_000 ? (ms / 1000).toFixed(1) : String(Math.round(ms / 1000)))
