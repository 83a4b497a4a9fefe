// The send route under load (autocannon), for bench:intake's sides: each request built by its side
// (its n-th), every batch id written and every answer's status kept for the read-back.
import autocannon, { type Result } from 'autocannon'

/** One request of a side: where it goes and the batch id it carries. */
export interface Req {
  path: string
  headers: Record<string, string>
  /** Text, or bytes (a protobuf export) sent as they are. */
  body: string | Buffer
  batchId: string
}

/** What a load needs of a side. */
export interface LoadSide {
  /** The n-th request to this side (n from 1, over probe, warm-ups and runs alike). */
  request: (n: number) => Req
  n: number
  /** Batch ids of every request written, and the status each answered one got. */
  sent: Set<string>
  answered: Map<string, number>
  loads: number
}

export function sendLoad(origin: string, s: LoadSide, connections: number, seconds: number): Promise<Result> {
  s.loads++
  return autocannon({
    url: origin,
    connections,
    duration: seconds,
    timeout: 20,
    requests: [
      {
        method: 'POST',
        // pipelining 1: the context of a response is the one its request was built with.
        setupRequest: (req, ctx) => {
          const r = s.request(++s.n)
          s.sent.add(r.batchId)
          ctx.batchId = r.batchId
          return { ...req, path: r.path, headers: r.headers, body: r.body }
        },
        onResponse: (status, _body, ctx) => void s.answered.set(ctx.batchId as string, status),
      },
    ],
  })
}
