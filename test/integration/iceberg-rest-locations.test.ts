// The REST catalog's location rule as an attack (SECURITY.md), case by case: a write key of one project
// tries to reach another project's table or the intake through create's `location`, commit's
// `set-location` and `register` (the metadata file, and the table location a file of its own names).
// Each is 400 BadRequestException and changes nothing. Then the same from a warehouse holding a whole
// bucket (as every warehouse did before roots were unique): never into a root nested in it, never
// around one, never under _sink/, never into a table of another warehouse sharing its root.
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseS3Location } from '../../iceberg/io/file-io.ts'
import { S3Client } from '../../iceberg/io/s3.ts'
import { ctx, deleteCatalogSinks, expectModel, rest, SCHEMA, setupCatalogProjects } from '../support/iceberg-rest.ts'
import { uid } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

beforeAll(setupCatalogProjects, 15 * 60_000)
afterAll(deleteCatalogSinks)

const schema = () => JSON.parse(SCHEMA)
const ns = (prefix: string, key: string, name: string) => rest(`/${prefix}/namespaces`, { key, json: { namespace: [name] } })
const createTable = (prefix: string, key: string, space: string, json: Record<string, unknown>) =>
  rest(`/${prefix}/namespaces/${space}/tables`, { key, json: { schema: schema(), ...json } })

async function read(location: string): Promise<string> {
  const { bucket, key } = parseS3Location(location)
  return new TextDecoder().decode((await new S3Client({ ...stack().s3, bucket }).get(key))?.body)
}

describe('another project’s files through the REST catalog', () => {
  it('refuses create, set-location and register aimed at another project’s table or at _sink/ (400), and changes nothing', async () => {
    const victimPrefix = (await rest(`/config?warehouse=${ctx.other.warehouse}`, { key: ctx.other.key })).body.overrides.prefix
    expect((await ns(victimPrefix, ctx.other.key, 'v')).status).toBe(200)
    const victim = await createTable(victimPrefix, ctx.other.key, 'v', { name: 't' })
    expect(victim.status, victim.text).toBe(200)
    const victimLocation: string = victim.body.metadata.location
    const victimMetadata: string = victim.body['metadata-location']

    const space = `${ctx.ns}_loc`
    expect((await ns(ctx.prefix, ctx.writeKey, space)).status).toBe(200)
    const own = await createTable(ctx.prefix, ctx.writeKey, space, { name: 'own' })
    expect(own.status, own.text).toBe(200)
    const bucket = `s3://${stack().s3.bucket}`
    // The roots differ: s3://<bucket>/wh/<warehouse id> each.
    expect(own.body.metadata.location.startsWith(`${bucket}/wh/${ctx.prefix}/`)).toBe(true)
    expect(victimLocation.startsWith(`${bucket}/wh/${victimPrefix}/`)).toBe(true)

    for (const location of [victimLocation, `${victimLocation}/sub`, `${bucket}/wh/${victimPrefix}`, `${bucket}/wh`, `${bucket}/_sink/x`, `${bucket}/_sink`]) {
      expectModel(await createTable(ctx.prefix, ctx.writeKey, space, { name: 'stolen', location }), 400, 'BadRequestException')
      expectModel(await createTable(ctx.prefix, ctx.writeKey, space, { name: 'stolen', location, 'stage-create': true }), 400, 'BadRequestException')
      const moved = await rest(`/${ctx.prefix}/namespaces/${space}/tables/own`, {
        key: ctx.writeKey,
        json: { requirements: [], updates: [{ action: 'set-location', location }] },
      })
      expectModel(moved, 400, 'BadRequestException')
    }
    // The victim's metadata file, and a file of the attacker's own root that names the victim's table location.
    const forged = `${own.body.metadata.location}/metadata/00000-forged.metadata.json`
    const text = await read(own.body['metadata-location'])
    const { bucket: b, key } = parseS3Location(forged)
    await new S3Client({ ...stack().s3, bucket: b }).put(key, text.split(own.body.metadata.location).join(victimLocation))
    for (const metadataLocation of [victimMetadata, forged]) {
      expectModel(
        await rest(`/${ctx.prefix}/namespaces/${space}/register`, { key: ctx.writeKey, json: { name: 'stolen', 'metadata-location': metadataLocation } }),
        400,
        'BadRequestException',
      )
    }

    expect((await rest(`/${ctx.prefix}/namespaces/${space}/tables/stolen`, { key: ctx.readKey, method: 'HEAD' })).status).toBe(404)
    const ownAfter = await rest(`/${ctx.prefix}/namespaces/${space}/tables/own`, { key: ctx.readKey })
    expect(ownAfter.body['metadata-location']).toBe(own.body['metadata-location'])
    const victimAfter = await rest(`/${victimPrefix}/namespaces/v/tables/t`, { key: ctx.other.key })
    expect(victimAfter.body['metadata-location']).toBe(victimMetadata)
  })

  it('keeps a warehouse holding a whole bucket out of nested roots, _sink/ and the tables of a warehouse sharing its root', async () => {
    // A bucket of the test's own: only the catalog's rows are written (stage-create and refusals touch no object).
    const bucketName = `legacy-${uid()}`
    const bucket = `s3://${bucketName}`
    const whole = await call('/v1/warehouses', { key: ctx.project.key, json: { name: `whole_${uid()}`, bucket: bucketName, prefix: '' } })
    expect(whole.status, whole.text).toBe(201)
    const nested = await call('/v1/warehouses', { key: ctx.other.key, json: { name: `nested_${uid()}`, bucket: bucketName } })
    expect(nested.status, nested.text).toBe(201)
    const nestedRoot = `${bucket}/${nested.body.prefix}`
    // A warehouse of another project sharing the bucket root, with a table, as an edge made them before
    // roots were unique (the edge now refuses that root: it is written straight into Postgres).
    const sharing = `wh_${uid().replace(/[^0-9a-z]/g, '')}`
    const db = new pg.Client({ connectionString: stack().databaseUrl })
    await db.connect()
    try {
      const { rows } = await db.query('select project_id from warehouses where id = $1', [nested.body.id])
      await db.query(
        `insert into warehouses (id, project_id, name, catalog, bucket, endpoint, region, prefix) values ($1, $2, $3, '{"type":"sql"}'::jsonb, $4, $5, $6, '')`,
        [sharing, rows[0].project_id, `sharing_${uid()}`, bucketName, stack().s3.endpoint, stack().s3.region],
      )
      await db.query(
        `insert into iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, iceberg_type) values ($1, 'garden', 'events', $2, 'TABLE')`,
        [sharing, `${bucket}/garden/events/metadata/00001-x.metadata.json`],
      )
    } finally {
      await db.end()
    }

    const prefix = whole.body.id
    for (const space of ['ns', 'garden']) expect((await ns(prefix, ctx.writeKey, space)).status).toBe(200)
    const stage = (space: string, json: Record<string, unknown>) => createTable(prefix, ctx.writeKey, space, { name: 't', 'stage-create': true, ...json })
    // Its own folders are its own.
    const fine = await stage('ns', { location: `${bucket}/ns/t` })
    expect(fine.status, fine.text).toBe(200)
    expect((await stage('ns', {})).status).toBe(200)
    for (const location of [
      `${nestedRoot}/ns/t`,
      nestedRoot,
      `${bucket}/wh`,
      `${bucket}/_sink/x`,
      `${bucket}/_sink`,
      `${bucket}/garden/events`,
      `${bucket}/garden/events/sub`,
      `${bucket}/garden`,
    ]) {
      expectModel(await stage('ns', { location }), 400, 'BadRequestException')
    }
    // Its default location would be the sharing warehouse's table folder.
    expectModel(await stage('garden', { name: 'events' }), 400, 'BadRequestException')
    for (const metadataLocation of [
      `${nestedRoot}/ns/t/metadata/00000-x.metadata.json`,
      `${bucket}/garden/events/metadata/00001-x.metadata.json`,
      `${bucket}/_sink/s/00000-x.metadata.json`,
    ]) {
      expectModel(
        await rest(`/${prefix}/namespaces/ns/register`, { key: ctx.writeKey, json: { name: 'r', 'metadata-location': metadataLocation } }),
        400,
        'BadRequestException',
      )
    }
  })
})
