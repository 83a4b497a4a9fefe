// Who is calling: API keys (a level, one project), the bootstrap secret (/internal), send keys
// (only the send and device routes accept them; anywhere else 403 send_only).
import { and, eq, isNull, lt, or, sql } from 'drizzle-orm'
import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import { apiKeys, warehouses } from '../db/schema.ts'
import type { TableIdentifier } from '../iceberg/catalog/index.ts'
import { ns as tableNamespace, TABLE_ROWS } from '../iceberg/catalog/sql.ts'
import { ApiError } from './errors.ts'
import type { AppEnv, Principal } from './env.ts'
import { API_KEY, SEND_KEY, levelAtLeast, sha256Hex, timingSafeEqual, type Level } from './keys.ts'

export function bearer(header: string | undefined): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')
  return m ? m[1] : null
}

const unauthorized = () => new ApiError(401, 'unauthorized', 'send a valid API key as Authorization: Bearer al_key_…')

/** What a REST catalog path names besides the key: its warehouse (the prefix) and, for a table's GET, the table. */
export interface PathRead {
  warehouseId: string
  table?: TableIdentifier
}

/**
 * An API key's row by id. With `at`, that warehouse of the key's project (and the table's current
 * metadata location in it) is read in the same statement and kept for the route (c.var.warehouseRead:
 * a round trip fewer on a Worker's connection); it serves only once the key is checked, as the route runs only then.
 */
export async function keyRow(c: Context<AppEnv>, keyId: string, at?: PathRead): Promise<typeof apiKeys.$inferSelect | undefined> {
  const db = await c.var.db()
  if (at === undefined) return (await db.select().from(apiKeys).where(eq(apiKeys.id, keyId)).limit(1))[0]
  const table = at.table
  // catalog_name is the warehouse's id (edge/catalogs.ts sqlCatalogName): null, so no row, unless the key's project has it.
  const location = table
    ? sql<string | null>`(select metadata_location from iceberg_tables where catalog_name = ${warehouses.id}
        and table_namespace = ${tableNamespace(table.namespace)} and table_name = ${table.name} and ${sql.raw(TABLE_ROWS)})`
    : sql<null>`null`
  const [r] = await db
    .select({ key: apiKeys, warehouse: warehouses, location })
    .from(apiKeys)
    .leftJoin(warehouses, and(eq(warehouses.projectId, apiKeys.projectId), eq(warehouses.id, at.warehouseId)))
    .where(eq(apiKeys.id, keyId))
    .limit(1)
  if (r) c.set('warehouseRead', { id: at.warehouseId, row: r.warehouse, ...(table ? { table: { id: table, location: r.location } } : {}) })
  return r?.key
}

/** Who an API key is: its row's id, project and level; null for an unknown, wrong or revoked key (answered alike). `at`: see keyRow. */
export async function keyPrincipal(c: Context<AppEnv>, token: string, at?: PathRead): Promise<Principal | null> {
  const m = API_KEY.exec(token)
  if (!m) return null
  const row = await keyRow(c, m[1], at)
  const hash = await sha256Hex(token)
  // Compare even when the row is missing, so timing says nothing about which ids exist.
  const matches = timingSafeEqual(hash, row?.keySha256 ?? '0'.repeat(64))
  if (!row || !matches || row.revokedAt) return null
  noteKeyUsed(c, row.id)
  return { keyId: row.id, projectId: row.projectId, level: row.level as Level }
}

/** last_used_at, at most once a minute per key, started once the answer is ready (not queued ahead of the route's statements). */
export function noteKeyUsed(c: Context<AppEnv>, keyId: string): void {
  c.var.defer(() =>
    c.var.db().then((db) =>
      db
        .update(apiKeys)
        .set({ lastUsedAt: sql`now()` })
        .where(and(eq(apiKeys.id, keyId), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, sql`now() - interval '1 minute'`)))),
    ),
  )
}

/** API-key auth for /v1/* routes: 401 for a missing/unknown/revoked key, 403 for a too-low level. */
export function requireKey(level: Level) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const token = bearer(c.req.header('authorization'))
    if (!token) throw unauthorized()
    if (SEND_KEY.test(token)) {
      throw new ApiError(403, 'send_only', 'a send key is accepted only on POST /v1/sinks/{sink_id} and the sink’s device route')
    }
    const principal = await keyPrincipal(c, token)
    if (!principal) throw unauthorized()
    if (!levelAtLeast(principal.level, level)) {
      throw new ApiError(403, 'forbidden', `this route needs a ${level} key; this key is ${principal.level}`)
    }
    c.set('principal', principal)
    await next()
  })
}

/** /internal/* answers only to the bootstrap secret; anything else is 403. */
export const requireBootstrap = createMiddleware<AppEnv>(async (c, next) => {
  const token = bearer(c.req.header('authorization')) ?? ''
  const secret = c.env.LHBOX_BOOTSTRAP_SECRET
  if (!secret || !timingSafeEqual(await sha256Hex(token), await sha256Hex(secret))) {
    throw new ApiError(403, 'forbidden', 'internal routes need the bootstrap secret')
  }
  await next()
})
