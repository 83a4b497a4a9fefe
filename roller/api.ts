// The roller's client of the edge's /internal routes (bootstrap secret): the wire is contract/internal.ts,
// and every reply is parsed with its schemas.
import { parse, toSafeNumberOrThrow } from 'lossless-json'
import { request } from 'undici'
import * as v from 'valibot'
import {
  LagList,
  type FeedBatch,
  FeedBatchRecorded,
  type LeaseRenewal,
  LeaseRenewed,
  MeasureList,
  RollAnswer,
  SinkList,
  type LeasePurpose,
  type MaintenanceSweep,
  type MeasureQuery,
  type RollReport as Report,
  type SinkLag,
  type SinksQuery,
  type SinkView,
  type StorageReport,
} from '../contract/internal.ts'
import type { RollerConfig } from './config.ts'

export type { SinkList, SinkView }
export type Measure = MeasureList['warehouses'][number]

/** A report as the roller writes it: it always says which batches it consumed and repaired. */
export type RollReport = Report & Required<Pick<Report, 'consumed' | 'repaired'>>

/** A reply's JSON. Ids travel as strings; a number a JS number cannot hold exactly is refused, never rounded. */
/** Tries of one call to the edge (send() says which answers are tried again). */
const EDGE_ATTEMPTS = 4

const parseReply = (text: string): unknown => parse(text, null, (digits) => toSafeNumberOrThrow(digits))

export class EdgeApi {
  constructor(private readonly config: RollerConfig) {}

  private async request<S extends v.GenericSchema>(reply: S, method: string, path: string, body?: unknown): Promise<v.InferOutput<S>> {
    const { status, text } = await this.send(method, path, body)
    if (status < 200 || status > 299) throw new Error(`${method} ${path}: ${status} ${text.slice(0, 300)}`)
    const got = v.safeParse(reply, parseReply(text))
    if (!got.success) {
      const issue = got.issues[0]
      throw new Error(`${method} ${path}: the reply does not match contract/internal.ts: ${v.getDotPath(issue) ?? '(root)'}: ${issue.message}`)
    }
    return got.output
  }

  /**
   * One call, tried again (EDGE_ATTEMPTS in all) when the edge said nothing was done: a 503 (its
   * database or bucket away for a moment: the request's transaction did not commit), a 429, or a
   * connection refused (an edge restarting). Any other answer or error is the caller's.
   */
  private async send(method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
    for (let attempt = 1; ; attempt++) {
      try {
        // undici's request(), not fetch: a third of the CPU a request (iceberg/io/s3-node.ts says why).
        const res = await request(this.config.apiUrl + path, {
          method: method as 'GET',
          headers: { authorization: `Bearer ${this.config.bootstrapSecret}`, ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        })
        const text = await res.body.text()
        if (attempt >= EDGE_ATTEMPTS || (res.statusCode !== 503 && res.statusCode !== 429)) return { status: res.statusCode, text }
      } catch (err) {
        if (attempt >= EDGE_ATTEMPTS || (err as { code?: string }).code !== 'ECONNREFUSED') throw err
      }
      // Jittered, doubling from 250 ms: under two seconds of waiting in all, well inside any lease.
      await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** (attempt - 1) * (0.5 + Math.random() / 2)))
    }
  }

  /**
   * Leases the due sinks (or `sink`; `force` ignores the policy) for this roller; `purpose:
   * 'maintenance'` leases `sink` for a sweep of its table, due or not, active or disabled. A sink
   * another roller holds is not leased (an empty answer).
   */
  async lease(opts: { sink?: string; force?: boolean; purpose?: LeasePurpose; limit?: number; leasedBefore?: string } = {}): Promise<SinkList> {
    const query: v.InferInput<typeof SinksQuery> = { roller: this.config.rollerId, lease_seconds: String(this.config.leaseSeconds) }
    if (opts.sink) query.sink = opts.sink
    if (opts.force) query.force = 'true'
    if (opts.purpose) query.purpose = opts.purpose
    if (opts.limit) query.limit = String(opts.limit)
    if (opts.leasedBefore) query.leased_before = opts.leasedBefore
    if (this.config.warehouseIds.length) query.warehouses = this.config.warehouseIds.join(',')
    return await this.request(SinkList, 'GET', `/internal/sinks?${new URLSearchParams(query)}`)
  }

  /** Records a feed run's stored batch in the ledger (pending), so lag shows it until the roll commits it. */
  async recordFeedBatch(sinkId: string, batch: Omit<FeedBatch, 'roller'>): Promise<void> {
    await this.request(FeedBatchRecorded, 'POST', `/internal/sinks/${encodeURIComponent(sinkId)}/batches`, { roller: this.config.rollerId, ...batch })
  }

  /** Renews this roller's leases of `sinkIds`; answers the ids it still holds (a lease another roller took is not among them). */
  async renew(sinkIds: string[]): Promise<string[]> {
    const body: LeaseRenewal = { roller: this.config.rollerId, lease_seconds: this.config.leaseSeconds, sink_ids: sinkIds }
    return (await this.request(LeaseRenewed, 'POST', '/internal/leases', body)).renewed
  }

  /** Gives back a sweep's lease, with what the sweep did (`maintenance`): never recorded as a roll. */
  async releaseMaintenance(sinkId: string, sweepId: string, maintenance?: MaintenanceSweep): Promise<void> {
    await this.report(sinkId, {
      roller: this.config.rollerId,
      roll_id: sweepId,
      consumed: [],
      repaired: [],
      release: true,
      purpose: 'maintenance',
      ...(maintenance ? { maintenance } : {}),
    })
  }

  /** Every sink not deleted, as the gauges need it (lag, policy, due, held). */
  async lags(): Promise<SinkLag[]> {
    return (await this.request(LagList, 'GET', '/internal/lag')).sinks
  }

  /** The roller's view of every sink not deleted (disabled ones too), no lease. */
  async view(): Promise<SinkView[]> {
    return (await this.request(SinkList, 'GET', '/internal/sinks')).sinks
  }

  async report(sinkId: string, report: RollReport): Promise<void> {
    await this.request(RollAnswer, 'POST', `/internal/sinks/${encodeURIComponent(sinkId)}/roll`, report)
  }

  /** Leases the warehouses whose storage figure is due or asked for (or `warehouse`, due or not). */
  async leaseMeasures(opts: { warehouse?: string } = {}): Promise<Measure[]> {
    const query: v.InferInput<typeof MeasureQuery> = {
      roller: this.config.rollerId,
      every_seconds: String(this.config.measureSeconds),
      lease_seconds: String(this.config.leaseSeconds),
    }
    if (opts.warehouse) query.warehouse = opts.warehouse
    return (await this.request(MeasureList, 'GET', `/internal/warehouses/measure?${new URLSearchParams(query)}`)).warehouses
  }

  async reportStorage(warehouseId: string, report: StorageReport): Promise<void> {
    await this.request(v.object({ ok: v.literal(true) }), 'POST', `/internal/warehouses/${encodeURIComponent(warehouseId)}/storage`, report)
  }
}
