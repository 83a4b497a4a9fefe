// The edge on Node, for a team that must self-host (no Cloudflare account, an air-gapped site): the
// same Hono app as the Worker (app.ts), served by @hono/node-server, with Postgres over TCP through a
// node-postgres pool instead of the neon driver. `npm run edge`; the `edge` Docker image runs this.
// Its configuration is the Worker's bindings (env.ts), read from the environment.
import { serve, type ServerType } from '@hono/node-server'
import { drizzle } from 'drizzle-orm/node-postgres'
import pg from 'pg'
import type { EdgeDb } from '../db/edge.ts'
import type { Dispatcher } from 'undici'
import { nodeTransport, useS3Agent } from '../iceberg/io/s3-node.ts'
import { useS3Transport } from '../iceberg/io/s3-transport.ts'
import * as schema from '../db/schema.ts'
import { createApp } from './app.ts'
import type { OpenDatabase } from './database.ts'
import type { Env } from './env.ts'
import { pruneLedger } from './roller-ledger.ts'

const REQUIRED = ['DATABASE_URL', 'LHBOX_BOOTSTRAP_SECRET', 'S3_ENDPOINT', 'S3_BUCKET', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'] as const
const OPTIONAL = [
  'S3_REGION',
  'LHBOX_SECRETS_KEY',
  'LHBOX_SINKS_ENABLED',
  'AL_SINKS_ENABLED',
  'LHBOX_SQL_CHECK_URL',
  'LHBOX_SINK_REQUESTS_PER_SECOND',
  'LHBOX_SINK_BYTES_PER_SECOND',
  'LHBOX_PROJECT_REQUESTS_PER_SECOND',
  'LHBOX_PROJECT_BYTES_PER_SECOND',
  'LHBOX_VEND_STORE_KEYS',
  'LHBOX_WAREHOUSE_ALLOW_HOSTS',
] as const

/** The bindings from the environment; an error naming every one that is missing. */
export function nodeEnv(source: NodeJS.ProcessEnv = process.env): Env {
  const missing = REQUIRED.filter((k) => !source[k])
  if (missing.length) throw new Error(`${missing.join(', ')} not set (see DEPLOY.md, "The edge on Node")`)
  const env: Record<string, string> = { S3_REGION: 'auto' }
  for (const k of [...REQUIRED, ...OPTIONAL]) if (source[k]) env[k] = source[k] as string
  return env as unknown as Env
}

/**
 * A pooled connection per request. drizzle's node-postgres database has the neon one's query API
 * (both are drizzle's PgDatabase over node-postgres' client interface), hence the one cast.
 */
function pooled(pool: pg.Pool): OpenDatabase {
  // A connection the server ends emits 'error' on its client, and an unheard 'error' ends the process.
  // The pool listens only while a client is idle, and a new client's first messages (its ready, then
  // the server's "terminating connection") can come in one read, before the caller of connect() runs:
  // so every client is heard from its creation on. A broken client is discarded on release.
  const broken = new WeakMap<pg.PoolClient, Error>()
  pool.on('connect', (client) => client.on('error', (err) => broken.set(client, err)))
  return async () => {
    const client = await pool.connect()
    return { db: drizzle(client, { schema }) as unknown as EdgeDb, close: async () => client.release(broken.get(client)) }
  }
}

export interface NodeEdge {
  url: string
  server: ServerType
  close(): Promise<void>
}

/** The request line and headers Node reads before the app answers (its default is 16 KiB). */
const MAX_HEADER_BYTES = 256 * 1024

/**
 * Serves the app on host:port (0: any free port); the ledger is pruned on start and hourly, as the Worker's cron does.
 * `agent`: the store's connections go through it (node-main.ts's, which checks where they lead).
 */
export async function startNodeEdge(env: Env, opts: { port: number; host: string; pool?: number; agent?: Dispatcher }): Promise<NodeEdge> {
  // Node's S3 transport for the intake PUTs (iceberg/io/s3-node.ts: a quarter of fetch's CPU a request).
  if (opts.agent) useS3Agent(opts.agent)
  useS3Transport(nodeTransport)
  const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: opts.pool ?? 10, application_name: 'lhbox-edge' })
  // An idle connection the server drops must not end the process; the pool discards it.
  pool.on('error', (err) => console.error(JSON.stringify({ level: 'warn', msg: 'an idle database connection was dropped', error: err.message })))
  const open = pooled(pool)
  const app = createApp(open)
  // Work a route defers past its response (waitUntil on Workers) is awaited before shutdown.
  const pending = new Set<Promise<unknown>>()
  const ctx = {
    waitUntil: (p: Promise<unknown>) => {
      pending.add(p)
      // Logged as workerd logs a failed waitUntil; unhandled, it would end the process.
      void p
        .catch((err) => console.error(JSON.stringify({ level: 'error', msg: 'deferred work failed', error: (err as Error)?.message })))
        .finally(() => pending.delete(p))
    },
    passThroughOnException: () => undefined,
    props: {},
  }
  const pruneNow = () =>
    ctx.waitUntil(
      open(env)
        .then(({ db, close }) => pruneLedger(db).finally(close))
        .then(
          (n) => console.log(JSON.stringify({ level: 'info', msg: 'ledger pruned', rows: n })),
          (err) => console.error(JSON.stringify({ level: 'warn', msg: 'ledger not pruned', error: (err as Error).message })),
        ),
    )
  // On start too: an edge restarted more often than hourly still prunes.
  pruneNow()
  const prune = setInterval(pruneNow, 3600_000)
  prune.unref()
  const server = await new Promise<ServerType>((resolve) => {
    const s = serve(
      {
        fetch: (req) => app.fetch(req, env, ctx as unknown as ExecutionContext),
        port: opts.port,
        hostname: opts.host,
        // Node's 16 KiB limit on the request line and headers answers 431 with no body, before the app:
        // a long query would get no error envelope. Workers take URLs and headers well past 16 KiB too.
        serverOptions: { maxHeaderSize: MAX_HEADER_BYTES },
      },
      () => resolve(s),
    )
  })
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : opts.port
  return {
    url: `http://${opts.host === '0.0.0.0' ? '127.0.0.1' : opts.host}:${port}`,
    server,
    async close() {
      clearInterval(prune)
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await Promise.allSettled([...pending])
      await pool.end()
    },
  }
}
