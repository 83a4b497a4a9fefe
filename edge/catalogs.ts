// The catalog of a warehouse, as the edge reaches it: the SQL catalog on the request's own
// Postgres connection, or the warehouse's REST catalog.
import type { EdgeDb } from '../db/edge.ts'
import { and, eq } from 'drizzle-orm'
import { warehouses } from '../db/schema.ts'
import type { Catalog } from '../iceberg/catalog/index.ts'
import { RestCatalog } from '../iceberg/catalog/rest.ts'
import { SqlCatalog } from '../iceberg/catalog/sql.ts'
import { S3FileIO } from '../iceberg/io/file-io.ts'
import type { Env } from './env.ts'
import { ApiError } from './errors.ts'

export type WarehouseRow = typeof warehouses.$inferSelect

/**
 * The SQL catalog's catalog_name. The warehouse id, not its name: names are unique only inside a
 * project, and two projects sharing a catalog_name would see each other's tables.
 */
export const sqlCatalogName = (w: WarehouseRow) => w.id

export function warehouseLocation(w: WarehouseRow): string {
  const prefix = w.prefix.replace(/^\/+|\/+$/g, '')
  return `s3://${w.bucket}${prefix ? `/${prefix}` : ''}`
}

function fileIO(env: Env, w: WarehouseRow): S3FileIO {
  return new S3FileIO({ endpoint: w.endpoint, region: w.region, accessKeyId: env.S3_ACCESS_KEY_ID, secretAccessKey: env.S3_SECRET_ACCESS_KEY })
}

export function catalogFor(env: Env, db: EdgeDb, w: WarehouseRow): Catalog {
  const catalog = w.catalog as { type: 'sql' } | { type: 'rest'; uri: string; warehouse?: string; token?: string; credential?: string; scope?: string }
  if (catalog.type === 'sql') {
    return new SqlCatalog({ name: sqlCatalogName(w), sql: db.$client, warehouseLocation: warehouseLocation(w), io: fileIO(env, w) })
  }
  // Table files go through the catalog's vended credentials when it gives them, else ours.
  return new RestCatalog({
    name: w.name,
    uri: catalog.uri,
    warehouse: catalog.warehouse,
    token: catalog.token,
    credential: catalog.credential,
    scope: catalog.scope,
    s3: { endpoint: w.endpoint, region: w.region, accessKeyId: env.S3_ACCESS_KEY_ID, secretAccessKey: env.S3_SECRET_ACCESS_KEY },
  })
}

/** A warehouse of the caller's project by name; 404 warehouse_not_found otherwise. */
export async function warehouseByName(db: EdgeDb, projectId: string, name: string): Promise<WarehouseRow> {
  const [w] = await db
    .select()
    .from(warehouses)
    .where(and(eq(warehouses.projectId, projectId), eq(warehouses.name, name)))
  if (!w) throw new ApiError(404, 'warehouse_not_found', `no warehouse named ${name} in this project`)
  return w
}
