// The SQL runs' egress proxy, driven as DuckDB drives it (absolute-form GETs, CONNECT tunnels, Basic
// proxy credentials), with a resolver the test controls: a public-looking name answering a private
// address is refused after resolution, a name is resolved once per request and the connection goes to
// the address that was checked, redirects are handed back (not followed), the credentials are required.
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EgressPolicy } from '../../../contract/egress-policy.ts'
import { type EgressProxy, startEgressProxy } from '../../../roller/feeds/egress-proxy.ts'

let origin: Server
let port: number
const seen: string[] = []

beforeAll(async () => {
  origin = createServer((req, res) => {
    seen.push(`${req.method} ${req.headers.host} ${req.url}`)
    if (req.url === '/moved') return void res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end()
    res.writeHead(200, { 'content-type': 'text/plain' }).end('hello')
  })
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve))
  port = (origin.address() as AddressInfo).port
})
afterAll(() => new Promise<void>((resolve) => origin.close(() => resolve())))

const auth = (p: EgressProxy) => `Basic ${Buffer.from(`${p.username}:${p.password}`).toString('base64')}`

/** One absolute-form request through the proxy: its status, location and body. */
function get(p: EgressProxy, url: string, authorization = auth(p)): Promise<{ status: number; location?: string; body: string }> {
  const proxy = new URL(p.url)
  return new Promise((resolve, reject) => {
    const req = request({ host: proxy.hostname, port: proxy.port, path: url, headers: { host: new URL(url).host, 'proxy-authorization': authorization } })
    req.on('response', (res) => {
      let body = ''
      res.on('data', (d) => (body += d))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

/** A CONNECT through the proxy: the status it answers. */
function tunnel(p: EgressProxy, authority: string): Promise<number> {
  const proxy = new URL(p.url)
  return new Promise((resolve, reject) => {
    const req = request({ host: proxy.hostname, port: proxy.port, method: 'CONNECT', path: authority, headers: { 'proxy-authorization': auth(p) } })
    req.on('connect', (res, socket) => {
      socket.destroy()
      resolve(res.statusCode ?? 0)
    })
    req.on('error', reject)
    req.end()
  })
}

async function withProxy(allow: string[], answers: Record<string, string[][]>, body: (p: EgressProxy, lookups: string[]) => Promise<void>) {
  const lookups: string[] = []
  const p = await startEgressProxy(new EgressPolicy(allow), async (host) => {
    lookups.push(host)
    const next = answers[host]?.shift()
    if (!next) throw new Error(`ENOTFOUND ${host}`)
    return next
  })
  try {
    await body(p, lookups)
  } finally {
    p.close()
  }
}

describe('egress proxy', () => {
  it('refuses a literal loopback address and a public-looking name that resolves to a private one; the origin sees nothing', async () => {
    await withProxy([], { 'data.example.com': [['203.0.113.9', '10.0.0.5']] }, async (p) => {
      const before = seen.length
      expect((await get(p, `http://127.0.0.1:${port}/x.csv`)).status).toBe(403)
      const named = await get(p, 'http://data.example.com/x.csv')
      expect(named.status).toBe(403)
      expect(named.body).toMatch(/10\.0\.0\.5 is a private address \(data\.example\.com resolves to it\)/)
      expect(await tunnel(p, '169.254.169.254:443')).toBe(403)
      expect(await tunnel(p, '[::ffff:127.0.0.1]:443')).toBe(403)
      // Other spellings of 127.0.0.1 are read as the URL standard reads them, then checked.
      expect((await get(p, `http://2130706433:${port}/x.csv`)).status).toBe(403)
      expect((await get(p, `http://0x7f.1:${port}/x.csv`)).status).toBe(403)
      expect(seen.length).toBe(before)
      expect(p.refused.map((r) => [r.target, r.address])).toEqual([
        [`http://127.0.0.1:${port}/x.csv`, '127.0.0.1'],
        ['http://data.example.com/x.csv', '10.0.0.5'],
        ['https://169.254.169.254:443', '169.254.169.254'],
        ['https://[::ffff:127.0.0.1]:443', '::ffff:127.0.0.1'],
        [`http://127.0.0.1:${port}/x.csv`, '127.0.0.1'],
        [`http://127.0.0.1:${port}/x.csv`, '127.0.0.1'],
      ])
    })
  })

  it('resolves a name once per request and connects to the address it checked (a rebinding second answer is never asked)', async () => {
    // The operator opened 127.0.0.1; the name answers it, then would answer the metadata address.
    await withProxy(['127.0.0.1'], { 'feed.example.com': [['127.0.0.1'], ['169.254.169.254']] }, async (p, lookups) => {
      const res = await get(p, `http://feed.example.com:${port}/x.csv?a=1`)
      expect(res).toMatchObject({ status: 200, body: 'hello' })
      expect(lookups).toEqual(['feed.example.com'])
      // The origin got the request with the name the run asked for, at the checked address.
      expect(seen.at(-1)).toBe(`GET feed.example.com:${port} /x.csv?a=1`)
      // The next request resolves again, gets the metadata address, and is refused.
      expect((await get(p, `http://feed.example.com:${port}/x.csv`)).status).toBe(403)
      expect(p.refused.map((r) => r.address)).toEqual(['169.254.169.254'])
    })
  })

  it('hands a redirect back unfollowed: its target is asked for, and checked, as a request of its own', async () => {
    await withProxy(['127.0.0.1'], {}, async (p) => {
      const before = seen.length
      const res = await get(p, `http://127.0.0.1:${port}/moved`)
      expect(res).toMatchObject({ status: 302, location: 'http://169.254.169.254/latest/meta-data/' })
      expect(seen.length).toBe(before + 1)
      expect(p.refused).toEqual([])
      expect((await get(p, res.location!)).status).toBe(403)
      expect(p.refused.map((r) => r.address)).toEqual(['169.254.169.254'])
    })
  })

  it('connects nowhere once the run is over, even when a DNS answer comes after', async () => {
    let answer: (addresses: string[]) => void = () => {}
    let asked: () => void = () => {}
    const lookedUp = new Promise<void>((resolve) => (asked = resolve))
    const p = await startEgressProxy(new EgressPolicy(['127.0.0.1']), () => {
      asked()
      return new Promise((resolve) => (answer = resolve))
    })
    const before = seen.length
    const pending = get(p, `http://slow.example:${port}/x.csv`).catch((err: Error) => err)
    await lookedUp
    p.close()
    answer(['127.0.0.1'])
    expect(await pending).toBeInstanceOf(Error)
    await new Promise((r) => setTimeout(r, 50))
    expect(seen.length).toBe(before)
  })

  it('tunnels CONNECT to an allowed address; refuses requests without the run credentials; reports an unresolved name', async () => {
    await withProxy(['127.0.0.1'], {}, async (p) => {
      expect(await tunnel(p, `127.0.0.1:${port}`)).toBe(200)
      expect((await get(p, `http://127.0.0.1:${port}/x`, 'Basic bm86bm8=')).status).toBe(407)
      expect((await get(p, 'http://nowhere.example/x')).status).toBe(502)
      expect(p.failed).toEqual(['nowhere.example did not resolve: ENOTFOUND nowhere.example'])
      expect(p.refused).toEqual([])
    })
  })
})
