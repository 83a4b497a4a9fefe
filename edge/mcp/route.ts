// POST /mcp: the Model Context Protocol over streamable HTTP, stateless: every request gets a new
// server and transport (no session outlives it; a Worker's isolates share nothing), JSON answers
// rather than an event stream. GET and DELETE (a session's stream and its end) are 405: there are
// no sessions. The caller is known before any message is read (401), and what is no JSON-RPC request
// is refused as every route refuses bad input: the error envelope, never the transport's own body.
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { JSONRPCNotificationSchema, JSONRPCRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { Hono } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { MAX_BODY_BYTES, readBody } from '../body.ts'
import type { AppEnv } from '../env.ts'
import { ApiError } from '../errors.ts'
import { mcpCaller } from './caller.ts'
import { parseMessages } from './message.ts'
import { mcpServer } from './server.ts'

// 16 MiB of rows, with room for their JSON-RPC envelope and their escapes as a string.
const MCP_BODY_BYTES = 2 * MAX_BODY_BYTES

const CODES: Record<number, string> = {
  400: 'invalid_request',
  404: 'not_found',
  406: 'not_acceptable',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
}

/** One JSON-RPC 2.0 request or notification (batches left MCP in 2025-06-18; no session takes answers from the client). */
function message(text: string): unknown {
  const parsed = parseMessages(text)
  if (parsed === undefined) throw new ApiError(400, 'malformed_json', 'the body is not valid JSON')
  if (!JSONRPCRequestSchema.safeParse(parsed).success && !JSONRPCNotificationSchema.safeParse(parsed).success)
    throw new ApiError(400, 'invalid_request', 'send one JSON-RPC 2.0 request or notification: {"jsonrpc": "2.0", "method", "id"?, "params"?}')
  return parsed
}

export const mcpRoutes = new Hono<AppEnv>().post('/mcp', async (c) => {
  const caller = await mcpCaller(c)
  if (!(c.req.header('content-type') ?? '').toLowerCase().startsWith('application/json'))
    throw new ApiError(415, 'unsupported_media_type', 'send the body as Content-Type: application/json')
  const bytes = await readBody(c.req.raw.body, { contentEncoding: c.req.header('content-encoding'), limit: MCP_BODY_BYTES })
  const parsedBody = message(new TextDecoder().decode(bytes))
  // Answers are JSON whatever the client accepts; the transport still asks Accept to say both.
  const headers = new Headers(c.req.raw.headers)
  headers.delete('content-encoding')
  headers.set('accept', 'application/json, text/event-stream')
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
  const server = mcpServer(c, caller)
  await server.connect(transport)
  try {
    const res = await transport.handleRequest(new Request(c.req.url, { method: 'POST', headers }), { parsedBody })
    if (res.status < 400) return res
    // The transport's refusals (an unsupported MCP-Protocol-Version, say), in the envelope.
    const said = (await res.json().catch(() => null)) as { error?: { message?: string } } | null
    throw new ApiError(res.status as ContentfulStatusCode, CODES[res.status] ?? 'invalid_request', said?.error?.message ?? 'the MCP request was refused')
  } finally {
    await server.close()
  }
})
