// How an engine reaches a table's files, answered with the table (loadTable, createTable): the
// `config` and `storage-credentials` of the REST spec's LoadTableResult.
//
// - Remote signing (every answer that vends no keys): s3.remote-signing-enabled (Java), s3.signer
//   (PyIceberg's S3V4RestSigner), the sign endpoint of this table (sign.ts) and a catalog token of the
//   caller's level to call it with. The signer signs only this table's objects, and for a read key only reads.
// - Vended credentials, when the client asks (X-Iceberg-Access-Delegation: vended-credentials): a write
//   key receives the store keys the edge itself uses only where the operator allows it
//   (LHBOX_VEND_STORE_KEYS=true: they reach the whole bucket, every project's files in it); otherwise,
//   as a read key, the warehouse's read-only pair when it has one, and else no keys at all (remote
//   signing only): a read key never receives keys that write.
import type { Context } from 'hono'
import { openStoreReadKey, type StoreKeyPair, type WarehouseRow } from '../catalogs.ts'
import type { AppEnv } from '../env.ts'
import { levelAtLeast } from '../keys.ts'
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

/** The keys this caller may receive for the warehouse's store; null: none (no read-only pair, and no store keys vended here). */
async function vendedKeys(c: Context<AppEnv>, w: WarehouseRow): Promise<StoreKeyPair | null> {
  if (levelAtLeast(c.var.principal.level, 'write') && c.env.LHBOX_VEND_STORE_KEYS === 'true') {
    return { access_key_id: c.env.S3_ACCESS_KEY_ID, secret_access_key: c.env.S3_SECRET_ACCESS_KEY }
  }
  return openStoreReadKey(c.env, w)
}

/** The config (and storage credentials) that go out with table `namespace.table` at `location`. */
export async function storageAccess(c: Context<AppEnv>, w: WarehouseRow, id: { namespace: string[]; name: string }, location: string): Promise<StorageAccess> {
  // Where the store is: DuckDB reads these from the table's config, not from /v1/config's overrides.
  const store = { 's3.endpoint': w.endpoint, 's3.region': w.region, 'client.region': w.region, 's3.path-style-access': 'true' }
  // An answer kept for Idempotency-Key replays (a create) is stored: it carries no keys and no token;
  // the client signs with its own catalog credentials, and a load gives keys.
  const kept = c.req.header('idempotency-key') !== undefined
  const keys = wantsVended(c) && !kept ? await vendedKeys(c, w) : null
  if (keys) {
    const vended = { ...store, 's3.access-key-id': keys.access_key_id, 's3.secret-access-key': keys.secret_access_key }
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
