// lhbox mcp: the edge's MCP tools over stdio, for an agent that starts its servers as commands. Every
// tools/list and tools/call is passed to <LHBOX_URL>/mcp with the environment's key (LHBOX_API_KEY,
// else LHBOX_SEND_KEY): the edge decides, as on its routes; the CLI reads no database.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { CliError, type Connection } from '../http.ts'
import { LosslessStdioTransport } from '../mcp-stdio.ts'

const INFO = { name: 'lhbox', version: '0.1.0' }

/** Serves until stdin closes. */
export async function mcp(conn: Connection, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const key = conn.apiKey ?? env.LHBOX_SEND_KEY
  if (!key) throw new CliError('usage', 'lhbox mcp needs LHBOX_API_KEY (or --api-key) or LHBOX_SEND_KEY')
  const edge = new Client(INFO)
  try {
    await edge.connect(new StreamableHTTPClientTransport(new URL(`${conn.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }))
  } catch (err) {
    throw new CliError('mcp_unreachable', `${conn.url}/mcp refused the connection: ${(err as Error).message}`)
  }
  const server = new Server(INFO, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, (req) => edge.listTools(req.params))
  server.setRequestHandler(CallToolRequestSchema, (req) => edge.callTool(req.params))
  const closed = new Promise<void>((resolve) => (server.onclose = resolve))
  await server.connect(new LosslessStdioTransport())
  await closed
  await edge.close()
}
