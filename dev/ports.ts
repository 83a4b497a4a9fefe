// Loopback ports: a fixed base (LHBOX_DEV_PORT) for the dev stack, free ones for tests.
import { createServer } from 'node:net'

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.unref()
    srv.on('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address()
      const port = typeof addr === 'object' && addr ? addr.port : 0
      srv.close(() => resolve(port))
    })
  })
}

export interface StackPorts {
  postgres: number
  pgbouncer: number
  bridge: number
  s3: number
  api: number
  inspector: number
  roller: number
}

const OFFSETS: Record<keyof StackPorts, number> = { postgres: 0, pgbouncer: 1, bridge: 2, s3: 3, api: 4, inspector: 5, roller: 6 }

export async function stackPorts(base?: number): Promise<StackPorts> {
  const ports = {} as StackPorts
  for (const [name, offset] of Object.entries(OFFSETS) as [keyof StackPorts, number][]) {
    ports[name] = base ? base + offset : await freePort()
  }
  return ports
}
