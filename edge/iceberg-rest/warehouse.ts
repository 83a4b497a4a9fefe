// A REST catalog path's {prefix}: the warehouse's id (names are unique only inside a project), which
// /v1/config gives for ?warehouse=<name>. Only the caller's project's warehouses are found: another
// project's is 404, as one that does not exist. A warehouse whose catalog is an external REST
// catalog is not served here (engines reach that catalog itself: GET /v1/connection names it).
import { and, eq } from 'drizzle-orm'
import type { Context } from 'hono'
import { warehouses } from '../../db/schema.ts'
import type { SqlCatalog } from '../../iceberg/catalog/sql.ts'
import { catalogFor, type WarehouseRow } from '../catalogs.ts'
import type { AppEnv } from '../env.ts'
import { badRequest, IcebergError } from './errors.ts'
import { recentMetadata } from './recent-metadata.ts'

/** What a warehouse id looks like; anything else is not looked up. */
export const WAREHOUSE_ID = /^[A-Za-z0-9_-]{1,64}$/

const notFound = (what: string) => new IcebergError(404, 'NotFoundException', `no warehouse ${what} in this key's project`)

async function lookUp(c: Context<AppEnv>, by: { name: string } | { id: string }): Promise<WarehouseRow | undefined> {
  const db = await c.var.db()
  const match = 'name' in by ? eq(warehouses.name, by.name) : eq(warehouses.id, by.id)
  const [w] = await db
    .select()
    .from(warehouses)
    .where(and(eq(warehouses.projectId, c.var.principal.projectId), match))
    .limit(1)
  return w
}

/**
 * The caller's warehouse by name (config) or id (prefix); 404 NotFoundException otherwise. The one a
 * path names was read with the caller's key (catalogAuth), in its project, when it looked like an id.
 */
export async function warehouseOf(c: Context<AppEnv>, by: { name: string } | { id: string }): Promise<WarehouseRow> {
  // What Postgres cannot hold (NUL) or no id looks like is not looked up: it is not there.
  if ('id' in by ? !WAREHOUSE_ID.test(by.id) : by.name.includes('\u0000') || by.name.length > 255) {
    throw notFound('id' in by ? by.id.slice(0, 64) : by.name.slice(0, 64))
  }
  const w = 'id' in by && c.var.warehouseRead?.id === by.id ? (c.var.warehouseRead.row ?? undefined) : await lookUp(c, by)
  if (!w) throw notFound('name' in by ? `named ${by.name}` : by.id)
  if ((w.catalog as { type: string }).type !== 'sql') {
    throw badRequest(`warehouse ${w.name} keeps its tables in an external REST catalog: connect to that catalog (GET /v1/connection names it)`)
  }
  return w
}

/**
 * The warehouse a path's prefix names and its SQL catalog, on the request's connection, with the
 * metadata files this isolate holds (recent-metadata.ts): a load whose table has not moved reads its row only.
 */
export async function warehouseCatalogAt(c: Context<AppEnv>): Promise<{ warehouse: WarehouseRow; catalog: SqlCatalog }> {
  const w = await warehouseOf(c, { id: c.req.param('prefix') ?? '' })
  const catalog = await catalogFor(c.env, await c.var.db(), w, recentMetadata)
  // warehouseOf let only SQL-catalog warehouses through.
  return { warehouse: w, catalog: catalog as SqlCatalog }
}

/** The SQL catalog of the warehouse a path's prefix names. */
export async function catalogAt(c: Context<AppEnv>): Promise<SqlCatalog> {
  return (await warehouseCatalogAt(c)).catalog
}
