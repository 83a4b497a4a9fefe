// Catalog errors, mapped once in the edge's onError (issue 11, item 4), through the whole stack: a
// real Iceberg REST catalog (Apache Iceberg's REST fixture) with the fault proxy in front of it.
// Not found → 404, conflict → 409; a catalog that is down, unreachable, refuses our OAuth client or
// loses a commit's answer → 503 unavailable with Retry-After and failed: ["catalog"] — never a 500.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEAD_HOST_PORT, freePorts } from '../support/ports.ts'
import { startRestCatalog, type RestCatalogServer } from '../../dev/rest-catalog.ts'
import { startFaultProxy, type FaultAction, type FaultProxy } from '../support/fault-proxy.ts'
import { createTable, postSink, uid } from '../support/sinks.ts'
import { call, expectError, stack, type Answer } from '../support/stack.ts'

let dir: string
let fixture: RestCatalogServer
let proxy: FaultProxy
let warehouse: string
let ns: string
let table: string

const admin = () => stack().adminKey
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const restError = (status: number, type: string) => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ error: { message: 'injected', type, code: status } }),
})

async function newWarehouse(catalog: Record<string, unknown>): Promise<string> {
  const name = `ce-${uid()}`
  const res = await call('/v1/warehouses', { key: admin(), json: { name, catalog: { type: 'rest', ...catalog }, bucket: stack().s3.bucket } })
  expect(res.status, res.text).toBe(201)
  return name
}

/** 503 unavailable naming the catalog, with Retry-After, in the shape of the database's and the bucket's 503s. */
function expectCatalogDown(res: Answer, what: string): void {
  expectError(res, 503, 'unavailable')
  expect({ what, retryAfter: res.headers.get('retry-after'), failed: res.body.error.failed }).toEqual({ what, retryAfter: '5', failed: ['catalog'] })
}

/** The catalog routes of the edge on `wh`, each as a caller sends it. */
const routes = (wh: string, t: string) => ({
  'GET /v1/tables': () => call(`/v1/tables?warehouse=${wh}`, { key: admin() }),
  'GET /v1/tables/{t}': () => call(`/v1/tables/${wh}.${t}`, { key: admin() }),
  'PATCH /v1/tables/{t}/docs': () => call(`/v1/tables/${wh}.${t}/docs`, { method: 'PATCH', key: admin(), json: { doc: 'd' } }),
  'POST /v1/tables': () =>
    call('/v1/tables', { key: admin(), json: { warehouse: wh, table: `${t.split('.')[0]}.n_${uid()}`, columns: [{ name: 'x', type: 'long' }] } }),
  'POST /v1/sinks': () => postSink(admin(), { name: `s_${uid()}`, table: t, warehouse: wh }),
})

const commitRule = (action: FaultAction, times?: number) => {
  const [n, t] = table.split('.')
  return proxy.rule({ method: 'POST', path: new RegExp(`^/v1/namespaces/${escapeRegExp(n)}/tables/${escapeRegExp(t)}$`), action, times })
}

const tableDoc = async () => {
  const res = await call(`/v1/tables/${warehouse}.${table}`, { key: admin() })
  expect(res.status, res.text).toBe(200)
  return res.body.doc as string | null
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'lhbox-catalog-errors-'))
  fixture = await startRestCatalog(join(dir, 'rest'), (await freePorts(1))[0], stack().s3, `s3://${stack().s3.bucket}/catalog-errors-${uid()}`)
  proxy = await startFaultProxy(fixture.uri)
  warehouse = await newWarehouse({ uri: proxy.url })
  ns = `ce_${uid()}`
  table = await createTable(admin(), { warehouse, namespace: ns, name: 'events' })
}, 180_000)

afterAll(async () => {
  await proxy?.stop()
  await fixture?.child.stop()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

describe('catalog errors through a fault proxy in front of an Iceberg REST catalog', { timeout: 120_000 }, () => {
  it('not found → 404 table_not_found; the sink route keeps the spec’s answer with the namespace’s tables', async () => {
    expectError(await call(`/v1/tables/${warehouse}.${ns}.missing`, { key: admin() }), 404, 'table_not_found')
    expectError(await call(`/v1/tables/${warehouse}.${ns}.missing/docs`, { method: 'PATCH', key: admin(), json: { doc: 'd' } }), 404, 'table_not_found')
    const sink = await postSink(admin(), { name: `s_${uid()}`, table: `${ns}.missing`, warehouse })
    expectError(sink, 404, 'table_not_found')
    expect(sink.body.error.tables).toEqual([table])
  })

  it('conflict → 409: table_exists for a second create; commit_conflict when every retry of a commit conflicts', async () => {
    expectError(await call('/v1/tables', { key: admin(), json: { warehouse, table, columns: [{ name: 'x', type: 'long' }] } }), 409, 'table_exists')
    const rule = commitRule(restError(409, 'CommitFailedException'))
    try {
      const res = await call(`/v1/tables/${warehouse}.${table}/docs`, { method: 'PATCH', key: admin(), json: { doc: 'never' } })
      expect(res.status, res.text).toBe(409)
      expectError(res, 409, 'commit_conflict')
      expect(rule.matched).toBe(5) // the spec's 5 tries, each on a freshly loaded table
    } finally {
      proxy.heal(rule)
    }
    expect(await tableDoc()).not.toBe('never')
  })

  it('a REST catalog that is down (connections dropped, or 503 to everything) → 503 on every catalog route, not 500', async () => {
    for (const action of ['drop', restError(503, 'ServiceUnavailableException')] as FaultAction[]) {
      const rule = proxy.rule({ path: /./, action })
      try {
        for (const [what, send] of Object.entries(routes(warehouse, table)))
          expectCatalogDown(await send(), `${what} (${typeof action === 'string' ? action : 503})`)
      } finally {
        proxy.heal(rule)
      }
    }
    // Healthy again: the same routes answer.
    expect((await call(`/v1/tables?warehouse=${warehouse}`, { key: admin() })).body.tables).toContainEqual({ namespace: ns, name: 'events', table })
  })

  it('a commit whose answer is lost → 503 (it may have been applied: here it was, there it was not)', async () => {
    const after = commitRule({ ...restError(503, 'ServiceUnavailableException'), forward: true }, 1)
    expectCatalogDown(
      await call(`/v1/tables/${warehouse}.${table}/docs`, { method: 'PATCH', key: admin(), json: { doc: 'applied' } }),
      'answer lost after the commit',
    )
    expect(after.matched).toBe(1)
    expect(await tableDoc()).toBe('applied')

    const before = commitRule('drop', 1)
    expectCatalogDown(
      await call(`/v1/tables/${warehouse}.${table}/docs`, { method: 'PATCH', key: admin(), json: { doc: 'dropped' } }),
      'connection dropped before the commit',
    )
    expect(before.matched).toBe(1)
    expect(await tableDoc()).toBe('applied')
  })

  it('a catalog that refuses our OAuth client → 409 catalog_unauthorized (the warehouse’s own credentials), not 500', async () => {
    const refused = proxy.rule({
      method: 'POST',
      path: /^\/v1\/oauth\/tokens/,
      action: {
        status: 401,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ error: 'invalid_client', error_description: 'bad secret' }),
      },
    })
    try {
      const oauth = await newWarehouse({ uri: proxy.url, credential: 'lhbox:wrong' })
      const res = await call(`/v1/tables/${oauth}.${table}`, { key: admin() })
      // Not an outage a retry outlives: the warehouse's own credentials are wrong (PATCH /v1/warehouses fixes them).
      expectError(res, 409, 'catalog_unauthorized')
      expect(res.headers.get('retry-after')).toBeNull()
      expect(res.body.error.message).toContain('invalid_client')
      expect(refused.matched).toBeGreaterThan(0)
    } finally {
      proxy.heal(refused)
    }
  })

  it('a REST catalog at a port nobody listens on → 503 on every catalog route, not 500', async () => {
    const unreachable = await newWarehouse({ uri: `http://${DEAD_HOST_PORT}` })
    for (const [what, send] of Object.entries(routes(unreachable, table))) expectCatalogDown(await send(), what)
  })
})
