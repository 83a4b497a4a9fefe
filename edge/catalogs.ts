// The catalog of a warehouse, as the edge reaches it: the SQL catalog on the request's own
// Postgres connection, or the warehouse's REST catalog.
import type { EdgeDb } from '../db/edge.ts'
import { and, eq } from 'drizzle-orm'
import { warehouses } from '../db/schema.ts'
import type { Catalog } from '../iceberg/catalog/index.ts'
import type { MetadataCache } from '../iceberg/catalog/metadata-cache.ts'
import { RestCatalog } from '../iceberg/catalog/rest.ts'
import { SqlCatalog } from '../iceberg/catalog/sql.ts'
import { S3FileIO } from '../iceberg/io/file-io.ts'
import { keyRing, open, SealError, seal } from '../db/sealed.ts'
import type { Env } from './env.ts'
import { ApiError } from './errors.ts'
import { type CatalogSecret, storeReadKeyBinding } from '../db/catalog-secret.ts'

export type WarehouseRow = typeof warehouses.$inferSelect
/** A warehouse without the storage meter's columns and the vended read key: what reaching its catalog and bucket needs. */
export type WarehouseCore = Omit<WarehouseRow, 'storage' | 'measureNextAt' | 'measureRequestedAt' | 'measureLeaseUntil' | 'storeReadKey'>

/**
 * The SQL catalog's catalog_name. The warehouse id, not its name: names are unique only inside a
 * project, and two projects sharing a catalog_name would see each other's tables.
 */
export const sqlCatalogName = (w: WarehouseCore) => w.id

export function warehouseLocation(w: WarehouseCore): string {
  const prefix = w.prefix.replace(/^\/+|\/+$/g, '')
  return `s3://${w.bucket}${prefix ? `/${prefix}` : ''}`
}

function fileIO(env: Env, w: WarehouseCore): S3FileIO {
  return new S3FileIO({ endpoint: w.endpoint, region: w.region, accessKeyId: env.S3_ACCESS_KEY_ID, secretAccessKey: env.S3_SECRET_ACCESS_KEY })
}

type StoredCatalog = { type: 'sql' } | { type: 'rest'; uri: string; warehouse?: string; scope?: string; token?: string; credential?: string }

/** The key ring, or 503 secrets_unavailable: the edge was deployed without LHBOX_SECRETS_KEY. */
function ring(env: Env) {
  const r = keyRing(env.LHBOX_SECRETS_KEY)
  if (!r) throw new ApiError(503, 'secrets_unavailable', 'catalog secrets cannot be sealed or opened: the edge has no LHBOX_SECRETS_KEY (see DEPLOY.md)')
  return r.catch(secretsFailure)
}

function secretsFailure(err: unknown): never {
  if (err instanceof SealError) throw new ApiError(503, 'secrets_unavailable', `a catalog secret cannot be opened: ${err.message}`)
  throw err
}

/** The sealed text of a warehouse's catalog secret (db/sealed.ts), bound to the warehouse id; null when there is none. */
export async function sealCatalogSecret(env: Env, warehouseId: string, secret: CatalogSecret): Promise<string | null> {
  if (!secret.token && !secret.credential) return null
  return seal(await ring(env), JSON.stringify({ token: secret.token, credential: secret.credential }), warehouseId)
}

/** A warehouse's catalog secret in the clear (also one an older edge stored unsealed in `catalog`, until db:migrate seals it). */
export async function openCatalogSecret(env: Env, w: WarehouseCore): Promise<CatalogSecret> {
  if (!w.catalogSecret) {
    const { token, credential } = w.catalog as Extract<StoredCatalog, { type: 'rest' }>
    return { token, credential }
  }
  const plain = await open(await ring(env), w.catalogSecret, w.id).catch(secretsFailure)
  return JSON.parse(plain) as CatalogSecret
}

/** A store key pair: the warehouse's read-only one (vended to read keys by the REST catalog). */
export interface StoreKeyPair {
  access_key_id: string
  secret_access_key: string
}

/** The sealed text of a warehouse's read-only store key pair, bound to the warehouse id and its purpose. */
export async function sealStoreReadKey(env: Env, warehouseId: string, pair: StoreKeyPair): Promise<string> {
  return seal(await ring(env), JSON.stringify(pair), storeReadKeyBinding(warehouseId))
}

/** A warehouse's read-only store key pair in the clear; null when it has none. */
export async function openStoreReadKey(env: Env, w: Pick<WarehouseRow, 'id' | 'storeReadKey'>): Promise<StoreKeyPair | null> {
  if (!w.storeReadKey) return null
  const plain = await open(await ring(env), w.storeReadKey, storeReadKeyBinding(w.id)).catch(secretsFailure)
  return JSON.parse(plain) as StoreKeyPair
}

/** `cache`: metadata kept across requests by a caller that loads the same tables often (the REST catalog), by store and location. */
export async function catalogFor(env: Env, db: EdgeDb, w: WarehouseCore, cache?: MetadataCache): Promise<Catalog> {
  const catalog = w.catalog as StoredCatalog
  if (catalog.type === 'sql') {
    return new SqlCatalog({
      name: sqlCatalogName(w),
      sql: db.$client,
      warehouseLocation: warehouseLocation(w),
      io: fileIO(env, w),
      cache: cache?.within(w.endpoint),
    })
  }
  const secret = await openCatalogSecret(env, w)
  // Table files go through the catalog's vended credentials when it gives them, else ours.
  return new RestCatalog({
    name: w.name,
    uri: catalog.uri,
    warehouse: catalog.warehouse,
    token: secret.token,
    credential: secret.credential,
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
