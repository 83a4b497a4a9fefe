// POST /v1/warehouses (admin) and GET /v1/warehouses (read): where a project's tables live.
import * as v from 'valibot'
import { Hono } from 'hono'
import { asc, eq } from 'drizzle-orm'
import { warehouses } from '../../db/schema.ts'
import { requireKey } from '../auth.ts'
import type { AppEnv } from '../env.ts'
import { ApiError } from '../errors.ts'
import { randomHex } from '../keys.ts'
import { jsonBody, text } from '../validate.ts'

export const WAREHOUSE_NAME = v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'a name is 1–63 chars of a-z 0-9 _ -'))

/** The catalog and the store are reached over HTTP(S): any other URL (a:b, file:…) could never answer. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is the character refused here (Postgres cannot hold it)
const HttpUrl = v.pipe(v.string(), v.regex(/^https?:\/\/[^\u0000]+$/, 'give an http:// or https:// URL'), v.url())

const SqlCatalog = v.object({ type: v.literal('sql') })
const RestCatalog = v.object({
  type: v.literal('rest'),
  uri: HttpUrl,
  warehouse: v.optional(text()),
  token: v.optional(text()),
  credential: v.optional(text()),
  scope: v.optional(text()),
})

export const CreateWarehouse = v.object({
  name: WAREHOUSE_NAME,
  catalog: v.optional(v.variant('type', [SqlCatalog, RestCatalog]), { type: 'sql' }),
  bucket: v.optional(v.pipe(text(), v.minLength(3), v.maxLength(63))),
  endpoint: v.optional(HttpUrl),
  region: v.optional(v.pipe(text(), v.minLength(1))),
  prefix: v.optional(v.pipe(text(), v.maxLength(200)), ''),
  maintenance: v.optional(v.picklist(['roller', 'off']), 'roller'),
})

type WarehouseRow = typeof warehouses.$inferSelect

// Catalog secrets (token, credential) are never answered back.
function warehouseView(w: WarehouseRow) {
  const { token: _t, credential: _c, ...catalog } = w.catalog as Record<string, unknown>
  return {
    id: w.id,
    name: w.name,
    catalog,
    bucket: w.bucket,
    endpoint: w.endpoint,
    region: w.region,
    prefix: w.prefix,
    maintenance: w.maintenance,
    created_at: w.createdAt.toISOString(),
  }
}

export const warehouseRoutes = new Hono<AppEnv>()
  .post('/v1/warehouses', requireKey('admin'), async (c) => {
    const body = await jsonBody(c, CreateWarehouse)
    const db = await c.var.db()
    const [row] = await db
      .insert(warehouses)
      .values({
        id: `wh_${randomHex(8)}`,
        projectId: c.var.principal.projectId,
        name: body.name,
        catalog: body.catalog,
        bucket: body.bucket ?? c.env.S3_BUCKET,
        endpoint: body.endpoint ?? c.env.S3_ENDPOINT,
        region: body.region ?? c.env.S3_REGION,
        prefix: body.prefix,
        maintenance: body.maintenance,
      })
      .onConflictDoNothing()
      .returning()
    if (!row) throw new ApiError(409, 'warehouse_exists', `a warehouse named ${body.name} exists in this project`)
    return c.json(warehouseView(row), 201)
  })
  .get('/v1/warehouses', requireKey('read'), async (c) => {
    const db = await c.var.db()
    const rows = await db.select().from(warehouses).where(eq(warehouses.projectId, c.var.principal.projectId)).orderBy(asc(warehouses.name))
    return c.json({ warehouses: rows.map(warehouseView) })
  })
