// The Iceberg REST catalog at <edge>/iceberg (issue 28), read and written by PyIceberg's RestCatalog
// and DuckDB (never our own client): /v1/config, the OAuth2 client-credentials exchange and plain
// bearer keys, namespaces and tables created, appended, scanned back, nested namespaces, a staged
// create committed with its first append, a commit in conflict (409 → CommitFailedException), a
// table the roller wrote read through the catalog. Commits across tables and Idempotency-Key:
// iceberg-rest-commits; levels and bad input: iceberg-rest-errors. Projects of the file's own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tickInProcess } from '../support/roller.ts'
import { append, ctx, deleteCatalogSinks, duck, expectModel, py, rest, SCHEMA, scan, setupCatalogProjects } from '../support/iceberg-rest.ts'
import { newSink, send } from '../support/sinks.ts'
import { call } from '../support/stack.ts'

/** Near the top of the long range: any float64 on the way would change it. */
const BIG = 9223372036854775001n

beforeAll(setupCatalogProjects, 15 * 60_000)
afterAll(deleteCatalogSinks)

describe('config and authentication', () => {
  it('answers the warehouse’s prefix, its store and the endpoints it serves', async () => {
    const a = await rest(`/config?warehouse=${ctx.project.warehouse}`, { key: ctx.readKey })
    expect(a.status).toBe(200)
    const w = (await call('/v1/warehouses', { key: ctx.project.key })).body.warehouses[0]
    expect(a.body.overrides).toEqual({
      prefix: w.id,
      's3.endpoint': w.endpoint,
      's3.region': w.region,
      'client.region': w.region,
      's3.path-style-access': 'true',
    })
    expect(a.body.endpoints).toEqual(expect.arrayContaining(['POST /v1/{prefix}/namespaces/{namespace}/tables/{table}', 'POST /v1/{prefix}/tables/rename']))
    // What PyIceberg makes of it.
    const seen = await py({ token: ctx.readKey }, 'config')
    expect(seen.result).toMatchObject({ prefix: w.id, 's3.endpoint': w.endpoint })
  })

  it('exchanges client credentials for a token of the key’s level, which PyIceberg then uses', async () => {
    const keyId = /^al_key_([0-9a-f]{12})_/.exec(ctx.writeKey)![1]
    const form = (fields: Record<string, string>) => ({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    })
    const t = await rest('/oauth/tokens', form({ grant_type: 'client_credentials', client_id: keyId, client_secret: ctx.writeKey, scope: 'catalog' }))
    expect(t.status, t.text).toBe(200)
    expect(t.body).toMatchObject({ token_type: 'bearer', expires_in: 3600, access_token: expect.stringMatching(/^al_tok_/) })
    expect((await rest(`/${ctx.prefix}/namespaces`, { key: t.body.access_token })).status).toBe(200)
    // A refresh by token exchange keeps the level.
    const again = await rest('/oauth/tokens', form({ grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', subject_token: t.body.access_token }))
    expect(again.status, again.text).toBe(200)
    // PyIceberg's own exchange (credential id:secret), then a create with the token.
    const created = await py({ credential: `${keyId}:${ctx.writeKey}` }, 'create-namespace', `${ctx.ns}_tok`)
    expect(created.result).toEqual({ exists: 'true' })

    // A read key's token reads but cannot write.
    const readToken = (await rest('/oauth/tokens', form({ grant_type: 'client_credentials', client_secret: ctx.readKey }))).body.access_token
    expect((await rest(`/${ctx.prefix}/namespaces`, { key: readToken })).status).toBe(200)
    expectModel(await rest(`/${ctx.prefix}/namespaces`, { key: readToken, json: { namespace: [`${ctx.ns}_no`] } }), 403, 'ForbiddenException')

    // Refusals in OAuth's own shape; a send key is 403 as everywhere but the send route.
    const wrong = await rest('/oauth/tokens', form({ grant_type: 'client_credentials', client_id: keyId, client_secret: `${ctx.writeKey.slice(0, -2)}xx` }))
    expect({ status: wrong.status, error: wrong.body.error }).toEqual({ status: 401, error: 'invalid_client' })
    const mismatch = await rest('/oauth/tokens', form({ grant_type: 'client_credentials', client_id: '0123456789ab', client_secret: ctx.writeKey }))
    expect({ status: mismatch.status, error: mismatch.body.error }).toEqual({ status: 401, error: 'invalid_client' })
    const grant = await rest('/oauth/tokens', form({ grant_type: 'password', client_secret: ctx.writeKey }))
    expect({ status: grant.status, error: grant.body.error }).toEqual({ status: 400, error: 'unsupported_grant_type' })
    const json = await rest('/oauth/tokens', { json: { grant_type: 'client_credentials', client_secret: ctx.writeKey } })
    expect({ status: json.status, error: json.body.error }).toEqual({ status: 400, error: 'invalid_request' })
    const sink = await newSink(ctx.project.key, { tableSpec: { warehouse: ctx.project.warehouse }, sink: { warehouse: ctx.project.warehouse } })
    expectModel(await rest('/oauth/tokens', form({ grant_type: 'client_credentials', client_secret: sink.sendKey })), 403, 'ForbiddenException')
    // A forged or altered token is no token.
    const forged = `${t.body.access_token.slice(0, -3)}AAA`
    expectModel(await rest(`/${ctx.prefix}/namespaces`, { key: forged }), 401, 'NotAuthorizedException')
    const raised = t.body.access_token.replace('_write_', '_admin_')
    expectModel(await rest(`/${ctx.prefix}/namespaces`, { key: raised }), 401, 'NotAuthorizedException')
  })

  it('refuses no key (401), a send key (403), and another project’s warehouse (404)', async () => {
    expectModel(await rest(`/config?warehouse=${ctx.project.warehouse}`), 401, 'NotAuthorizedException')
    expectModel(
      await rest(`/${ctx.prefix}/namespaces`, { key: 'al_key_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }),
      401,
      'NotAuthorizedException',
    )
    const sink = await newSink(ctx.project.key, { tableSpec: { warehouse: ctx.project.warehouse }, sink: { warehouse: ctx.project.warehouse } })
    expectModel(await rest(`/config?warehouse=${ctx.project.warehouse}`, { key: sink.sendKey }), 403, 'ForbiddenException')
    expectModel(await rest(`/${ctx.prefix}/namespaces`, { key: sink.sendKey }), 403, 'ForbiddenException')
    // The other project's key: our prefix is not found; its own config names its own warehouse.
    expectModel(await rest(`/${ctx.prefix}/namespaces`, { key: ctx.other.key }), 404, 'NotFoundException')
    expectModel(await rest(`/${ctx.prefix}/namespaces/sinks/tables/x`, { key: ctx.other.key }), 404, 'NotFoundException')
    const theirs = await rest(`/config?warehouse=${ctx.other.warehouse}`, { key: ctx.other.key })
    expect(theirs.status).toBe(200)
    expect(theirs.body.overrides.prefix).not.toBe(ctx.prefix)
    expectModel(await rest('/config?warehouse=nope', { key: ctx.project.key }), 404, 'NotFoundException')
    expectModel(await rest('/config', { key: ctx.project.key }), 400, 'BadRequestException')
  })
})

describe('namespaces and tables through PyIceberg', () => {
  it('creates, appends, scans back exactly, lists, renames and drops', async () => {
    const table = `${ctx.ns}.events`
    expect((await py({ token: ctx.writeKey }, 'create-namespace', ctx.ns, '--property', 'owner=rest-test')).result).toEqual({
      exists: 'true',
      owner: 'rest-test',
    })
    expect((await py({ token: ctx.writeKey }, 'create-namespace', ctx.ns)).error.type).toBe('NamespaceAlreadyExistsError')
    const created = await py({ token: ctx.writeKey }, 'create-table', table, '--schema', SCHEMA)
    expect(created.result.location).toMatch(new RegExp(`/${ctx.ns}/events$`))
    expect((await py({ token: ctx.writeKey }, 'create-table', table, '--schema', SCHEMA)).error.type).toBe('TableAlreadyExistsError')

    const appended = await append(ctx.writeKey, table, [
      { x: 1, who: 'north' },
      { x: BIG, who: null },
    ])
    const read = await scan(ctx.readKey, table)
    expect(read.rows).toEqual([
      { x: 1n, who: 'north' },
      { x: BIG, who: null },
    ])
    expect(read.current_snapshot_id).toBe(appended.snapshot_id)
    // The load answer carries the 63-bit snapshot id with its exact digits.
    const loaded = await rest(`/${ctx.prefix}/namespaces/${ctx.ns}/tables/events`, { key: ctx.readKey })
    expect(loaded.status).toBe(200)
    expect(loaded.text).toContain(`"current-snapshot-id":${appended.snapshot_id}`)
    expect(loaded.body['metadata-location']).toBe(appended.metadata_location)
    // Unchanged since: 304 on the ETag it gave.
    const etag = loaded.headers.get('etag') as string
    const unchanged = await rest(`/${ctx.prefix}/namespaces/${ctx.ns}/tables/events`, { key: ctx.readKey, headers: { 'if-none-match': etag } })
    expect({ status: unchanged.status, text: unchanged.text }).toEqual({ status: 304, text: '' })

    const listed = await py({ token: ctx.readKey }, 'namespaces')
    expect(listed.result.namespaces).toEqual(expect.arrayContaining([[ctx.ns]]))
    expect(listed.result.tables[ctx.ns]).toEqual([table])
    expect((await py({ token: ctx.readKey }, 'exists', table)).result).toEqual({ table: true, namespace: true })
    expect((await py({ token: ctx.readKey }, 'exists', `${ctx.ns}.nothing`)).result).toEqual({ table: false, namespace: true })

    const props = await py({ token: ctx.writeKey }, 'update-namespace', ctx.ns, '--property', 'team=data', '--remove', 'owner', '--remove', 'nothing')
    expect(props.result).toEqual({ updated: ['team'], removed: ['owner'], missing: ['nothing'] })

    expect((await py({ token: ctx.writeKey }, 'drop-namespace', ctx.ns)).error.type).toBe('NamespaceNotEmptyError')
    expect((await py({ token: ctx.writeKey }, 'rename', table, `${ctx.ns}.renamed`)).error).toBeUndefined()
    expect((await scan(ctx.readKey, `${ctx.ns}.renamed`)).rows).toHaveLength(2)
    expect((await py({ token: ctx.writeKey }, 'drop', `${ctx.ns}.renamed`)).error).toBeUndefined()
    expect((await py({ token: ctx.readKey }, 'exists', `${ctx.ns}.renamed`)).result.table).toBe(false)
    expect((await py({ token: ctx.writeKey }, 'drop-namespace', ctx.ns)).error).toBeUndefined()
  })

  it('keeps nested namespaces apart by level (%1F in paths, the unit separator in parent=)', async () => {
    const top = `${ctx.ns}_nest`
    for (const namespace of [[top], [top, 'inner'], [top, 'inner', 'deep']]) {
      const a = await rest(`/${ctx.prefix}/namespaces`, { key: ctx.writeKey, json: { namespace } })
      expect(a.status, a.text).toBe(200)
    }
    const children = await rest(`/${ctx.prefix}/namespaces?parent=${encodeURIComponent(`${top}\x1finner`)}`, { key: ctx.readKey })
    expect(children.body).toEqual({ namespaces: [[top, 'inner', 'deep']] })
    expect((await rest(`/${ctx.prefix}/namespaces/${top}%1Finner`, { key: ctx.readKey })).body).toEqual({
      namespace: [top, 'inner'],
      properties: { exists: 'true' },
    })
    expect((await py({ token: ctx.readKey }, 'namespaces', top)).result.namespaces).toEqual([[top, 'inner']])
    expectModel(await rest(`/${ctx.prefix}/namespaces/${top}%1Finner`, { key: ctx.writeKey, method: 'DELETE' }), 409, 'NamespaceNotEmptyException')
    expect((await rest(`/${ctx.prefix}/namespaces/${top}%1Finner%1Fdeep`, { key: ctx.writeKey, method: 'DELETE' })).status).toBe(204)
    expect((await rest(`/${ctx.prefix}/namespaces/${top}%1Finner`, { key: ctx.writeKey, method: 'DELETE' })).status).toBe(204)
    expect((await rest(`/${ctx.prefix}/namespaces/${top}%1Finner`, { key: ctx.readKey, method: 'HEAD' })).status).toBe(404)
  })

  it('commits a staged create (stage-create, then assert-create with its first append)', async () => {
    const space = `${ctx.ns}_staged`
    await py({ token: ctx.writeKey }, 'create-namespace', space)
    const made = await py({ token: ctx.writeKey }, 'create-table', `${space}.t`, '--schema', SCHEMA, '--stage', JSON.stringify([{ x: 7, who: 'seven' }]))
    expect(made.error).toBeUndefined()
    expect((await scan(ctx.readKey, `${space}.t`)).rows).toEqual([{ x: 7n, who: 'seven' }])
  })

  it('answers a commit whose requirement fails 409, which PyIceberg raises as CommitFailedException', async () => {
    const space = `${ctx.ns}_conflict`
    await py({ token: ctx.writeKey }, 'create-namespace', space)
    // No retry on PyIceberg's side: the 409 reaches the caller.
    await py({ token: ctx.writeKey }, 'create-table', `${space}.t`, '--schema', SCHEMA, '--property', 'commit.retry.num-retries=0')
    const raced = await py({ token: ctx.writeKey }, 'conflict', `${space}.t`)
    expect(raced.error?.type).toBe('CommitFailedException')
    expect((await scan(ctx.readKey, `${space}.t`)).rows).toEqual([{ x: 1n, who: null }])
    // With its retries, PyIceberg loads the table again on the 409 and commits on the new base.
    await py({ token: ctx.writeKey }, 'create-table', `${space}.retried`, '--schema', SCHEMA)
    expect((await py({ token: ctx.writeKey }, 'conflict', `${space}.retried`)).result).toBe('both appended')
    expect((await scan(ctx.readKey, `${space}.retried`)).rows).toEqual([
      { x: 1n, who: null },
      { x: 2n, who: null },
    ])
  })

  it('reads a table the roller wrote, with its sink’s snapshot summary', async () => {
    const sink = await newSink(ctx.project.key, { tableSpec: { warehouse: ctx.project.warehouse }, sink: { warehouse: ctx.project.warehouse } })
    const sent = await send(sink, [
      { x: 5, who: 'a' },
      { x: 6, who: 'b' },
    ])
    expect(sent.status, sent.text).toBe(202)
    const t = await tickInProcess({ sink: sink.id })
    expect(t.code, t.stdout + t.stderr).toBe(0)
    const read = await scan(ctx.readKey, sink.table)
    expect(read.rows.map((r: any) => [r.x, r.who])).toEqual([
      [5n, 'a'],
      [6n, 'b'],
    ])
    expect(read.snapshots.at(-1).summary['lakehousebox.sink.id']).toBe(sink.id)
    const viaDuck = await duck({ token: ctx.readKey }, { query: `SELECT x, who FROM cat.${sink.table} ORDER BY x` })
    expect(viaDuck.rows).toEqual([
      { x: 5n, who: 'a' },
      { x: 6n, who: 'b' },
    ])
    // The sink's table is the sink's to write: not dropped or renamed from here.
    const [space, name] = sink.table.split('.')
    expectModel(await rest(`/${ctx.prefix}/namespaces/${space}/tables/${name}`, { key: ctx.writeKey, method: 'DELETE' }), 409, 'CommitFailedException')
  })
})

describe('DuckDB 1.5.5 attached to the catalog', () => {
  it('creates a table and inserts with a write key (OAuth2), reads it back as PyIceberg does; a read key reads and cannot insert', async () => {
    const space = `${ctx.ns}_duck`
    const wrote = await duck(
      { key: ctx.writeKey },
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
    expect((await scan(ctx.readKey, `${space}.t`)).rows).toEqual(expected)

    const listed = await duck({ token: ctx.readKey }, { query: 'SELECT database, schema, name FROM (SHOW ALL TABLES) ORDER BY schema, name' })
    expect(listed.rows).toEqual(expect.arrayContaining([{ database: 'cat', schema: space, name: 't' }]))
    expect((await duck({ token: ctx.readKey }, { query: `SELECT count(*) AS n FROM cat.${space}.t` })).rows).toEqual([{ n: 2n }])
    const refused = await duck({ token: ctx.readKey }, { exec: [`INSERT INTO cat.${space}.t (x) VALUES (3)`] }).catch((e: Error) => e)
    expect(String(refused)).toMatch(/403[\s\S]*ForbiddenException/)
    expect((await scan(ctx.readKey, `${space}.t`)).rows).toHaveLength(2)
  })
})
