// POST /v1/warehouses (admin), PATCH /v1/warehouses/{id|name} (admin: a REST catalog's secret, the read-only store key pair), GET /v1/warehouses (read):
// where a project's tables live; POST /v1/warehouses/{id|name}/measure (write): a storage figure now.
import * as v from 'valibot'
import { Hono, type Context } from 'hono'
import { and, asc, eq, or, sql } from 'drizzle-orm'
import { warehouses } from '../../db/schema.ts'
import { requireKey } from '../auth.ts'
import { openCatalogSecret, sealCatalogSecret, sealStoreReadKey, type WarehouseRow } from '../catalogs.ts'
import type { AppEnv } from '../env.ts'
import { ApiError } from '../errors.ts'
import { randomHex } from '../keys.ts'
import { jsonBody, text } from '../validate.ts'
import { storageView } from '../storage.ts'
import { catalogAuth, type CatalogSecret } from '../../db/catalog-secret.ts'
import { checkWarehouseUrl, warehouseEgress } from '../warehouse-egress.ts'
import { claimRoot, defaultPrefix, normalPrefix, prefixProblem } from '../warehouse-roots.ts'

export const WAREHOUSE_NAME = v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'a name is 1–63 chars of a-z 0-9 _ -'))

/** The catalog and the store are reached over HTTP(S): any other URL (a:b, file:…) could never answer. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is the character refused here (Postgres cannot hold it)
const HttpUrl = v.pipe(v.string(), v.regex(/^https?:\/\/[^\u0000]+$/, 'give an http:// or https:// URL'), v.url())

const SqlCatalog = v.object({ type: v.literal('sql') })
const Secret = v.pipe(text(), v.minLength(1), v.maxLength(4096))
const RestCatalog = v.object({
  type: v.literal('rest'),
  uri: HttpUrl,
  warehouse: v.optional(text()),
  token: v.optional(Secret),
  credential: v.optional(Secret),
  scope: v.optional(text()),
})

/** A read-only key pair of the store, which the Iceberg REST catalog vends to read keys; sealed, never answered back. */
const StoreReadKey = v.object({
  access_key_id: v.pipe(text(), v.minLength(1), v.maxLength(256)),
  secret_access_key: v.pipe(text(), v.minLength(1), v.maxLength(1024)),
})

export const CreateWarehouse = v.object({
  name: WAREHOUSE_NAME,
  catalog: v.optional(v.variant('type', [SqlCatalog, RestCatalog]), { type: 'sql' }),
  bucket: v.optional(v.pipe(text(), v.minLength(3), v.maxLength(63))),
  endpoint: v.optional(HttpUrl),
  region: v.optional(v.pipe(text(), v.minLength(1))),
  // Key segments joined by /, none a . or .. (a segment never starts with a dot); left out: wh/<warehouse id>, a root of its own (warehouse-roots.ts).
  prefix: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(200),
      v.regex(
        /^\/?([A-Za-z0-9_=+-][A-Za-z0-9._=+-]*(\/[A-Za-z0-9_=+-][A-Za-z0-9._=+-]*)*)?\/?$/,
        'a prefix is key segments of A-Z a-z 0-9 . _ = + - (none starting with a dot) joined by /',
      ),
      v.description(
        'The warehouse’s root in the bucket, s3://<bucket>/<prefix>. Left out: wh/<warehouse id>, a root of its own. Never under _sink or wh; a root equal to, inside or around another warehouse’s is 409 warehouse_location_taken; "" holds the whole bucket (only a bucket no other warehouse uses)',
      ),
    ),
  ),
  maintenance: v.optional(v.picklist(['roller', 'off']), 'roller'),
  store_read_key: v.optional(StoreReadKey),
})

/** A REST catalog's credentials, replaced (null removes one): a token rotated, a wrong one corrected; the read-only store key pair set or removed (null). */
export const UpdateWarehouse = v.object({
  catalog: v.optional(v.object({ token: v.optional(v.nullable(Secret)), credential: v.optional(v.nullable(Secret)) })),
  store_read_key: v.optional(v.nullable(StoreReadKey)),
})

function warehouseView(w: WarehouseRow) {
  const { token: _t, credential: _c, auth: _a, ...catalog } = w.catalog as Record<string, unknown>
  return {
    id: w.id,
    name: w.name,
    // `auth` is kept beside the sealed secret (catalogAuth), or read off an older edge's clear one.
    catalog: catalog.type === 'rest' ? { ...catalog, auth: (w.catalog as { auth?: string }).auth ?? catalogAuth(w.catalog as object) } : catalog,
    bucket: w.bucket,
    endpoint: w.endpoint,
    region: w.region,
    prefix: w.prefix,
    maintenance: w.maintenance,
    // Only whether there is one: the pair is sealed (db/sealed.ts) and never answered.
    store_read_key: w.storeReadKey !== null,
    storage: storageView(w),
    created_at: w.createdAt.toISOString(),
  }
}

/** A warehouse of the caller's project by id or name; 404 warehouse_not_found otherwise. */
async function ownWarehouse(c: Context<AppEnv>, ref: string): Promise<WarehouseRow> {
  const db = await c.var.db()
  const [w] = await db
    .select()
    .from(warehouses)
    .where(and(eq(warehouses.projectId, c.var.principal.projectId), or(eq(warehouses.id, ref), eq(warehouses.name, ref))))
  if (!w) throw new ApiError(404, 'warehouse_not_found', `no warehouse ${ref} in this project`)
  return w
}

export const warehouseRoutes = new Hono<AppEnv>()
  .post('/v1/warehouses', requireKey('admin'), async (c) => {
    const body = await jsonBody(c, CreateWarehouse)
    const id = `wh_${randomHex(8)}`
    const problem = body.prefix === undefined ? null : prefixProblem(body.prefix)
    if (problem) throw new ApiError(400, 'invalid_request', problem, { prefix: body.prefix })
    const egress = warehouseEgress(c.env)
    if (body.endpoint) checkWarehouseUrl(egress, 'endpoint', body.endpoint)
    if (body.catalog.type === 'rest') checkWarehouseUrl(egress, 'catalog.uri', body.catalog.uri)
    const bucket = body.bucket ?? c.env.S3_BUCKET
    const prefix = body.prefix === undefined ? defaultPrefix(id) : normalPrefix(body.prefix)
    // The catalog's secrets are sealed apart from it; `catalog` keeps only how it signs in.
    let catalog: Record<string, unknown> = body.catalog
    let catalogSecret: string | null = null
    if (body.catalog.type === 'rest') {
      const { token, credential, ...rest } = body.catalog
      catalog = { ...rest, auth: catalogAuth({ token, credential }) }
      catalogSecret = await sealCatalogSecret(c.env, id, { token, credential })
    }
    const storeReadKey = body.store_read_key ? await sealStoreReadKey(c.env, id, body.store_read_key) : null
    const db = await c.var.db()
    const projectId = c.var.principal.projectId
    const [row] = await claimRoot(db, { id, projectId, bucket, prefix }, () =>
      db
        .insert(warehouses)
        .values({
          id,
          projectId,
          name: body.name,
          catalog,
          catalogSecret,
          storeReadKey,
          bucket,
          endpoint: body.endpoint ?? c.env.S3_ENDPOINT,
          region: body.region ?? c.env.S3_REGION,
          prefix,
          maintenance: body.maintenance,
        })
        .onConflictDoNothing()
        .returning(),
    )
    if (!row) throw new ApiError(409, 'warehouse_exists', `a warehouse named ${body.name} exists in this project`)
    return c.json(warehouseView(row), 201)
  })
  .patch('/v1/warehouses/:warehouse', requireKey('admin'), async (c) => {
    const body = await jsonBody(c, UpdateWarehouse)
    const w = await ownWarehouse(c, c.req.param('warehouse'))
    const set: Partial<WarehouseRow> = {}
    if (body.catalog) {
      const { token: _t, credential: _c, auth: _a, ...catalog } = w.catalog as Record<string, unknown>
      if (catalog.type !== 'rest') throw new ApiError(409, 'not_a_rest_catalog', `${w.name} uses the SQL catalog, which takes no token or credential`)
      // Both given: the old secret need not open (its key may be gone); one given: the other is kept.
      const both = body.catalog.token !== undefined && body.catalog.credential !== undefined
      const old: CatalogSecret = both ? {} : await openCatalogSecret(c.env, w)
      const next: CatalogSecret = {
        token: body.catalog.token === undefined ? old.token : (body.catalog.token ?? undefined),
        credential: body.catalog.credential === undefined ? old.credential : (body.catalog.credential ?? undefined),
      }
      set.catalog = { ...catalog, auth: catalogAuth(next) }
      set.catalogSecret = await sealCatalogSecret(c.env, w.id, next)
    }
    if (body.store_read_key !== undefined) set.storeReadKey = body.store_read_key && (await sealStoreReadKey(c.env, w.id, body.store_read_key))
    if (Object.keys(set).length === 0) return c.json(warehouseView(w))
    const db = await c.var.db()
    const [row] = await db.update(warehouses).set(set).where(eq(warehouses.id, w.id)).returning()
    return c.json(warehouseView(row as WarehouseRow))
  })
  .post('/v1/warehouses/:warehouse/measure', requireKey('write'), async (c) => {
    const w = await ownWarehouse(c, c.req.param('warehouse'))
    const db = await c.var.db()
    const [row] = await db
      .update(warehouses)
      .set({ measureRequestedAt: sql`coalesce(${warehouses.measureRequestedAt}, now())` })
      .where(eq(warehouses.id, w.id))
      .returning()
    return c.json(warehouseView(row as WarehouseRow), 202)
  })
  .get('/v1/warehouses', requireKey('read'), async (c) => {
    const db = await c.var.db()
    const rows = await db.select().from(warehouses).where(eq(warehouses.projectId, c.var.principal.projectId)).orderBy(asc(warehouses.name))
    return c.json({ warehouses: rows.map(warehouseView) })
  })
  .get('/v1/warehouses/:warehouse', requireKey('read'), async (c) => c.json(warehouseView(await ownWarehouse(c, c.req.param('warehouse')))))
