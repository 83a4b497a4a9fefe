// Per-warehouse catalog secrets (issue 14 §1): a REST catalog (Apache Iceberg's REST fixture) behind a
// token-checking proxy that serves it at two paths, each with its own credential: /wa/ takes the bearer
// token A, /wb/ OAuth2 client credentials B (the proxy's own token endpoint). Two warehouses, each
// with its own secret, both roll; a third with a wrong token fails alone, with its reason in GET
// /v1/sinks/{id} and the roller's log, and rolls once PATCH corrects it. The secrets are sealed in
// Postgres, never answered back, and `npm run db:migrate` seals again under a rotated key.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrateTo } from '../../db/migrate.ts'
import { storeReadKeyBinding } from '../../db/catalog-secret.ts'
import { keyRing, open, seal } from '../../db/sealed.ts'
import { newSecretsKey } from '../../dev/stack.ts'
import { startRestCatalog, type RestCatalogServer } from '../../dev/rest-catalog.ts'
import { freePorts } from '../support/ports.ts'
import { ensureVenv } from '../support/python.ts'
import { expectExactlyOnce, rowsOf, scan, sinkSnapshots } from '../support/roller-check.ts'
import { tickInProcess } from '../support/roller.ts'
import { createTable, database, newSink, send, uid, type Sink } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

const TOKEN_A = `tok-a-${randomBytes(8).toString('hex')}`
const CLIENT_B = { id: 'client-b', secret: `sec-b-${randomBytes(8).toString('hex')}` }

/** The fixture at /wa/ (bearer TOKEN_A) and /wb/ (tokens issued at /wb/v1/oauth/tokens to CLIENT_B); every refusal counted. */
async function tokenProxy(upstream: string): Promise<{ url: string; server: Server; refused: string[]; issued: Set<string> }> {
  const refused: string[] = []
  const issued = new Set<string>()
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const body = Buffer.concat(chunks)
    const m = /^\/(wa|wb)(\/.*)$/.exec(req.url ?? '')
    const answer = (status: number, json: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json))
    if (!m) return answer(404, { error: { message: 'no such path', type: 'NotFound', code: 404 } })
    const [, door, path] = m as unknown as [string, 'wa' | 'wb', string]
    if (door === 'wb' && path === '/v1/oauth/tokens') {
      const form = new URLSearchParams(body.toString())
      if (form.get('client_id') !== CLIENT_B.id || form.get('client_secret') !== CLIENT_B.secret) {
        refused.push(`${door} token request`)
        return answer(401, { error: 'invalid_client', error_description: 'unknown client' })
      }
      const token = `issued-${randomBytes(8).toString('hex')}`
      issued.add(token)
      return answer(200, { access_token: token, token_type: 'bearer', expires_in: 3600, issued_token_type: 'urn:ietf:params:oauth:token-type:access_token' })
    }
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1]
    const ok = door === 'wa' ? bearer === TOKEN_A : bearer !== undefined && issued.has(bearer)
    if (!ok) {
      refused.push(`${door} ${req.method} ${path} ${bearer ?? '(none)'}`)
      return answer(401, { error: { message: 'Not authorized', type: 'NotAuthorizedException', code: 401 } })
    }
    const target = new URL(path, upstream)
    const headers = { ...req.headers, host: target.host }
    delete headers.authorization
    const up = request(target, { method: req.method, headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers)
      r.pipe(res)
    })
    up.on('error', () => answer(502, { error: { message: 'upstream', type: 'BadGateway', code: 502 } }))
    up.end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, refused, issued }
}

let dir: string
let fixture: RestCatalogServer
let proxy: Awaited<ReturnType<typeof tokenProxy>>
let db: pg.Client

async function restWarehouse(door: 'wa' | 'wb', secret: Record<string, string>): Promise<{ name: string; id: string; created: any }> {
  const name = `sec-${uid()}`
  const res = await call('/v1/warehouses', {
    key: stack().adminKey,
    json: { name, catalog: { type: 'rest', uri: `${proxy.url}/${door}`, ...secret }, bucket: stack().s3.bucket },
  })
  expect(res.status, res.text).toBe(201)
  return { name, id: res.body.id, created: res.body }
}

async function sinkWithRows(warehouse: string, namespace = `cs_${uid()}`): Promise<Sink> {
  const table = await createTable(stack().adminKey, { warehouse, namespace })
  const sink = await newSink(stack().adminKey, { table, sink: { warehouse } })
  expect((await send(sink, rowsOf(1, 3), { batchId: 'a' })).status).toBe(202)
  return sink
}

beforeAll(async () => {
  await ensureVenv()
  db = await database()
  dir = mkdtempSync(join(tmpdir(), 'lhbox-secrets-'))
  fixture = await startRestCatalog(join(dir, 'rest'), (await freePorts(1))[0], stack().s3, `s3://${stack().s3.bucket}/secrets-${uid()}`)
  proxy = await tokenProxy(fixture.uri)
}, 180_000)

afterAll(async () => {
  await db?.end()
  proxy?.server.close()
  await fixture?.child.stop()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

describe('per-warehouse REST catalog secrets', { timeout: 120_000 }, () => {
  it('two warehouses with different secrets (a bearer token, OAuth2 client credentials) both roll', async () => {
    const a = await restWarehouse('wa', { token: TOKEN_A })
    const b = await restWarehouse('wb', { credential: `${CLIENT_B.id}:${CLIENT_B.secret}` })
    expect(a.created.catalog.auth).toBe('bearer')
    expect(b.created.catalog.auth).toBe('oauth2')
    const sa = await sinkWithRows(a.name)
    const sb = await sinkWithRows(b.name)
    for (const sink of [sa, sb]) {
      const t = await tickInProcess({ sink: sink.id })
      expect(t.code, t.stdout).toBe(0)
      const s = await scan({ rest: fixture.uri }, sink.table)
      expectExactlyOnce(s, [1, 2, 3])
      expect(sinkSnapshots(s, sink.id)).toHaveLength(1)
    }
    expect(proxy.issued.size).toBeGreaterThan(0)
  })

  it('a wrong secret fails only its warehouse’s sinks, with the reason in GET /v1/sinks/{id} and the log; PATCH corrects it', async () => {
    const good = await restWarehouse('wa', { token: TOKEN_A })
    const sGood = await sinkWithRows(good.name)
    // The edge creates the table and the sink with the right token; then the token is changed to a wrong one.
    const wrong = await restWarehouse('wa', { token: TOKEN_A })
    const sWrong = await sinkWithRows(wrong.name)
    const patched = await call(`/v1/warehouses/${wrong.name}`, { method: 'PATCH', key: stack().adminKey, json: { catalog: { token: 'not-the-token' } } })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.text).not.toContain('not-the-token')

    const failed = await tickInProcess({ sink: sWrong.id })
    expect(failed.code).toBe(1)
    const line = failed.logs.find((l) => l.msg === 'roll failed')
    expect(line).toMatchObject({ sink_id: sWrong.id, code: 'catalog_unauthorized' })
    expect(line?.error).toMatch(/401/)
    const view = (await call(`/v1/sinks/${sWrong.id}`, { key: stack().adminKey })).body
    expect(view.last_error).toMatchObject({ code: 'catalog_unauthorized' })
    expect(view.last_error.message).toMatch(/401.*Not authorized/)
    expect(view.lag.batches_waiting).toBe(1)
    expect(view.state).toBe('active')
    // The edge's own routes answer the same refusal as a 409 the admin can act on, never a 5xx.
    const tables = await call(`/v1/tables?warehouse=${wrong.name}`, { key: stack().adminKey })
    expect(tables.status, tables.text).toBe(409)
    expect(tables.body.error.code).toBe('catalog_unauthorized')

    const fine = await tickInProcess({ sink: sGood.id })
    expect(fine.code, fine.stdout).toBe(0)
    expectExactlyOnce(await scan({ rest: fixture.uri }, sGood.table), [1, 2, 3])

    const fixed = await call(`/v1/warehouses/${wrong.id}`, { method: 'PATCH', key: stack().adminKey, json: { catalog: { token: TOKEN_A } } })
    expect(fixed.status, fixed.text).toBe(200)
    const again = await tickInProcess({ sink: sWrong.id })
    expect(again.code, again.stdout).toBe(0)
    expectExactlyOnce(await scan({ rest: fixture.uri }, sWrong.table), [1, 2, 3])
    expect((await call(`/v1/sinks/${sWrong.id}`, { key: stack().adminKey })).body.last_error).toBeNull()
    // Never logged, the wrong one included.
    for (const t of [failed, fine, again]) {
      expect(t.stdout).not.toContain(TOKEN_A)
      expect(t.stdout).not.toContain('not-the-token')
    }
  })

  it('a warehouse without a secret signs in with the roller’s LHBOX_CATALOG_TOKEN', async () => {
    const plain = await restWarehouse('wa', { token: TOKEN_A })
    const sink = await sinkWithRows(plain.name)
    expect((await call(`/v1/warehouses/${plain.name}`, { method: 'PATCH', key: stack().adminKey, json: { catalog: { token: null } } })).body.catalog.auth).toBe(
      'none',
    )
    const refusedBefore = proxy.refused.length
    const without = await tickInProcess({ sink: sink.id })
    expect(without.code).toBe(1)
    expect(proxy.refused.length).toBeGreaterThan(refusedBefore)
    const t = await tickInProcess({ sink: sink.id, env: { LHBOX_CATALOG_TOKEN: TOKEN_A } })
    expect(t.code, t.stdout).toBe(0)
    expectExactlyOnce(await scan({ rest: fixture.uri }, sink.table), [1, 2, 3])
  })

  it('secrets are sealed in Postgres, bound to their warehouse, never answered back, and only leases carry them', async () => {
    const w = await restWarehouse('wb', { credential: `${CLIENT_B.id}:${CLIENT_B.secret}` })
    const { rows } = await db.query('select catalog, catalog_secret from warehouses where id = $1', [w.id])
    const text = JSON.stringify(rows[0])
    expect(text).not.toContain(CLIENT_B.secret)
    expect(rows[0].catalog).toEqual({ type: 'rest', uri: `${proxy.url}/wb`, auth: 'oauth2' })
    expect(rows[0].catalog_secret).toMatch(/^v1\.k1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/)
    const ring = (await keyRing(stack().secretsKey))!
    expect(JSON.parse(await open(ring, rows[0].catalog_secret, w.id))).toEqual({ credential: `${CLIENT_B.id}:${CLIENT_B.secret}` })
    // Bound to its row: the same text on another warehouse does not open.
    await expect(open(ring, rows[0].catalog_secret, 'wh_other')).rejects.toThrow(/does not open/)

    const listed = await call('/v1/warehouses', { key: stack().adminKey })
    expect(listed.text).not.toContain(CLIENT_B.secret)
    const sink = await sinkWithRows(w.name)
    const internal = (q: string) => call(`/internal/sinks?${q}`, { key: stack().bootstrapSecret })
    const view = await internal(`sink=${sink.id}`)
    expect(view.status).toBe(200)
    expect(view.text).not.toContain(CLIENT_B.secret)
    const lease = await internal(`sink=${sink.id}&roller=peek-${uid()}&force=true&lease_seconds=10`)
    expect(lease.body.sinks[0].warehouse.catalog.credential).toBe(`${CLIENT_B.id}:${CLIENT_B.secret}`)
    await call(`/internal/sinks/${sink.id}/roll`, { key: stack().bootstrapSecret, json: { roller: lease.body.sinks[0].lease.owner, roll_id: 'peek' } })
  })

  it('db:migrate seals clear secrets an older edge stored, and seals again under a rotated key', async () => {
    // A database of its own on the stack's Postgres: the running edge keeps its key.
    const name = `rotation_${uid()}`
    await db.query(`create database ${name}`)
    const url = stack().databaseUrl.replace(/\/[^/?]+(\?|$)/, `/${name}$1`)
    try {
      const k1 = newSecretsKey('k1')
      await migrateTo(url)
      const other = new pg.Client({ connectionString: url })
      await other.connect()
      try {
        await other.query(`insert into projects (id, name) values ('prj_r', 'r')`)
        await other.query(
          `insert into warehouses (id, project_id, name, catalog, bucket, endpoint, region)
           values ('wh_r', 'prj_r', 'r', $1::jsonb, 'b', 'http://x', 'auto')`,
          [JSON.stringify({ type: 'rest', uri: 'http://c', token: 'clear-token' })],
        )
        expect(await migrateTo(url)).toEqual({ sealed: 0, unsealed: 1 })
        expect(await migrateTo(url, k1)).toEqual({ sealed: 1, unsealed: 0 })
        const first = (await other.query(`select catalog, catalog_secret from warehouses where id = 'wh_r'`)).rows[0]
        expect(first.catalog).toEqual({ type: 'rest', uri: 'http://c', auth: 'bearer' })
        expect(first.catalog_secret).toMatch(/^v1\.k1\./)
        expect(await migrateTo(url, k1)).toEqual({ sealed: 0, unsealed: 0 })
        // A read-only store key pair (the Iceberg REST catalog vends it) sealed under k1 as the edge seals it.
        const pair = JSON.stringify({ access_key_id: 'ro', secret_access_key: 'ro-secret' })
        const sealedPair = await seal((await keyRing(k1))!, pair, storeReadKeyBinding('wh_r'))
        await other.query(`update warehouses set store_read_key = $1 where id = 'wh_r'`, [sealedPair])

        const k2 = newSecretsKey('k2')
        expect(await migrateTo(url, `${k2},${k1}`)).toEqual({ sealed: 2, unsealed: 0 })
        const second = (await other.query(`select catalog_secret, store_read_key from warehouses where id = 'wh_r'`)).rows[0]
        expect(second.catalog_secret).toMatch(/^v1\.k2\./)
        expect(JSON.parse(await open((await keyRing(k2))!, second.catalog_secret, 'wh_r'))).toEqual({ token: 'clear-token' })
        expect(second.store_read_key).toMatch(/^v1\.k2\./)
        expect(await open((await keyRing(k2))!, second.store_read_key, storeReadKeyBinding('wh_r'))).toBe(pair)
      } finally {
        await other.end()
      }
    } finally {
      await db.query(`drop database ${name} with (force)`)
    }
  })
})
