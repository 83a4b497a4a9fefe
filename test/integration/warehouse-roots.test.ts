// Every warehouse has a root of its own (edge/warehouse-roots.ts): left out, the prefix is wh/<id>;
// a root equal to, inside or around another warehouse's (any project's) is 409
// warehouse_location_taken, decided one create at a time under a lock on the bucket; _sink and wh
// are no prefix a create may give (400). A warehouse holding a whole bucket (prefix '', as every
// warehouse had before) is served still, and only default roots are made inside it.
import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { newProject, uid } from '../support/sinks.ts'
import { call, expectError, stack } from '../support/stack.ts'

const create = (key: string, json: Record<string, unknown>) => call('/v1/warehouses', { key, json: { name: `w_${uid()}`, ...json } })

describe('warehouse roots', () => {
  it('gives each new warehouse wh/<its id> by default: two projects in one bucket never share a root', async () => {
    const [a, b] = [await newProject(), await newProject()]
    const [wa] = (await call('/v1/warehouses', { key: a.key })).body.warehouses
    const [wb] = (await call('/v1/warehouses', { key: b.key })).body.warehouses
    expect(wa.bucket).toBe(stack().s3.bucket)
    expect(wb.bucket).toBe(wa.bucket)
    expect(wa.prefix).toBe(`wh/${wa.id}`)
    expect(wb.prefix).toBe(`wh/${wb.id}`)
  })

  it('refuses a root equal to, inside or around another project’s (409), and takes a sibling', async () => {
    const [a, b] = [await newProject(), await newProject()]
    const base = `roots-${uid()}`
    const made = await create(a.key, { prefix: `/${base}/a/` })
    expect(made.status, made.text).toBe(201)
    expect(made.body.prefix).toBe(`${base}/a`)
    for (const prefix of [`${base}/a`, `${base}/a/`, base, `${base}/a/b`]) {
      const refused = await create(b.key, { prefix })
      expectError(refused, 409, 'warehouse_location_taken')
      // Another project's warehouse is not named.
      expect(refused.body.error.message).not.toContain(made.body.name)
    }
    // The project's own warehouse is refused too (one sweep would delete the other's files), by name.
    const own = await create(a.key, { prefix: `${base}/a/own` })
    expectError(own, 409, 'warehouse_location_taken')
    expect(own.body.error.message).toContain(made.body.name)
    expect((await create(b.key, { prefix: `${base}/ab` })).status).toBe(201)
    expect((await create(b.key, { prefix: `${base}/a-sibling` })).status).toBe(201)
    // The whole bucket holds every other warehouse's root.
    expectError(await create(b.key, { prefix: '' }), 409, 'warehouse_location_taken')
  })

  it('refuses _sink, wh and malformed prefixes (400)', async () => {
    const { key } = await newProject()
    for (const prefix of ['_sink', '_sink/x', '/_sink/', 'wh', `wh/wh_${uid()}`, 'a/../b', '.', 'a//b', 'a b']) {
      expectError(await create(key, { prefix }), 400, 'invalid_request')
    }
  })

  it('makes one of several racing creates of a root, whatever the projects', async () => {
    const projects = await Promise.all([1, 2, 3, 4, 5].map(() => newProject()))
    const prefix = `race-${uid()}`
    const answers = await Promise.all(projects.map((p) => create(p.key, { prefix })))
    expect(answers.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409])
    // Roots each inside the last race the same way: the bucket's lock orders them.
    const nested = await Promise.all(projects.map((p, i) => create(p.key, { prefix: `${prefix}-n${'/x'.repeat(i)}` })))
    expect(nested.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409])
  })

  it('serves a warehouse holding a whole bucket, and makes only default roots inside it', async () => {
    const [legacy, other] = [await newProject(), await newProject()]
    const bucket = `roots-${uid()}`
    // The bucket's first warehouse may hold all of it (a tenant's own bucket, or a warehouse made before roots were unique).
    const whole = await create(legacy.key, { bucket, prefix: '' })
    expect(whole.status, whole.text).toBe(201)
    expect(whole.body.prefix).toBe('')
    expect((await call(`/v1/warehouses/${whole.body.name}`, { key: legacy.key })).status).toBe(200)
    const inside = await create(other.key, { bucket })
    expect(inside.status, inside.text).toBe(201)
    expect(inside.body.prefix).toBe(`wh/${inside.body.id}`)
    // A prefix of its choosing could be one of the whole-bucket warehouse's table folders.
    expectError(await create(other.key, { bucket, prefix: 'garden' }), 409, 'warehouse_location_taken')
    expectError(await create(other.key, { bucket, prefix: '' }), 409, 'warehouse_location_taken')
  })

  it('refuses a table of a whole-bucket warehouse at the folder of a table of another sharing its root (409 table_location_taken)', async () => {
    const [legacy, other] = [await newProject(), await newProject()]
    const bucket = `roots-${uid()}`
    const whole = await create(legacy.key, { bucket, prefix: '' })
    expect(whole.status, whole.text).toBe(201)
    // Another project's warehouse at the same root, with a table garden.events, as an edge made them
    // before roots were unique (the edge refuses that root now: it is written straight into Postgres).
    const sharing = `wh_${uid().replace(/[^0-9a-z]/g, '')}`
    const db = new pg.Client({ connectionString: stack().databaseUrl })
    await db.connect()
    try {
      const [main] = (await call('/v1/warehouses', { key: other.key })).body.warehouses
      const { rows } = await db.query('select project_id from warehouses where id = $1', [main.id])
      await db.query(
        `insert into warehouses (id, project_id, name, catalog, bucket, endpoint, region, prefix) values ($1, $2, $3, '{"type":"sql"}'::jsonb, $4, $5, $6, '')`,
        [sharing, rows[0].project_id, `sharing_${uid()}`, bucket, stack().s3.endpoint, stack().s3.region],
      )
      await db.query(
        `insert into iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, iceberg_type) values ($1, 'garden', 'events', $2, 'TABLE')`,
        [sharing, `s3://${bucket}/garden/events/metadata/00001-x.metadata.json`],
      )
    } finally {
      await db.end()
    }
    const columns = [{ name: 'x', type: 'long' }]
    expectError(
      await call('/v1/tables', { key: legacy.key, json: { warehouse: whole.body.name, table: 'garden.events', columns } }),
      409,
      'table_location_taken',
    )
    // Through a sink's table create too.
    const sink = await call('/v1/sinks', { key: legacy.key, json: { warehouse: whole.body.name, table: 'garden.events', name: `s_${uid()}`, columns } })
    expectError(sink, 409, 'table_location_taken')
  })
})
