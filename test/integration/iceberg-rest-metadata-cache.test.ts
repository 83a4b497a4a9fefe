// The REST catalog keeps metadata files it read or wrote in memory (edge/iceberg-rest/recent-metadata.ts),
// by store and location: a load reads the table's row every time, so a commit made elsewhere (another
// edge, another process) is what the next load answers, never the file this edge held before.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { ctx, deleteCatalogSinks, py, rest, SCHEMA, setupCatalogProjects } from '../support/iceberg-rest.ts'
import { edgeHost, stack } from '../support/stack.ts'

beforeAll(setupCatalogProjects, 15 * 60_000)
afterAll(deleteCatalogSinks)

describe('metadata kept across requests', () => {
  it('answers a commit made through the other edge at once, and its own commits too', async () => {
    const space = `${ctx.ns}_cache`
    await py({ token: ctx.writeKey }, 'create-namespace', space)
    await py({ token: ctx.writeKey }, 'create-table', `${space}.t`, '--schema', SCHEMA)
    const tableUrl = `/${ctx.prefix}/namespaces/${space}/tables/t`
    // The other edge on the same Postgres and store: Node beside workerd, workerd beside Node.
    const other = edgeHost() === 'node' ? inject('stack').apiUrl : stack().nodeApiUrl
    const load = async (base?: string) => {
      const a = await rest(tableUrl, { key: ctx.readKey, ...(base ? { base } : {}) })
      expect(a.status, a.text).toBe(200)
      return a.body as { 'metadata-location': string; metadata: { properties: Record<string, string> } }
    }
    const commit = async (step: string, base?: string) => {
      const a = await rest(tableUrl, {
        key: ctx.writeKey,
        json: { requirements: [], updates: [{ action: 'set-properties', updates: { step } }] },
        ...(base ? { base } : {}),
      })
      expect(a.status, a.text).toBe(200)
      return a.body['metadata-location'] as string
    }
    let seen = await load()
    for (let i = 0; i < 3; i++) {
      // Held here (loaded twice), then moved by the other edge: the next load here answers the new file.
      expect((await load())['metadata-location']).toBe(seen['metadata-location'])
      const elsewhere = await commit(`other ${i}`, other)
      seen = await load()
      expect({ location: seen['metadata-location'], step: seen.metadata.properties.step }).toEqual({ location: elsewhere, step: `other ${i}` })
      // And a commit here is what the other edge answers.
      const here = await commit(`here ${i}`)
      const there = await load(other)
      expect({ location: there['metadata-location'], step: there.metadata.properties.step }).toEqual({ location: here, step: `here ${i}` })
      seen = await load()
      expect(seen['metadata-location']).toBe(here)
    }
  })
})
