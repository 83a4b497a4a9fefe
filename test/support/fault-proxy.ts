// A small reverse proxy for fault injection: node:http in front of a target URL (the S3 server, a
// REST catalog) on a free loopback port. Every request passes through unchanged (the Host header
// included, so SigV4 signatures still verify upstream) unless a rule matches it:
//
//   proxy.rule({ method: 'DELETE', path: /\/_sink\/abc\//, action: { status: 500 } })
//
// Actions: 'pass' (forward; counted), { status, body?, headers? } answered without forwarding, or
// with forward: true answered after the upstream has processed the request (its answer is lost),
// 'drop' (the socket is destroyed without an answer), { delay: ms | Promise } (held, then forwarded),
// { rewrite: fn } (forwarded; a 2xx answer's body passed through fn, e.g. to edit a listing).
// A rule may apply `times` times only; the first matching live rule wins. `matched` counts the
// requests each rule took; `requests` logs every request the proxy saw.
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export type FaultAction =
  | 'pass'
  | 'drop'
  | { status: number; body?: string; headers?: Record<string, string>; forward?: boolean }
  | { delay: number | Promise<unknown> }
  | { rewrite: (body: string) => string }

export interface FaultRule {
  method?: string
  /** Tested against the request target: path and query string as sent (`/bucket/key?x=y`). */
  path: RegExp
  /** Tested against the request body as text (e.g. /add-snapshot/ for a catalog commit). */
  body?: RegExp
  action: FaultAction
  /** Applies this many times, then no longer matches (default: always). */
  times?: number
  /** Requests this rule took. */
  matched: number
}

export interface SeenRequest {
  method: string
  path: string
  rule: FaultRule | null
}

export class FaultProxy {
  readonly rules: FaultRule[] = []
  readonly requests: SeenRequest[] = []
  private server: Server | undefined
  private target: URL

  constructor(target: string) {
    this.target = new URL(target)
  }

  /** Sends the requests that arrive from now on to another target (a load balancer moved to a new deploy). */
  retarget(target: string): void {
    this.target = new URL(target)
  }

  /** The proxy's base URL (http://127.0.0.1:<port>), once started. */
  url = ''

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res))
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
    return this
  }

  async stop(): Promise<void> {
    if (!this.server) return
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server!.close(() => resolve()))
    this.server = undefined
  }

  /** Adds a rule (first match wins); returns it so its `matched` count can be read. */
  rule(rule: Omit<FaultRule, 'matched'>): FaultRule {
    const r: FaultRule = { ...rule, matched: 0 }
    this.rules.push(r)
    return r
  }

  /** Removes every rule (or the given one): everything passes again. */
  heal(rule?: FaultRule): void {
    if (!rule) this.rules.length = 0
    else if (this.rules.includes(rule)) this.rules.splice(this.rules.indexOf(rule), 1)
  }

  /** Requests seen matching method and path (whatever the rules did). */
  count(method: string, path: RegExp): number {
    return this.requests.filter((r) => r.method === method && path.test(r.path)).length
  }

  private match(method: string, path: string, body: string): FaultRule | null {
    for (const r of this.rules) {
      if (r.times !== undefined && r.matched >= r.times) continue
      if (r.method && r.method !== method) continue
      if (!r.path.test(path)) continue
      if (r.body && !r.body.test(body)) continue
      r.matched++
      return r
    }
    return null
  }

  private async handle(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    try {
      for await (const c of req) chunks.push(c as Buffer)
    } catch {
      return
    }
    const body = Buffer.concat(chunks)
    const method = req.method ?? 'GET'
    const path = req.url ?? '/'
    const rule = this.match(method, path, body.toString('utf8'))
    this.requests.push({ method, path, rule })
    const action = rule?.action ?? 'pass'
    if (action === 'drop') {
      req.socket.destroy()
      return
    }
    if (typeof action === 'object' && 'delay' in action) {
      await (typeof action.delay === 'number' ? new Promise((r) => setTimeout(r, action.delay as number)) : action.delay)
    }
    if (typeof action === 'object' && 'status' in action && !action.forward) {
      res.writeHead(action.status, { 'content-type': 'application/xml', ...action.headers })
      res.end(action.body ?? '')
      return
    }
    let upstream: { status: number; headers: IncomingHttpHeaders; body: Buffer }
    try {
      upstream = await this.forward(method, path, req.headers, body)
    } catch {
      req.socket.destroy()
      return
    }
    if (typeof action === 'object' && 'status' in action) {
      res.writeHead(action.status, { 'content-type': 'application/xml', ...action.headers })
      res.end(action.body ?? '')
      return
    }
    const headers = { ...upstream.headers }
    let answer = upstream.body
    if (typeof action === 'object' && 'rewrite' in action && upstream.status < 300 && method !== 'HEAD') {
      answer = Buffer.from(action.rewrite(answer.toString('utf8')), 'utf8')
      delete headers.etag // not the upstream's body any more
    }
    delete headers['transfer-encoding']
    delete headers.connection
    // A HEAD answer's length is the object's (pyarrow's S3 client sizes its reads by it), not its empty body's.
    if (method !== 'HEAD') headers['content-length'] = String(answer.length)
    res.writeHead(upstream.status, headers)
    res.end(method === 'HEAD' ? undefined : answer)
  }

  private forward(
    method: string,
    path: string,
    headers: IncomingHttpHeaders,
    body: Buffer,
  ): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
    const out: IncomingHttpHeaders = { ...headers }
    delete out.connection
    delete out['transfer-encoding']
    if (body.length > 0 || out['content-length'] !== undefined) out['content-length'] = String(body.length)
    return new Promise((resolve, reject) => {
      const up = httpRequest({ host: this.target.hostname, port: this.target.port, method, path, headers: out, agent: false }, (r) => {
        const parts: Buffer[] = []
        r.on('data', (c: Buffer) => parts.push(c))
        r.on('end', () => resolve({ status: r.statusCode ?? 502, headers: r.headers, body: Buffer.concat(parts) }))
        r.on('error', reject)
      })
      up.on('error', reject)
      up.end(body)
    })
  }
}

/** Starts a proxy in front of `target`. */
export function startFaultProxy(target: string): Promise<FaultProxy> {
  return new FaultProxy(target).start()
}
