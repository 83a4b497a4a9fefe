// bench:intake's sides and their read-back: every 2xx answer (probe and warm-up included) must be one
// ledger row, pending, and one object under _sink/<sink_id>/; any other row must be a request
// autocannon sent and cut off unanswered at the end of a run (the server may finish it); nothing else.
import type { Result } from 'autocannon'
import type pg from 'pg'
import { type BenchStack, sinkHolds } from './common.ts'
import type { Req } from './send-load.ts'

export interface Side {
  name: string
  origin: string
  sinkId: string
  /** The status of a stored batch: 202, or the OTLP route's and the OwnTracks preset's 200. */
  expect: number
  /** The n-th request to this side (n from 1, over probe, warm-ups and runs alike). */
  request: (n: number) => Req
  n: number
  /** Batch ids of every request written, and the status each answered one got. */
  sent: Set<string>
  answered: Map<string, number>
  loads: number
  results: Result[]
}

export const side = (name: string, origin: string, sinkId: string, expect: number, request: (n: number) => Req): Side => ({
  name,
  origin,
  sinkId,
  expect,
  request,
  n: 0,
  sent: new Set(),
  answered: new Map(),
  loads: 0,
  results: [],
})

/** What the side's sink holds against what it was answered; throws naming every difference. `connections`: cut-offs allowed per load. */
export async function readBack(b: BenchStack, db: pg.Client, s: Side, connections: number): Promise<string> {
  const ok = [...s.answered].filter(([, status]) => status >= 200 && status < 300).map(([id]) => id)
  let held = await sinkHolds(b, db, s.sinkId)
  // receiving → pending is deferred past the answer: give it a moment under load.
  for (let i = 0; i < 20 && ok.some((id) => held.ledger.get(id) === 'receiving'); i++) {
    await new Promise((r) => setTimeout(r, 500))
    held = await sinkHolds(b, db, s.sinkId)
  }
  const problems: string[] = []
  const notPending = ok.filter((id) => held.ledger.get(id) !== 'pending')
  const noObject = ok.filter((id) => !held.objects.has(id))
  const extra = [...held.ledger.keys()].filter((id) => !(s.answered.get(id)! >= 200 && s.answered.get(id)! < 300))
  const strange = extra.filter((id) => !s.sent.has(id) || s.answered.has(id))
  // An object with no ledger row: only a request cut off unanswered may leave one (the bare Worker
  // writes its object and its row side by side; the edge writes the row first, so never there).
  const cutOff = (id: string) => s.sent.has(id) && !s.answered.has(id)
  const orphans = [...held.objects].filter((id) => !held.ledger.has(id) && !cutOff(id))
  const cutObjects = [...held.objects].filter((id) => !held.ledger.has(id) && cutOff(id))
  if (notPending.length)
    problems.push(`${notPending.length} 2xx batch(es) not pending in the ledger (e.g. ${notPending[0]}: ${held.ledger.get(notPending[0])})`)
  if (noObject.length) problems.push(`${noObject.length} 2xx batch(es) without an object (e.g. ${noObject[0]})`)
  if (strange.length) problems.push(`${strange.length} ledger row(s) neither a 2xx nor a cut-off request (e.g. ${strange[0]}: ${s.answered.get(strange[0])})`)
  if (extra.length + cutObjects.length > connections * s.loads)
    problems.push(`${extra.length} cut-off rows and ${cutObjects.length} cut-off objects, more than ${connections} per run`)
  if (orphans.length) problems.push(`${orphans.length} object(s) with no ledger row (e.g. ${orphans[0]})`)
  if (problems.length) throw new Error(`${s.name}: read back failed: ${problems.join('; ')}`)
  const cut = extra.length ? ` + ${extra.length} cut off unanswered at a run's end` : ''
  const cutObj = cutObjects.length ? ` (+ ${cutObjects.length} of a request cut off, no row)` : ''
  return `${s.name} ${held.ledger.size} rows = ${ok.length} 2xx${cut}, ${held.objects.size} objects${cutObj}`
}
