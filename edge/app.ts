// The Hono app: per-request database, routes, and the one error path.
import { Hono } from 'hono'
import { HTTPException } from 'hono/http-exception'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import type { EdgeDb } from '../db/edge.ts'
import { workerDatabase, type OpenDatabase, type Opened } from './database.ts'
import type { AppEnv } from './env.ts'
import { deviceRoutes } from './devices/route.ts'
import { ApiError, bucketFailure, catalogFailure, databaseFailure, envelope, unavailable } from './errors.ts'
import { consoleRoutes } from './console/route.tsx'
import { connectionRoutes } from './routes/connection.ts'
import { openapi } from './openapi/document.ts'
import { otlpRoutes } from './otlp/route.ts'
import { health } from './routes/health.ts'
import { icebergRest } from './iceberg-rest/router.ts'
import { internalRoutes } from './routes/internal.ts'
import { mcpRoutes } from './mcp/route.ts'
import { keys } from './routes/keys.ts'
import { SendLimiter } from './limits/limiter.ts'
import { send } from './routes/send.ts'
import { sendKeyRoutes } from './routes/send-keys.ts'
import { sinkRoutes } from './routes/sinks.ts'
import { tableRoutes } from './routes/tables.ts'
import { usageRoutes } from './routes/usage.ts'
import { warehouseRoutes } from './routes/warehouses.ts'

const CODES: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const

/**
 * The methods the app's routes serve on a path (HEAD wherever GET is: Hono answers it with the GET
 * route), from its own router; middleware (method ALL) serves nothing. Empty for a path no route has.
 */
export function allowedMethods(app: Hono<any>, path: string): string[] {
  return METHODS.filter((m) => app.router.match(m === 'HEAD' ? 'GET' : m, path)[0].some(([[, route]]) => route.method !== 'ALL'))
}

/** The app on any host; `open` is how a request reaches Postgres there (edge/database.ts). */
export function createApp(open: OpenDatabase = workerDatabase) {
  const app = new Hono<AppEnv>()
  // One per app: an isolate's, or a Node process's (edge/limits/limiter.ts says how exact that is).
  const limiter = new SendLimiter()

  // One database connection per request, opened on first use and closed after the response and
  // after the work deferred past it (c.var.defer).
  app.use('*', async (c, next) => {
    let opened: Opened | undefined
    let db: Promise<EdgeDb> | undefined
    const deferred: Promise<unknown>[] = []
    const later: Array<() => Promise<unknown>> = []
    c.set('defer', (work) => void (typeof work === 'function' ? later.push(work) : deferred.push(work.catch(() => undefined))))
    c.set('limiter', limiter)
    c.set('db', () => {
      db ??= (async () => {
        try {
          opened = await open(c.env)
        } catch {
          throw unavailable('database', 'the database is unavailable; retry shortly')
        }
        return opened.db
      })()
      return db
    })
    try {
      await next()
    } finally {
      for (const work of later) deferred.push(work().catch(() => undefined))
      const done = Promise.allSettled(deferred).then(() => opened?.close().catch(() => undefined))
      try {
        c.executionCtx.waitUntil(done)
      } catch {
        await done // no execution context (tests calling app.request)
      }
    }
  })

  app.route('/', health)
  app.route('/', openapi)
  app.route('/', keys)
  app.route('/', warehouseRoutes)
  app.route('/', tableRoutes)
  // The send route first: POST /v1/sinks/{snk_…} takes a send key, never an API key.
  app.route('/', send)
  app.route('/', deviceRoutes)
  // OpenTelemetry logs: OTLP's own answers (a Status body), the send route's path beneath.
  app.route('/', otlpRoutes)
  app.route('/', sinkRoutes)
  app.route('/', sendKeyRoutes)
  app.route('/', usageRoutes)
  app.route('/', connectionRoutes)
  // The Iceberg REST catalog: its own error model (the REST spec's), its own 404 and 405.
  app.route('/iceberg', icebergRest)
  // The Model Context Protocol: a thin layer over the same sends, views and catalog reads (edge/mcp/).
  app.route('/', mcpRoutes)
  app.route('/', internalRoutes)
  app.route('/', consoleRoutes)

  // A path the app serves, asked with a method it does not serve: 405 with Allow (RFC 9110 §15.5.6).
  app.notFound((c) => {
    const path = new URL(c.req.url).pathname
    const allow = allowedMethods(app, c.req.path)
    if (allow.length === 0) return c.json(envelope('not_found', `no route for ${c.req.method} ${path}`), 404)
    c.header('Allow', allow.join(', '))
    return c.json(envelope('method_not_allowed', `${path} does not take ${c.req.method}; it takes ${allow.join(', ')}`, { allow }), 405)
  })

  app.onError((err, c) => {
    const store = catalogFailure(err) ?? bucketFailure(err) ?? databaseFailure(err)
    // A catalog, bucket or database that is down or refuses us is the operator's to see, as a 500 would be.
    if (store?.status === 503) console.error(JSON.stringify({ level: 'warn', path: new URL(c.req.url).pathname, error: String(err) }))
    const api = err instanceof ApiError ? err : store
    if (api) {
      for (const [k, v] of Object.entries(api.headers)) c.header(k, v)
      return c.json(envelope(api.code, api.message, api.details), api.status)
    }
    if (err instanceof HTTPException) {
      const status = err.status as ContentfulStatusCode
      return c.json(envelope(CODES[status] ?? 'error', err.message || 'request refused'), status)
    }
    // Logged for the operator; the caller gets no stack.
    console.error(JSON.stringify({ level: 'error', path: new URL(c.req.url).pathname, error: String((err as Error)?.stack ?? err) }))
    return c.json(envelope('internal', 'an internal error occurred; it has been logged'), 500)
  })

  return app
}
