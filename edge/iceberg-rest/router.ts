// The Apache Iceberg REST catalog for lhbox's SQL-catalog warehouses, mounted at /iceberg: a thin
// protocol layer (routes here, handlers beside) over iceberg/catalog's SqlCatalog, the same catalog
// and commit path the roller uses. Its errors are the REST spec's ErrorModel, not the /v1 envelope;
// a path it does not serve answers 404, a method it does not serve 405, in that model too.
import { Hono } from 'hono'
import type { AppEnv } from '../env.ts'
import { catalogAuth } from './auth.ts'
import { config } from './config.ts'
import { errorModel, IcebergError, icebergFailure } from './errors.ts'
import { idempotent } from './idempotency.ts'
import { oauthToken } from './oauth.ts'
import { registerTable } from './register.ts'
import { S3_PATH, s3Proxy } from './s3-proxy.ts'
import { signRequest } from './sign.ts'
import { loadCredentials } from './credentials.ts'
import { createNamespace, dropNamespace, listNamespaces, loadNamespace, updateNamespaceProperties } from './namespaces.ts'
import { commitTable, commitTransaction, createTable, dropTable, listTables, loadTable, renameTable, reportMetrics } from './tables.ts'

const NS = '/v1/:prefix/namespaces/:namespace'

const routes = new Hono<AppEnv>()
  .post('/v1/oauth/tokens', oauthToken)
  .use('/v1/*', catalogAuth)
  .use('/v1/:prefix/*', idempotent)
  .get('/v1/config', config)
  .get('/v1/:prefix/namespaces', listNamespaces)
  .post('/v1/:prefix/namespaces', createNamespace)
  .get(NS, loadNamespace)
  .delete(NS, dropNamespace)
  .post(`${NS}/properties`, updateNamespaceProperties)
  .get(`${NS}/tables`, listTables)
  .post(`${NS}/tables`, createTable)
  .post(`${NS}/register`, registerTable)
  .get(`${NS}/tables/:table`, loadTable)
  .post(`${NS}/tables/:table`, commitTable)
  .delete(`${NS}/tables/:table`, dropTable)
  .post(`${NS}/tables/:table/metrics`, reportMetrics)
  .post(`${NS}/tables/:table/sign`, signRequest)
  .get(`${NS}/tables/:table/credentials`, loadCredentials)
  .post('/v1/:prefix/tables/rename', renameTable)
  .post('/v1/:prefix/transactions/commit', commitTransaction)
  // Vended credentials' S3 endpoint: SigV4, not a catalog key; S3's answers and errors (s3-proxy.ts).
  .all(`${S3_PATH.slice('/iceberg'.length)}/*`, s3Proxy)

const METHODS = ['GET', 'POST', 'DELETE'] as const

/** The methods a path takes here (HEAD wherever GET is); middleware serves none. */
function allowed(path: string): string[] {
  const served = METHODS.filter((m) => routes.router.match(m, path)[0].some(([[, route]]) => route.method !== 'ALL'))
  return served.includes('GET') ? [...served.slice(0, 1), 'HEAD', ...served.slice(1)] : served
}

export const icebergRest = new Hono<AppEnv>()
  .route('/', routes)
  // Anything no route took: 405 with Allow for a path served with other methods, else 404.
  .all('*', (c) => {
    const path = c.req.path.replace(/^\/iceberg/, '') || '/'
    const allow = allowed(path)
    if (allow.length === 0) throw new IcebergError(404, 'NotFoundException', `no route for ${c.req.method} ${c.req.path}`)
    c.header('Allow', allow.join(', '))
    throw new IcebergError(405, 'MethodNotAllowedException', `${c.req.path} does not take ${c.req.method}; it takes ${allow.join(', ')}`)
  })
  .onError((err, c) => {
    const e = icebergFailure(err)
    if (e) {
      for (const [k, v] of Object.entries(e.headers)) c.header(k, v)
      return c.json(errorModel(e), e.status)
    }
    console.error(JSON.stringify({ level: 'error', path: c.req.path, error: String((err as Error)?.stack ?? err) }))
    return c.json({ error: { message: 'an internal error occurred; it has been logged', type: 'InternalServerError', code: 500 } }, 500)
  })
