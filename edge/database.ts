// How a request reaches Postgres, by host: on Workers @neondatabase/serverless over a WebSocket (one
// client per request: a Worker cannot keep one across requests); on Node (edge/node.ts) a
// node-postgres pool over TCP. The app (app.ts) opens one on a request's first use and closes it after.
import { edgeClient, edgeDb, type EdgeDb } from '../db/edge.ts'
import type { Env } from './env.ts'

export interface Opened {
  db: EdgeDb
  close(): Promise<void>
}

export type OpenDatabase = (env: Env) => Promise<Opened>

/** Workers: one neon client per request, to DATABASE_URL (NEON_WS_PROXY locally). */
export const neonDatabase: OpenDatabase = async (env) => {
  const client = edgeClient({ url: env.DATABASE_URL, wsProxy: env.NEON_WS_PROXY })
  // A connection the server drops emits 'error' on the client: without a listener that is an
  // uncaught error in the isolate. The query in flight fails on its own (databaseFailure: 503).
  client.on('error', (err) => console.error(JSON.stringify({ level: 'warn', msg: 'the database dropped the connection', error: err.message })))
  await client.connect()
  return { db: edgeDb(client), close: () => client.end() }
}
