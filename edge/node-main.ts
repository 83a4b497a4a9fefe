// npm run edge: the API on Node (edge/node.ts), configured from the environment. SIGTERM/SIGINT stop
// taking requests, finish those under way, and close the pool.
import { nodeEnv, startNodeEdge } from './node.ts'

const edge = await startNodeEdge(nodeEnv(), {
  port: Number(process.env.LHBOX_EDGE_PORT ?? 8787),
  host: process.env.LHBOX_EDGE_HOST ?? '0.0.0.0',
  pool: Number(process.env.LHBOX_EDGE_POOL ?? 10),
})
console.log(JSON.stringify({ level: 'info', msg: 'edge serving', url: edge.url }))
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    console.log(JSON.stringify({ level: 'info', msg: 'edge stopping', signal }))
    void edge.close().then(() => process.exit(0))
  })
}
