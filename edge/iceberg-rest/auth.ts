// Who calls the REST catalog, and what each level may do there (one place): an lhbox API key or a
// catalog token (token.ts) as Authorization: Bearer. A read key lists and loads; creating,
// committing, dropping and renaming need write. A send key is refused (403), as anywhere but the send route.
import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import { bearer, keyPrincipal, keyRow, noteKeyUsed, type PathRead } from '../auth.ts'
import type { AppEnv, Principal } from '../env.ts'
import { levelAtLeast, type Level, SEND_KEY } from '../keys.ts'
import { forbidden, notAuthorized } from './errors.ts'
import { lowerLevel, verifyToken } from './token.ts'
import { WAREHOUSE_ID } from './warehouse.ts'

const SEND_ONLY = 'a send key is accepted only on POST /v1/sinks/{sink_id}; the catalog takes an API key or a catalog token'

/** A token's principal: its key must still be there, unrevoked; the level is the lower of the two. */
async function tokenPrincipal(c: Context<AppEnv>, token: string, at?: PathRead): Promise<Principal | null> {
  const granted = await verifyToken(c.env.LHBOX_BOOTSTRAP_SECRET, token)
  if (!granted) return null
  const row = await keyRow(c, granted.keyId, at)
  if (!row || row.revokedAt) return null
  noteKeyUsed(c, row.id)
  return { keyId: row.id, projectId: row.projectId, level: lowerLevel(granted.level, row.level as Level) }
}

/**
 * An API key's or a catalog token's principal; null when neither (unknown, wrong, revoked, expired). 403 for a send key.
 * `at`: what the path names, read in the key's statement (edge/auth.ts keyRow).
 */
export async function principalOf(c: Context<AppEnv>, token: string, at?: PathRead): Promise<Principal | null> {
  if (SEND_KEY.test(token)) throw forbidden(SEND_ONLY)
  return token.startsWith('al_tok_') ? tokenPrincipal(c, token, at) : keyPrincipal(c, token, at)
}

/**
 * What a path under /iceberg/v1/{prefix}/… names, when its prefix can be a warehouse id (warehouse.ts):
 * the warehouse, and for GET or HEAD of …/namespaces/{namespace}/tables/{table} the table (decoded as
 * the route's params are; the route uses it only where its own params name the same table).
 */
function pathRead(method: string, path: string): PathRead | undefined {
  const m = /^\/iceberg\/v1\/([^/]+)\/./.exec(path)
  if (!m || m[1] === 'oauth' || !WAREHOUSE_ID.test(m[1])) return undefined
  const t = /^\/iceberg\/v1\/[^/]+\/namespaces\/([^/]+)\/tables\/([^/]+)$/.exec(path)
  if (!t || (method !== 'GET' && method !== 'HEAD')) return { warehouseId: m[1] }
  try {
    return { warehouseId: m[1], table: { namespace: decodeURIComponent(t[1]).split('\x1f'), name: decodeURIComponent(t[2]) } }
  } catch {
    return { warehouseId: m[1] } // not percent-encoding: the route answers it
  }
}

/** Every catalog route but the token endpoint: a principal, or 401 NotAuthorizedException. */
export const catalogAuth = createMiddleware<AppEnv>(async (c, next) => {
  const token = bearer(c.req.header('authorization'))
  if (!token) throw notAuthorized('send an lhbox API key, or a token from /iceberg/v1/oauth/tokens, as Authorization: Bearer')
  const principal = await principalOf(c, token, pathRead(c.req.method, c.req.path))
  if (!principal) throw notAuthorized('the key or token is unknown, revoked or expired')
  c.set('principal', principal)
  await next()
})

/** 403 ForbiddenException unless the caller's level reaches `level` (write: create, commit, drop, rename). */
export function need(c: Context<AppEnv>, level: Level): void {
  const have = c.var.principal.level
  if (!levelAtLeast(have, level)) throw forbidden(`this needs a ${level} key; this key is ${have}`)
}
