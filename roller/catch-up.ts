// A sink that is behind — more waiting than one roll takes (roll_bytes, or 1,000 batches) — is rolled
// again at once under the same lease, instead of waiting for a tick to lease it again: no second
// lease, no table load (the commit answered the new metadata), the scan threads still warm and the next
// roll's first batches read while the one before commits (roll.ts, readNextAhead). Each roll
// is still its own commit, summary, marker, deletes and report, so exactly once is as for any roll.
// Bounded (LHBOX_ROLLER_CATCH_UP_ROLLS, LHBOX_ROLLER_CATCH_UP_SECONDS) so that one busy sink holds its
// slot, and the large turn, no longer than that; what is still waiting then is due at the next tick.
import type { LoadedTable } from '../iceberg/catalog/index.ts'
import type { SinkView } from './api.ts'
import type { Logger } from './log.ts'
import type { ReadAhead, RollContext, RollResult } from './roll.ts'

interface CatchUpLimits {
  /** Rolls under one lease at most (1: no catch-up). */
  rolls: number
  /** No further roll starts this long after the first began. */
  ms: number
}

export interface CatchUpDeps {
  limits: CatchUpLimits
  log: Logger
  /** One roll of the leased sink; null when it failed or ended early (its lease was given back). */
  rollOnce: (sink: SinkView, catchUp: NonNullable<RollContext['catchUp']>) => Promise<RollResult | null>
  /** The sink's fresh view under the same lease, renewed; null when it is not to be rolled now (the lease is given back). */
  leaseAgain: (sink: SinkView) => Promise<SinkView | null>
  /** A step boundary between two rolls (the crash tests kill the roller at 'catch-up'). */
  checkpoint: (name: string) => void | Promise<void>
  /** The roller is stopping: no further roll. */
  stopping: () => boolean
}

/** Rolls a leased sink, then again while it is behind and within the limits; false when a roll failed. */
export async function rollCatchingUp(first: SinkView, deps: CatchUpDeps): Promise<boolean> {
  const began = Date.now()
  let sink = first
  let table: LoadedTable | undefined
  let readAhead: ReadAhead | undefined
  const done = { rolls: 0, batches: 0, rows: 0 }
  for (;;) {
    // A dedupe or a feed's run follows a roll under the lease already, and releases it: no catch-up then.
    const mayFollow =
      done.rolls + 1 < deps.limits.rolls &&
      Date.now() - began < deps.limits.ms &&
      !deps.stopping() &&
      !(sink.dedupe_requested_at && sink.key) &&
      !sink.feed?.run
    const result = await deps.rollOnce(sink, { table, mayFollow, readAhead })
    if (!result) return false
    done.rolls++
    done.batches += result.batches
    done.rows += result.rows
    if (!result.follows) break
    await deps.checkpoint('catch-up')
    const next = await deps.leaseAgain(sink)
    if (!next) break
    sink = next
    table = result.table
    readAhead = result.readAhead
  }
  if (done.rolls > 1) deps.log.info('catch-up done', { sink_id: first.id, ...done, seconds: (Date.now() - began) / 1000 })
  return true
}
