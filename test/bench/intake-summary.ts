// bench:intake's summary, printed only after every side was read back: per side the medians over the
// rounds of req/s, p50 and p99, the ratios of those medians, and for each ratio with a target the
// ratio of every round (the two sides of a round ran minutes apart on the same box): a target is met
// only when every round meets it, as harness.ts has it.
import type { Result } from 'autocannon'
import { fmt } from './common.ts'
import { loadText, median } from './harness.ts'
import type { Side } from './intake-readback.ts'

interface Figures {
  reqPerSec: number
  p50: number
  p99: number
  total: number
  ok: number
  non2xx: number
  errors: number
}

function figures(s: Side): Figures {
  const rs = s.results
  const med = (f: (r: Result) => number) => median(rs.map(f))
  const sum = (f: (r: Result) => number) => rs.reduce((a, r) => a + f(r), 0)
  return {
    reqPerSec: med((r) => r.requests.average),
    p50: med((r) => r.latency.p50),
    p99: med((r) => r.latency.p99),
    total: sum((r) => r.requests.total),
    ok: sum((r) => r['2xx']),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors + r.timeouts),
  }
}

export interface Ratio {
  of: Side
  over: Side
  /** req/s of `of` at least this share of `over`'s in every round. */
  target?: number
}

/** Prints the table, the ratios and the load; answers the requests that were not 2xx. */
export function printIntake(opts: { title: string; sides: Side[]; ratios: Ratio[]; loadStart: number[]; readBacks: string[]; notes: string[] }): number {
  const fig = new Map(opts.sides.map((s) => [s, figures(s)]))
  const rounds = opts.sides[0].results.length
  console.log('')
  console.log(opts.title)
  console.log(
    `medians of ${rounds} round(s) (order alternated, reversed in rounds 2, 4, …); every side read back first: each 2xx one pending ledger row and one object`,
  )
  console.log('')
  console.log('                          req/s    p50 ms   p99 ms   requests   2xx      non-2xx  errors')
  for (const s of opts.sides) {
    const f = fig.get(s)!
    console.log(
      `  ${s.name.padEnd(22)}${fmt(f.reqPerSec, 1).padStart(7)}  ${fmt(f.p50, 1).padStart(7)}  ${fmt(f.p99, 1).padStart(7)}  ${String(f.total).padStart(8)}  ${String(f.ok).padStart(7)}  ${String(f.non2xx).padStart(7)}  ${String(f.errors).padStart(6)}`,
    )
  }
  console.log('')
  for (const { of, over, target } of opts.ratios) {
    const [a, z] = [fig.get(of)!, fig.get(over)!]
    const perRound = of.results.map((r, i) => r.requests.average / over.results[i].requests.average)
    const medians = `req/s ${(a.reqPerSec / z.reqPerSec).toFixed(2)}, p50 ${(a.p50 / z.p50).toFixed(2)}, p99 ${(a.p99 / z.p99).toFixed(2)}`
    const rounds = `per round ${perRound.map((x) => x.toFixed(2)).join(' ')}`
    const verdict =
      target === undefined ? '' : ` — target req/s ≥ ${target.toFixed(2)}× in every round: ${perRound.every((x) => x >= target) ? 'met' : 'NOT met'}`
    console.log(`  ratio ${of.name}/${over.name}: ${medians}; ${rounds}${verdict}`)
  }
  console.log(`  load average at the start ${loadText(opts.loadStart)}; at the end ${loadText()} — a ratio is only as good as the box is quiet`)
  console.log(`  read back (probe and warm-up included): ${opts.readBacks.join('; ')}`)
  for (const n of opts.notes) console.log(`  ${n}`)
  return [...fig.values()].reduce((a, f) => a + f.non2xx + f.errors, 0)
}
