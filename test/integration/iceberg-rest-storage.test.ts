// How engines reach a table's files through the Iceberg REST catalog (issue 28, part 2): remote signing
// (PyIceberg's S3V4RestSigner over s3fs, with no S3 keys of its own) limited to the table's location and,
// for a read key, to reads; vended credentials (DuckDB's ACCESS_DELEGATION_MODE 'vended_credentials'):
// the store's keys for a write key, the warehouse's read-only pair (sealed at rest) for a read key, and
// no keys at all for a read key when the warehouse has no such pair.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { append, ctx, deleteCatalogSinks, duck, expectModel, py, rest, SCHEMA, setupCatalogProjects, signed } from '../support/iceberg-rest.ts'
import { startEdge } from '../support/edge.ts'
import { ensurePyicebergS3fs } from '../support/python.ts'
import { database } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

const VENDED = { 'x-iceberg-access-delegation': 'vended-credentials' }
const tablePath = (t: string) => `/${ctx.prefix}/namespaces/${ctx.ns}/tables/${t}`

/** An S3SignRequest to table `t`'s sign endpoint. */
const sign = (key: string, t: string, method: string, uri: string) =>
  rest(`${tablePath(t)}/sign`, { key, json: { region: 'us-east-1', method, uri, headers: { 'x-amz-content-sha256': ['UNSIGNED-PAYLOAD'] } } })

let location = ''
/** The table's files as the store's URL gives them (path-style). */
const objectUrl = (suffix: string) => `${stack().s3.endpoint}/${location.slice('s3://'.length)}/${suffix}`

beforeAll(async () => {
  await Promise.all([setupCatalogProjects(), ensurePyicebergS3fs()])
  await py({ token: ctx.writeKey }, 'create-namespace', ctx.ns)
  location = (await py({ token: ctx.writeKey }, 'create-table', `${ctx.ns}.events`, '--schema', SCHEMA)).result.location
  await py({ token: ctx.writeKey }, 'create-table', `${ctx.ns}.other`, '--schema', SCHEMA)
  await append(ctx.writeKey, `${ctx.ns}.events`, [
    { x: 1, who: 'north' },
    { x: 2, who: null },
  ])
}, 15 * 60_000)
afterAll(deleteCatalogSinks)

describe('remote signing', () => {
  it('a table loads with the signer’s settings and a catalog token, no keys', async () => {
    const loaded = await rest(tablePath('events'), { key: ctx.readKey })
    expect(loaded.status, loaded.text).toBe(200)
    expect(loaded.body.config).toMatchObject({
      's3.remote-signing-enabled': 'true',
      's3.signer': 'S3V4RestSigner',
      's3.signer.uri': `${stack().apiUrl}/iceberg`,
      's3.signer.endpoint': `v1/${ctx.prefix}/namespaces/${ctx.ns}/tables/events/sign`,
      token: expect.stringMatching(/^al_tok_[0-9a-f]{12}_read_/),
    })
    expect(loaded.body.config['s3.access-key-id']).toBeUndefined()
    expect(loaded.text).not.toContain(stack().s3.secretAccessKey)
    // The answer is the caller's: another key's or another access mode's ETag differs (no 304 across them).
    const etag = loaded.headers.get('etag') as string
    const again = await rest(tablePath('events'), { key: ctx.readKey, headers: { 'if-none-match': etag } })
    expect(again.status).toBe(304)
    expect((await rest(tablePath('events'), { key: ctx.writeKey, headers: { 'if-none-match': etag } })).status).toBe(200)
    expect((await rest(tablePath('events'), { key: ctx.readKey, headers: { 'if-none-match': etag, ...VENDED } })).status).toBe(200)
  })

  // pyiceberg_signing.py gives each FileIO an S3FileSystem of its own (fsspec's skip_instance_cache):
  // PyIceberg 0.12 swaps its signer on a shared one, and a request sent meanwhile went out unsigned.
  it('PyIceberg with no S3 keys scans with a read key and appends with a write key; a read key’s write is refused', async () => {
    const [read, wrote, refused, after] = await signed(`${ctx.ns}.events`, [
      { token: ctx.readKey, op: 'scan' },
      { token: ctx.writeKey, op: 'append', rows: [{ x: 3, who: 'signed' }] },
      // The read key's append stops at its first data file: the signer refuses the PUT.
      { token: ctx.readKey, op: 'append', rows: [{ x: 4, who: 'no' }] },
      { token: ctx.readKey, op: 'scan' },
    ])
    expect(read.result, JSON.stringify(read.error)).toMatchObject({
      rows: [
        { x: 1n, who: 'north' },
        { x: 2n, who: null },
      ],
    })
    expect(read.result.io_keys).toContain('s3.signer.uri')
    expect(read.result.io_keys).not.toContain('s3.access-key-id')
    expect(wrote.result, JSON.stringify(wrote.error)).toMatchObject({ snapshot_id: expect.any(String) })
    expect(refused.error, JSON.stringify(refused)).toMatchObject({ type: 'SignError', message: expect.stringContaining('403') })
    expect(after.result.rows.map((r: any) => r.x)).toEqual([1n, 2n, 3n])
  })

  it('signs only this table’s objects, and for a read key only reads (403 ForbiddenException otherwise)', async () => {
    const metadata = (await rest(tablePath('events'), { key: ctx.readKey })).body['metadata-location'] as string
    const ok = await sign(ctx.readKey, 'events', 'GET', objectUrl(metadata.slice(location.length + 1)))
    expect(ok.status, ok.text).toBe(200)
    expect(Object.keys(ok.body.headers).map((h) => h.toLowerCase())).toEqual(expect.arrayContaining(['authorization', 'x-amz-date']))
    // The signed request reads the object from the store.
    const fetched = await fetch(ok.body.uri, {
      headers: Object.fromEntries(Object.entries(ok.body.headers as Record<string, string[]>).map(([k, v]) => [k, v.join(', ')])),
    })
    expect(fetched.status).toBe(200)
    expect(await fetched.text()).toContain('"format-version"')

    expectModel(await sign(ctx.readKey, 'events', 'PUT', objectUrl('data/x.parquet')), 403, 'ForbiddenException')
    expectModel(await sign(ctx.readKey, 'events', 'DELETE', objectUrl('data/x.parquet')), 403, 'ForbiddenException')
    expect((await sign(ctx.writeKey, 'events', 'PUT', objectUrl('data/x.parquet'))).status).toBe(200)
    // Another table's files, through this table's endpoint; a way out by dot segments or encoded slashes; another bucket.
    const otherTable = objectUrl('metadata/m.json').replace('/events/', '/other/')
    expectModel(await sign(ctx.writeKey, 'events', 'GET', otherTable), 403, 'ForbiddenException')
    expectModel(await sign(ctx.writeKey, 'events', 'GET', objectUrl('../other/metadata/m.json')), 403, 'ForbiddenException')
    expectModel(await sign(ctx.writeKey, 'events', 'GET', objectUrl('data/..%2F..%2Fother%2Fm.json')), 403, 'ForbiddenException')
    const bucket = location.slice('s3://'.length).split('/')[0]
    expectModel(await sign(ctx.writeKey, 'events', 'GET', objectUrl('data/f').replace(`/${bucket}/`, '/another-bucket/')), 403, 'ForbiddenException')
    // Another project's key finds no such warehouse; no key is 401; a body that is no S3SignRequest is 400.
    expectModel(await sign(ctx.other.key, 'events', 'GET', objectUrl('data/f')), 404, 'NotFoundException')
    expectModel(await rest(`${tablePath('events')}/sign`, { json: {} }), 401, 'NotAuthorizedException')
    expectModel(await rest(`${tablePath('events')}/sign`, { key: ctx.readKey, json: { uri: 1 } }), 400, 'BadRequestException')
  })
})

describe('vended credentials', () => {
  it('a write key receives the store’s keys; DuckDB reads the table with them and no S3 secret of its own', async () => {
    const loaded = await rest(tablePath('events'), { key: ctx.writeKey, headers: VENDED })
    const keys = { 's3.access-key-id': stack().s3.accessKeyId, 's3.secret-access-key': stack().s3.secretAccessKey }
    expect(loaded.body.config).toMatchObject({ ...keys, 's3.endpoint': stack().s3.endpoint, 's3.path-style-access': 'true' })
    expect(loaded.body['storage-credentials']).toEqual([{ prefix: location, config: expect.objectContaining(keys) }])
    const read = await duck({ token: ctx.writeKey }, { vended: true, query: `SELECT x, who FROM cat.${ctx.ns}.events ORDER BY x` })
    expect(read.rows).toEqual([
      { x: 1n, who: 'north' },
      { x: 2n, who: null },
      { x: 3n, who: 'signed' },
    ])
  })

  it('a read key receives no keys without a read-only pair, and the pair (sealed at rest) once the warehouse has one', async () => {
    const none = await rest(tablePath('events'), { key: ctx.readKey, headers: VENDED })
    expect(none.status).toBe(200)
    expect(none.body['storage-credentials']).toBeUndefined()
    expect(none.body.config['s3.access-key-id']).toBeUndefined()
    expect(none.body.config['s3.remote-signing-enabled']).toBe('true')
    expect(none.text).not.toContain(stack().s3.secretAccessKey)
    expect((await rest(`${tablePath('events')}/credentials`, { key: ctx.readKey, headers: VENDED })).body).toEqual({ 'storage-credentials': [] })

    const pair = { access_key_id: `ro-${ctx.ns}`, secret_access_key: `ro-secret-${ctx.ns}` }
    const patched = await call(`/v1/warehouses/${ctx.project.warehouse}`, { method: 'PATCH', key: ctx.project.key, json: { store_read_key: pair } })
    expect(patched.status, patched.text).toBe(200)
    expect(patched.body.store_read_key).toBe(true)
    expect(patched.text).not.toContain(pair.secret_access_key)
    const db = await database()
    try {
      const { rows } = await db.query('select store_read_key from warehouses where id = $1', [ctx.prefix])
      expect(rows[0].store_read_key).toMatch(/^v1\.[^.]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
      expect(rows[0].store_read_key).not.toContain(pair.access_key_id)
    } finally {
      await db.end()
    }
    const ro = { 's3.access-key-id': pair.access_key_id, 's3.secret-access-key': pair.secret_access_key }
    const vended = await rest(tablePath('events'), { key: ctx.readKey, headers: VENDED })
    expect(vended.body.config).toMatchObject(ro)
    expect(vended.text).not.toContain(stack().s3.secretAccessKey)
    const refreshed = await rest(`${tablePath('events')}/credentials`, { key: ctx.readKey, headers: VENDED })
    expect(refreshed.body['storage-credentials']).toEqual([{ prefix: location, config: expect.objectContaining(ro) }])
    // A write key still receives the store's own; without the header nobody receives keys.
    expect((await rest(tablePath('events'), { key: ctx.writeKey, headers: VENDED })).body.config['s3.access-key-id']).toBe(stack().s3.accessKeyId)
    expect((await rest(tablePath('events'), { key: ctx.readKey })).body.config['s3.access-key-id']).toBeUndefined()

    // An edge not allowed to vend its own store keys (LHBOX_VEND_STORE_KEYS unset, the default): a write
    // key receives the read-only pair, as a read key, and with no pair nothing (it writes by signing).
    const edge = await startEdge('node', { LHBOX_VEND_STORE_KEYS: '' })
    try {
      const noStoreKeys = await call(`/iceberg/v1${tablePath('events')}`, { base: edge.url, key: ctx.writeKey, headers: VENDED })
      expect(noStoreKeys.body.config).toMatchObject(ro)
      expect(noStoreKeys.text).not.toContain(stack().s3.secretAccessKey)
      await call(`/v1/warehouses/${ctx.project.warehouse}`, { method: 'PATCH', key: ctx.project.key, json: { store_read_key: null } })
      const none = await call(`/iceberg/v1${tablePath('events')}`, { base: edge.url, key: ctx.writeKey, headers: VENDED })
      expect(none.body.config['s3.access-key-id']).toBeUndefined()
      expect(none.body.config['s3.signer.endpoint']).toContain('/tables/events/sign')
    } finally {
      await edge.stop()
    }

    // Removed: the read key is back to signing only.
    await call(`/v1/warehouses/${ctx.project.warehouse}`, { method: 'PATCH', key: ctx.project.key, json: { store_read_key: null } })
    expect((await rest(tablePath('events'), { key: ctx.readKey, headers: VENDED })).body.config['s3.access-key-id']).toBeUndefined()
  })
})
