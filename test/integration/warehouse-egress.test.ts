// A warehouse's store endpoint and REST catalog reach public addresses only (issue 31,
// edge/warehouse-egress.ts): a create naming a loopback, private, link-local or unspecified address, or
// localhost, is 400 egress_refused, and nothing is connected to; the edge's own store (S3_ENDPOINT) is
// allowed. Names that may resolve anywhere are checked when the Node processes connect
// (warehouse-egress-connect.test.ts). Again against the edge on Node: on-node/.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newProject, uid } from '../support/sinks.ts'
import { call, expectError, stack } from '../support/stack.ts'

/** A server on another loopback address than the stack's: what an internal service would be; it counts what reaches it. */
let inside: Server
let port: number
let hits = 0

beforeAll(async () => {
  inside = createServer((_req, res) => {
    hits++
    res.end('inside')
  })
  await new Promise<void>((resolve) => inside.listen(0, '127.0.0.2', resolve))
  port = (inside.address() as AddressInfo).port
})
afterAll(() => new Promise<void>((resolve) => inside.close(() => resolve())))

const create = (key: string, json: Record<string, unknown>) => call('/v1/warehouses', { key, json: { name: `w_${uid()}`, ...json } })

const REFUSED = 'a warehouse’s endpoint or catalog reaches public addresses only (LHBOX_WAREHOUSE_ALLOW_HOSTS opens named internal stores and catalogs)'

describe('a warehouse’s URLs at create', () => {
  it('refuses an endpoint at an internal address or localhost (400 egress_refused, naming it), and connects nowhere', async () => {
    const { key } = await newProject()
    const cases: Array<[string, string]> = [
      [`http://127.0.0.2:${port}`, '127.0.0.2 is a loopback address'],
      [`http://[::1]:${port}`, '::1 is a loopback address'],
      [`http://localhost:${port}`, '::1 is a loopback address (localhost resolves to it)'],
      [`http://[::ffff:127.0.0.2]:${port}`, '::ffff:7f00:2 is a loopback address'],
      ['http://169.254.169.254/latest', '169.254.169.254 is a link-local (cloud metadata) address'],
      ['http://10.0.0.7:9000', '10.0.0.7 is a private address'],
      ['https://192.168.1.20', '192.168.1.20 is a private address'],
      ['http://0.0.0.0:7070', '0.0.0.0 is an unspecified address'],
    ]
    for (const [endpoint, said] of cases) {
      const res = await create(key, { endpoint })
      expectError(res, 400, 'egress_refused')
      expect(res.body.error, endpoint).toEqual({ code: 'egress_refused', message: `endpoint: ${said}; ${REFUSED}`, field: 'endpoint', url: endpoint })
    }
    expect((await call('/v1/warehouses', { key })).body.warehouses.map((w: { name: string }) => w.name)).toEqual(['main'])
    expect(hits).toBe(0)
  })

  it('refuses a REST catalog at an internal address the same way', async () => {
    const { key } = await newProject()
    const uri = `http://127.0.0.2:${port}/catalog`
    const res = await create(key, { catalog: { type: 'rest', uri }, bucket: stack().s3.bucket })
    expectError(res, 400, 'egress_refused')
    expect(res.body.error).toMatchObject({ message: `catalog.uri: 127.0.0.2 is a loopback address; ${REFUSED}`, field: 'catalog.uri', url: uri })
    expect(hits).toBe(0)
  })

  it('takes the edge’s own store, given as the endpoint (its host is the operator’s)', async () => {
    const { key } = await newProject()
    const res = await create(key, { endpoint: stack().s3.endpoint })
    expect(res.status, res.text).toBe(201)
    expect(res.body.endpoint).toBe(stack().s3.endpoint)
  })
})
