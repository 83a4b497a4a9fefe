// GET /openapi.json: an OpenAPI 3.1 document built from the same valibot schemas that validate the
// requests, so the two cannot drift apart.
import { toJsonSchema } from '@valibot/to-json-schema'
import type { GenericSchema } from 'valibot'
import { Hono } from 'hono'
import type { AppEnv } from './env.ts'
import { RollReport } from '../contract/internal.ts'
import { CreateKey } from './routes/keys.ts'
import { CreateSink, UpdateSink } from './routes/sinks.ts'
import { CreateTable, DocumentTable } from './routes/tables.ts'
import { CreateWarehouse } from './routes/warehouses.ts'

type Auth = 'api_key' | 'send_key' | 'bootstrap' | null

interface Operation {
  summary: string
  auth: Auth
  level?: 'read' | 'write' | 'admin'
  body?: GenericSchema | Record<string, unknown>
  statuses: Record<number, string>
}

const schema = (s: GenericSchema) => toJsonSchema(s, { target: 'draft-2020-12', errorMode: 'ignore' })

const SEND_BODY = {
  type: 'array',
  description: 'A JSON array of objects, ≤ 16 MiB (decompressed). Each object is stored byte for byte.',
  items: { type: 'object' },
}

const ERRORS = {
  400: 'Malformed input',
  401: 'Missing or unknown key',
  403: 'Too low a level, or send_only',
  404: 'Not found',
  503: 'Database, bucket or Iceberg catalog unavailable, or a commit whose outcome is unknown (Retry-After; failed names which)',
}

const OPERATIONS: Record<string, Record<string, Operation>> = {
  '/healthz': { get: { summary: 'The database and the bucket answer', auth: null, statuses: { 200: 'Healthy', 503: 'Not ready' } } },
  '/internal/keys': { post: { summary: 'Create an API key (and its project)', auth: 'bootstrap', body: CreateKey, statuses: { 201: 'The key, shown once' } } },
  '/v1/warehouses': {
    get: { summary: 'List the project’s warehouses', auth: 'api_key', level: 'read', statuses: { 200: 'Warehouses' } },
    post: { summary: 'Create a warehouse', auth: 'api_key', level: 'admin', body: CreateWarehouse, statuses: { 201: 'Created', 409: 'warehouse_exists' } },
  },
  '/v1/tables': {
    get: { summary: 'List tables of a warehouse', auth: 'api_key', level: 'read', statuses: { 200: 'Tables' } },
    post: { summary: 'Create a table', auth: 'api_key', level: 'write', body: CreateTable, statuses: { 201: 'Created', 409: 'table_exists' } },
  },
  '/v1/tables/{warehouse}.{namespace}.{table}': {
    get: {
      summary: 'A table: schema, partitioning, docs, snapshots',
      auth: 'api_key',
      level: 'read',
      statuses: { 200: 'The table', 404: 'table_not_found, namespace_not_found' },
    },
  },
  '/v1/tables/{warehouse}.{namespace}.{table}/docs': {
    patch: {
      summary: 'Describe a table and its columns (one commit)',
      auth: 'api_key',
      level: 'write',
      body: DocumentTable,
      statuses: { 200: 'The table', 404: 'table_not_found, namespace_not_found', 409: 'commit_conflict' },
    },
  },
  '/v1/sinks': {
    get: { summary: 'List sinks (?warehouse=, ?include_deleted=true)', auth: 'api_key', level: 'read', statuses: { 200: 'Sinks' } },
    post: {
      summary: 'Create a sink; answers its send key once',
      auth: 'api_key',
      level: 'write',
      body: CreateSink,
      statuses: { 201: 'Created', 404: 'table_not_found', 409: 'sink_exists, partitioned_table_unsupported, unsupported_column_type' },
    },
  },
  '/v1/sinks/{sink_id}': {
    post: {
      summary: 'Send a batch (the send key only; Idempotency-Key required)',
      auth: 'send_key',
      body: SEND_BODY,
      statuses: {
        200: 'Duplicate of an earlier batch',
        202: 'Stored',
        409: 'idempotency_key_reused, quota_exceeded',
        413: 'Over 16 MiB',
        415: 'Not application/json',
      },
    },
    get: { summary: 'A sink: state, policy, lag, received, last roll, rejects, dedupe', auth: 'api_key', level: 'read', statuses: { 200: 'The sink' } },
    patch: { summary: 'Change the key or the roll policy', auth: 'api_key', level: 'write', body: UpdateSink, statuses: { 200: 'The sink' } },
    delete: { summary: 'Delete a sink; discards its pending batches', auth: 'api_key', level: 'write', statuses: { 202: '{pending_batches_discarded}' } },
  },
  '/v1/sinks/{sink_id}/dedupe': {
    post: {
      summary: 'Ask for a whole-table dedupe at the next tick',
      auth: 'api_key',
      level: 'write',
      statuses: { 202: '{dedupe}', 409: 'sink_not_keyed, sink_not_active, dedupe_too_soon' },
    },
  },
  '/v1/usage': { get: { summary: 'ingest_bytes this month', auth: 'api_key', level: 'read', statuses: { 200: 'Usage' } } },
  '/v1/connection': {
    get: { summary: 'How engines reach the tables; sinks_note and ingest_url', auth: 'api_key', level: 'read', statuses: { 200: 'Connection' } },
  },
  '/internal/sinks': { get: { summary: 'The roller’s view; ?roller=&lease_seconds= leases the due sinks', auth: 'bootstrap', statuses: { 200: 'Sinks' } } },
  '/internal/sinks/{sink_id}/roll': { post: { summary: 'The roller’s report', auth: 'bootstrap', body: RollReport, statuses: { 200: 'Recorded' } } },
}

const ENVELOPE = {
  type: 'object',
  required: ['error'],
  properties: {
    error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } }, additionalProperties: true },
  },
}

export function openApiDocument() {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const [path, ops] of Object.entries(OPERATIONS)) {
    paths[path] = {}
    for (const [method, op] of Object.entries(ops)) {
      const responses: Record<string, unknown> = {}
      for (const [status, description] of Object.entries({ ...(op.auth ? ERRORS : {}), ...op.statuses })) {
        responses[status] =
          Number(status) >= 400 ? { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } } : { description }
      }
      paths[path][method] = {
        summary: op.summary,
        ...(op.level ? { 'x-level': op.level } : {}),
        ...(op.auth ? { security: [{ [op.auth]: [] }] } : {}),
        ...(op.body
          ? { requestBody: { required: true, content: { 'application/json': { schema: 'kind' in op.body ? schema(op.body as GenericSchema) : op.body } } } }
          : {}),
        responses,
      }
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: 'lhbox ingest sinks', version: '1' },
    paths,
    components: {
      schemas: { Error: ENVELOPE },
      securitySchemes: {
        api_key: { type: 'http', scheme: 'bearer', description: 'al_key_<12 hex>_<43 base64url>, with a level' },
        send_key: { type: 'http', scheme: 'bearer', description: 'al_send_<12 hex>_<43 base64url>, one sink’s send route only' },
        bootstrap: { type: 'http', scheme: 'bearer', description: 'LHBOX_BOOTSTRAP_SECRET' },
      },
    },
  }
}

export const openapi = new Hono<AppEnv>().get('/openapi.json', (c) => c.json(openApiDocument()))
