// The WebSocket→TCP bridge that stands in for Neon's proxy, so the Worker talks to Postgres with
// @neondatabase/serverless exactly as in production. It always dials its one target, whatever
// address the client asks for.
import { createConnection } from 'node:net'
import { WebSocketServer } from 'ws'

export interface Bridge {
  port: number
  stop(): Promise<void>
}

export async function startBridge(port: number, target: { host: string; port: number }): Promise<Bridge> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port })
  wss.on('connection', (ws) => {
    const tcp = createConnection(target)
    const pending: Buffer[] = []
    let open = false
    tcp.on('connect', () => {
      open = true
      for (const chunk of pending) tcp.write(chunk)
      pending.length = 0
    })
    ws.on('message', (data: Buffer) => (open ? tcp.write(data) : pending.push(data)))
    tcp.on('data', (chunk) => ws.readyState === ws.OPEN && ws.send(chunk))
    ws.on('close', () => tcp.destroy())
    ws.on('error', () => tcp.destroy())
    tcp.on('close', () => ws.close())
    tcp.on('error', () => ws.close())
  })
  await new Promise<void>((resolve, reject) => {
    wss.once('listening', resolve)
    wss.once('error', reject)
  })
  return {
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const client of wss.clients) client.terminate()
        wss.close(() => resolve())
      }),
  }
}
