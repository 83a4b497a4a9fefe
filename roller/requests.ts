// A roll's requests by what they reach (the store, the catalog, the edge), for the `rolled` log line
// and the round-trips histogram: on a real store each one is 10–40 ms, so their count, not the CPU,
// sets how long a small roll takes.

export type RequestKind = 's3' | 'catalog' | 'edge'

/** What a SQL catalog needs of its Postgres client (iceberg/catalog/sql.ts). */
interface SqlExecutor {
  query(text: string, params?: unknown[]): Promise<{ rows: any[]; rowCount: number | null }>
}

export interface RequestSummary {
  s3: number
  catalog: number
  edge: number
  total: number
  /** Round trips in a row: a request started while another of the roll is in flight adds none. */
  sequential: number
}

export class RollRequests {
  private readonly counts: Record<RequestKind, number> = { s3: 0, catalog: 0, edge: 0 }
  private sequential = 0
  private inFlight = 0

  /** A request starts; call what it returns when its answer is in. */
  start(kind: RequestKind): () => void {
    this.counts[kind]++
    if (this.inFlight++ === 0) this.sequential++
    let ended = false
    return () => {
      if (ended) return
      ended = true
      this.inFlight--
    }
  }

  /** For S3Config.observe. */
  observer(kind: RequestKind): () => () => void {
    return () => this.start(kind)
  }

  async track<T>(kind: RequestKind, call: () => Promise<T>): Promise<T> {
    const done = this.start(kind)
    try {
      return await call()
    } finally {
      done()
    }
  }

  /** A SQL catalog's client whose statements count as catalog requests. */
  sql(inner: SqlExecutor): SqlExecutor {
    return { query: (text, params) => this.track('catalog', () => inner.query(text, params)) }
  }

  /** A fetch whose requests count as `kind`. */
  fetch(kind: RequestKind): (input: string, init?: RequestInit) => Promise<Response> {
    return (input, init) => this.track(kind, () => fetch(input, init))
  }

  summary(): RequestSummary {
    const { s3, catalog, edge } = this.counts
    return { s3, catalog, edge, total: s3 + catalog + edge, sequential: this.sequential }
  }
}
