// A TCP proxy in front of Postgres on loopback, for what a real part cannot show on demand: it records
// the SQL text of every statement clients send (the wire protocol's Query and Parse messages), and it
// can hold every chunk `delayMs` each way, a database far from the edge (bench:intake's 100 ms round trip).
import { createServer, connect, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'

export interface PgProxy {
  port: number
  /** Statements seen since the last clear(), in order. */
  statements: string[]
  clear(): void
  stop(): Promise<void>
}

const SSL_REQUEST = 80877103
const GSS_REQUEST = 80877104

/** Frontend messages of one connection → the SQL of its Query ('Q') and Parse ('P') messages. */
function sqlReader(onSql: (sql: string) => void): (chunk: Buffer) => void {
  let buf = Buffer.alloc(0)
  let started = false
  return (chunk) => {
    buf = Buffer.concat([buf, chunk])
    for (;;) {
      if (!started) {
        // Untyped: SSLRequest / GSSENCRequest (then again), or the startup message.
        if (buf.length < 8) return
        const len = buf.readInt32BE(0)
        if (buf.length < len) return
        const code = buf.readInt32BE(4)
        buf = buf.subarray(len)
        if (code !== SSL_REQUEST && code !== GSS_REQUEST) started = true
        continue
      }
      if (buf.length < 5) return
      const type = String.fromCharCode(buf[0] as number)
      const len = buf.readInt32BE(1)
      if (buf.length < 1 + len) return
      const body = buf.subarray(5, 1 + len)
      buf = buf.subarray(1 + len)
      if (type === 'Q') onSql(body.subarray(0, body.indexOf(0)).toString('utf8'))
      if (type === 'P') {
        const nameEnd = body.indexOf(0)
        onSql(body.subarray(nameEnd + 1, body.indexOf(0, nameEnd + 1)).toString('utf8'))
      }
    }
  }
}

/** Writes `chunk` to `to` after `delayMs` (in order: each chunk waits its own delay from arrival). */
function relay(from: Socket, to: Socket, delayMs: number, tap?: (chunk: Buffer) => void): void {
  from.on('data', (chunk: Buffer) => {
    tap?.(chunk)
    if (delayMs > 0) setTimeout(() => to.write(chunk), delayMs)
    else to.write(chunk)
  })
  from.on('end', () => (delayMs > 0 ? setTimeout(() => to.end(), delayMs) : to.end()))
  from.on('error', () => to.destroy())
}

export async function startPgProxy(target: { host: string; port: number }, opts: { delayMs?: number; record?: boolean } = {}): Promise<PgProxy> {
  const statements: string[] = []
  const delay = opts.delayMs ?? 0
  const sockets = new Set<Socket>()
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host)
    for (const s of [client, upstream]) {
      sockets.add(s)
      s.on('close', () => sockets.delete(s))
    }
    // Half of the round trip each way.
    relay(client, upstream, delay / 2, opts.record ? sqlReader((sql) => statements.push(sql)) : undefined)
    relay(upstream, client, delay / 2)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    statements,
    clear: () => void statements.splice(0),
    stop: async () => {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
