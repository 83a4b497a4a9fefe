// How engines reach a table's files through the Iceberg REST catalog (issue 28, part 2): remote signing
// (PyIceberg's S3V4RestSigner over s3fs, with no S3 keys of its own) limited to the table's location and,
// for a read key, to reads; vended credentials (DuckDB's ACCESS_DELEGATION_MODE 'vended_credentials'):
// credentials scoped to the table and the key's level, served by the edge's S3 endpoint (/iceberg/s3),
// tried case by case as attacks; the warehouse's read-only pair (sealed at rest) for a read key when it
// has one, and the store's own keys for write keys only where the operator sets LHBOX_VEND_STORE_KEYS.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AwsClient } from 'aws4fetch'
import { issueStoreKeys } from '../../edge/iceberg-rest/store-credentials.ts'
import { append, ctx, deleteCatalogSinks, duck, expectModel, py, rest, scan, SCHEMA, setupCatalogProjects, signed } from '../support/iceberg-rest.ts'
import { startEdge } from '../support/edge.ts'
import { ensurePyicebergS3fs } from '../support/python.ts'
import { database } from '../support/sinks.ts'
import { call, newApiKey, stack } from '../support/stack.ts'

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
  it('a write key receives credentials scoped to the table, not the store’s; DuckDB inserts with them and reads', async () => {
    const loaded = await rest(tablePath('events'), { key: ctx.writeKey, headers: VENDED })
    expect(loaded.body.config).toMatchObject({
      's3.endpoint': `${stack().apiUrl}/iceberg/s3`,
      's3.path-style-access': 'true',
      's3.access-key-id': expect.stringMatching(/^LHBOXV1[0-9A-F]{12}$/),
      's3.session-token': expect.stringMatching(/^lhs1\./),
    })
    expect(loaded.text).not.toContain(stack().s3.secretAccessKey)
    expect(loaded.body.config['s3.access-key-id']).not.toBe(stack().s3.accessKeyId)
    expect(loaded.body['storage-credentials']).toEqual([{ prefix: location, config: loaded.body.config }])
    const wrote = await duck(
      { token: ctx.writeKey },
      { vended: true, exec: [`INSERT INTO cat.${ctx.ns}.events (x, who) VALUES (10, 'duck')`], query: `SELECT x, who FROM cat.${ctx.ns}.events ORDER BY x` },
    )
    expect(wrote.executed).toEqual([1n])
    expect(wrote.rows).toEqual([
      { x: 1n, who: 'north' },
      { x: 2n, who: null },
      { x: 3n, who: 'signed' },
      { x: 10n, who: 'duck' },
    ])
    // PyIceberg reads it back (it asks for vended credentials itself: a read key's, through the same endpoint).
    expect((await scan(ctx.readKey, `${ctx.ns}.events`)).rows.map((r: any) => r.x)).toEqual([1n, 2n, 3n, 10n])
  })

  it('a read key’s credentials read: DuckDB selects, its INSERT is refused', async () => {
    const loaded = await rest(tablePath('events'), { key: ctx.readKey, headers: VENDED })
    expect(loaded.body.config['s3.session-token']).toMatch(/^lhs1\./)
    expect(loaded.body.config['s3.remote-signing-enabled']).toBeUndefined()
    const read = await duck({ token: ctx.readKey }, { vended: true, query: `SELECT count(*) AS n FROM cat.${ctx.ns}.events` })
    expect(read.rows).toEqual([{ n: 4n }])
    const refused = await duck({ token: ctx.readKey }, { vended: true, exec: [`INSERT INTO cat.${ctx.ns}.events (x) VALUES (11)`] }).catch((e: Error) => e)
    expect(String(refused)).toMatch(/403|Forbidden|not allowed|write/i)
    expect((await scan(ctx.writeKey, `${ctx.ns}.events`)).rows.map((r: any) => r.x)).toEqual([1n, 2n, 3n, 10n])
  })

  it('refuses, as an attack, case by case: another table, the intake, another bucket, a read key’s writes, expired, altered or forged credentials, a revoked key', async () => {
    const creds = async (key: string) => (await rest(tablePath('events'), { key, headers: VENDED })).body.config as Record<string, string>
    const w = await creds(ctx.writeKey)
    const r = await creds(ctx.readKey)
    const bucket = location.slice('s3://'.length).split('/')[0]
    const at = (suffix: string) => `${stack().apiUrl}/iceberg/s3/${location.slice('s3://'.length)}/${suffix}`
    const metadata = ((await rest(tablePath('events'), { key: ctx.readKey })).body['metadata-location'] as string).slice(location.length + 1)

    // What is allowed works: a read, a listing under the table, and a write key's PUT and DELETE of its own object.
    const got = await s3(r, 'GET', at(metadata))
    expect(got.status, got.text).toBe(200)
    expect(got.text).toContain('"format-version"')
    const listed = await s3(
      r,
      'GET',
      `${stack().apiUrl}/iceberg/s3/${bucket}/?list-type=2&prefix=${encodeURIComponent(`${location.slice(`s3://${bucket}/`.length)}/metadata/`)}`,
    )
    expect(listed.status, listed.text).toBe(200)
    expect(listed.text).toContain(metadata)
    expect((await s3(w, 'PUT', at('data/probe.bin'), 'probe')).status).toBe(200)
    expect((await s3(w, 'GET', at('data/probe.bin'))).text).toBe('probe')
    expect((await s3(w, 'DELETE', at('data/probe.bin'))).status).toBe(204)
    // A multipart upload (DuckDB's httpfs writes so): create, a part, complete.
    const started = await s3(w, 'POST', at('data/multi.bin?uploads'))
    const uploadId = /<UploadId>([^<]+)<\/UploadId>/.exec(started.text)?.[1] ?? ''
    expect(uploadId, started.text).not.toBe('')
    const part = await s3(w, 'PUT', at(`data/multi.bin?partNumber=1&uploadId=${encodeURIComponent(uploadId)}`), 'multipart')
    expect(part.status, part.text).toBe(200)
    const done = `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>${part.etag}</ETag></Part></CompleteMultipartUpload>`
    expect((await s3(w, 'POST', at(`data/multi.bin?uploadId=${encodeURIComponent(uploadId)}`), done)).status).toBe(200)
    expect((await s3(r, 'GET', at('data/multi.bin'))).text).toBe('multipart')
    await expectS3(s3(r, 'PUT', at(`data/multi.bin?partNumber=2&uploadId=${encodeURIComponent(uploadId)}`), 'no'), 403, 'AccessDenied')

    // Another table of the same warehouse, the intake, another bucket, a listing of the whole bucket, a dot segment.
    await expectS3(s3(w, 'GET', at(metadata).replace('/events/', '/other/')), 403, 'AccessDenied')
    await expectS3(s3(w, 'PUT', at('x').replace('/events/', '/other/'), 'x'), 403, 'AccessDenied')
    await expectS3(s3(w, 'GET', `${stack().apiUrl}/iceberg/s3/${bucket}/_sink/any`), 403, 'AccessDenied')
    await expectS3(s3(w, 'GET', at(metadata).replace(`/s3/${bucket}/`, '/s3/another-bucket/')), 403, 'AccessDenied')
    await expectS3(s3(w, 'GET', `${stack().apiUrl}/iceberg/s3/${bucket}/?list-type=2&prefix=`), 403, 'AccessDenied')
    await expectS3(s3(w, 'GET', at('data/..%2F..%2Fother%2Fm.json')), 403, 'AccessDenied')
    // A read key's writes.
    await expectS3(s3(r, 'PUT', at('data/no.bin'), 'no'), 403, 'AccessDenied')
    await expectS3(s3(r, 'DELETE', at(metadata)), 403, 'AccessDenied')
    await expectS3(s3(r, 'POST', at('data/no.bin?uploads')), 403, 'AccessDenied')
    expect((await s3(r, 'GET', at(metadata))).status).toBe(200)

    // Expired (issued two hours ago with the deployment's secret), altered (read made write), forged secret.
    const claims = { warehouseId: ctx.prefix, keyId: ctx.writeKey.slice(7, 19), access: 'write' as const, location }
    const old = await issueStoreKeys(stack().bootstrapSecret, claims, Date.now() - 2 * 3600_000)
    await expectS3(s3({ ...r, ...old }, 'GET', at(metadata)), 400, 'ExpiredToken')
    const [, text, sig] = r['s3.session-token'].split('.')
    const altered = `lhs1.${Buffer.from(Buffer.from(text, 'base64url').toString().replace('\nread\n', '\nwrite\n')).toString('base64url')}.${sig}`
    await expectS3(s3({ ...r, 's3.session-token': altered }, 'PUT', at('data/no.bin'), 'no'), 400, 'InvalidToken')
    await expectS3(s3({ ...r, 's3.secret-access-key': 'guessed' }, 'GET', at(metadata)), 403, 'SignatureDoesNotMatch')
    await expectS3(
      s3({ ...r, 's3.access-key-id': w['s3.access-key-id'] === r['s3.access-key-id'] ? 'X' : w['s3.access-key-id'] }, 'GET', at(metadata)),
      403,
      'InvalidAccessKeyId',
    )
    const forged = await issueStoreKeys('not-the-secret', claims)
    await expectS3(s3({ ...r, ...forged }, 'GET', at(metadata)), 400, 'InvalidToken')
    // Another project's credentials for its own table reach nothing here (their location is theirs).
    const theirs = await issueStoreKeys(stack().bootstrapSecret, { ...claims, location: `s3://${bucket}/wh/elsewhere/t` })
    await expectS3(s3({ ...r, ...theirs }, 'GET', at(metadata)), 403, 'AccessDenied')

    // A revoked key's credentials end at once.
    const revocable = await newApiKey('write', ctx.project.project)
    const v = await creds(revocable)
    expect((await s3(v, 'GET', at(metadata))).status).toBe(200)
    const db = await database()
    try {
      await db.query('update api_keys set revoked_at = now() where id = $1', [revocable.slice(7, 19)])
    } finally {
      await db.end()
    }
    await expectS3(s3(v, 'GET', at(metadata)), 403, 'AccessDenied')
  })

  it('a read key receives the warehouse’s read-only pair (sealed at rest) once it has one; LHBOX_VEND_STORE_KEYS=true gives write keys the store’s', async () => {
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
    const ro = { 's3.access-key-id': pair.access_key_id, 's3.secret-access-key': pair.secret_access_key, 's3.endpoint': stack().s3.endpoint }
    const vended = await rest(tablePath('events'), { key: ctx.readKey, headers: VENDED })
    expect(vended.body.config).toMatchObject(ro)
    expect(vended.text).not.toContain(stack().s3.secretAccessKey)
    const refreshed = await rest(`${tablePath('events')}/credentials`, { key: ctx.readKey, headers: VENDED })
    expect(refreshed.body['storage-credentials']).toEqual([{ prefix: location, config: expect.objectContaining(ro) }])
    // A write key still receives scoped credentials; without the header nobody receives keys.
    expect((await rest(tablePath('events'), { key: ctx.writeKey, headers: VENDED })).body.config['s3.session-token']).toMatch(/^lhs1\./)
    expect((await rest(tablePath('events'), { key: ctx.readKey })).body.config['s3.access-key-id']).toBeUndefined()

    // An edge whose operator vends the store's own keys (one tenant's bucket): write keys receive them, read keys still the pair.
    const edge = await startEdge('node', { LHBOX_VEND_STORE_KEYS: 'true' })
    try {
      const storeKeys = await call(`/iceberg/v1${tablePath('events')}`, { base: edge.url, key: ctx.writeKey, headers: VENDED })
      expect(storeKeys.body.config).toMatchObject({ 's3.access-key-id': stack().s3.accessKeyId, 's3.endpoint': stack().s3.endpoint })
      expect((await call(`/iceberg/v1${tablePath('events')}`, { base: edge.url, key: ctx.readKey, headers: VENDED })).body.config).toMatchObject(ro)
    } finally {
      await edge.stop()
    }

    // Removed: the read key is back to scoped credentials.
    await call(`/v1/warehouses/${ctx.project.warehouse}`, { method: 'PATCH', key: ctx.project.key, json: { store_read_key: null } })
    expect((await rest(tablePath('events'), { key: ctx.readKey, headers: VENDED })).body.config['s3.session-token']).toMatch(/^lhs1\./)
  })
})

/** An S3 request signed with vended credentials (aws4fetch as an engine's SDK would), its answer read. */
async function s3(keys: Record<string, string>, method: string, url: string, body?: string): Promise<{ status: number; text: string; etag: string | null }> {
  const aws = new AwsClient({
    accessKeyId: keys['s3.access-key-id'],
    secretAccessKey: keys['s3.secret-access-key'],
    sessionToken: keys['s3.session-token'],
    service: 's3',
    region: 'us-east-1',
  })
  const res = await aws.fetch(url, { method, body, headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } })
  return { status: res.status, text: await res.text(), etag: res.headers.get('etag') }
}

/** S3's XML error with this status and code. */
async function expectS3(answer: Promise<{ status: number; text: string }>, status: number, code: string): Promise<void> {
  const a = await answer
  expect({ status: a.status, code: /<Code>([^<]*)<\/Code>/.exec(a.text)?.[1] }, a.text).toEqual({ status, code })
}
