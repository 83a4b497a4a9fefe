// The leases this roller holds for its rolls: renewed together while the rolls need them (a heartbeat
// at a third of the term), so a long roll, or one waiting for the large turn, never lapses into a
// second roller's hands; and a lease near its end is renewed before a roll starts on it, or given up.
import type { EdgeApi } from './api.ts'
import { errorText, type Logger } from './log.ts'
import type { RollerMetrics } from './metrics.ts'

interface Held {
  /** This host's clock: when the lease ends at the latest (measured from before the request that took or renewed it). */
  endsAt: number
  lost: boolean
}

export class Leases {
  private readonly held = new Map<string, Held>()
  private timer: ReturnType<typeof setInterval> | undefined
  private renewing: Promise<void> = Promise.resolve()

  constructor(
    private readonly api: EdgeApi,
    private readonly leaseMs: number,
    private readonly log: Logger,
    private readonly metrics: RollerMetrics,
  ) {}

  /** Leases just taken by a request sent at `askedAt`. */
  take(ids: string[], askedAt: number): void {
    for (const id of ids) this.held.set(id, { endsAt: askedAt + this.leaseMs, lost: false })
    if (!this.timer && this.held.size > 0) {
      this.timer = setInterval(() => void this.renew(), this.leaseMs / 3)
      this.timer.unref()
    }
  }

  /** The roll's report released the lease (or the roll is over): no longer renewed, and never "lost". */
  drop(id: string): void {
    this.held.delete(id)
    if (this.held.size === 0 && this.timer) {
      clearInterval(this.timer)
      this.timer = undefined
    }
  }

  /**
   * Another roller holds it now, or it could not be renewed before it ended: this roller must not
   * commit under it. A lease already given back (dropped) is not lost: its roll is finishing.
   */
  lost(id: string, now = Date.now()): boolean {
    const h = this.held.get(id)
    return h !== undefined && (h.lost || h.endsAt <= now)
  }

  /**
   * Before a roll starts: true when the lease has at least two thirds of its term left, renewing it
   * first when it has less. A roll never starts on a lease about to end.
   */
  async ready(id: string): Promise<boolean> {
    const h = this.held.get(id)
    if (!h || h.lost) return false
    if (h.endsAt - Date.now() >= (this.leaseMs * 2) / 3) return true
    await this.renew([id])
    return !this.lost(id) && (this.held.get(id)?.endsAt ?? 0) - Date.now() >= (this.leaseMs * 2) / 3
  }

  /** One renewal of every lease held (or of `ids`); one in flight at a time. */
  renew(ids?: string[]): Promise<void> {
    this.renewing = this.renewing.then(async () => {
      const asked = (ids ?? [...this.held.keys()]).filter((id) => this.held.get(id)?.lost === false)
      if (asked.length === 0) return
      const askedAt = Date.now()
      try {
        const renewed = new Set(await this.api.renew(asked))
        for (const id of asked) {
          const h = this.held.get(id)
          if (!h) continue
          if (renewed.has(id)) h.endsAt = askedAt + this.leaseMs
          else {
            h.lost = true
            this.log.warn('lease lost: another roller holds the sink; this roll commits nothing more', { sink_id: id })
          }
        }
        this.metrics.leaseRenewals.inc({ outcome: 'renewed' }, renewed.size)
        this.metrics.leaseRenewals.inc({ outcome: 'lost' }, asked.length - renewed.size)
      } catch (err) {
        // The lease still runs until endsAt; the next heartbeat tries again.
        this.metrics.leaseRenewals.inc({ outcome: 'failed' }, asked.length)
        this.log.warn('leases not renewed; they run until their term unless the next renewal works', { error: errorText(err), sinks: asked.length })
      }
    })
    return this.renewing
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    await this.renewing
  }
}
