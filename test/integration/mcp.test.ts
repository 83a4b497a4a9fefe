// MCP for agents (issue 30, part 3): the official TypeScript SDK's client, over streamable HTTP at
// <edge>/mcp and over stdio through `lhbox mcp`: the tools listed with their input schemas, a sink
// described, rows sent (twice: stored once), rolled, their rejects and the table's rows read back;
// levels and projects as on the routes. Each transport has its own sink, so neither sees the other's rows.
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tickInProcess } from '../support/roller.ts'
import { bucket, database, intakeObjects, ledger, newProject, newSink, type Sink } from '../support/sinks.ts'
import { call, expectError, newApiKey, stack } from '../support/stack.ts'

const COLUMNS = [
  { name: 'x', type: 'long', required: true, doc: 'a counter' },
  { name: 'who', type: 'string', doc: 'who counted' },
  { name: 'at', type: 'timestamptz' },
  { name: 'amount', type: 'decimal(20, 2)' },
]
const TOOLS = ['describe_sink', 'get_rejects', 'list_sinks', 'sample_rows', 'send_rows']

let owner: { project: string; key: string; warehouse: string }
let other: { project: string; key: string; warehouse: string }
let otherSink: Sink
let db: pg.Client

beforeAll(async () => {
  owner = await newProject()
  other = await newProject()
  otherSink = await newSink(other.key, { tableSpec: { warehouse: other.warehouse, namespace: 'mcp' }, sink: { warehouse: other.warehouse } })
  db = await database()
}, 120_000)

afterAll(async () => {
  await db?.end()
})

/** A client over HTTP to <edge>/mcp with the key. */
async function httpClient(key: string): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${stack().apiUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }))
  return client
}

/** A client over stdio to `lhbox mcp`, configured from the environment as an agent's host would. */
async function stdioClient(key: string): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1' })
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LHBOX_URL: stack().apiUrl }
  env[key.startsWith('al_send_') ? 'LHBOX_SEND_KEY' : 'LHBOX_API_KEY'] = key
  await client.connect(new StdioClientTransport({ command: process.execPath, args: ['bin/lhbox.js', 'mcp'], env, stderr: 'pipe' }))
  return client
}

const CLIENTS = { http: httpClient, stdio: stdioClient }

/** A tool's answer: its text (the route's JSON, never parsed on the way), parsed here, and whether it is an error. */
async function callTool(client: Client, name: string, args: Record<string, unknown>) {
  const res = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: Array<{ type: string; text: string }> }
  const text = res.content[0].text
  return { isError: res.isError === true, text, body: JSON.parse(text) }
}

describe.each(Object.keys(CLIENTS) as Array<keyof typeof CLIENTS>)('MCP over %s', (transport) => {
  let sink: Sink
  let client: Client
  const connect = CLIENTS[transport]

  beforeAll(async () => {
    sink = await newSink(owner.key, {
      tableSpec: { warehouse: owner.warehouse, namespace: 'mcp', columns: COLUMNS, doc: 'counts' },
      sink: { warehouse: owner.warehouse },
    })
    client = await connect(owner.key)
  }, 60_000)

  afterAll(async () => {
    await client?.close()
  })

  it('lists the tools, each with a JSON Schema made from its route’s valibot schema', async () => {
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS)
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]))
    expect(byName.send_rows.inputSchema).toMatchObject({ type: 'object', required: ['sink', 'rows'], properties: { sink: {}, rows: {}, batch_id: {} } })
    // The rejects route's own query: its reasons, its limit pattern.
    const rejects = byName.get_rejects.inputSchema as any
    expect(rejects.properties.reason.enum).toContain('type_mismatch')
    expect(rejects.required).toEqual(['sink'])
    expect(byName.sample_rows.inputSchema).toMatchObject({ required: ['table'], properties: { limit: { type: 'string' } } })
  })

  it('list_sinks answers GET /v1/sinks; describe_sink the columns with their docs, the policy and a ready example', async () => {
    const list = await callTool(client, 'list_sinks', { warehouse: owner.warehouse })
    expect(list.isError, list.text).toBe(false)
    expect(list.body.sinks.map((s: any) => s.id)).toContain(sink.id)
    const d = await callTool(client, 'describe_sink', { sink: sink.name })
    expect(d.isError, d.text).toBe(false)
    expect(d.body.sink).toMatchObject({ id: sink.id, table: sink.table, ingest_url: `${stack().apiUrl}/v1/sinks/${sink.id}` })
    expect(d.body.table).toMatchObject({ name: `${owner.warehouse}.${sink.table}`, doc: 'counts', format_version: 2 })
    expect(d.body.table.columns).toEqual([
      { name: 'x', type: 'long', required: true, doc: 'a counter', json: expect.any(String) },
      { name: 'who', type: 'string', required: false, doc: 'who counted', json: 'a string' },
      { name: 'at', type: 'timestamptz', required: false, doc: null, json: expect.stringContaining('UTC offset') },
      { name: 'amount', type: 'decimal(20, 2)', required: false, doc: null, json: expect.any(String) },
    ])
    expect(d.body.roll).toEqual({ roll_seconds: 300, roll_bytes: 64 * 1024 * 1024, inactivity_seconds: null })
    expect(d.body.key).toBeNull()
    expect(d.body.valid_row.length).toBeGreaterThan(3)
    expect(d.body.docs_hint.columns).toEqual(['at', 'amount'])
    expect(d.body.example).toEqual({ sink: sink.id, rows: [{ x: 42, who: 'text', at: '2026-01-02T03:04:05.123456Z', amount: '1.50' }] })
  })

  it('send_rows sends as the send route does: the same batch twice is stored once, the example row is accepted', async () => {
    const example = (await callTool(client, 'describe_sink', { sink: sink.id })).body.example
    const batchId = `mcp-${transport}-1`
    const first = await callTool(client, 'send_rows', { ...example, batch_id: batchId })
    expect(first.isError, first.text).toBe(false)
    expect(first.body).toMatchObject({ accepted: 1, rejected: 0, batch_id: batchId, state: 'pending' })
    expect(first.body.duplicate).toBeUndefined()
    const again = await callTool(client, 'send_rows', { ...example, batch_id: batchId })
    expect(again.body).toMatchObject({ accepted: 1, batch_id: batchId, received_at: first.body.received_at, duplicate: true })
    // The same batch id with other rows: the send route's 409.
    const reused = await callTool(client, 'send_rows', { sink: sink.id, rows: [{ x: 7 }], batch_id: batchId })
    expect(reused.isError).toBe(true)
    expect(reused.body).toMatchObject({ status: 409, error: { code: 'idempotency_key_reused' } })
    // Rows as JSON text (NDJSON here) go in byte for byte; a long past 2^53 stays exact. No batch_id:
    // derived from the rows, so a retried call is stored once too.
    const text = '{"x":9223372036854775807,"who":"max"}\n{"x":"seven"}\n42\n'
    const derived = await callTool(client, 'send_rows', { sink: sink.id, rows: text })
    expect(derived.body).toMatchObject({
      accepted: 2,
      rejected: 1,
      reasons: [{ index: 2, reason: 'not_an_object' }],
      batch_id: expect.stringMatching(/^mcp-[0-9a-f]{40}$/),
    })
    expect((await callTool(client, 'send_rows', { sink: sink.id, rows: text })).body).toMatchObject({ batch_id: derived.body.batch_id, duplicate: true })
    const rows = await ledger(db, sink.id)
    expect(rows.map((r) => r.batch_id).sort()).toEqual([batchId, derived.body.batch_id].sort())
    expect(await intakeObjects(sink.id)).toHaveLength(2)
  })

  it('get_rejects and sample_rows answer the roll’s rejects and rows as the routes do, numbers as sent', async () => {
    const tick = await tickInProcess({ sink: sink.id })
    expect(tick.code, tick.stdout).toBe(0)
    const rejects = await callTool(client, 'get_rejects', { sink: sink.id, reason: 'type_mismatch' })
    expect(rejects.isError, rejects.text).toBe(false)
    expect(rejects.body.rejects.map((r: any) => [r.reason, r.field])).toEqual([['type_mismatch', 'x']])
    expect(rejects.text).toContain('"row":{"x":"seven"}')
    const all = await callTool(client, 'get_rejects', { sink: sink.id, limit: '10' })
    expect(all.body.rejects.map((r: any) => r.reason).sort()).toEqual(['not_an_object', 'type_mismatch'])
    const sample = await callTool(client, 'sample_rows', { table: `${owner.warehouse}.${sink.table}`, limit: '10' })
    expect(sample.isError, sample.text).toBe(false)
    expect(sample.text).toContain('{"x":9223372036854775807,"who":"max"')
    expect(sample.body.rows).toHaveLength(2)
  }, 120_000)

  it('levels and projects as on the routes: read keys read, send keys send to their own sink only', async () => {
    const reader = await connect(await newApiKey('read', owner.project))
    try {
      expect((await callTool(reader, 'list_sinks', {})).isError).toBe(false)
      expect((await callTool(reader, 'send_rows', { sink: sink.id, rows: [{ x: 1 }] })).body).toMatchObject({ status: 403, error: { code: 'forbidden' } })
    } finally {
      await reader.close()
    }
    // Another project's sink is not found, as on the routes.
    expect((await callTool(client, 'describe_sink', { sink: otherSink.id })).body).toMatchObject({ status: 404, error: { code: 'sink_not_found' } })
    expect((await callTool(client, 'send_rows', { sink: otherSink.id, rows: [{ x: 1 }] })).body).toMatchObject({
      status: 404,
      error: { code: 'sink_not_found' },
    })
    // A deleted sink takes no rows (its key stopped working with the delete).
    const gone = await newSink(owner.key, { tableSpec: { warehouse: owner.warehouse, namespace: 'mcp' }, sink: { warehouse: owner.warehouse } })
    expect((await call(`/v1/sinks/${gone.id}`, { key: owner.key, method: 'DELETE' })).status).toBe(202)
    expect((await callTool(client, 'send_rows', { sink: gone.id, rows: [{ x: 1 }] })).body).toMatchObject({ status: 404, error: { code: 'sink_not_found' } })
    const sender = await connect(sink.sendKey)
    try {
      const sent = await callTool(sender, 'send_rows', { sink: sink.id, rows: [{ x: 5 }], batch_id: `by-key-${transport}` })
      expect(sent.body, sent.text).toMatchObject({ accepted: 1, batch_id: `by-key-${transport}` })
      expect((await callTool(sender, 'send_rows', { sink: otherSink.id, rows: [{ x: 5 }] })).body).toMatchObject({ status: 403, error: { code: 'forbidden' } })
      expect((await callTool(sender, 'list_sinks', {})).body).toMatchObject({ status: 403, error: { code: 'send_only' } })
    } finally {
      await sender.close()
    }
    // A tool it does not have is the protocol's error.
    await expect(client.callTool({ name: 'drop_table', arguments: {} })).rejects.toThrow(/no tool drop_table/)
    // Bad input is the routes' 400, checked with the same schema.
    const bad = await callTool(client, 'get_rejects', { sink: sink.id, reason: 'bad_mood' })
    expect(bad.body).toMatchObject({ status: 400, error: { code: 'invalid_request' } })
  }, 60_000)

  it('a wrong key is refused before any tool', async () => {
    await expect(connect('al_key_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).rejects.toThrow()
  })
})

describe('POST /mcp over HTTP', () => {
  const rpc = (body: string, key?: string) =>
    call('/mcp', { method: 'POST', key, body, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' } })

  it('answers 401 with the error envelope for a missing, unknown or revoked key; GET is 405', async () => {
    const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
    for (const key of [
      undefined,
      'nope',
      'al_key_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      'al_send_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    ]) {
      const res = await rpc(init, key)
      expect(res.status, res.text).toBe(401)
      expect(res.body.error.code).toBe('unauthorized')
      expect(res.headers.get('www-authenticate')).toBe('Bearer')
    }
    // What is no JSON-RPC request is refused as every route refuses bad input.
    expectError(await rpc('{"jsonrpc":"2.0",', owner.key), 400, 'malformed_json')
    expectError(await rpc('[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]', owner.key), 400, 'invalid_request')
    expectError(await rpc('{"jsonrpc":"1.0","id":1,"method":"tools/list"}', owner.key), 400, 'invalid_request')
    expectError(await call('/mcp', { method: 'POST', key: owner.key, body: init, headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type')
    // A client that accepts JSON only is answered in JSON too.
    const plain = await call('/mcp', { method: 'POST', key: owner.key, body: init, headers: { 'content-type': 'application/json' } })
    expect(plain.status, plain.text).toBe(200)
    expect(plain.body.result.tools).toHaveLength(5)
    const get = await call('/mcp', { key: owner.key })
    expect(get.status).toBe(405)
    expect(get.headers.get('allow')).toBe('POST')
  })

  it('reads rows given as an array without JSON.parse: a long past 2^53 reaches the store exact', async () => {
    const sink = await newSink(owner.key, { tableSpec: { warehouse: owner.warehouse, namespace: 'mcp' }, sink: { warehouse: owner.warehouse } })
    const body = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"send_rows","arguments":{"sink":"${sink.id}","batch_id":"exact","rows":[{"x":9007199254740993}]}}}`
    const res = await rpc(body, owner.key)
    expect(res.status, res.text).toBe(200)
    expect(res.body.id).toBe(7)
    expect(JSON.parse(res.body.result.content[0].text)).toMatchObject({ accepted: 1, batch_id: 'exact' })
    const stored = await bucket().get(`_sink/${sink.id}/exact.ndjson`)
    expect(new TextDecoder().decode(stored?.body)).toBe('{"x":9007199254740993}\n')
  })
})
