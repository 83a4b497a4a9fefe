// How an engine reaches a table's files, answered with the table (loadTable, createTable): the
// `config` and `storage-credentials` of the REST spec's LoadTableResult.
//
// - Remote signing (every answer that vends no keys): s3.remote-signing-enabled (Java), s3.signer
//   (PyIceberg's S3V4RestSigner), the sign endpoint of this table (sign.ts) and a catalog token of the
//   caller's level to call it with. The signer signs only this table's objects, and for a read key only reads.
// - Vended credentials, when the client asks (X-Iceberg-Access-Delegation: vended-credentials):
//   credentials scoped to this table and the caller's access (store-credentials.ts), whose requests go
//   to the edge's own S3 endpoint (<origin>/iceberg/s3, s3-proxy.ts), which checks them and sends them
//   on signed as the edge. Two unscoped exceptions an operator chooses: a read key receives the
//   warehouse's read-only pair when it has one (reads of the whole bucket), and a write key the edge's
//   own store keys with LHBOX_VEND_STORE_KEYS=true (the whole bucket, every project's files in it).
//   A read key never receives keys that write.
import type { Context } from 'hono'
import { openStoreReadKey, type StoreKeyPair, type WarehouseRow } from '../catalogs.ts'
import type { AppEnv } from '../env.ts'
import { levelAtLeast } from '../keys.ts'
import { S3_PATH } from './s3-proxy.ts'
import { accessOf, issueStoreKeys } from './store-credentials.ts'
import { issueToken, TOKEN_SECONDS } from './token.ts'

export interface StorageAccess {
  config: Record<string, string>
  'storage-credentials'?: Array<{ prefix: string; config: Record<string, string> }>
}

/** The path of a table's sign endpoint under /iceberg (no leading slash: the clients join it to the URI). */
function signEndpoint(prefix: string, namespace: string[], table: string): string {
  return `v1/${prefix}/namespaces/${encodeURIComponent(namespace.join('\x1f'))}/tables/${encodeURIComponent(table)}/sign`
}

/** Whether the client asked for vended credentials (the header is a comma-separated list of modes). */
function wantsVended(c: Context<AppEnv>): boolean {
  const modes = (c.req.header('x-iceberg-access-delegation') ?? '').split(',')
  return modes.some((m) => m.trim().toLowerCase() === 'vended-credentials')
}

/**
 * What, beside the metadata, a table answer depends on (loadTable's ETag holds it): the caller, the
 * access it asked for, and the half hour (the token it carries lives an hour, so an answer kept on a 304
 * is never one whose token has less than half an hour left).
 */
export function accessTag(c: Context<AppEnv>): string {
  const p = c.var.principal
  return `${p.keyId}:${p.level}:${wantsVended(c)}:${Math.floor(Date.now() / (TOKEN_SECONDS * 500))}`
}

/** The store's own keys or the warehouse's read-only pair, where the operator chose them for this caller; else null (scoped keys). */
async function unscopedKeys(c: Context<AppEnv>, w: WarehouseRow): Promise<StoreKeyPair | null> {
  if (levelAtLeast(c.var.principal.level, 'write')) {
    return c.env.LHBOX_VEND_STORE_KEYS === 'true' ? { access_key_id: c.env.S3_ACCESS_KEY_ID, secret_access_key: c.env.S3_SECRET_ACCESS_KEY } : null
  }
  return openStoreReadKey(c.env, w)
}

/** The keys vended to this caller for the table at `location`, and where they reach the store. */
async function vendedConfig(c: Context<AppEnv>, w: WarehouseRow, location: string): Promise<Record<string, string>> {
  const store = { 's3.region': w.region, 'client.region': w.region, 's3.path-style-access': 'true' }
  const pair = await unscopedKeys(c, w)
  if (pair) return { ...store, 's3.endpoint': w.endpoint, 's3.access-key-id': pair.access_key_id, 's3.secret-access-key': pair.secret_access_key }
  const p = c.var.principal
  const keys = await issueStoreKeys(c.env.LHBOX_BOOTSTRAP_SECRET, { warehouseId: w.id, keyId: p.keyId, access: accessOf(p.level), location })
  return { ...store, 's3.endpoint': `${new URL(c.req.url).origin}${S3_PATH}`, ...keys }
}

/** The config (and storage credentials) that go out with table `namespace.table` at `location`. */
export async function storageAccess(c: Context<AppEnv>, w: WarehouseRow, id: { namespace: string[]; name: string }, location: string): Promise<StorageAccess> {
  // Where the store is: DuckDB reads these from the table's config, not from /v1/config's overrides.
  const store = { 's3.endpoint': w.endpoint, 's3.region': w.region, 'client.region': w.region, 's3.path-style-access': 'true' }
  // An answer kept for Idempotency-Key replays (a create) is stored: it carries no keys and no token;
  // the client signs with its own catalog credentials, and a load gives keys.
  const kept = c.req.header('idempotency-key') !== undefined
  if (wantsVended(c) && !kept) {
    const vended = await vendedConfig(c, w, location)
    return { config: vended, 'storage-credentials': [{ prefix: location, config: vended }] }
  }
  const principal = c.var.principal
  return {
    config: {
      ...store,
      's3.remote-signing-enabled': 'true',
      's3.signer': 'S3V4RestSigner',
      's3.signer.uri': `${new URL(c.req.url).origin}/iceberg`,
      's3.signer.endpoint': signEndpoint(w.id, id.namespace, id.name),
      // The signer calls with this (PyIceberg and Java read `token` from the table's config): a
      // short-lived catalog token of the caller's level, never the API key itself.
      ...(kept ? {} : { token: await issueToken(c.env.LHBOX_BOOTSTRAP_SECRET, principal.keyId, principal.level) }),
    },
  }
}
