// The MCP server of one request: the SDK's low-level Server (its high-level McpServer takes zod
// schemas only; ours are valibot, the routes' own), tools/list from the registry with JSON Schema made
// from each tool's valibot schema, tools/call checked with that same schema and the caller's level.
import { toJsonSchema } from '@valibot/to-json-schema'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { Context } from 'hono'
import * as v from 'valibot'
import type { AppEnv } from '../env.ts'
import { ApiError, bucketFailure, catalogFailure, databaseFailure, envelope } from '../errors.ts'
import { levelAtLeast } from '../keys.ts'
import { invalid } from '../validate.ts'
import type { Caller } from './caller.ts'
import type { Tool } from './tool.ts'
import { describeSink } from './tools/describe-sink.ts'
import { getRejects } from './tools/get-rejects.ts'
import { listSinks } from './tools/list-sinks.ts'
import { sampleRows } from './tools/sample-rows.ts'
import { sendRows } from './tools/send-rows.ts'

const TOOLS: Tool[] = [listSinks, describeSink, sendRows, getRejects, sampleRows]

/** Version of this server as MCP clients see it (serverInfo). */
const INFO = { name: 'lhbox', version: '0.1.0' }

const inputSchema = (t: Tool) => {
  const { $schema: _, ...json } = toJsonSchema(t.input, { errorMode: 'ignore' }) as Record<string, unknown>
  return json as { type: 'object'; [k: string]: unknown }
}

/** Levels and projects as on the routes: an API key's level, or a send key where the tool takes one. */
function mayCall(t: Tool, caller: Caller): void {
  if (caller.kind === 'send') {
    if (!t.sendKey) throw new ApiError(403, 'send_only', `a send key may call send_rows only; ${t.name} needs an API key (${t.level} level)`)
    return
  }
  if (!levelAtLeast(caller.principal.level, t.level))
    throw new ApiError(403, 'forbidden', `${t.name} needs a ${t.level} key; this key is ${caller.principal.level}`)
}

/** A refusal as the routes would answer it: the error envelope and the status, as the tool's text. */
function failed(err: unknown, tool: string): CallToolResult {
  const api = err instanceof ApiError ? err : (catalogFailure(err) ?? bucketFailure(err) ?? databaseFailure(err))
  if (!api) console.error(JSON.stringify({ level: 'error', path: '/mcp', tool, error: String((err as Error)?.stack ?? err) }))
  const body = api
    ? { status: api.status, ...envelope(api.code, api.message, api.details) }
    : { status: 500, ...envelope('internal', 'an internal error occurred; it has been logged') }
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] }
}

export function mcpServer(c: Context<AppEnv>, caller: Caller): Server {
  // The SDK's default validator (Ajv) compiles code at run time, which a Worker may not: we never ask it.
  const jsonSchemaValidator = {
    getValidator: () => () => ({ valid: false as const, data: undefined, errorMessage: 'this server validates no client answers' }),
  }
  const server = new Server(INFO, { capabilities: { tools: {} }, jsonSchemaValidator })
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TOOLS.map((t) => ({ name: t.name, description: t.description, inputSchema: inputSchema(t) })),
  }))
  server.setRequestHandler(CallToolRequestSchema, async (req): Promise<CallToolResult> => {
    const t = TOOLS.find((x) => x.name === req.params.name)
    // A tool it does not have is the protocol's error (MCP: -32602), not a tool's result.
    if (!t) throw new McpError(ErrorCode.InvalidParams, `no tool ${req.params.name}; the tools are ${TOOLS.map((x) => x.name).join(', ')}`)
    try {
      mayCall(t, caller)
      const input = v.safeParse(t.input, req.params.arguments ?? {})
      if (!input.success) throw invalid(input.issues)
      return { content: [{ type: 'text', text: await t.run(c, input.output, caller) }] }
    } catch (err) {
      return failed(err, t.name)
    }
  })
  return server
}
