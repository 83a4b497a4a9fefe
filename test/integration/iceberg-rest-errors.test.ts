// The Iceberg REST catalog's levels and bad input, case by case: a read key lists and loads and
// nothing else (403); malformed and impossible requests answer 400 (404, 405, 409, 422 where the
// spec says) in its ErrorModel, never a 5xx, and change nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ctx, deleteCatalogSinks, expectModel, py, rest, SCHEMA, setupCatalogProjects } from '../support/iceberg-rest.ts'
import type { call } from '../support/stack.ts'

beforeAll(setupCatalogProjects, 15 * 60_000)
afterAll(deleteCatalogSinks)

describe('levels and bad input', () => {
  it('lets a read key list and load, and nothing else (403)', async () => {
    const space = `${ctx.ns}_levels`
    await py({ token: ctx.writeKey }, 'create-namespace', space)
    await py({ token: ctx.writeKey }, 'create-table', `${space}.t`, '--schema', SCHEMA)
    const base = `/${ctx.prefix}/namespaces/${space}`
    expect((await rest(`/${ctx.prefix}/namespaces`, { key: ctx.readKey })).status).toBe(200)
    expect((await rest(base, { key: ctx.readKey })).status).toBe(200)
    expect((await rest(`${base}/tables`, { key: ctx.readKey })).status).toBe(200)
    expect((await rest(`${base}/tables/t`, { key: ctx.readKey })).status).toBe(200)
    expect((await rest(`${base}/tables/t`, { key: ctx.readKey, method: 'HEAD' })).status).toBe(204)
    expect((await rest(`${base}/tables/nothing`, { key: ctx.readKey, method: 'HEAD' })).status).toBe(404)
    expect((await rest(`${base}/tables/t/metrics`, { key: ctx.readKey, json: { 'report-type': 'scan-report' } })).status).toBe(204)
    for (const [path, init] of [
      [`/${ctx.prefix}/namespaces`, { json: { namespace: [`${space}_x`] } }],
      [base, { method: 'DELETE' }],
      [`${base}/properties`, { json: { updates: { a: 'b' } } }],
      [`${base}/tables`, { json: { name: 'u', schema: JSON.parse(SCHEMA) } }],
      [`${base}/tables/t`, { json: { requirements: [], updates: [] } }],
      [`${base}/tables/t`, { method: 'DELETE' }],
      [`/${ctx.prefix}/tables/rename`, { json: { source: { namespace: [space], name: 't' }, destination: { namespace: [space], name: 'u' } } }],
    ] as const) {
      expectModel(await rest(path, { key: ctx.readKey, ...init }), 403, 'ForbiddenException')
    }
    expect((await py({ token: ctx.readKey }, 'create-namespace', `${space}_py`)).error.type).toBe('ForbiddenError')
  })

  it('answers malformed and impossible requests 400 (404, 405, 409, 422 where the spec says), never 5xx', async () => {
    const space = `${ctx.ns}_bad`
    await py({ token: ctx.writeKey }, 'create-namespace', space)
    await py({ token: ctx.writeKey }, 'create-table', `${space}.t`, '--schema', SCHEMA)
    const base = `/${ctx.prefix}/namespaces/${space}`
    const key = ctx.writeKey
    let deep: unknown = 'long'
    for (let i = 0; i < 150; i++) deep = { type: 'list', 'element-id': i + 2, element: deep, 'element-required': true }
    const cases: Array<[string, Parameters<typeof call>[1], number, string]> = [
      [`/${ctx.prefix}/namespaces`, { body: '{"namespace": [', headers: { 'content-type': 'application/json' }, method: 'POST' }, 400, 'BadRequestException'],
      [`/${ctx.prefix}/namespaces`, { json: [1, 2] }, 400, 'BadRequestException'],
      [`/${ctx.prefix}/namespaces`, { json: { namespace: ['a.b'] } }, 400, 'BadRequestException'],
      [`/${ctx.prefix}/namespaces`, { json: { namespace: [] } }, 400, 'BadRequestException'],
      [`/${ctx.prefix}/namespaces`, { json: { namespace: ['x'.repeat(300)] } }, 400, 'BadRequestException'],
      [`/${ctx.prefix}/namespaces`, { json: { namespace: [space] } }, 409, 'AlreadyExistsException'],
      [`/${ctx.prefix}/namespaces/nothing_here`, {}, 404, 'NoSuchNamespaceException'],
      [`/${ctx.prefix}/namespaces?parent=nothing_here`, {}, 404, 'NoSuchNamespaceException'],
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
      [`${base}/tables`, { json: { name: 'u', schema: { fields: [{ id: 1, name: 'x', type: deep, required: true }] } } }, 400, 'BadRequestException'],
      [`/${ctx.prefix}/namespaces/nothing_here/tables`, { json: { name: 'u', schema: JSON.parse(SCHEMA) } }, 404, 'NoSuchNamespaceException'],
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
        `/${ctx.prefix}/tables/rename`,
        { json: { source: { namespace: [space], name: 'nothing' }, destination: { namespace: [space], name: 'u' } } },
        404,
        'NoSuchTableException',
      ],
      [
        `/${ctx.prefix}/tables/rename`,
        { json: { source: { namespace: [space], name: 't' }, destination: { namespace: ['nothing_here'], name: 'u' } } },
        404,
        'NoSuchNamespaceException',
      ],
      [
        `/${ctx.prefix}/tables/rename`,
        { json: { source: { namespace: [space], name: 't' }, destination: { namespace: [space], name: 't' } } },
        409,
        'AlreadyExistsException',
      ],
      [`/${ctx.prefix}/nothing`, {}, 404, 'NotFoundException'],
      [`/${ctx.prefix}/tables/rename`, {}, 405, 'MethodNotAllowedException'],
      [`/${ctx.prefix}/namespaces/a%00b`, {}, 400, 'BadRequestException'],
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
