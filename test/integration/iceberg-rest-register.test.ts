// The Iceberg REST catalog's register route (POST …/namespaces/{namespace}/register): a table dropped
// without purge comes back at its metadata file, as PyIceberg's register_table asks, every row and
// snapshot as it was; 409 when the name is taken, overwrite points the table at the file (never a
// sink's table). The file and the table location it names must lie in the warehouse; a file that is
// missing or not Iceberg table metadata, a read key, a namespace that does not exist are refused in
// the ErrorModel, and nothing is registered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseS3Location } from '../../iceberg/io/file-io.ts'
import { S3Client } from '../../iceberg/io/s3.ts'
import { append, ctx, deleteCatalogSinks, expectModel, py, rest, SCHEMA, scan, setupCatalogProjects } from '../support/iceberg-rest.ts'
import { newSink } from '../support/sinks.ts'
import { stack } from '../support/stack.ts'

beforeAll(setupCatalogProjects, 15 * 60_000)
afterAll(deleteCatalogSinks)

const space = () => `${ctx.ns}_reg`
const tables = () => `/${ctx.prefix}/namespaces/${space()}`
const register = (json: unknown, key = ctx.writeKey) => rest(`${tables()}/register`, { key, json })
const metadataLocation = async (t: string) => (await rest(`${tables()}/tables/${t}`, { key: ctx.readKey })).body['metadata-location'] as string
const exists = async (t: string) => (await rest(`${tables()}/tables/${t}`, { key: ctx.readKey, method: 'HEAD' })).status === 204

/** A file in the store beside the table's metadata (the test's own S3 keys, not the catalog's). */
async function put(location: string, text: string): Promise<void> {
  const { bucket, key } = parseS3Location(location)
  await new S3Client({ ...stack().s3, bucket }).put(key, text)
}

async function read(location: string): Promise<string> {
  const { bucket, key } = parseS3Location(location)
  const got = await new S3Client({ ...stack().s3, bucket }).get(key)
  return new TextDecoder().decode(got?.body)
}

describe('register a table', () => {
  let t: { location: string; metadata: string; snapshot: bigint }

  beforeAll(async () => {
    await py({ token: ctx.writeKey }, 'create-namespace', space())
    const created = await py({ token: ctx.writeKey }, 'create-table', `${space()}.t`, '--schema', SCHEMA)
    expect(created.error).toBeUndefined()
    await append(ctx.writeKey, `${space()}.t`, [
      { x: 9007199254740993n, who: 'a' },
      { x: -1n, who: 'b' },
    ])
    const scanned = await scan(ctx.readKey, `${space()}.t`)
    t = { location: created.result.location, metadata: await metadataLocation('t'), snapshot: scanned.current_snapshot_id }
  })

  it('brings a dropped table back at its metadata file (PyIceberg’s register_table); 409 when the name is taken', async () => {
    const config = await rest(`/config?warehouse=${ctx.project.warehouse}`, { key: ctx.readKey })
    expect(config.body.endpoints).toContain('POST /v1/{prefix}/namespaces/{namespace}/register')
    expect((await rest(`${tables()}/tables/t`, { key: ctx.writeKey, method: 'DELETE' })).status).toBe(204)
    expect(await exists('t')).toBe(false)

    const registered = await py({ token: ctx.writeKey }, 'register', `${space()}.t`, t.metadata)
    expect(registered.error).toBeUndefined()
    expect(registered.result.metadata_location).toBe(t.metadata)
    expect(registered.result.snapshot_id).toBe(t.snapshot)
    const scanned = await scan(ctx.readKey, `${space()}.t`)
    expect(scanned.current_snapshot_id).toBe(t.snapshot)
    expect(scanned.rows.map((r: any) => [r.x, r.who])).toEqual([
      [-1n, 'b'],
      [9007199254740993n, 'a'],
    ])

    // Under another name too: the row names the file, nothing is copied.
    const again = await register({ name: 'u', 'metadata-location': t.metadata })
    expect(again.status, again.text).toBe(200)
    expect(again.body['metadata-location']).toBe(t.metadata)
    expect(again.body.config).toBeDefined()

    expect((await py({ token: ctx.writeKey }, 'register', `${space()}.t`, t.metadata)).error.type).toBe('TableAlreadyExistsError')
    expectModel(await register({ name: 't', 'metadata-location': t.metadata }), 409, 'AlreadyExistsException')
  })

  it('overwrites a table with overwrite: true, pointing it at the file (its later commits left behind)', async () => {
    await append(ctx.writeKey, `${space()}.u`, [{ x: 7n, who: 'later' }])
    expect(await metadataLocation('u')).not.toBe(t.metadata)
    const over = await register({ name: 'u', 'metadata-location': t.metadata, overwrite: true })
    expect(over.status, over.text).toBe(200)
    expect(await metadataLocation('u')).toBe(t.metadata)
    expect((await scan(ctx.readKey, `${space()}.u`)).rows.map((r: any) => r.x)).toEqual([-1n, 9007199254740993n])
    // A new name with overwrite is a plain register.
    expect((await register({ name: 'v', 'metadata-location': t.metadata, overwrite: true })).status).toBe(200)
  })

  it('never overwrites a sink’s table', async () => {
    const sink = await newSink(ctx.project.key, {
      tableSpec: { warehouse: ctx.project.warehouse, columns: [{ name: 'x', type: 'long', required: true }] },
      sink: { warehouse: ctx.project.warehouse },
    })
    const [namespace, name] = sink.table.split('.')
    const at = `/${ctx.prefix}/namespaces/${namespace}/register`
    expectModel(await rest(at, { key: ctx.writeKey, json: { name, 'metadata-location': t.metadata } }), 409, 'AlreadyExistsException')
    expectModel(await rest(at, { key: ctx.writeKey, json: { name, 'metadata-location': t.metadata, overwrite: true } }), 409, 'CommitFailedException')
    const table = await rest(`/${ctx.prefix}/namespaces/${namespace}/tables/${name}`, { key: ctx.readKey })
    expect(table.body['metadata-location']).not.toBe(t.metadata)
  })

  it('refuses a read key, a missing namespace, and files outside the warehouse, missing or not table metadata', async () => {
    const warehouse = t.location.slice(0, -`/${space()}/t`.length)
    const text = await read(t.metadata)
    const junk = (name: string) => `${t.location}/metadata/00000-${name}.metadata.json`
    await put(junk('not-json'), 'not json at all')
    await put(junk('not-metadata'), '{"format-version": 2, "table-uuid": "x"}')
    await put(junk('v1'), text.replace(/"format-version"\s*:\s*2/, '"format-version": 1'))
    // The same metadata, its table location (and every file in it) in another warehouse.
    await put(junk('elsewhere'), text.split(t.location).join('s3://elsewhere/t'))

    expectModel(await register({ name: 'r', 'metadata-location': t.metadata }, ctx.readKey), 403, 'ForbiddenException')
    // Another project's key: this warehouse is not found; no key at all: 401.
    expectModel(await register({ name: 'r', 'metadata-location': t.metadata }, ctx.other.key), 404, 'NotFoundException')
    expectModel(await register({ name: 'r', 'metadata-location': t.metadata }, ''), 401, 'NotAuthorizedException')
    expectModel(
      await rest(`/${ctx.prefix}/namespaces/${space()}_nothing/register`, { key: ctx.writeKey, json: { name: 'r', 'metadata-location': t.metadata } }),
      404,
      'NoSuchNamespaceException',
    )
    for (const location of [
      's3://elsewhere/ns/t/metadata/00000-x.metadata.json',
      `${warehouse}-sibling/ns/t/metadata/00000-x.metadata.json`,
      `${warehouse}/../elsewhere/t/metadata/00000-x.metadata.json`,
      `file:/tmp/t/metadata/00000-x.metadata.json`,
      `${t.location}/data/x.parquet`,
      `${t.location}/metadata/99999-missing.metadata.json`,
      junk('not-json'),
      junk('not-metadata'),
      junk('v1'),
      junk('elsewhere'),
    ]) {
      const refused = await register({ name: 'r', 'metadata-location': location })
      expectModel(refused, 400, 'BadRequestException')
    }
    for (const body of [
      { name: 'r' },
      { 'metadata-location': t.metadata },
      { name: 'r', 'metadata-location': t.metadata, overwrite: 'yes' },
      { name: '', 'metadata-location': t.metadata },
    ]) {
      expectModel(await register(body), 400, 'BadRequestException')
    }
    expect(await exists('r')).toBe(false)
  })
})
