// The forward proxy a SQL run's DuckDB reaches the network through (its http_proxy setting, locked):
// httpfs cannot be told which addresses it may reach, so it reaches none itself. One proxy per run,
// on loopback, with the run's own credentials: it resolves each host itself, checks every answer
// against the egress policy, and connects to the address it checked — never to the name again, so a
// second DNS answer (rebinding) cannot swap in another address. It follows no redirect: DuckDB does,
// through the proxy, so each redirect's target is checked like the first URL. http:// requests are
// forwarded; https:// arrive as CONNECT host:port and are tunnelled (TLS stays end to end).
import { randomBytes, timingSafeEqual } from 'node:crypto'
import { lookup } from 'node:dns/promises'
import { createServer, type IncomingHttpHeaders, type IncomingMessage, request, type ServerResponse } from 'node:http'
import { connect, isIP, type AddressInfo, type Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import type { EgressPolicy } from '../../contract/egress-policy.ts'

interface Refusal {
  /** What the run asked for: the URL (without its query), or https://host:port for a tunnel. */
  target: string
  address: string
  reason: string
}

export interface EgressProxy {
  /** DuckDB's http_proxy, http_proxy_username and http_proxy_password for this run. */
  url: string
  username: string
  password: string
  /** The connections refused, in order. */
  refused: Refusal[]
  /** Connections that failed otherwise (no DNS answer, refused by the peer), in order. */
  failed: string[]
  close(): void
}

/** Name resolution, replaceable in the unit tests (a public name answering a private address). */
export type Resolve = (host: string) => Promise<string[]>

const resolveAll: Resolve = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address)

// Hop-by-hop headers (RFC 9110 7.6.1) and the proxy's own: not forwarded either way.
const HOP = new Set(['connection', 'proxy-connection', 'keep-alive', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'upgrade'])
const forwarded = (headers: IncomingHttpHeaders) => Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP.has(name)))

export async function startEgressProxy(policy: EgressPolicy, resolve: Resolve = resolveAll): Promise<EgressProxy> {
  const username = 'lhbox-run'
  const password = randomBytes(18).toString('base64url')
  const expected = Buffer.from(`Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`)
  const authorized = (req: IncomingMessage) => {
    const given = Buffer.from(req.headers['proxy-authorization'] ?? '')
    return given.length === expected.length && timingSafeEqual(given, expected)
  }
  const refused: Refusal[] = []
  const failed: string[] = []
  const sockets = new Set<Duplex>()
  let closed = false
  const track = (s: Duplex) => {
    sockets.add(s)
    s.once('close', () => sockets.delete(s))
    return s
  }

  /** The one address to connect to, once every DNS answer for `host` passed; null when refused or unresolved. */
  async function checked(host: string, target: string): Promise<{ address: string } | { status: 403 | 502; text: string }> {
    let addresses: string[]
    try {
      addresses = isIP(host) ? [host] : await resolve(host)
      if (addresses.length === 0) throw new Error('no address')
    } catch (err) {
      const text = `${host} did not resolve: ${(err as Error).message}`
      failed.push(text)
      return { status: 502, text }
    }
    // Every answer must pass: a name answering a public and a private address is refused, not raced.
    for (const address of addresses) {
      const reason = policy.refusal(host, address)
      if (reason) {
        refused.push({ target, address, reason })
        return { status: 403, text: `refused: ${reason}` }
      }
    }
    return { address: addresses[0] }
  }

  async function forward(req: IncomingMessage, res: ServerResponse) {
    track(req.socket)
    if (!authorized(req)) return void res.writeHead(407, { 'proxy-authenticate': 'Basic realm="lhbox-egress"' }).end()
    let url: URL
    try {
      url = new URL(req.url ?? '')
      if (url.protocol !== 'http:') throw new Error('not http')
    } catch {
      return void res.writeHead(400, { 'content-type': 'text/plain' }).end('an absolute http:// URL is expected')
    }
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
    const to = await checked(host, `${url.origin}${url.pathname}`)
    if (closed) return void res.destroy() // the run ended while DNS answered: connect nowhere
    if (!('address' in to)) return void res.writeHead(to.status, { 'content-type': 'text/plain' }).end(to.text)
    const upstream = request({
      host: to.address,
      port: Number(url.port || 80),
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers: forwarded(req.headers),
      setHost: false,
      agent: false,
    })
    upstream.on('socket', track)
    upstream.on('response', (up) => {
      res.writeHead(up.statusCode ?? 502, forwarded(up.headers))
      up.pipe(res)
    })
    upstream.on('error', (err) => {
      failed.push(`${url.host}: ${err.message}`)
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end(err.message)
      else res.destroy()
    })
    req.pipe(upstream)
  }

  async function tunnel(req: IncomingMessage, client: Duplex, head: Buffer) {
    track(client)
    client.on('error', () => client.destroy())
    const answer = (status: string, extra = '') => client.end(`HTTP/1.1 ${status}\r\n${extra}content-length: 0\r\nconnection: close\r\n\r\n`)
    if (!authorized(req)) return answer('407 Proxy Authentication Required', 'proxy-authenticate: Basic realm="lhbox-egress"\r\n')
    // host:port, [v6]:port: the authority form (not a URL: https' default port would vanish from one).
    const target = /^(?:\[([0-9a-f:.]+)\]|([^:/\s[\]]+)):(\d{1,5})$/i.exec(req.url ?? '')
    if (!target || Number(target[3]) > 65535) return answer('400 Bad Request')
    const host = target[1] ?? target[2]
    const port = Number(target[3])
    const to = await checked(host, `https://${req.url}`)
    if (closed) return void client.destroy()
    if (!('address' in to)) return answer(to.status === 403 ? '403 Forbidden' : '502 Bad Gateway')
    const upstream = track(connect({ host: to.address, port })) as Socket
    let established = false
    upstream.on('connect', () => {
      established = true
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      if (head.length) upstream.write(head)
      upstream.pipe(client)
      client.pipe(upstream)
    })
    upstream.on('error', (err) => {
      failed.push(`${req.url}: ${err.message}`)
      if (!established) answer('502 Bad Gateway')
      else client.destroy()
    })
    client.on('close', () => upstream.destroy())
  }

  const server = createServer((req, res) => void forward(req, res))
  server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => void tunnel(req, socket, head))
  await new Promise<void>((ok, fail) => server.once('error', fail).listen(0, '127.0.0.1', ok))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    username,
    password,
    refused,
    failed,
    close() {
      closed = true
      server.close()
      for (const s of sockets) s.destroy()
    },
  }
}
