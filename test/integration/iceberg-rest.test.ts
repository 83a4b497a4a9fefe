// The Iceberg REST catalog at <edge>/iceberg (issue 28), read and written by PyIceberg's RestCatalog
// (never our own client): /v1/config, the OAuth2 client-credentials exchange and plain bearer keys,
// namespaces and tables created, appended, scanned back and committed in conflict (409 →
// CommitFailedException), a staged create committed with its first append, a table the roller wrote
// read through the catalog; the levels and projects case by case; bad input answered 400 in the
// REST spec's ErrorModel, never a 5xx. Everything lives in projects of this file's own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stringifyLossless } from '../../iceberg/spec/json.ts'
import { runPython, s3Args, toExact } from '../support/python.ts'
import { tickInProcess } from '../support/roller.ts'
import { listSinks, newProject, newSink, send, uid } from '../support/sinks.ts'
import { type Answer, call, newApiKey, stack } from '../support/stack.ts'

const SCHEMA = JSON.stringify({
  fields: [
    { id: 1, name: 'x', type: 'long', required: true },
    { id: 2, name: 'who', type: 'string', required: false },
  ],
})
/** Near the top of the long range: any float64 on the way would change it. */
const BIG = 9223372036854775001n

let project: { project: string; key: string; warehouse: string }
let other: { project: string; key: string; warehouse: string }
let readKey: string
let writeKey: string
let prefix: string
const ns = `rest_${uid()}`

const catalogUri = () => `${stack().apiUrl}/iceberg`

/** PyIceberg's RestCatalog with a bearer key (or `credential` for the OAuth2 exchange). */
async function py(auth: { token: string } | { credential: string }, ...args: string[]): Promise<any> {
  const how = 'token' in auth ? ['--rest-token', auth.token] : ['--rest-credential', auth.credential]
  const input = args.at(-1)?.startsWith('[') ? (args.pop() as string) : ''
  return toExact(
    await runPython('pyiceberg_rest.py', ['--rest-uri', catalogUri(), ...how, '--warehouse', project.warehouse, ...s3Args(stack().s3), ...args], undefined, {
      input,
    }),
  )
}

async function scan(key: string, table: string): Promise<any> {
  return toExact(
    await runPython('pyiceberg_scan.py', [
      '--rest-uri',
      catalogUri(),
      '--rest-token',
      key,
      '--warehouse',
      project.warehouse,
      ...s3Args(stack().s3),
      table,
      '--order-by',
      'x',
      '--no-files',
    ]),
  )
}

async function append(key: string, table: string, rows: unknown[]): Promise<any> {
  const args = ['--rest-uri', catalogUri(), '--rest-token', key, '--warehouse', project.warehouse, ...s3Args(stack().s3), table]
  return toExact(await runPython('pyiceberg_append.py', args, undefined, { input: stringifyLossless(rows) }))
}

/** The REST ErrorModel with this status and type; never a stack. */
function expectModel(a: Answer, status: number, type: string): void {
  expect({ status: a.status, body: a.body }, a.text).toEqual({ status, body: { error: { message: expect.any(String), type, code: status } } })
  expect(a.text).not.toMatch(/\n\s+at\s|\.ts:\d+/)
}

const rest = (path: string, init: Parameters<typeof call>[1] = {}) => call(`/iceberg/v1${path}`, init)

beforeAll(async () => {
  project = await newProject()
  other = await newProject()
  readKey = await newApiKey('read', project.project)
  writeKey = await newApiKey('write', project.project)
  const config = await rest(`/config?warehouse=${project.warehouse}`, { key: project.key })
  expect(config.status, config.text).toBe(200)
  prefix = config.body.overrides.prefix
}, 15 * 60_000)

afterAll(async () => {
  // A sink left with batches would be rolled by another file's roller service.
  for (const s of project ? await listSinks(project.key) : []) await call(`/v1/sinks/${s.id}`, { key: project.key, method: 'DELETE' })
})

describe('config and authentication', () => {
  it('answers the warehouse’s prefix, its store and the endpoints it serves', async () => {
    const a = await rest(`/config?warehouse=${project.warehouse}`, { key: readKey })
    expect(a.status).toBe(200)
    const w = (await call('/v1/warehouses', { key: project.key })).body.warehouses[0]
    expect(a.body.overrides).toEqual({
      prefix: w.id,
      's3.endpoint': w.endpoint,
      's3.region': w.region,
      'client.region': w.region,
      's3.path-style-access': 'true',
    })
    expect(a.body.endpoints).toEqual(expect.arrayContaining(['POST /v1/{prefix}/namespaces/{namespace}/tables/{table}', 'POST /v1/{prefix}/tables/rename']))
    // What PyIceberg makes of it.
    const seen = await py({ token: readKey }, 'config')
    expect(seen.result).toMatchObject({ prefix: w.id, 's3.endpoint': w.endpoint })
  })

  it('exchanges client credentials for a token of the key’s level, which PyIceberg then uses', async () => {
    const keyId = /^al_key_([0-9a-f]{12})_/.exec(writeKey)![1]
    const form = (fields: Record<string, string>) => ({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    })
    const t = await rest('/oauth/tokens', form({ grant_type: 'client_credentials', client_id: keyId, client_secret: writeKey, scope: 'catalog' }))
    expect(t.status, t.text).toBe(200)
    expect(t.body).toMatchObject({ token_type: 'bearer', expires_in: 3600, access_token: expect.stringMatching(/^al_tok_/) })
    expect((await rest(`/${prefix}/namespaces`, { key: t.body.access_token })).status).toBe(200)
    // A refresh by token exchange keeps the level.
    const again = await rest('/oauth/tokens', form({ grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', subject_token: t.body.access_token }))
    expect(again.status, again.text).toBe(200)
    // PyIceberg's own exchange (credential id:secret), then a create with the token.
    const created = await py({ credential: `${keyId}:${writeKey}` }, 'create-namespace', `${ns}_tok`)
    expect(created.result).toEqual({ exists: 'true' })

    // A read key's token reads but cannot write.
    const readToken = (await rest('/oauth/tokens', form({ grant_type: 'client_credentials', client_secret: readKey }))).body.access_token
    expect((await rest(`/${prefix}/namespaces`, { key: readToken })).status).toBe(200)
    expectModel(await rest(`/${prefix}/namespaces`, { key: readToken, json: { namespace: [`${ns}_no`] } }), 403, 'ForbiddenException')

    // Refusals in OAuth's own shape; a send key is 403 as everywhere but the send route.
    const wrong = await rest('/oauth/tokens', form({ grant_type: 'client_credentials', client_id: keyId, client_secret: `${writeKey.slice(0, -2)}xx` }))
    expect({ status: wrong.status, error: wrong.body.error }).toEqual({ status: 401, error: 'invalid_client' })
    const mismatch = await rest('/oauth/tokens', form({ grant_type: 'client_credentials', client_id: '0123456789ab', client_secret: writeKey }))
    expect({ status: mismatch.status, error: mismatch.body.error }).toEqual({ status: 401, error: 'invalid_client' })
    const grant = await rest('/oauth/tokens', form({ grant_type: 'password', client_secret: writeKey }))
    expect({ status: grant.status, error: grant.body.error }).toEqual({ status: 400, error: 'unsupported_grant_type' })
    const json = await rest('/oauth/tokens', { json: { grant_type: 'client_credentials', client_secret: writeKey } })
    expect({ status: json.status, error: json.body.error }).toEqual({ status: 400, error: 'invalid_request' })
    const sink = await newSink(project.key, { tableSpec: { warehouse: project.warehouse }, sink: { warehouse: project.warehouse } })
    expectModel(await rest('/oauth/tokens', form({ grant_type: 'client_credentials', client_secret: sink.sendKey })), 403, 'ForbiddenException')
    // A forged or altered token is no token.
    const forged = `${t.body.access_token.slice(0, -3)}AAA`
    expectModel(await rest(`/${prefix}/namespaces`, { key: forged }), 401, 'NotAuthorizedException')
    const raised = t.body.access_token.replace('_write_', '_admin_')
    expectModel(await rest(`/${prefix}/namespaces`, { key: raised }), 401, 'NotAuthorizedException')
  })

  it('refuses no key (401), a send key (403), and another project’s warehouse (404)', async () => {
    expectModel(await rest(`/config?warehouse=${project.warehouse}`), 401, 'NotAuthorizedException')
    expectModel(await rest(`/${prefix}/namespaces`, { key: 'al_key_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }), 401, 'NotAuthorizedException')
    const sink = await newSink(project.key, { tableSpec: { warehouse: project.warehouse }, sink: { warehouse: project.warehouse } })
    expectModel(await rest(`/config?warehouse=${project.warehouse}`, { key: sink.sendKey }), 403, 'ForbiddenException')
    expectModel(await rest(`/${prefix}/namespaces`, { key: sink.sendKey }), 403, 'ForbiddenException')
    // The other project's key: our prefix is not found; its own config names its own warehouse.
    expectModel(await rest(`/${prefix}/namespaces`, { key: other.key }), 404, 'NotFoundException')
    expectModel(await rest(`/${prefix}/namespaces/sinks/tables/x`, { key: other.key }), 404, 'NotFoundException')
    const theirs = await rest(`/config?warehouse=${other.warehouse}`, { key: other.key })
    expect(theirs.status).toBe(200)
    expect(theirs.body.overrides.prefix).not.toBe(prefix)
    expectModel(await rest('/config?warehouse=nope', { key: project.key }), 404, 'NotFoundException')
    expectModel(await rest('/config', { key: project.key }), 400, 'BadRequestException')
  })
})

describe('namespaces and tables through PyIceberg', () => {
  it('creates, appends, scans back exactly, lists, renames and drops', async () => {
    const table = `${ns}.events`
    expect((await py({ token: writeKey }, 'create-namespace', ns, '--property', 'owner=rest-test')).result).toEqual({ exists: 'true', owner: 'rest-test' })
    expect((await py({ token: writeKey }, 'create-namespace', ns)).error.type).toBe('NamespaceAlreadyExistsError')
    const created = await py({ token: writeKey }, 'create-table', table, '--schema', SCHEMA)
    expect(created.result.location).toMatch(new RegExp(`/${ns}/events$`))
    expect((await py({ token: writeKey }, 'create-table', table, '--schema', SCHEMA)).error.type).toBe('TableAlreadyExistsError')

    const appended = await append(writeKey, table, [
      { x: 1, who: 'north' },
      { x: BIG, who: null },
    ])
    const read = await scan(readKey, table)
    expect(read.rows).toEqual([
      { x: 1n, who: 'north' },
      { x: BIG, who: null },
    ])
    expect(read.current_snapshot_id).toBe(appended.snapshot_id)
    // The load answer carries the 63-bit snapshot id with its exact digits.
    const loaded = await rest(`/${prefix}/namespaces/${ns}/tables/events`, { key: readKey })
    expect(loaded.status).toBe(200)
    expect(loaded.text).toContain(`"current-snapshot-id":${appended.snapshot_id}`)
    expect(loaded.body['metadata-location']).toBe(appended.metadata_location)

    const listed = await py({ token: readKey }, 'namespaces')
    expect(listed.result.namespaces).toEqual(expect.arrayContaining([[ns]]))
    expect(listed.result.tables[ns]).toEqual([table])
    expect((await py({ token: readKey }, 'exists', table)).result).toEqual({ table: true, namespace: true })
    expect((await py({ token: readKey }, 'exists', `${ns}.nothing`)).result).toEqual({ table: false, namespace: true })

    const props = await py({ token: writeKey }, 'update-namespace', ns, '--property', 'team=data', '--remove', 'owner', '--remove', 'nothing')
    expect(props.result).toEqual({ updated: ['team'], removed: ['owner'], missing: ['nothing'] })

    expect((await py({ token: writeKey }, 'drop-namespace', ns)).error.type).toBe('NamespaceNotEmptyError')
    expect((await py({ token: writeKey }, 'rename', table, `${ns}.renamed`)).error).toBeUndefined()
    expect((await scan(readKey, `${ns}.renamed`)).rows).toHaveLength(2)
    expect((await py({ token: writeKey }, 'drop', `${ns}.renamed`)).error).toBeUndefined()
    expect((await py({ token: readKey }, 'exists', `${ns}.renamed`)).result.table).toBe(false)
    expect((await py({ token: writeKey }, 'drop-namespace', ns)).error).toBeUndefined()
  })

  it('keeps nested namespaces apart by level (%1F in paths, the unit separator in parent=)', async () => {
    const top = `${ns}_nest`
    for (const namespace of [[top], [top, 'inner'], [top, 'inner', 'deep']]) {
      const a = await rest(`/${prefix}/namespaces`, { key: writeKey, json: { namespace } })
      expect(a.status, a.text).toBe(200)
    }
    const children = await rest(`/${prefix}/namespaces?parent=${encodeURIComponent(`${top}\x1finner`)}`, { key: readKey })
    expect(children.body).toEqual({ namespaces: [[top, 'inner', 'deep']] })
    expect((await rest(`/${prefix}/namespaces/${top}%1Finner`, { key: readKey })).body).toEqual({ namespace: [top, 'inner'], properties: { exists: 'true' } })
    expect((await py({ token: readKey }, 'namespaces', top)).result.namespaces).toEqual([[top, 'inner']])
    expectModel(await rest(`/${prefix}/namespaces/${top}%1Finner`, { key: writeKey, method: 'DELETE' }), 409, 'NamespaceNotEmptyException')
    expect((await rest(`/${prefix}/namespaces/${top}%1Finner%1Fdeep`, { key: writeKey, method: 'DELETE' })).status).toBe(204)
    expect((await rest(`/${prefix}/namespaces/${top}%1Finner`, { key: writeKey, method: 'DELETE' })).status).toBe(204)
    expect((await rest(`/${prefix}/namespaces/${top}%1Finner`, { key: readKey, method: 'HEAD' })).status).toBe(404)
  })

  it('commits a staged create (stage-create, then assert-create with its first append)', async () => {
    const space = `${ns}_staged`
    await py({ token: writeKey }, 'create-namespace', space)
    const made = await py({ token: writeKey }, 'create-table', `${space}.t`, '--schema', SCHEMA, '--stage', JSON.stringify([{ x: 7, who: 'seven' }]))
    expect(made.error).toBeUndefined()
    expect((await scan(readKey, `${space}.t`)).rows).toEqual([{ x: 7n, who: 'seven' }])
  })

  it('answers a commit whose requirement fails 409, which PyIceberg raises as CommitFailedException', async () => {
    const space = `${ns}_conflict`
    await py({ token: writeKey }, 'create-namespace', space)
    // No retry on PyIceberg's side: the 409 reaches the caller.
    await py({ token: writeKey }, 'create-table', `${space}.t`, '--schema', SCHEMA, '--property', 'commit.retry.num-retries=0')
    const raced = await py({ token: writeKey }, 'conflict', `${space}.t`)
    expect(raced.error?.type).toBe('CommitFailedException')
    expect((await scan(readKey, `${space}.t`)).rows).toEqual([{ x: 1n, who: null }])
    // With its retries, PyIceberg loads the table again on the 409 and commits on the new base.
    await py({ token: writeKey }, 'create-table', `${space}.retried`, '--schema', SCHEMA)
    expect((await py({ token: writeKey }, 'conflict', `${space}.retried`)).result).toBe('both appended')
    expect((await scan(readKey, `${space}.retried`)).rows).toEqual([
      { x: 1n, who: null },
      { x: 2n, who: null },
    ])
  })

  it('commits a transaction over two tables all or none (transactions/commit)', async () => {
    const space = `${ns}_tx`
    await py({ token: writeKey }, 'create-namespace', space)
    for (const t of ['a', 'b']) await py({ token: writeKey }, 'create-table', `${space}.${t}`, '--schema', SCHEMA)
    const tableUrl = (t: string) => `/${prefix}/namespaces/${space}/tables/${t}`
    const uuid = async (t: string) => (await rest(tableUrl(t), { key: readKey })).body.metadata['table-uuid']
    const change = (t: string, id: string, value: string) => ({
      identifier: { namespace: [space], name: t },
      requirements: [{ type: 'assert-table-uuid', uuid: id }],
      updates: [{ action: 'set-properties', updates: { step: value } }],
    })
    const [ua, ub] = [await uuid('a'), await uuid('b')]
    const ok = await rest(`/${prefix}/transactions/commit`, { key: writeKey, json: { 'table-changes': [change('a', ua, 'one'), change('b', ub, 'one')] } })
    expect(ok.status, ok.text).toBe(204)
    const step = async (t: string) => (await rest(tableUrl(t), { key: readKey })).body.metadata.properties.step
    expect([await step('a'), await step('b')]).toEqual(['one', 'one'])
    // The second change's requirement fails: the first is not committed either.
    const wrongUuid = '00000000-0000-0000-0000-000000000000'
    const refused = await rest(`/${prefix}/transactions/commit`, {
      key: writeKey,
      json: { 'table-changes': [change('a', ua, 'two'), change('b', wrongUuid, 'two')] },
    })
    expectModel(refused, 409, 'CommitFailedException')
    expect([await step('a'), await step('b')]).toEqual(['one', 'one'])
    expectModel(await rest(`/${prefix}/transactions/commit`, { key: readKey, json: { 'table-changes': [change('a', ua, 'x')] } }), 403, 'ForbiddenException')
    expectModel(await rest(`/${prefix}/transactions/commit`, { key: writeKey, json: { 'table-changes': [] } }), 400, 'BadRequestException')
    expectModel(
      await rest(`/${prefix}/transactions/commit`, { key: writeKey, json: { 'table-changes': [change('a', ua, 'x'), change('a', ua, 'y')] } }),
      400,
      'BadRequestException',
    )
    expectModel(
      await rest(`/${prefix}/transactions/commit`, { key: writeKey, json: { 'table-changes': [change('nothing', ua, 'x')] } }),
      404,
      'NoSuchTableException',
    )
  })

  it('replays a mutation retried with its Idempotency-Key, with no second effect', async () => {
    const config = await rest(`/config?warehouse=${project.warehouse}`, { key: readKey })
    expect(config.body['idempotency-key-lifetime']).toBe('PT30M')
    const space = `${ns}_idem`
    const once = (key: string) => ({ 'idempotency-key': key })
    const k1 = crypto.randomUUID()
    const created = await rest(`/${prefix}/namespaces`, { key: writeKey, json: { namespace: [space] }, headers: once(k1) })
    expect(created.status, created.text).toBe(200)
    const again = await rest(`/${prefix}/namespaces`, { key: writeKey, json: { namespace: [space] }, headers: once(k1) })
    expect({ status: again.status, text: again.text }).toEqual({ status: 200, text: created.text })
    // The same key for another request: 422; a new key for the same request: it runs (409, it exists).
    expectModel(
      await rest(`/${prefix}/namespaces`, { key: writeKey, json: { namespace: [`${space}_2`] }, headers: once(k1) }),
      422,
      'UnprocessableEntityException',
    )
    expectModel(
      await rest(`/${prefix}/namespaces`, { key: writeKey, json: { namespace: [space] }, headers: once(crypto.randomUUID()) }),
      409,
      'AlreadyExistsException',
    )

    await py({ token: writeKey }, 'create-table', `${space}.t`, '--schema', SCHEMA)
    const tableUrl = `/${prefix}/namespaces/${space}/tables/t`
    const commit = { requirements: [], updates: [{ action: 'set-properties', updates: { once: 'yes' } }] }
    const k2 = crypto.randomUUID()
    const first = await rest(tableUrl, { key: writeKey, json: commit, headers: once(k2) })
    expect(first.status, first.text).toBe(200)
    const retried = await rest(tableUrl, { key: writeKey, json: commit, headers: once(k2) })
    expect(retried.text).toBe(first.text)
    const now = await rest(tableUrl, { key: readKey })
    expect(now.body['metadata-location']).toBe(first.body['metadata-location'])
    expect(now.body.metadata['metadata-log']).toHaveLength(1)

    // A final 4xx is replayed too; a malformed key is refused.
    const k3 = crypto.randomUUID()
    expectModel(await rest(`${tableUrl}/../nothing`, { key: writeKey, method: 'DELETE', headers: once(k3) }), 404, 'NoSuchTableException')
    expectModel(await rest(`${tableUrl}/../nothing`, { key: writeKey, method: 'DELETE', headers: once(k3) }), 404, 'NoSuchTableException')
    const k4 = crypto.randomUUID()
    expect((await rest(tableUrl, { key: writeKey, method: 'DELETE', headers: once(k4) })).status).toBe(204)
    expect((await rest(tableUrl, { key: writeKey, method: 'DELETE', headers: once(k4) })).status).toBe(204)
    expectModel(await rest(tableUrl, { key: writeKey, method: 'DELETE', headers: once('not-a-uuid') }), 400, 'BadRequestException')
  })

  it('reads a table the roller wrote, with its sink’s snapshot summary', async () => {
    const sink = await newSink(project.key, { tableSpec: { warehouse: project.warehouse }, sink: { warehouse: project.warehouse } })
    const sent = await send(sink, [
      { x: 5, who: 'a' },
      { x: 6, who: 'b' },
    ])
    expect(sent.status, sent.text).toBe(202)
    const t = await tickInProcess({ sink: sink.id })
    expect(t.code, t.stdout + t.stderr).toBe(0)
    const read = await scan(readKey, sink.table)
    expect(read.rows.map((r: any) => [r.x, r.who])).toEqual([
      [5n, 'a'],
      [6n, 'b'],
    ])
    expect(read.snapshots.at(-1).summary['lakehousebox.sink.id']).toBe(sink.id)
    const viaDuck = await duck({ token: readKey }, { query: `SELECT x, who FROM cat.${sink.table} ORDER BY x` })
    expect(viaDuck.rows).toEqual([
      { x: 5n, who: 'a' },
      { x: 6n, who: 'b' },
    ])
    // The sink's table is the sink's to write: not dropped or renamed from here.
    const [space, name] = sink.table.split('.')
    expectModel(await rest(`/${prefix}/namespaces/${space}/tables/${name}`, { key: writeKey, method: 'DELETE' }), 409, 'CommitFailedException')
  })
})

/** DuckDB with the catalog attached as `cat` (ATTACH '<warehouse>' … TYPE ICEBERG): a bearer key, or OAuth2 client credentials. */
async function duck(auth: { token: string } | { key: string }, opts: { exec?: string[]; query?: string }): Promise<any> {
  const how = 'token' in auth ? ['--rest-token', auth.token] : ['--rest-client-id', auth.key.slice(7, 19), '--rest-client-secret', auth.key]
  const args = ['--rest-uri', catalogUri(), '--warehouse', project.warehouse, ...how, ...s3Args(stack().s3)]
  for (const e of opts.exec ?? []) args.push('--exec', e)
  if (opts.query) args.push('--query', opts.query)
  return toExact(await runPython('duckdb_iceberg_sql.py', args))
}

describe('DuckDB 1.5.5 attached to the catalog', () => {
  it('creates a table and inserts with a write key (OAuth2), reads it back as PyIceberg does; a read key reads and cannot insert', async () => {
    const space = `${ns}_duck`
    const wrote = await duck(
      { key: writeKey },
      {
        exec: [
          `CREATE SCHEMA cat.${space}`,
          `CREATE TABLE cat.${space}.t (x BIGINT, who VARCHAR, amount DECIMAL(38, 10), seen TIMESTAMPTZ, day DATE, ok BOOLEAN)`,
          `INSERT INTO cat.${space}.t VALUES (9223372036854775807, 'max', 12345678901234567890.0123456789, TIMESTAMPTZ '2026-09-21 12:00:00.123456+00', DATE '2026-09-21', true), (-9223372036854775808, NULL, -0.5, NULL, NULL, false)`,
        ],
        query: `SELECT * FROM cat.${space}.t ORDER BY x`,
      },
    )
    const expected = [
      { x: -9223372036854775808n, who: null, amount: '-0.5000000000', seen: null, day: null, ok: false },
      { x: 9223372036854775807n, who: 'max', amount: '12345678901234567890.0123456789', seen: '2026-09-21T12:00:00.123456+00:00', day: '2026-09-21', ok: true },
    ]
    // The interop encoding has DuckDB's booleans as 0 and 1.
    expect(wrote.rows.map((r: any) => ({ ...r, ok: r.ok === 1n }))).toEqual(expected)
    expect((await scan(readKey, `${space}.t`)).rows).toEqual(expected)

    const listed = await duck({ token: readKey }, { query: 'SELECT database, schema, name FROM (SHOW ALL TABLES) ORDER BY schema, name' })
    expect(listed.rows).toEqual(expect.arrayContaining([{ database: 'cat', schema: space, name: 't' }]))
    expect((await duck({ token: readKey }, { query: `SELECT count(*) AS n FROM cat.${space}.t` })).rows).toEqual([{ n: 2n }])
    const refused = await duck({ token: readKey }, { exec: [`INSERT INTO cat.${space}.t (x) VALUES (3)`] }).catch((e: Error) => e)
    expect(String(refused)).toMatch(/403[\s\S]*ForbiddenException/)
    expect((await scan(readKey, `${space}.t`)).rows).toHaveLength(2)
  })
})

describe('levels and bad input', () => {
  it('lets a read key list and load, and nothing else (403)', async () => {
    const space = `${ns}_levels`
    await py({ token: writeKey }, 'create-namespace', space)
    await py({ token: writeKey }, 'create-table', `${space}.t`, '--schema', SCHEMA)
    const base = `/${prefix}/namespaces/${space}`
    expect((await rest(`/${prefix}/namespaces`, { key: readKey })).status).toBe(200)
    expect((await rest(base, { key: readKey })).status).toBe(200)
    expect((await rest(`${base}/tables`, { key: readKey })).status).toBe(200)
    expect((await rest(`${base}/tables/t`, { key: readKey })).status).toBe(200)
    expect((await rest(`${base}/tables/t`, { key: readKey, method: 'HEAD' })).status).toBe(204)
    expect((await rest(`${base}/tables/nothing`, { key: readKey, method: 'HEAD' })).status).toBe(404)
    expect((await rest(`${base}/tables/t/metrics`, { key: readKey, json: { 'report-type': 'scan-report' } })).status).toBe(204)
    for (const [path, init] of [
      [`/${prefix}/namespaces`, { json: { namespace: [`${space}_x`] } }],
      [base, { method: 'DELETE' }],
      [`${base}/properties`, { json: { updates: { a: 'b' } } }],
      [`${base}/tables`, { json: { name: 'u', schema: JSON.parse(SCHEMA) } }],
      [`${base}/tables/t`, { json: { requirements: [], updates: [] } }],
      [`${base}/tables/t`, { method: 'DELETE' }],
      [`/${prefix}/tables/rename`, { json: { source: { namespace: [space], name: 't' }, destination: { namespace: [space], name: 'u' } } }],
    ] as const) {
      expectModel(await rest(path, { key: readKey, ...init }), 403, 'ForbiddenException')
    }
    expect((await py({ token: readKey }, 'create-namespace', `${space}_py`)).error.type).toBe('ForbiddenError')
  })

  it('answers malformed and impossible requests 400 (404, 405, 409, 422 where the spec says), never 5xx', async () => {
    const space = `${ns}_bad`
    await py({ token: writeKey }, 'create-namespace', space)
    await py({ token: writeKey }, 'create-table', `${space}.t`, '--schema', SCHEMA)
    const base = `/${prefix}/namespaces/${space}`
    const key = writeKey
    const cases: Array<[string, Parameters<typeof call>[1], number, string]> = [
      [`/${prefix}/namespaces`, { body: '{"namespace": [', headers: { 'content-type': 'application/json' }, method: 'POST' }, 400, 'BadRequestException'],
      [`/${prefix}/namespaces`, { json: [1, 2] }, 400, 'BadRequestException'],
      [`/${prefix}/namespaces`, { json: { namespace: ['a.b'] } }, 400, 'BadRequestException'],
      [`/${prefix}/namespaces`, { json: { namespace: [] } }, 400, 'BadRequestException'],
      [`/${prefix}/namespaces`, { json: { namespace: ['x'.repeat(300)] } }, 400, 'BadRequestException'],
      [`/${prefix}/namespaces`, { json: { namespace: [space] } }, 409, 'AlreadyExistsException'],
      [`/${prefix}/namespaces/nothing_here`, {}, 404, 'NoSuchNamespaceException'],
      [`/${prefix}/namespaces?parent=nothing_here`, {}, 404, 'NoSuchNamespaceException'],
      [`${base}/properties`, { json: { removals: ['a'], updates: { a: 'b' } } }, 422, 'UnprocessableEntityException'],
      [`${base}/tables`, { json: { name: 'u', schema: { fields: [{ id: 1, name: 'x', type: 'nope', required: true }] } } }, 400, 'BadRequestException'],
      [`${base}/tables`, { json: { name: 'u', schema: { fields: 'x' } } }, 400, 'BadRequestException'],
      [`${base}/tables`, { json: { name: 'u', schema: JSON.parse(SCHEMA), location: 's3://elsewhere/t' } }, 400, 'BadRequestException'],
      [`${base}/tables`, { json: { name: 'u', schema: JSON.parse(SCHEMA), properties: { 'format-version': '1' } } }, 400, 'BadRequestException'],
      [
        `${base}/tables`,
        { json: { name: 'u', schema: JSON.parse(SCHEMA), 'partition-spec': { fields: [{ 'source-id': 2, name: 'p', transform: 'day' }] } } },
        400,
        'BadRequestException',
      ],
      [`/${prefix}/namespaces/nothing_here/tables`, { json: { name: 'u', schema: JSON.parse(SCHEMA) } }, 404, 'NoSuchNamespaceException'],
      [`${base}/tables/nothing`, {}, 404, 'NoSuchTableException'],
      [`${base}/tables/t?snapshots=some`, {}, 400, 'BadRequestException'],
      [`${base}/tables/t`, { json: { requirements: [], updates: [{ action: 'make-it-faster' }] } }, 400, 'BadRequestException'],
      [`${base}/tables/t`, { json: { requirements: [{ type: 'assert-nothing' }], updates: [] } }, 400, 'BadRequestException'],
      [`${base}/tables/t`, { json: { requirements: [], updates: [{ action: 'set-current-schema', 'schema-id': 42 }] } }, 400, 'BadRequestException'],
      [`${base}/tables/t`, { json: { requirements: [], updates: [{ action: 'set-location', location: 's3://elsewhere/t' }] } }, 400, 'BadRequestException'],
      [
        `${base}/tables/t`,
        { json: { requirements: [{ type: 'assert-table-uuid', uuid: '00000000-0000-0000-0000-000000000000' }], updates: [] } },
        409,
        'CommitFailedException',
      ],
      [`${base}/tables/t`, { json: { identifier: { namespace: [space], name: 'other' }, requirements: [], updates: [] } }, 400, 'BadRequestException'],
      [`${base}/tables/nothing`, { json: { requirements: [], updates: [] } }, 404, 'NoSuchTableException'],
      [
        `/${prefix}/tables/rename`,
        { json: { source: { namespace: [space], name: 'nothing' }, destination: { namespace: [space], name: 'u' } } },
        404,
        'NoSuchTableException',
      ],
      [
        `/${prefix}/tables/rename`,
        { json: { source: { namespace: [space], name: 't' }, destination: { namespace: ['nothing_here'], name: 'u' } } },
        404,
        'NoSuchNamespaceException',
      ],
      [
        `/${prefix}/tables/rename`,
        { json: { source: { namespace: [space], name: 't' }, destination: { namespace: [space], name: 't' } } },
        409,
        'AlreadyExistsException',
      ],
      [`/${prefix}/nothing`, {}, 404, 'NotFoundException'],
      [`/${prefix}/tables/rename`, {}, 405, 'MethodNotAllowedException'],
      [`/${prefix}/namespaces/a%00b`, {}, 400, 'BadRequestException'],
      ['/bad%00prefix/namespaces', {}, 404, 'NotFoundException'],
    ]
    for (const [path, init, status, type] of cases) {
      const a = await rest(path, { key, ...init })
      expect([path, a.status, a.body?.error?.type], a.text).toEqual([path, status, type])
      expectModel(a, status, type)
    }
    // The table is as it was: no update above was applied.
    const t = await rest(`${base}/tables/t`, { key })
    expect(t.body.metadata['current-schema-id']).toBe(0)
    expect(t.body.metadata.snapshots).toEqual([])
  })
})
