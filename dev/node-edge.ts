// The edge on Node (edge/node-main.ts, what `npm run edge` runs) as a child with its log in the state
// folder: the integration suite runs its edge tests against it as well as against workerd.
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startChild, waitFor, type Child } from './process.ts'

const root = fileURLToPath(new URL('..', import.meta.url))

/** `vars`: the Worker's bindings, as environment variables (edge/node.ts reads the same names). */
export async function startNodeEdgeChild(stateDir: string, port: number, vars: Record<string, string>): Promise<Child> {
  const child = startChild('node edge', process.execPath, ['--import', 'tsx', join(root, 'edge', 'node-main.ts')], join(stateDir, 'node-edge.log'), {
    cwd: root,
    env: { ...process.env, ...vars, LHBOX_EDGE_PORT: String(port), LHBOX_EDGE_HOST: '127.0.0.1' },
  })
  await waitFor('the Node edge', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).status > 0, 60_000, child)
  return child
}
