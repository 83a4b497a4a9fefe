// The project's S3 client against the dev S3 server AND a real gateway (versitygw), through both
// transports: the Worker's (aws4fetch, WebCrypto, fetch) and Node's (the SDK's signer, undici).
import { describe, expect, it } from 'vitest'
import { S3Client as Client, S3Error, type S3Config } from '../../iceberg/io/s3.ts'
import { nodeTransport } from '../../iceberg/io/s3-node.ts'
import { fetchTransport, type S3TransportFactory } from '../../iceberg/io/s3-transport.ts'
import { stack } from '../support/stack.ts'

const servers: Array<[string, () => S3Config]> = [
  ['s3rver', () => stack().s3],
  ['versitygw', () => stack().gateway],
]
const transports: Array<[string, S3TransportFactory]> = [
  ['fetch', fetchTransport],
  ['node', nodeTransport],
]
const cases = servers.flatMap(([server, config]) => transports.map(([transport, t]) => [server, transport, config, t] as const))

describe.each(cases)('S3 conformance: %s, %s transport', (_server, _transport, config, transport) => {
  const prefix = `conformance/${Date.now()}-${Math.random().toString(36).slice(2)}/`
  class S3Client extends Client {
    constructor(c: S3Config) {
      super(c, transport(c))
    }
  }

  it('PUTs with metadata headers, then GETs and HEADs them back', async () => {
    const s3 = new S3Client(config())
    const body = '{"x": 9223372036854775807}\n{"é": "\\u00e9"}\n'
    await s3.put(`${prefix}a.ndjson`, body, {
      contentType: 'application/x-ndjson',
      metadata: { received: '2026-09-21T12:00:00.123456Z', rows: '2', sink: 'snk_1' },
    })
    const got = await s3.get(`${prefix}a.ndjson`)
    expect(new TextDecoder().decode(got!.body)).toBe(body)
    expect(got!.head.metadata).toMatchObject({ received: '2026-09-21T12:00:00.123456Z', rows: '2', sink: 'snk_1' })
    const head = await s3.head(`${prefix}a.ndjson`)
    expect(head!.size).toBe(new TextEncoder().encode(body).length)
    expect(head!.contentType).toBe('application/x-ndjson')
    expect(await s3.get(`${prefix}missing`)).toBeNull()
    expect(await s3.head(`${prefix}missing`)).toBeNull()
  })

  it('lists with ListObjectsV2 page by page, and deletes with DeleteObjects', async () => {
    const s3 = new S3Client(config())
    const keys = ['b/1', 'b/2', 'b/3', 'b/4', 'b/5'].map((k) => prefix + k)
    for (const k of keys) await s3.put(k, k)
    const first = await s3.listPage(`${prefix}b/`, { maxKeys: 2 })
    expect(first.objects.map((o) => o.key)).toEqual(keys.slice(0, 2))
    expect(first.nextToken).not.toBeNull()
    const all: string[] = []
    for await (const o of s3.list(`${prefix}b/`, 2)) all.push(o.key)
    expect(all).toEqual(keys)
    await s3.deleteMany(keys.slice(0, 3))
    const left: string[] = []
    for await (const o of s3.list(`${prefix}b/`)) left.push(o.key)
    expect(left).toEqual(keys.slice(3))
  })

  it("signs keys and prefixes with characters SigV4 encodes (!'()* + = space, non-ASCII) as sent", async () => {
    const s3 = new S3Client(config())
    const dir = `${prefix}odd (1)!*'+=~ é/`
    const keys = ['a b.ndjson', "it's(2)*.ndjson", 'x+y=z~ü.ndjson'].map((k) => dir + k)
    for (const k of keys) await s3.put(k, k, { metadata: { note: 'ok' } })
    for (const k of keys) expect(new TextDecoder().decode((await s3.get(k))!.body)).toBe(k)
    const listed: string[] = []
    for await (const o of s3.list(dir, 1)) listed.push(o.key)
    expect(listed).toEqual([...keys].sort())
    const after: string[] = []
    for await (const o of s3.list(dir, 1000, keys.slice().sort()[0])) after.push(o.key)
    expect(after).toEqual([...keys].sort().slice(1))
    await s3.deleteMany(keys.slice(0, 2))
    await s3.delete(keys[2])
    for (const k of keys) expect(await s3.head(k)).toBeNull()
  })

  it('refuses a wrong secret', async () => {
    const s3 = new S3Client({ ...config(), secretAccessKey: 'not-the-secret' })
    const err = await s3.put(`${prefix}forbidden`, 'x').catch((e) => e)
    expect(err).toBeInstanceOf(S3Error)
    expect((err as S3Error).status).toBe(403)
    expect(await new S3Client(config()).head(`${prefix}forbidden`)).toBeNull()
  })
})

describe.each(transports)('conditional writes (versitygw), %s transport', (_transport, transport) => {
  it('If-None-Match: * refuses to overwrite an existing key with 412', async () => {
    const s3 = new Client(stack().gateway, transport(stack().gateway))
    const key = `conditional/${Date.now()}-${_transport}.json`
    await s3.put(key, 'first', { ifNoneMatch: true })
    const err = await s3.put(key, 'second', { ifNoneMatch: true }).catch((e) => e)
    expect(err).toBeInstanceOf(S3Error)
    expect((err as S3Error).status).toBe(412)
    expect(new TextDecoder().decode((await s3.get(key))!.body)).toBe('first')
  })
})
