// Another edge beside the stack's, on either host, with some bindings changed (the sinks switch, say):
// workerd through `wrangler dev` as in the stack, or Node (edge/node.ts) in this process. Both reach
// the stack's Postgres and S3, so they serve the same sinks.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startWrangler, type ExtraBindings } from '../../dev/wrangler.ts'
import { nodeEnv, startNodeEdge } from '../../edge/node.ts'
import { DEAD_HOST_PORT, freePorts } from './ports.ts'
import { stack, type EdgeHost } from './stack.ts'

export type { EdgeHost }
export const EDGE_HOSTS: EdgeHost[] = ['workerd', 'node']

export interface Edge {
  url: string
  stop(): Promise<void>
}

/**
 * `hyperdrive`: workerd only, a Hyperdrive binding whose local connection string is this URL.
 * `ratelimit`: workerd only, the project ceiling's Rate Limiting binding (LHBOX_PROJECT_RATE_LIMIT).
 * `databaseDown`: the edge's way to Postgres leads where nothing listens (a privileged port).
 */
export async function startEdge(host: EdgeHost, vars: Record<string, string> = {}, opts: ExtraBindings & { databaseDown?: boolean } = {}): Promise<Edge> {
  const all = { ...stack().edgeVars, ...vars }
  if (host === 'node') {
    // Node keeps a pool, so it dials Postgres itself (no pgbouncer, no WebSocket bridge), unless told
    // where: the neon driver's DATABASE_URL names Postgres itself too, as seen from the bridge.
    const databaseUrl = opts.databaseDown ? `postgres://lhbox:lhbox-dev@${DEAD_HOST_PORT}/lhbox` : (vars.DATABASE_URL ?? stack().databaseUrl)
    const edge = await startNodeEdge(nodeEnv({ ...all, DATABASE_URL: databaseUrl }), { port: 0, host: '127.0.0.1', pool: 4 })
    return { url: edge.url, stop: () => edge.close() }
  }
  if (opts.databaseDown) all.NEON_WS_PROXY = DEAD_HOST_PORT
  const dir = mkdtempSync(join(tmpdir(), 'lhbox-edge-'))
  const [port, inspector] = await freePorts(2)
  const child = await startWrangler(dir, port, inspector, all, opts)
  return {
    url: `http://127.0.0.1:${port}`,
    async stop() {
      await child.stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
