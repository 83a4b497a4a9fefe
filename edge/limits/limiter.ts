// The rate limits on the producer routes (send, device, NDJSON, OTLP, MCP's send_rows: all record
// their batch through ledger.ts's recordBatch, which asks here first). A request over its sink's
// limits or its project's ceiling is answered 429 rate_limited with Retry-After before any statement
// or PUT: the limits come from what the ledger statement of an earlier request of the same sink and
// send key answered (the sink's `limits` and project), so the check costs no statement, only a
// map lookup and arithmetic. The first request of a sink and key in an isolate (or process) has
// nothing to check against: a token bucket starts full, so it passes, and is charged after.
//
// How exact: one bucket per sink (and per project) per isolate on Workers, per process on Node. On
// one Node process the limits are exact; N processes, or N isolates, let up to N times the limit
// through. On Workers, a RateLimit binding (LHBOX_PROJECT_RATE_LIMIT, wrangler.toml [[ratelimits]])
// adds the project ceiling across isolates, per Cloudflare location, as its fixed limit per period
// (eventually consistent, as Cloudflare documents it); its limit cannot differ by sink, so the
// per-sink limits are the isolate's. A PATCH of the limits reaches the isolate that served it at
// once; others learn it from their sink's next statement, or within REFRESH_MS of refusing it.
import type { EdgeDb } from '../../db/edge.ts'
import { ApiError } from '../errors.ts'
import { TokenBucket } from './bucket.ts'
import { projectRates, sinkRates, type LimitsEnv, type SinkLimits } from './settings.ts'

/** What the limiter reads of a request's context (a Context<AppEnv> is one). */
export interface LimitContext {
  env: LimitsEnv
  req: { raw: Request }
  var: { db: () => Promise<EdgeDb>; defer: (work: Promise<unknown>) => void }
}

/** What the ledger statement told of a sink, for one send key. */
export interface SinkSeen {
  projectId: string
  limits: SinkLimits | null
}

interface Known extends SinkSeen {
  at: number
}

interface Cost {
  kind: 'requests' | 'bytes'
  bucket: TokenBucket
  cost: number
}

/** What a request took: recordBatch may run twice in one request (a re-mapped device payload, OTLP's auth first). */
interface Charge {
  checked: boolean
  bytes: number
  costs: Cost[]
}

const MAX_SINKS = 10_000
/** A refused sink's limits are read again (with its refusals counted) at most this often. */
const REFRESH_MS = 10_000
/** The binding says no more than no: its period (set it to 10 s) is the wait. */
const BINDING_RETRY_AFTER = 10
const month = `to_char(now() at time zone 'UTC', 'YYYY-MM-01')::date`

// A refused sink's refusals counted, and its limits, project and key read again, in one statement.
const REFRESH = `
with s as (
  select id, project_id, limits, state,
         send_key_sha256 = $2 or (previous_send_key_sha256 = $2 and previous_send_key_retires_at > now()) as key_ok
  from sinks where id = $1
), bump as (
  insert into usage_counters as u (project_id, sink_id, month, rate_limited)
  select project_id, id, ${month}, $3 from s where $3::bigint > 0
  on conflict (project_id, sink_id, month) do update set rate_limited = u.rate_limited + excluded.rate_limited
)
select project_id, limits, (state <> 'deleted' and key_ok) as live from s`

export class SendLimiter {
  /** sink id → send key SHA-256 → what its last statement answered. */
  private known = new Map<string, Map<string, Known>>()
  private buckets = new Map<string, TokenBucket>()
  /** Refusals not yet counted in usage_counters, by sink, and when they were last counted. */
  private refused = new Map<string, { count: number; countedAt: number }>()
  private charges = new WeakMap<Request, Charge>()

  /** Before the ledger statement: 429 rate_limited when the sink or its project is over its limits. */
  async admit(c: LimitContext, sinkId: string, sendKeySha256: string, bytes: number): Promise<void> {
    const now = Date.now()
    const prior = this.charges.get(c.req.raw)
    if (prior) {
      // A later statement of the same request: its batch may have grown (a re-mapped payload).
      const more = bytes - prior.bytes
      if (more > 0) for (const k of prior.costs) if (k.kind === 'bytes') k.bucket.take(more, now)
      prior.bytes = Math.max(prior.bytes, bytes)
      return
    }
    const seen = this.known.get(sinkId)?.get(sendKeySha256)
    const charge: Charge = { checked: seen !== undefined, bytes, costs: [] }
    this.charges.set(c.req.raw, charge)
    if (!seen) return
    const costs = this.costs(c, sinkId, seen, bytes, now)
    const wait = Math.max(0, ...costs.map((k) => k.bucket.waitFor(k.cost, now)))
    if (wait > 0) throw this.refuse(c, sinkId, sendKeySha256, seen, Math.ceil(wait / 1000))
    for (const k of costs) k.bucket.take(k.cost, now)
    charge.costs = costs
    if (!(await this.bindingAllows(c, seen.projectId))) {
      for (const k of costs) k.bucket.give(k.cost)
      throw this.refuse(c, sinkId, sendKeySha256, seen, BINDING_RETRY_AFTER)
    }
  }

  /** After the ledger statement: what it told of the sink for this key (null: no live sink took it). */
  seen(c: LimitContext, sinkId: string, sendKeySha256: string, sink: SinkSeen | null): void {
    if (!sink) {
      this.known.get(sinkId)?.delete(sendKeySha256)
      return
    }
    this.remember(sinkId, sendKeySha256, sink)
    const charge = this.charges.get(c.req.raw)
    if (charge && !charge.checked) {
      // The request passed unchecked (nothing was known): it is charged now, so the next one waits.
      charge.checked = true
      charge.costs = this.costs(c, sinkId, sink, charge.bytes, Date.now())
      for (const k of charge.costs) k.bucket.take(k.cost, Date.now())
    }
  }

  /** Refusals to count with the next statement of the sink (the ledger's); give them back if it fails. */
  takeRefusals(sinkId: string): number {
    const r = this.refused.get(sinkId)
    if (!r || r.count === 0) return 0
    const n = r.count
    r.count = 0
    return n
  }

  giveRefusals(sinkId: string, n: number): void {
    if (n > 0) this.refusedOf(sinkId).count += n
  }

  /** A PATCH of the sink's limits: the next request reads them with its statement. */
  forget(sinkId: string): void {
    this.known.delete(sinkId)
  }

  /** The Workers binding's word on the project (none bound: yes). A binding that fails lets the request through: the isolate's buckets still hold. */
  private async bindingAllows(c: LimitContext, projectId: string): Promise<boolean> {
    const binding = c.env.LHBOX_PROJECT_RATE_LIMIT
    if (!binding) return true
    try {
      return (await binding.limit({ key: projectId })).success
    } catch (err) {
      console.error(JSON.stringify({ level: 'warn', msg: 'the rate limiting binding failed; not limiting by it', error: String(err) }))
      return true
    }
  }

  private costs(c: LimitContext, sinkId: string, seen: SinkSeen, bytes: number, now: number): Cost[] {
    const sink = sinkRates(c.env, seen.limits)
    const project = projectRates(c.env)
    const costs: Cost[] = []
    const add = (key: string, kind: Cost['kind'], rate: number | null) => {
      if (rate !== null) costs.push({ kind, bucket: this.bucket(`${key}:${kind}`, rate, now), cost: kind === 'requests' ? 1 : bytes })
    }
    add(`sink:${sinkId}`, 'requests', sink.requests)
    add(`sink:${sinkId}`, 'bytes', sink.bytes)
    add(`project:${seen.projectId}`, 'requests', project.requests)
    add(`project:${seen.projectId}`, 'bytes', project.bytes)
    return costs
  }

  /** The bucket of a key at this rate: a changed rate starts a new, full one. */
  private bucket(key: string, rate: number, now: number): TokenBucket {
    let b = this.buckets.get(key)
    if (!b || b.rate !== rate) {
      b = new TokenBucket(rate, now)
      this.buckets.delete(key)
      this.buckets.set(key, b)
      if (this.buckets.size > MAX_SINKS * 4) this.buckets.delete(this.buckets.keys().next().value as string)
    }
    return b
  }

  private remember(sinkId: string, sendKeySha256: string, seen: SinkSeen): void {
    let keys = this.known.get(sinkId)
    if (!keys) {
      keys = new Map()
      this.known.set(sinkId, keys)
      // A Map iterates in insertion order: the first sink is the one seen longest ago.
      if (this.known.size > MAX_SINKS) this.known.delete(this.known.keys().next().value as string)
    }
    keys.set(sendKeySha256, { ...seen, at: Date.now() })
  }

  private refusedOf(sinkId: string) {
    let r = this.refused.get(sinkId)
    if (!r) {
      r = { count: 0, countedAt: 0 }
      this.refused.set(sinkId, r)
      if (this.refused.size > MAX_SINKS) this.refused.delete(this.refused.keys().next().value as string)
    }
    return r
  }

  /** Counts the refusal; at most every REFRESH_MS, after the answer, counts them in usage and reads the limits again. */
  private refuse(c: LimitContext, sinkId: string, sendKeySha256: string, seen: Known, retryAfter: number): ApiError {
    const r = this.refusedOf(sinkId)
    r.count++
    const now = Date.now()
    if (now - r.countedAt >= REFRESH_MS || now - seen.at >= REFRESH_MS) {
      r.countedAt = now
      c.var.defer(this.refresh(c, sinkId, sendKeySha256))
    }
    const seconds = Math.max(1, retryAfter)
    return new ApiError(
      429,
      'rate_limited',
      `this sink is over its rate limits (or its project’s); retry after ${seconds} s with the same Idempotency-Key`,
      { retry_after: seconds },
      { 'Retry-After': String(seconds) },
    )
  }

  private async refresh(c: LimitContext, sinkId: string, sendKeySha256: string): Promise<void> {
    const n = this.takeRefusals(sinkId)
    try {
      const db = await c.var.db()
      const { rows } = await db.$client.query(REFRESH, [sinkId, sendKeySha256, n])
      const row = rows[0]
      if (row?.live) this.remember(sinkId, sendKeySha256, { projectId: row.project_id, limits: row.limits })
      else this.known.get(sinkId)?.delete(sendKeySha256)
    } catch (err) {
      this.giveRefusals(sinkId, n)
      console.error(JSON.stringify({ level: 'warn', msg: 'rate limit refresh failed', sink_id: sinkId, error: String(err) }))
    }
  }
}
