// The edge's client factory: @neondatabase/serverless over a WebSocket, as on Workers.
// A Worker cannot keep a client across requests, so each request connects once and closes.
import { Client, neonConfig } from '@neondatabase/serverless'
import { drizzle } from 'drizzle-orm/neon-serverless'
import * as schema from './schema.ts'

export interface EdgeDbConfig {
  url: string
  /** Local only: "host:port" of the WebSocket→TCP bridge standing in for Neon's proxy. */
  wsProxy?: string
  /**
   * Local only: the server behind the bridge asks a cleartext password (pgbouncer's auth_type plain),
   * as Neon's proxy does, so the startup, password and first statement go in one flight (the driver's
   * default on Neon). Postgres itself behind the bridge trusts loopback and would refuse a password sent unasked.
   */
  pipelineConnect?: boolean
}

export function edgeClient(config: EdgeDbConfig): Client {
  if (config.wsProxy) {
    const proxy = config.wsProxy
    neonConfig.wsProxy = (host, port) => `${proxy}/v2?address=${host}:${port}`
    neonConfig.useSecureWebSocket = false
    neonConfig.pipelineTLS = false
    neonConfig.pipelineConnect = config.pipelineConnect ? 'password' : false
  }
  return new Client({ connectionString: config.url })
}

export function edgeDb(client: Client) {
  return drizzle(client, { schema })
}

export type EdgeDb = ReturnType<typeof edgeDb>
