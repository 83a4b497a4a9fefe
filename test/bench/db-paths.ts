// bench:intake's database paths: the same edge Worker reaching Postgres through the neon driver over a
// WebSocket, or through a Hyperdrive binding, each also with BENCH_DB_DELAY_MS (100) of round trip
// added between the edge and the database's region (a delaying TCP proxy on loopback): what a device
// far from the database region feels.
//
// Where the delay sits follows where each path's hops are in production. neon: the WebSocket goes to
// Neon's proxy in the database's region, so the connection's setup and every query cross it (delay in
// front of the bridge, which stands in for Neon's proxy). Hyperdrive: the Worker connects to Hyperdrive
// at the edge, and Hyperdrive's pool keeps warm connections to the database, so only the queries cross
// it. Locally Hyperdrive opens a connection per client and pools nothing, so a pgbouncer of its own
// stands in for Hyperdrive's pool, on this side of the delay.
import { join } from 'node:path'
import { startPgbouncer } from '../../dev/pgbouncer.ts'
import { freePort } from '../../dev/ports.ts'
import { PG_DATABASE, PG_PASSWORD, PG_USER } from '../../dev/postgres.ts'
import { startWrangler } from '../../dev/wrangler.ts'
import { startPgProxy } from '../support/pg-proxy.ts'
import type { BenchStack, Cleanup } from './common.ts'

export interface DbPath {
  name: string
  origin: string
}

/** The edges of the paths besides the stack's own (neon, no delay). */
export async function startDbPaths(b: BenchStack, cleanup: Cleanup, delayMs: number): Promise<DbPath[]> {
  const s = b.stack
  const pgPort = Number(new URL(s.databaseUrl).port)
  const url = (port: number) => `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${port}/${PG_DATABASE}?sslmode=disable`
  const edge = async (name: string, vars: Record<string, string>, hyperdrive?: string): Promise<DbPath> => {
    const [port, inspector] = [await freePort(), await freePort()]
    const child = await startWrangler(join(s.dir, `edge-${name}`), port, inspector, { ...s.edgeVars, ...vars }, { hyperdrive })
    cleanup.add(() => child.stop())
    return { name, origin: `http://127.0.0.1:${port}` }
  }

  // Hyperdrive, near: its pool (pgbouncer) next to the database.
  const nearPool = await freePort()
  const nearBouncer = await startPgbouncer(join(s.dir, 'hd-near'), nearPool, pgPort)
  cleanup.add(() => nearBouncer.stop())

  // Far: Postgres behind the delay; neon's bridge behind it too, Hyperdrive's pool in front of it.
  const farDb = await startPgProxy({ host: '127.0.0.1', port: pgPort }, { delayMs })
  cleanup.add(() => farDb.stop())
  const farPool = await freePort()
  const farBouncer = await startPgbouncer(join(s.dir, 'hd-far'), farPool, farDb.port)
  cleanup.add(() => farBouncer.stop())
  const farBridge = await startPgProxy({ host: '127.0.0.1', port: s.ports.bridge }, { delayMs })
  cleanup.add(() => farBridge.stop())

  return [
    await edge('hyperdrive', {}, url(nearPool)),
    await edge(`neon+${delayMs}ms`, { NEON_WS_PROXY: `127.0.0.1:${farBridge.port}` }),
    await edge(`hyperdrive+${delayMs}ms`, {}, url(farPool)),
  ]
}
