// npm run edge: the API on Node (edge/node.ts), configured from the environment. SIGTERM/SIGINT stop
// taking requests, finish those under way, and close the pool.
import { setGlobalDispatcher } from 'undici'
import { egressAgent } from '../contract/egress-connect.ts'
import { nodeEnv, startNodeEdge } from './node.ts'
import { warehouseEgress } from './warehouse-egress.ts'

const env = nodeEnv()
// Every request of this process (a warehouse's store and catalog, /iceberg/s3's) connects only where
// the policy allows, after DNS: the create-time check cannot see what a name resolves to.
const agent = egressAgent(warehouseEgress(env))
setGlobalDispatcher(agent)
const edge = await startNodeEdge(env, {
  port: Number(process.env.LHBOX_EDGE_PORT ?? 8787),
  host: process.env.LHBOX_EDGE_HOST ?? '0.0.0.0',
  pool: Number(process.env.LHBOX_EDGE_POOL ?? 10),
  agent,
})
console.log(JSON.stringify({ level: 'info', msg: 'edge serving', url: edge.url }))
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    console.log(JSON.stringify({ level: 'info', msg: 'edge stopping', signal }))
    void edge.close().then(() => process.exit(0))
  })
}
