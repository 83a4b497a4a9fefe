// The Worker entry: the API (fetch) and the ledger pruning cron (scheduled).
import { edgeClient, edgeDb } from '../db/edge.ts'
import { createApp } from './app.ts'
import type { Env } from './env.ts'
import { pruneLedger } from './roller-ledger.ts'

const app = createApp()

export default {
  fetch: app.fetch,
  async scheduled(_event, env, ctx) {
    const client = edgeClient({ url: env.DATABASE_URL, wsProxy: env.NEON_WS_PROXY, pipelineConnect: env.NEON_PIPELINE_CONNECT === 'password' })
    await client.connect()
    ctx.waitUntil(
      pruneLedger(edgeDb(client))
        .then((n) => console.log(JSON.stringify({ level: 'info', msg: 'ledger pruned', rows: n })))
        .finally(() => client.end()),
    )
  },
} satisfies ExportedHandler<Env>
