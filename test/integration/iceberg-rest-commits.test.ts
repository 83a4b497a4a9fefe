// The Iceberg REST catalog's commits beyond one table and one try: transactions/commit (all tables or
// none, in one Postgres transaction) and the spec's Idempotency-Key (a retry replayed, no second effect).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ctx, deleteCatalogSinks, expectModel, py, rest, SCHEMA, setupCatalogProjects } from '../support/iceberg-rest.ts'

beforeAll(setupCatalogProjects, 15 * 60_000)
afterAll(deleteCatalogSinks)

describe('commits', () => {
  it('commits a transaction over two tables all or none (transactions/commit)', async () => {
    const space = `${ctx.ns}_tx`
    await py({ token: ctx.writeKey }, 'create-namespace', space)
    for (const t of ['a', 'b']) await py({ token: ctx.writeKey }, 'create-table', `${space}.${t}`, '--schema', SCHEMA)
    const tableUrl = (t: string) => `/${ctx.prefix}/namespaces/${space}/tables/${t}`
    const uuid = async (t: string) => (await rest(tableUrl(t), { key: ctx.readKey })).body.metadata['table-uuid']
    const change = (t: string, id: string, value: string) => ({
      identifier: { namespace: [space], name: t },
      requirements: [{ type: 'assert-table-uuid', uuid: id }],
      updates: [{ action: 'set-properties', updates: { step: value } }],
    })
    const [ua, ub] = [await uuid('a'), await uuid('b')]
    const ok = await rest(`/${ctx.prefix}/transactions/commit`, {
      key: ctx.writeKey,
      json: { 'table-changes': [change('a', ua, 'one'), change('b', ub, 'one')] },
    })
    expect(ok.status, ok.text).toBe(204)
    const step = async (t: string) => (await rest(tableUrl(t), { key: ctx.readKey })).body.metadata.properties.step
    expect([await step('a'), await step('b')]).toEqual(['one', 'one'])
    // The second change's requirement fails: the first is not committed either.
    const wrongUuid = '00000000-0000-0000-0000-000000000000'
    const refused = await rest(`/${ctx.prefix}/transactions/commit`, {
      key: ctx.writeKey,
      json: { 'table-changes': [change('a', ua, 'two'), change('b', wrongUuid, 'two')] },
    })
    expectModel(refused, 409, 'CommitFailedException')
    expect([await step('a'), await step('b')]).toEqual(['one', 'one'])
    expectModel(
      await rest(`/${ctx.prefix}/transactions/commit`, { key: ctx.readKey, json: { 'table-changes': [change('a', ua, 'x')] } }),
      403,
      'ForbiddenException',
    )
    expectModel(await rest(`/${ctx.prefix}/transactions/commit`, { key: ctx.writeKey, json: { 'table-changes': [] } }), 400, 'BadRequestException')
    expectModel(
      await rest(`/${ctx.prefix}/transactions/commit`, { key: ctx.writeKey, json: { 'table-changes': [change('a', ua, 'x'), change('a', ua, 'y')] } }),
      400,
      'BadRequestException',
    )
    expectModel(
      await rest(`/${ctx.prefix}/transactions/commit`, { key: ctx.writeKey, json: { 'table-changes': [change('nothing', ua, 'x')] } }),
      404,
      'NoSuchTableException',
    )
  })

  it('replays a mutation retried with its Idempotency-Key, with no second effect', async () => {
    const config = await rest(`/config?warehouse=${ctx.project.warehouse}`, { key: ctx.readKey })
    expect(config.body['idempotency-key-lifetime']).toBe('PT30M')
    const space = `${ctx.ns}_idem`
    const once = (key: string) => ({ 'idempotency-key': key })
    const k1 = crypto.randomUUID()
    const created = await rest(`/${ctx.prefix}/namespaces`, { key: ctx.writeKey, json: { namespace: [space] }, headers: once(k1) })
    expect(created.status, created.text).toBe(200)
    const again = await rest(`/${ctx.prefix}/namespaces`, { key: ctx.writeKey, json: { namespace: [space] }, headers: once(k1) })
    expect({ status: again.status, text: again.text }).toEqual({ status: 200, text: created.text })
    // The same key for another request: 422; a new key for the same request: it runs (409, it exists).
    expectModel(
      await rest(`/${ctx.prefix}/namespaces`, { key: ctx.writeKey, json: { namespace: [`${space}_2`] }, headers: once(k1) }),
      422,
      'UnprocessableEntityException',
    )
    expectModel(
      await rest(`/${ctx.prefix}/namespaces`, { key: ctx.writeKey, json: { namespace: [space] }, headers: once(crypto.randomUUID()) }),
      409,
      'AlreadyExistsException',
    )

    await py({ token: ctx.writeKey }, 'create-table', `${space}.t`, '--schema', SCHEMA)
    const tableUrl = `/${ctx.prefix}/namespaces/${space}/tables/t`
    const commit = { requirements: [], updates: [{ action: 'set-properties', updates: { once: 'yes' } }] }
    const k2 = crypto.randomUUID()
    const first = await rest(tableUrl, { key: ctx.writeKey, json: commit, headers: once(k2) })
    expect(first.status, first.text).toBe(200)
    const retried = await rest(tableUrl, { key: ctx.writeKey, json: commit, headers: once(k2) })
    expect(retried.text).toBe(first.text)
    const now = await rest(tableUrl, { key: ctx.readKey })
    expect(now.body['metadata-location']).toBe(first.body['metadata-location'])
    expect(now.body.metadata['metadata-log']).toHaveLength(1)

    // A final 4xx is replayed too; a malformed key is refused.
    const k3 = crypto.randomUUID()
    expectModel(await rest(`${tableUrl}/../nothing`, { key: ctx.writeKey, method: 'DELETE', headers: once(k3) }), 404, 'NoSuchTableException')
    expectModel(await rest(`${tableUrl}/../nothing`, { key: ctx.writeKey, method: 'DELETE', headers: once(k3) }), 404, 'NoSuchTableException')
    const k4 = crypto.randomUUID()
    expect((await rest(tableUrl, { key: ctx.writeKey, method: 'DELETE', headers: once(k4) })).status).toBe(204)
    expect((await rest(tableUrl, { key: ctx.writeKey, method: 'DELETE', headers: once(k4) })).status).toBe(204)
    expectModel(await rest(tableUrl, { key: ctx.writeKey, method: 'DELETE', headers: once('not-a-uuid') }), 400, 'BadRequestException')
  })
})
