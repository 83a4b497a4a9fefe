// The soak's producers: each sends batches to its sinks in turn, as a device or an agent would — retries with
// the same Idempotency-Key and body until it gets a 2xx, replays some acknowledged batches, and mixes
// in bad rows. What each 2xx acknowledged is recorded, so the end can check every table against it.
import { Agent, fetch } from 'undici'

// workerd's HTTP server (wrangler dev's here; kj's HttpServerSettings.pipelineTimeout) closes a
// keep-alive connection idle for 5 s, and undici keeps one for 4 s by default: a producer whose event
// loop stalls a second can write onto a connection the server has just closed ("other side closed",
// cloudflare/workers-sdk#14641). The client must be the side that closes: after 2 s here.
const dispatcher = new Agent({ keepAliveTimeout: 2_000, keepAliveMaxTimeout: 2_000 })

/** One sink of the soak and what its acknowledged batches say the table and rejects must hold. */
export interface SoakSink {
  kind: 'append' | 'keyed' | 'daily'
  /** Its warehouse's catalog: lhbox's SQL catalog, or the Apache REST fixture. */
  catalog: 'sql' | 'rest'
  id: string
  sendKey: string
  table: string
  /** Acknowledged batch ids. */
  batches: Set<string>
  /** append/daily: the good rows' ids; keyed: the latest v per key. */
  ids: Set<bigint>
  latest: Map<bigint, bigint>
  /** The bad elements' bytes, as the rejects files must hold them. */
  bad: string[]
}

export interface SoakCounts {
  requests: number
  acknowledged: number
  duplicates: number
  replays: number
  retries: number
  /** Elements of acknowledged batches (good and bad). */
  rows: number
  /** Answers ≥ 500 and network errors (0), with when the request was sent and when it ended. */
  errors: Array<{ at: number; end: number; what: string }>
  /** Answers no producer should ever get (4xx other than the ones asked for, a replay not a duplicate). */
  anomalies: string[]
}

export const newCounts = (): SoakCounts => ({ requests: 0, acknowledged: 0, duplicates: 0, replays: 0, retries: 0, rows: 0, errors: [], anomalies: [] })

interface Batch {
  sink: SoakSink
  id: string
  body: string
  /** Applied to the sink's expectations once acknowledged. */
  apply: () => void
}

const pick = <T>(xs: T[]): T => xs[Math.floor(Math.random() * xs.length)]
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** A batch of 1–20 rows for the sink, about 5% of them bad in a way its kind rejects. */
function makeBatch(sink: SoakSink, producer: number, seq: number): Batch {
  const n = 1 + Math.floor(Math.random() * 20)
  const elements: string[] = []
  const good: bigint[] = []
  const latest: Array<[bigint, bigint]> = []
  const bad: string[] = []
  // Each producer owns its keys (k = producer * 1000 + 0..99) and sends one batch at a time, so the
  // latest row per key is the one in its last acknowledged batch; keys are distinct within a batch.
  const keys = new Set<number>()
  for (let j = 0; j < n; j++) {
    const id = BigInt(producer) * 10_000_000n + BigInt(seq) * 100n + BigInt(j)
    const isBad = Math.random() < 0.05
    let text: string
    if (sink.kind === 'append') {
      text = isBad ? pick([`{"id":${id},"n":"not a number"}`, `"bad-${id}"`, `[${id}]`]) : `{"id":${id},"producer":${producer},"who":"p${producer}","n":${seq}}`
      if (!isBad) good.push(id)
    } else if (sink.kind === 'daily') {
      const ts = new Date(Date.now() - Math.floor(Math.random() * 3 * 86_400_000)).toISOString()
      text = isBad ? pick([`{"id":${id},"ts":"not a time"}`, `{"id":${id}}`]) : `{"id":${id},"ts":"${ts}","who":"p${producer}"}`
      if (!isBad) good.push(id)
    } else {
      let k = producer * 1000 + Math.floor(Math.random() * 100)
      while (keys.has(k)) k = producer * 1000 + Math.floor(Math.random() * 100)
      keys.add(k)
      text = isBad ? `{"k":null,"v":${id}}` : `{"k":${k},"v":${id},"who":"p${producer}"}`
      if (!isBad) latest.push([BigInt(k), id])
    }
    if (isBad) bad.push(text)
    elements.push(text)
  }
  return {
    sink,
    id: `p${producer}-${seq}`,
    body: `[${elements.join(',')}]`,
    apply: () => {
      for (const id of good) sink.ids.add(id)
      for (const [k, v] of latest) sink.latest.set(k, v)
      sink.bad.push(...bad)
      sink.batches.add(`p${producer}-${seq}`)
    },
  }
}

/** POSTs one batch; answers the status, or 0 for a network error. */
async function post(apiUrl: string, sink: SoakSink, batch: Batch): Promise<{ status: number; body: string }> {
  try {
    const res = await fetch(`${apiUrl}/v1/sinks/${sink.id}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sink.sendKey}`, 'idempotency-key': batch.id, 'content-type': 'application/json' },
      body: batch.body,
      signal: AbortSignal.timeout(30_000),
      dispatcher,
    })
    return { status: res.status, body: await res.text() }
  } catch (err) {
    return { status: 0, body: String((err as Error).cause ?? err) }
  }
}

/** Sends until a 2xx (backoff up to 5 s); a 4xx is an anomaly and ends the attempt. */
async function deliver(apiUrl: string, sink: SoakSink, batch: Batch, counts: SoakCounts): Promise<{ status: number; body: string }> {
  for (let attempt = 0; ; attempt++) {
    counts.requests++
    const at = Date.now()
    const res = await post(apiUrl, sink, batch)
    if (res.status >= 200 && res.status < 300) return res
    if (res.status >= 400 && res.status < 500) {
      counts.anomalies.push(`${batch.id}: ${res.status} ${res.body.slice(0, 200)}`)
      return res
    }
    counts.errors.push({ at, end: Date.now(), what: `${res.status} ${res.body.slice(0, 120)}` })
    counts.retries++
    await sleep(Math.min(5000, 200 * 2 ** Math.min(attempt, 5)) * (0.5 + Math.random()))
  }
}

/**
 * One producer: sends batches until `running()` is false, then returns (its last batch delivered),
 * the `seq`th to `sinkFor(seq)`, pausing about `pauseMs` (½–1½×) after each. About 5% of the time it
 * first replays one of its acknowledged batches to its sink: a duplicate. One batch at a time, so a
 * keyed sink's latest row per key is the one in this producer's last batch acknowledged there.
 */
export async function produce(
  apiUrl: string,
  sinkFor: (seq: number) => SoakSink,
  producer: number,
  counts: SoakCounts,
  running: () => boolean,
  pauseMs: number,
): Promise<void> {
  const sent: Batch[] = []
  for (let seq = 0; running(); seq++) {
    if (sent.length > 0 && Math.random() < 0.05) {
      counts.replays++
      const again = pick(sent)
      const res = await deliver(apiUrl, again.sink, again, counts)
      if (res.status !== 200 || !res.body.includes('"duplicate":true')) counts.anomalies.push(`replay ${again.id}: ${res.status} ${res.body.slice(0, 200)}`)
    }
    const batch = makeBatch(sinkFor(seq), producer, seq)
    const res = await deliver(apiUrl, batch.sink, batch, counts)
    if (res.status === 202 || res.status === 200) {
      batch.apply()
      counts.acknowledged++
      if (res.status === 200) counts.duplicates++
      const answer = JSON.parse(res.body) as { accepted: number; rejected: number }
      counts.rows += answer.accepted + answer.rejected
      sent.push(batch)
      if (sent.length > 50) sent.shift()
    }
    await sleep(pauseMs * (0.5 + Math.random())) // a device's rhythm, not a lockstep
  }
}
