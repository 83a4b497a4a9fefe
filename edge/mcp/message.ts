// The JSON-RPC body of an MCP request, read without JSON.parse: the rows of a send_rows call keep
// every number's exact text (a long beyond 2^53, a decimal's digits); everything else is plain JSON
// for the SDK (ids, limits).
import { isLosslessNumber, parse } from 'lossless-json'

const plain = (x: unknown): unknown => {
  if (isLosslessNumber(x)) return Number(x.value)
  if (Array.isArray(x)) return x.map(plain)
  if (x !== null && typeof x === 'object') return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, plain(v)]))
  return x
}

function message(m: unknown): unknown {
  const out = plain(m) as { method?: unknown; params?: { arguments?: Record<string, unknown> } }
  const rows = (m as typeof out)?.params?.arguments?.rows
  if (out?.method === 'tools/call' && rows !== undefined && out.params?.arguments) out.params.arguments.rows = rows
  return out
}

/** The parsed body (a message or a batch of them); undefined when it is not JSON (the SDK answers that). */
export function parseMessages(text: string): unknown {
  let parsed: unknown
  try {
    parsed = parse(text)
  } catch {
    return undefined
  }
  return Array.isArray(parsed) ? parsed.map(message) : message(parsed)
}
