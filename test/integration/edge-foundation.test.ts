// The edge skeleton through real workerd: envelope, healthz, API-key auth, levels, projects, warehouses.
import pg from 'pg'
import { describe, expect, it, beforeAll, afterAll } from 'vitest'
import { uid } from '../support/sinks.ts'
import { call, expectError, newApiKey, secretOf, stack } from '../support/stack.ts'

/** Projects of this run's own: the file runs on both edges against one stack. */
const RUN = uid()

describe('the error envelope', () => {
  it('answers unknown routes with 404 not_found', async () => {
    expectError(await call('/nope'), 404, 'not_found')
    expectError(await call('/v1/nothing-here', { method: 'DELETE' }), 404, 'not_found')
  })

  it('answers a query of 40 KiB with the envelope (Node’s 16 KiB header limit would give a bare 431)', async () => {
    const long = 'é'.repeat(7000) // 14,000 bytes of UTF-8, 42,000 characters percent-encoded
    const listed = await call(`/v1/sinks?warehouse=${encodeURIComponent(long)}`, { key: await newApiKey('read') })
    expect({ status: listed.status, sinks: listed.body.sinks }).toEqual({ status: 200, sinks: [] })
    expectError(await call(`/internal/sinks?roller=${encodeURIComponent(long)}`, { key: await newApiKey('read') }), 403, 'forbidden')
  })
})

describe('GET /healthz', () => {
  it('is 200 when the database and the bucket answer', async () => {
    const res = await call('/healthz')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ok: true, database: 'ok', bucket: 'ok' })
  })
})

describe('API-key auth', () => {
  let db: pg.Client
  beforeAll(async () => {
    db = new pg.Client(stack().databaseUrl)
    await db.connect()
  })
  afterAll(() => db.end())

  it('refuses a missing key, a malformed one and an unknown one with 401 unauthorized', async () => {
    expectError(await call('/v1/warehouses'), 401, 'unauthorized')
    expectError(await call('/v1/warehouses', { key: 'hello' }), 401, 'unauthorized')
    expectError(await call('/v1/warehouses', { headers: { authorization: 'Basic abc' } }), 401, 'unauthorized')
    expectError(await call('/v1/warehouses', { key: 'al_key_000000000000_' + 'a'.repeat(43) }), 401, 'unauthorized')
  })

  it('refuses a right id with a wrong secret', async () => {
    const key = await newApiKey('read')
    const forged = key.slice(0, key.length - 1) + (key.endsWith('A') ? 'B' : 'A')
    expectError(await call('/v1/warehouses', { key: forged }), 401, 'unauthorized')
  })

  it('refuses a revoked key', async () => {
    const key = await newApiKey('admin')
    expect((await call('/v1/warehouses', { key })).status).toBe(200)
    await db.query('update api_keys set revoked_at = now() where id = $1', [key.split('_')[2]])
    expectError(await call('/v1/warehouses', { key }), 401, 'unauthorized')
  })

  it('stores only the SHA-256 of a key', async () => {
    const key = await newApiKey('read')
    const { rows } = await db.query('select * from api_keys where id = $1', [key.split('_')[2]])
    expect(rows).toHaveLength(1)
    expect(rows[0].key_sha256).toMatch(/^[0-9a-f]{64}$/)
    expect(JSON.stringify(rows[0])).not.toContain(secretOf(key))
  })

  it('answers 403 send_only to a send key on an API route', async () => {
    expectError(await call('/v1/warehouses', { key: 'al_send_0123456789ab_' + 'b'.repeat(43) }), 403, 'send_only')
  })

  it('checks levels: read < write < admin', async () => {
    const read = await newApiKey('read')
    const write = await newApiKey('write')
    const body = { name: 'lvl-check' }
    expect((await call('/v1/warehouses', { key: read })).status).toBe(200)
    expectError(await call('/v1/warehouses', { key: read, json: body }), 403, 'forbidden')
    expectError(await call('/v1/warehouses', { key: write, json: body }), 403, 'forbidden')
  })

  it('updates last_used_at', async () => {
    const key = await newApiKey('read')
    await call('/v1/warehouses', { key })
    // Written once the answer is ready (edge/auth.ts noteKeyUsed), so it lands just after it.
    const lastUsed = async () => (await db.query('select last_used_at from api_keys where id = $1', [key.split('_')[2]])).rows[0].last_used_at
    await expect.poll(lastUsed, { timeout: 10_000 }).toBeInstanceOf(Date)
  })
})

describe('POST /internal/keys', () => {
  it('needs the bootstrap secret: anything else is 403', async () => {
    expectError(await call('/internal/keys', { json: { project: 'x', level: 'admin' } }), 403, 'forbidden')
    expectError(await call('/internal/keys', { key: 'wrong', json: { project: 'x', level: 'admin' } }), 403, 'forbidden')
    expectError(await call('/internal/keys', { key: stack().adminKey, json: { project: 'x', level: 'admin' } }), 403, 'forbidden')
  })

  it('answers a key once, in the documented format', async () => {
    const res = await call('/internal/keys', { key: stack().bootstrapSecret, json: { project: 'keys-format', level: 'write' } })
    expect(res.status).toBe(201)
    expect(res.body.key).toMatch(/^al_key_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/)
    expect(res.body).toMatchObject({ level: 'write', project: 'keys-format' })
  })

  it('refuses a bad level or project name with 400', async () => {
    expectError(await call('/internal/keys', { key: stack().bootstrapSecret, json: { project: 'p', level: 'root' } }), 400, 'invalid_request')
    expectError(await call('/internal/keys', { key: stack().bootstrapSecret, json: { project: 'Bad Name!', level: 'read' } }), 400, 'invalid_request')
  })
})

describe('warehouses', () => {
  it('lists the default warehouse the stack bootstrapped', async () => {
    const res = await call('/v1/warehouses', { key: stack().adminKey })
    expect(res.status).toBe(200)
    expect(res.body.warehouses.map((w: { name: string }) => w.name)).toContain('default')
    const w = res.body.warehouses.find((x: { name: string }) => x.name === 'default')
    expect(w).toMatchObject({ catalog: { type: 'sql' }, bucket: stack().s3.bucket, endpoint: stack().s3.endpoint })
  })

  it('creates one per name and project: 201, then 409 warehouse_exists', async () => {
    const key = await newApiKey('admin', `wh-project-${RUN}`)
    const body = {
      name: 'lake',
      catalog: { type: 'rest', uri: 'http://127.0.0.1:1/catalog', warehouse: 'w1', token: 'secret-token' },
      bucket: 'other-bucket',
      region: 'eu-west-1',
    }
    const created = await call('/v1/warehouses', { key, json: body })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({
      name: 'lake',
      catalog: { type: 'rest', uri: 'http://127.0.0.1:1/catalog', warehouse: 'w1' },
      bucket: 'other-bucket',
      region: 'eu-west-1',
      maintenance: 'roller',
    })
    expect(created.text).not.toContain('secret-token')
    expectError(await call('/v1/warehouses', { key, json: body }), 409, 'warehouse_exists')
  })

  it('keeps projects apart', async () => {
    const a = await newApiKey('admin', `iso-a-${RUN}`)
    const b = await newApiKey('admin', `iso-b-${RUN}`)
    expect((await call('/v1/warehouses', { key: a, json: { name: 'only-a' } })).status).toBe(201)
    const listB = await call('/v1/warehouses', { key: b })
    expect(listB.body.warehouses.map((w: { name: string }) => w.name)).not.toContain('only-a')
    // The same name is free in another project.
    expect((await call('/v1/warehouses', { key: b, json: { name: 'only-a' } })).status).toBe(201)
  })

  it('answers bad input with 400/415, never a 5xx', async () => {
    const key = stack().adminKey
    expectError(await call('/v1/warehouses', { key, json: { name: '' } }), 400, 'invalid_request')
    expectError(await call('/v1/warehouses', { key, json: { name: 'x', catalog: { type: 'hive' } } }), 400, 'invalid_request')
    expectError(await call('/v1/warehouses', { key, json: { name: 'x', catalog: { type: 'rest', uri: 'not a url' } } }), 400, 'invalid_request')
    expectError(await call('/v1/warehouses', { key, body: '{"name": ', headers: { 'content-type': 'application/json' } }), 400, 'malformed_json')
    expectError(await call('/v1/warehouses', { key, body: 'name=x', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type')
  })
})
