// Roll slots: LHBOX_ROLLER_CONCURRENCY rolls at once, so small rolls overlap their round trips. Large
// ones take turns, one at a time, so the peak memory stays near a single large roll's.
import type { SinkView } from './api.ts'

export class RollSlots {
  private busy = 0
  private largeTurn: Promise<void> = Promise.resolve()

  constructor(readonly size: number) {}

  get free(): number {
    return this.size - this.busy
  }

  get used(): number {
    return this.busy
  }

  /** Runs `roll` in a slot (the caller leased no more than `free`); a large one first waits for the large turn. */
  async run<T>(large: boolean, roll: () => Promise<T>): Promise<T> {
    this.busy++
    try {
      return large ? await this.inLargeTurn(roll) : await roll()
    } finally {
      this.busy--
    }
  }

  /**
   * Runs `work` in the large turn without taking a roll slot: a sweep's table beside the rolls, never
   * beside a large roll or another sweep's table, so the peak memory stays near one large job's.
   */
  async inLargeTurn<T>(work: () => Promise<T>): Promise<T> {
    const before = this.largeTurn
    let done: () => void = () => {}
    this.largeTurn = new Promise<void>((resolve) => {
      done = resolve
    })
    await before
    try {
      return await work()
    } finally {
      done()
    }
  }
}

/**
 * A large roll: more than `largeBytes` waiting, or work whose memory follows the table rather than the
 * batches (a keyed roll rewrites data files, a dedupe reads the table, a feed's run reads its source).
 */
export function isLarge(sink: SinkView, largeBytes: number): boolean {
  return sink.lag.bytes > largeBytes || sink.key !== null || sink.dedupe_requested_at !== null || Boolean(sink.feed?.run)
}
