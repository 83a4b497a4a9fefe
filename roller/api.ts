// The roller's client of the edge's /internal routes (bootstrap secret).
import type { RollerConfig } from './config.ts'

export interface SinkView {
  id: string
  name: string
  project_id: string
  state: string
  table: { namespace: string; name: string }
  warehouse: {
    id: string
    name: string
    catalog: { type: 'sql'; catalog_name: string } | { type: 'rest'; uri: string; warehouse?: string; scope?: string }
    location: string
    bucket: string
    endpoint: string
    region: string
    maintenance: string
  }
  policy: { roll_seconds: number; roll_bytes: number; inactivity_seconds: number | null; max_batches: number }
  key: string[] | null
  lag: { batches: number; bytes: number; oldest_at: string | null; newest_at: string | null }
  ledger_pending: string[]
  due: boolean
  dedupe_requested_at: string | null
  lease: { owner: string; expires_at: string } | null
}

export interface RollReport {
  roller: string
  roll_id: string
  consumed: Array<{ batch_ids: string[]; snapshot_id: string | null }>
  repaired: string[]
  last_roll?: { at: string; batches: number; rows: number; rejected_rows: number; snapshot_id: string | null; seconds: number } | null
  rejects?: { rows: number; batches: number }
  disabled_reason?: string | null
  dedupe?: Record<string, unknown> | null
  release?: boolean
}

export class EdgeApi {
  constructor(private readonly config: RollerConfig) {}

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(this.config.apiUrl + path, {
      method,
      headers: { authorization: `Bearer ${this.config.bootstrapSecret}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    })
    const text = await res.text()
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`)
    return JSON.parse(text) as T
  }

  /** Leases the due sinks (or `sink`; `force` ignores the policy) for this roller. */
  async lease(opts: { sink?: string; force?: boolean } = {}): Promise<SinkView[]> {
    const qs = new URLSearchParams({ roller: this.config.rollerId, lease_seconds: String(this.config.leaseSeconds) })
    if (opts.sink) qs.set('sink', opts.sink)
    if (opts.force) qs.set('force', 'true')
    return (await this.request<{ sinks: SinkView[] }>('GET', `/internal/sinks?${qs}`)).sinks
  }

  /** The roller's view of every active sink, no lease. */
  async view(): Promise<SinkView[]> {
    return (await this.request<{ sinks: SinkView[] }>('GET', '/internal/sinks')).sinks
  }

  async report(sinkId: string, report: RollReport): Promise<void> {
    await this.request('POST', `/internal/sinks/${encodeURIComponent(sinkId)}/roll`, report)
  }
}
