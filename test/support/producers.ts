// A producer that keeps sending while a test changes what serves it (the rolling-upgrade test): one
// batch after another, each with its own batch id, retried under the same id until a 2xx (so a retry is
// a duplicate, never a second copy). Bursts move from sink to sink (burstMs each), so every sink goes
// quiet between its bursts for longer than its inactivity_seconds and is rolled while the others are
// sent to. Every answer that is not a 2xx is kept, with the phase it fell in and its latency.
import { send, type Sink } from './sinks.ts'

export interface Attempt {
  phase: string
  batchId: string
  /** The HTTP status, or 0 when the request itself failed (connection refused or reset). */
  status: number
  ms: number
  error?: string
}

export class Producer {
  /** Where the sends go: an edge's base URL, switched while the producer runs. */
  base: string
  /** A label for what is going on (the test's current step), kept with each answer. */
  phase = 'start'
  /** Batch ids answered 2xx, per sink id, with the x values of their rows. */
  readonly acked = new Map<string, Map<string, number[]>>()
  /** Every non-2xx answer or failed request. */
  readonly failures: Attempt[] = []
  /** The slowest answer (ms) per phase. */
  readonly slowest = new Map<string, number>()
  /** 2xx answers per phase. */
  readonly okByPhase = new Map<string, number>()
  private running = false
  /** What ended the loop early: a batch never accepted. */
  private error: Error | null = null
  private loop: Promise<void> | null = null
  private next = 0

  constructor(
    private readonly sinks: Sink[],
    base: string,
    private readonly opts: { rowsPerBatch: number; burstMs: number; pauseMs: number; prefix: string },
  ) {
    this.base = base
    for (const s of sinks) this.acked.set(s.id, new Map())
  }

  start(): void {
    this.running = true
    const t0 = Date.now()
    this.loop = (async () => {
      while (this.running) {
        const sink = this.sinks[Math.floor((Date.now() - t0) / this.opts.burstMs) % this.sinks.length]
        await this.sendOne(sink)
        await new Promise((r) => setTimeout(r, this.opts.pauseMs))
      }
    })().catch((err: Error) => {
      this.error = err
    })
  }

  /** Stops sending (the batch under way is finished); throws what ended the loop early, if anything did. */
  async stop(): Promise<void> {
    this.running = false
    await this.loop
    if (this.error) throw this.error
  }

  /** Throws when any send was answered other than 2xx so far (a test that allows no window fails at once). */
  assertNoFailures(): void {
    if (this.failures.length) throw new Error(`${this.failures.length} sends not answered 2xx, the first: ${JSON.stringify(this.failures.slice(0, 3))}`)
  }

  /** Resolves once `n` more batches were answered 2xx in the current phase. */
  async acceptedInPhase(n: number, ms = 60_000): Promise<void> {
    const phase = this.phase
    const until = Date.now() + ms
    while ((this.okByPhase.get(phase) ?? 0) < n) {
      if (this.error) throw this.error
      if (Date.now() > until) throw new Error(`the producer had ${this.okByPhase.get(phase) ?? 0} of ${n} batches accepted in ${phase} after ${ms} ms`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }

  /** A batch's rows (its body is their JSON): x and who for each x. */
  static rows(xs: number[]): Array<{ x: number; who: string }> {
    return xs.map((x) => ({ x, who: `r${x}` }))
  }

  get batches(): number {
    return [...this.acked.values()].reduce((n, m) => n + m.size, 0)
  }

  private async sendOne(sink: Sink): Promise<void> {
    const n = this.next++
    const batchId = `${this.opts.prefix}-${n}`
    const xs = Array.from({ length: this.opts.rowsPerBatch }, (_, i) => n * this.opts.rowsPerBatch + i)
    const rows = Producer.rows(xs)
    // Retried (same id) until answered, stopping or not: an unanswered batch may still have been stored.
    for (let attempt = 1; ; attempt++) {
      const phase = this.phase
      const started = Date.now()
      let status = 0
      let error: string | undefined
      try {
        const res = await send(sink, rows, { batchId, base: this.base })
        status = res.status
        if (status >= 300) error = res.text.slice(0, 300)
      } catch (err) {
        error = String((err as Error).cause ?? err)
      }
      const ms = Date.now() - started
      this.slowest.set(phase, Math.max(this.slowest.get(phase) ?? 0, ms))
      if (status >= 200 && status < 300) {
        this.okByPhase.set(phase, (this.okByPhase.get(phase) ?? 0) + 1)
        this.acked.get(sink.id)!.set(batchId, xs)
        return
      }
      this.failures.push({ phase, batchId, status, ms, error })
      if (attempt >= 50) throw new Error(`batch ${batchId} not accepted after 50 attempts: ${status} ${error}`)
      await new Promise((r) => setTimeout(r, 100))
    }
  }
}
