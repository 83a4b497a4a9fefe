// The scan pool's thread entry: a worker does not get the parent's TypeScript loader (tsx) on
// Node 20, so it registers it and then loads the TypeScript worker.
import { register } from 'tsx/esm/api'

register()
await import('./scan-worker.ts')
