// A token bucket: `rate` tokens a second, holding at most one second's worth (at least one token), full
// at first. A cost is taken once the bucket holds it, or holds all it can hold: a request bigger than a
// second's budget (a 4 MiB batch at 1 MiB/s) passes when the bucket is full and leaves it in debt, so
// the next waits until the debt is paid. Time is given in milliseconds, so it is tested without clocks.

export class TokenBucket {
  private tokens: number
  private at: number

  constructor(
    readonly rate: number,
    now: number,
  ) {
    this.tokens = this.capacity
    this.at = now
  }

  get capacity(): number {
    return Math.max(1, this.rate)
  }

  private refill(now: number): void {
    if (now > this.at) this.tokens = Math.min(this.capacity, this.tokens + ((now - this.at) / 1000) * this.rate)
    this.at = Math.max(this.at, now)
  }

  /** Milliseconds until `cost` may be taken (0: now). */
  waitFor(cost: number, now: number): number {
    this.refill(now)
    const need = Math.min(cost, this.capacity)
    return this.tokens >= need ? 0 : ((need - this.tokens) / this.rate) * 1000
  }

  /** Takes `cost` (the bucket may go into debt: see above). */
  take(cost: number, now: number): void {
    this.refill(now)
    this.tokens -= cost
  }

  /** Gives back what a refused request had taken. */
  give(cost: number): void {
    this.tokens = Math.min(this.capacity, this.tokens + cost)
  }
}
