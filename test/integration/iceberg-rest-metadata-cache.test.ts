// The REST catalog keeps metadata files it read or wrote in memory (edge/iceberg-rest/recent-metadata.ts),
// by store and location: a load reads the table's row every time, so a commit made elsewhere (another
// edge, another process) is what the next load answers, never the file this edge held before.
//
// A load answers the file's own text (kept beside its parse), so what another engine wrote goes out
// byte for byte: PyIceberg's SqlCatalog on the same rows, and a file with fields lhbox does not know.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { parseS3Location } from '../../iceberg/io/file-io.ts'
import { S3Client } from '../../iceberg/io/s3.ts'
import { stringifyLossless } from '../../iceberg/spec/json.ts'
import { append, ctx, deleteCatalogSinks, duck, py, rest, SCHEMA, scan, setupCatalogProjects } from '../support/iceberg-rest.ts'
import { runPython, sqlCatalogArgs, toExact } from '../support/python.ts'
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

/** The other edge on the same Postgres and store: Node beside workerd, workerd beside Node. */
const otherEdge = () => (edgeHost() === 'node' ? inject('stack').apiUrl : stack().nodeApiUrl)

const store = (location: string) => {
  const { bucket, key } = parseS3Location(location)
  return { client: new S3Client({ ...stack().s3, bucket }), key }
}

async function readFile(location: string): Promise<string> {
  const { client, key } = store(location)
  return new TextDecoder().decode((await client.get(key))?.body)
}

describe('metadata answered as stored', () => {
  /** A load's answer as text, which must carry `file` as its metadata byte for byte. */
  const loadsAsStored = async (tableUrl: string, base?: string) => {
    const a = await rest(tableUrl, { key: ctx.readKey, ...(base ? { base } : {}) })
    expect(a.status, a.text).toBe(200)
    const location = a.body['metadata-location'] as string
    const file = await readFile(location)
    expect(a.text.startsWith(`{"metadata-location":${JSON.stringify(location)},"metadata":${file},"config":{`), a.text.slice(0, 300)).toBe(true)
    return { location, file }
  }

  it('answers a file PyIceberg’s SqlCatalog wrote, and one with fields lhbox does not know, byte for byte; clients read both', async () => {
    const space = `${ctx.ns}_asis`
    await py({ token: ctx.writeKey }, 'create-namespace', space)
    await py({ token: ctx.writeKey }, 'create-table', `${space}.p`, '--schema', SCHEMA)
    await append(ctx.writeKey, `${space}.p`, [{ x: 9007199254740993n, who: 'rest' }])
    // PyIceberg's own SqlCatalog on the warehouse's rows: the next metadata file is PyIceberg's, not ours.
    const sql = sqlCatalogArgs({ databaseUrl: stack().databaseUrl, catalogName: ctx.prefix, s3: stack().s3 })
    const appended = toExact(await runPython('pyiceberg_append.py', [...sql, `${space}.p`], undefined, { input: stringifyLossless([{ x: 2, who: 'sql' }]) }))
    const p = `/${ctx.prefix}/namespaces/${space}/tables/p`
    // Read here (the file's first read on this edge), again (kept), and through the other edge.
    const first = await loadsAsStored(p)
    expect(first.location).toBe(appended.metadata_location)
    expect((await loadsAsStored(p)).location).toBe(first.location)
    expect((await loadsAsStored(p, otherEdge())).location).toBe(first.location)

    // Another engine's file: a field of its own (a number written 1.50), pretty-printed, an escaped
    // character; registered beside the table, it is what a load answers, and what clients read.
    const other = first.file.replace(/^\{/, '{\n  "x-other-engine": {"n": 1.50, "note": "caf\\u00e9"},\n  ').replace(/,"(snapshots|refs)":/g, ',\n  "$1" : ')
    const otherLocation = first.location.replace(/\/[^/]+$/, `/00099-${crypto.randomUUID()}.metadata.json`)
    const { client, key } = store(otherLocation)
    await client.put(key, other)
    const registered = await rest(`/${ctx.prefix}/namespaces/${space}/register`, { key: ctx.writeKey, json: { name: 'q', 'metadata-location': otherLocation } })
    expect(registered.status, registered.text).toBe(200)
    expect(registered.text.startsWith(`{"metadata-location":${JSON.stringify(otherLocation)},"metadata":${other},`)).toBe(true)
    const q = `/${ctx.prefix}/namespaces/${space}/tables/q`
    for (const base of [undefined, otherEdge()]) expect((await loadsAsStored(q, base)).file).toBe(other)
    expect((await scan(ctx.readKey, `${space}.q`)).rows.map((r: any) => [r.x, r.who])).toEqual([
      [2n, 'sql'],
      [9007199254740993n, 'rest'],
    ])
    const viaDuck = await duck({ token: ctx.readKey }, { query: `SELECT x, who FROM cat.${space}.q ORDER BY x` })
    expect(viaDuck.rows).toEqual([
      { x: 2n, who: 'sql' },
      { x: 9007199254740993n, who: 'rest' },
    ])

    // A commit through the other edge is answered here at once, as the file that edge wrote.
    const commit = await rest(q, {
      key: ctx.writeKey,
      base: otherEdge(),
      json: { requirements: [], updates: [{ action: 'set-properties', updates: { step: 'other' } }] },
    })
    expect(commit.status, commit.text).toBe(200)
    const after = await loadsAsStored(q)
    expect(after.location).toBe(commit.body['metadata-location'])
    expect(after.location).not.toBe(otherLocation)
  })
})
