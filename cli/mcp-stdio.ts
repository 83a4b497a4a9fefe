// MCP over stdio (one JSON-RPC message a line), as the SDK's StdioServerTransport but read with
// lossless-json: send_rows's rows, when an array, go on to the edge as JSON text with every number's
// digits as the agent wrote them (the SDK's transport would JSON.parse them, rounding past 2^53).
import { createInterface } from 'node:readline'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { isLosslessNumber, parse, stringify } from 'lossless-json'

const plain = (x: unknown): unknown => {
  if (isLosslessNumber(x)) return Number(x.value)
  if (Array.isArray(x)) return x.map(plain)
  if (x !== null && typeof x === 'object') return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, plain(v)]))
  return x
}

/** One line's message; a send_rows call's rows array becomes its lossless JSON text. */
export function readMessage(line: string): JSONRPCMessage {
  const raw = parse(line) as { method?: string; params?: { arguments?: Record<string, unknown> } }
  const rows = raw?.params?.arguments?.rows
  const message = plain(raw) as typeof raw
  if (raw?.method === 'tools/call' && Array.isArray(rows) && message.params?.arguments) message.params.arguments.rows = stringify(rows)
  return JSONRPCMessageSchema.parse(message)
}

export class LosslessStdioTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void

  async start(): Promise<void> {
    const lines = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY })
    lines.on('line', (line) => {
      if (line.trim() === '') return
      try {
        this.onmessage?.(readMessage(line))
      } catch (err) {
        this.onerror?.(err as Error)
      }
    })
    lines.on('close', () => this.onclose?.())
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!process.stdout.write(`${JSON.stringify(message)}\n`)) await new Promise((r) => process.stdout.once('drain', r))
  }

  async close(): Promise<void> {
    this.onclose?.()
  }
}
