// A SQL sink reaches public addresses only (issue 31, roller/feeds/egress-*.ts): a query reading the
// roller's own network — a loopback server, a name resolving to loopback, a redirect into loopback, the
// cloud metadata address — fails with last_run.error naming the address refused, and the server it
// aimed at sees no request; LHBOX_SQL_ALLOW_HOSTS opens a named source and the same query then runs.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureVenv } from '../support/python.ts'
import { rollerTick, tickInProcess } from '../support/roller.ts'
import { scan, warehouseId } from '../support/roller-check.ts'
import { feedSinksDeletedAfter, intakeObjects, newSink } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

const COLUMNS = [
  { name: 'x', type: 'long', required: true },
  { name: 'station', type: 'string' },
]
const CSV = 'x,station\n1,inside-1\n2,inside-2\n'

/** A loopback HTTP server serving /x.csv (and, given `redirect`, a 302 from /moved.csv there); it counts the requests it gets. */
async function serve(host: string, redirect?: string): Promise<{ server: Server; origin: string; requests: string[] }> {
  const requests: string[] = []
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`)
    const path = new URL(req.url ?? '/', 'http://x').pathname
    if (redirect && path === '/moved.csv') return void res.writeHead(302, { location: redirect }).end()
    if (path !== '/x.csv') return void res.writeHead(404).end()
    res.writeHead(200, { 'content-type': 'text/csv', 'content-length': CSV.length, 'accept-ranges': 'none' })
    res.end(req.method === 'HEAD' ? undefined : CSV)
  })
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  return { server, origin: `http://${host}:${(server.address() as AddressInfo).port}`, requests }
}

let inside: Awaited<ReturnType<typeof serve>>
let redirector: Awaited<ReturnType<typeof serve>>
let named: Awaited<ReturnType<typeof serve>>

beforeAll(async () => {
  await ensureVenv()
  inside = await serve('127.0.0.1')
  // Another loopback address (all of 127/8 is loopback on Linux): the one the redirect test opens, while
  // 127.0.0.1 — where it redirects to — stays closed.
  redirector = await serve('127.0.0.2', `${inside.origin}/x.csv`)
  // Bound to localhost's first answer, the one the proxy connects to (both take getaddrinfo's order).
  named = await serve('localhost')
}, 15 * 60_000)

afterAll(async () => {
  for (const s of [inside, redirector, named]) await new Promise<void>((resolve) => (s ? s.server.close(() => resolve()) : resolve()))
})

const feedSink = feedSinksDeletedAfter(afterAll)

async function sqlSink(query: string) {
  const sink = await newSink(stack().adminKey, { tableSpec: { columns: COLUMNS }, sink: { sql: { query, every_seconds: 3600 } } })
  feedSink(sink.id)
  return sink
}

const sinkView = async (id: string) => (await call(`/v1/sinks/${id}`, { key: stack().adminKey })).body
const rows = async (table: string) => (await scan({ sql: await warehouseId(stack().warehouse) }, table)).rows.map((r) => [Number(r.x), r.station])
const askRun = async (id: string) => expect((await call(`/v1/sinks/${id}/run`, { key: stack().adminKey, method: 'POST' })).status).toBe(202)

/** One forced tick of the sink under LHBOX_SQL_ALLOW_HOSTS=`allow`; its last_run. */
async function run(id: string, allow: string) {
  const t = await tickInProcess({ sink: id, env: { LHBOX_SQL_ALLOW_HOSTS: allow } })
  expect(t.code, t.stdout).toBe(0)
  return (await sinkView(id)).sql.last_run
}

const REFUSED = 'a SQL sink reaches public addresses only (LHBOX_SQL_ALLOW_HOSTS opens named internal sources)'

describe.concurrent('SQL sinks reach public addresses only', () => {
  it('a loopback URL is refused (last_run.error names 127.0.0.1; the server sees nothing); opened by LHBOX_SQL_ALLOW_HOSTS, it runs', async () => {
    const url = `${inside.origin}/x.csv?for=${Math.random()}`
    const sink = await sqlSink(`SELECT x, station FROM read_csv('${url}')`)
    // The create asked DuckDB's parser (the SQL check port) about the query: parsing reaches nothing.
    const ours = () => inside.requests.filter((r) => r.endsWith(url.slice(inside.origin.length)))
    expect(ours()).toEqual([])

    const refused = await run(sink.id, '')
    expect(refused).toMatchObject({ outcome: 'failed', rows: 0 })
    expect(refused.error).toBe(`egress refused: ${inside.origin}/x.csv: 127.0.0.1 is a loopback address; ${REFUSED}`)
    expect(ours()).toEqual([])
    expect(await intakeObjects(sink.id)).toEqual([])
    // Opening another host or range does not open this one.
    await askRun(sink.id)
    expect((await run(sink.id, 'minio.internal,10.0.0.0/8,127.0.0.2')).error).toMatch(/^egress refused: .*127\.0\.0\.1 is a loopback address/)

    await askRun(sink.id)
    expect(await run(sink.id, '127.0.0.0/8')).toMatchObject({ outcome: 'ok', rows: 2, error: null })
    expect(ours().length).toBeGreaterThan(0)
    expect(await rows(sink.table)).toEqual([
      [1, 'inside-1'],
      [2, 'inside-2'],
    ])
  }, 120_000)

  it("NO_PROXY in the roller's environment does not take a run around the proxy (curl, httpfs' client, would honour it)", async () => {
    const path = `/x.csv?no-proxy=${Math.random()}`
    const sink = await sqlSink(`SELECT x, station FROM read_csv('${inside.origin}${path}')`)
    const env = { LHBOX_SQL_ALLOW_HOSTS: '', NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost' }
    const t = await rollerTick({ sink: sink.id, env })
    expect(t.code, t.stdout + t.stderr).toBe(0)
    const view = await sinkView(sink.id)
    expect(view.sql.last_run.error).toBe(`egress refused: ${inside.origin}/x.csv: 127.0.0.1 is a loopback address; ${REFUSED}`)
    expect(inside.requests.filter((r) => r.endsWith(path))).toEqual([])
  }, 120_000)

  it('a name that resolves to loopback (localhost) is refused after resolution; opened by its name, it runs', async () => {
    const sink = await sqlSink(`SELECT x, station FROM read_csv('${named.origin}/x.csv')`)
    const refused = await run(sink.id, '')
    expect(refused.outcome).toBe('failed')
    expect(refused.error).toMatch(
      new RegExp(`^egress refused: ${named.origin}/x\\.csv: (127\\.0\\.0\\.1|::1) is a loopback address \\(localhost resolves to it\\); `),
    )
    expect(named.requests).toEqual([])
    // Opened by its name: the proxy connects to the address it resolved and checked, where the server listens.
    await askRun(sink.id)
    expect(await run(sink.id, 'localhost')).toMatchObject({ outcome: 'ok', rows: 2, error: null })
    expect(named.requests.length).toBeGreaterThan(0)
  }, 120_000)

  it('a redirect is checked like the first URL: an opened source redirecting to a closed loopback address is refused, and that server sees nothing', async () => {
    // What this shows: the proxy checks each hop DuckDB follows. The first hop (127.0.0.2) is opened by
    // the list, as a public source would be allowed; the redirect target, 127.0.0.1, is not. The same
    // query with both opened runs, so the refusal is the policy's, not a redirect DuckDB does not follow.
    const sink = await sqlSink(`SELECT x, station FROM read_csv('${redirector.origin}/moved.csv')`)
    const before = inside.requests.length
    const refused = await run(sink.id, '127.0.0.2')
    expect(refused.error).toBe(`egress refused: ${inside.origin}/x.csv: 127.0.0.1 is a loopback address; ${REFUSED}`)
    expect(redirector.requests.length).toBeGreaterThan(0)
    expect(inside.requests.length).toBe(before)

    await askRun(sink.id)
    expect(await run(sink.id, '127.0.0.2,127.0.0.1')).toMatchObject({ outcome: 'ok', rows: 2, error: null })
    expect(await rows(sink.table)).toEqual([
      [1, 'inside-1'],
      [2, 'inside-2'],
    ])
  }, 120_000)

  it('the cloud metadata address is refused over http and https, and as an IPv4-mapped IPv6 literal', async () => {
    const cases: Array<[string, string]> = [
      [
        'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
        'egress refused: http://169.254.169.254/latest/meta-data/iam/security-credentials/: 169.254.169.254 is a link-local (cloud metadata) address',
      ],
      ['https://169.254.169.254/latest/meta-data/', 'egress refused: https://169.254.169.254:443: 169.254.169.254 is a link-local (cloud metadata) address'],
      [
        'http://[::ffff:169.254.169.254]/latest/',
        'egress refused: http://[::ffff:a9fe:a9fe]/latest/: ::ffff:a9fe:a9fe is a link-local (cloud metadata) address',
      ],
    ]
    for (const [url, error] of cases) {
      const sink = await sqlSink(`SELECT 1 AS x, content AS station FROM read_text('${url}')`)
      const refused = await run(sink.id, '127.0.0.1')
      expect(refused, url).toMatchObject({ outcome: 'failed', rows: 0, error: `${error}; ${REFUSED}` })
      expect(await intakeObjects(sink.id)).toEqual([])
    }
  }, 120_000)
})
