// How a request reaches Postgres, by host and configuration: on Workers, @neondatabase/serverless over a
// WebSocket to DATABASE_URL, or node-postgres over TCP to a Hyperdrive binding (env.HYPERDRIVE), one
// client per request either way (a Worker cannot keep one across requests); on Node (edge/node.ts) a
// node-postgres pool. The app (app.ts) opens one on a request's first use and closes it after.
import { edgeClient, edgeDb, type EdgeDb } from '../db/edge.ts'
import type { Env } from './env.ts'
import { Client } from './pg-client.js'

export interface Opened {
  db: EdgeDb
  close(): Promise<void>
}

export type OpenDatabase = (env: Env) => Promise<Opened>

/** Workers: one neon client per request, to DATABASE_URL (NEON_WS_PROXY locally). */
const neonDatabase: OpenDatabase = async (env) => {
  const client = edgeClient({ url: env.DATABASE_URL, wsProxy: env.NEON_WS_PROXY, pipelineConnect: env.NEON_PIPELINE_CONNECT === 'password' })
  // A connection the server drops emits 'error' on the client: without a listener that is an
  // uncaught error in the isolate. The query in flight fails on its own (databaseFailure: 503).
  client.on('error', (err) => console.error(JSON.stringify({ level: 'warn', msg: 'the database dropped the connection', error: err.message })))
  await client.connect()
  return { db: edgeDb(client), close: () => client.end() }
}

/**
 * Workers with a Hyperdrive binding: node-postgres over Workers' TCP sockets (nodejs_compat) to
 * Hyperdrive's pool. Hyperdrive caches read-only statements unless they call a stable or volatile
 * function: every statement of the send route and of /internal is a write or reads now(), so none is
 * served from its cache (test/integration/hyperdrive.test.ts records them); the control plane's reads
 * (an API key's row) are, so DEPLOY.md creates the configuration with --caching-disabled.
 */
const hyperdriveDatabase: OpenDatabase = async (env) => {
  const client = new Client({ connectionString: (env.HYPERDRIVE as Hyperdrive).connectionString })
  client.on('error', (err) => console.error(JSON.stringify({ level: 'warn', msg: 'the database dropped the connection', error: err.message })))
  await client.connect()
  // The neon driver's Client is node-postgres' own, forked: drizzle's neon session drives either.
  return { db: edgeDb(client as unknown as Parameters<typeof edgeDb>[0]), close: () => client.end() }
}

/** The Worker's choice: the Hyperdrive binding when there is one, else DATABASE_URL through neon. */
export const workerDatabase: OpenDatabase = (env) => (env.HYPERDRIVE ? hyperdriveDatabase(env) : neonDatabase(env))
