// GET /openapi.json: an OpenAPI 3.1 document built from the same valibot schemas that validate the
// requests, so the two cannot drift apart. test/integration/api-schema.test.ts runs schemathesis over it
// against a live stack: every status an operation answers, and the shape of its answers, are here.
import { toJsonSchema } from '@valibot/to-json-schema'
import type { GenericSchema } from 'valibot'
import { Hono } from 'hono'
import type { AppEnv } from './env.ts'
import { RollAnswer, RollReport, SinkList, SinksQuery } from '../contract/internal.ts'
import { CreateKey } from './routes/keys.ts'
import { CreateSink, ListSinksQuery, SINK_REF, UpdateSink } from './routes/sinks.ts'
import { CreateTable, DocumentTable, IcebergTypeJson, ListTablesQuery, NestedFieldJson, TABLE_PART } from './routes/tables.ts'
import { CreateWarehouse, WAREHOUSE_NAME } from './routes/warehouses.ts'

type Auth = 'api_key' | 'send_key' | 'bootstrap' | null
type JsonSchema = Record<string, unknown>

interface Parameter {
  name: string
  in: 'query' | 'header'
  required?: boolean
  description?: string
  schema: JsonSchema
}

interface Operation {
  summary: string
  auth: Auth
  level?: 'read' | 'write' | 'admin'
  /** Query and header parameters. Path parameters come from PATH_PARAMS, by name (`path` overrides one). */
  params?: Parameter[]
  path?: Record<string, JsonSchema>
  body?: GenericSchema | JsonSchema
  statuses: Record<number, string>
  /** The schema of each success answer, by status. */
  answers?: Record<number, JsonSchema>
}

/** Named schemas (recursive ones): each is a component, and its uses refer to it. */
const DEFINITIONS = { IcebergType: IcebergTypeJson, NestedField: NestedFieldJson }
const COMPONENTS: Record<string, JsonSchema> = {}

/** A valibot schema as JSON Schema; its definitions go to components.schemas, where OpenAPI refers. */
const schema = (s: GenericSchema): JsonSchema => {
  const converted = toJsonSchema(s, { target: 'draft-2020-12', errorMode: 'ignore', definitions: DEFINITIONS })
  const { $schema: _, $defs, ...json } = JSON.parse(JSON.stringify(converted).replaceAll('"#/$defs/', '"#/components/schemas/')) as JsonSchema
  Object.assign(COMPONENTS, $defs)
  return json
}

/** A valibot object of query strings as OpenAPI query parameters (`override` replaces one's schema). */
function queryParams(s: GenericSchema, override: Record<string, JsonSchema> = {}): Parameter[] {
  const json = schema(s) as { properties: Record<string, JsonSchema>; required?: string[] }
  return Object.entries(json.properties).map(([name, p]) => ({
    name,
    in: 'query',
    ...(json.required?.includes(name) ? { required: true } : {}),
    schema: override[name] ?? p,
  }))
}

// ---- answers --------------------------------------------------------------------------------------

const STRING = { type: 'string' }
const INTEGER = { type: 'integer' }
const NUMBER = { type: 'number' }
const OBJECT = { type: 'object' }
const orNull = (s: JsonSchema): JsonSchema => ({ anyOf: [s, { type: 'null' }] })
/** An object whose listed members are all present (more may follow: new members are not a break). */
const object = (properties: Record<string, JsonSchema>, optional: string[] = []): JsonSchema => ({
  type: 'object',
  required: Object.keys(properties).filter((k) => !optional.includes(k)),
  properties,
})
const array = (items: JsonSchema): JsonSchema => ({ type: 'array', items })
const TIME = { type: 'string', description: 'RFC 3339, UTC' }

const WAREHOUSE = object({
  id: STRING,
  name: STRING,
  catalog: object({ type: { enum: ['sql', 'rest'] } }),
  bucket: STRING,
  endpoint: STRING,
  region: STRING,
  prefix: STRING,
  maintenance: { enum: ['roller', 'off'] },
  created_at: TIME,
})

const TABLE = object({
  warehouse: STRING,
  namespace: STRING,
  name: STRING,
  table: STRING,
  format_version: { enum: [1, 2, 3] },
  location: STRING,
  doc: orNull(STRING),
  schema: object({ schema_id: INTEGER, fields: array(OBJECT) }),
  partition_spec: array(object({ name: STRING, transform: STRING, source: orNull(STRING) })),
  snapshot_count: INTEGER,
  current_snapshot_id: { ...orNull({ type: 'string', pattern: '^-?\\d+$' }), description: 'A string: 63-bit ids do not survive JSON numbers' },
  undocumented_columns: array(STRING),
  properties: { type: 'object', additionalProperties: STRING },
})

const SINK = object({
  id: { type: 'string', pattern: '^snk_[0-9a-f]+$' },
  name: STRING,
  warehouse: STRING,
  table: STRING,
  state: { enum: ['active', 'disabled', 'deleted'] },
  disabled_reason: orNull(STRING),
  roll: object({ roll_seconds: INTEGER, roll_bytes: INTEGER, inactivity_seconds: orNull(INTEGER) }),
  key: orNull(array(STRING)),
  ingest_url: STRING,
  lag: object({ batches_waiting: INTEGER, bytes_waiting: NUMBER, oldest_waiting_at: orNull(TIME), seconds_behind: INTEGER }),
  received: object({ batches: NUMBER, rows: NUMBER, bytes: NUMBER, last_at: orNull(TIME) }),
  last_roll: orNull(OBJECT),
  rejects: object({ rows_total: NUMBER, batches_with_rejects: NUMBER, last_at: orNull(TIME), prefix: STRING }),
  dedupe: object({ requested_at: orNull(TIME), last: orNull(OBJECT) }),
  created_at: TIME,
  deleted_at: orNull(TIME),
})

const SINK_CREATED: JsonSchema = {
  allOf: [
    SINK,
    object(
      {
        send_key: { type: 'string', pattern: '^al_send_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$', description: 'Shown once' },
        iam_writes: { type: 'array', maxItems: 0 },
        docs_hint: object({ message: STRING, table_doc_missing: { type: 'boolean' }, columns: array(STRING), command: STRING }),
      },
      ['docs_hint'],
    ),
  ],
}

const SEND_ANSWER = object(
  {
    accepted: INTEGER,
    rejected: INTEGER,
    reasons: array(object({ index: INTEGER, reason: { const: 'not_an_object' } })),
    batch_id: STRING,
    bytes: INTEGER,
    received_at: TIME,
    state: { const: 'pending' },
    duplicate: { const: true },
  },
  ['duplicate'],
)

const USAGE = object({
  month: { type: 'string', pattern: '^\\d{4}-\\d{2}$' },
  ingest_bytes: object({
    month_to_date: NUMBER,
    batches: NUMBER,
    rows_accepted: NUMBER,
    rows_rejected: NUMBER,
    by_sink: array(object({ sink_id: STRING, name: orNull(STRING), bytes: NUMBER, batches: NUMBER, rows_accepted: NUMBER, rows_rejected: NUMBER })),
    enforced: { const: false },
  }),
})

const CONNECTION = object({
  warehouses: array(
    object({
      name: STRING,
      catalog: object({ type: { enum: ['sql', 'rest'] } }),
      storage: object({ bucket: STRING, endpoint: STRING, region: STRING, path_style: { const: true } }),
    }),
  ),
  ingest_url: STRING,
  sinks_note: STRING,
})

const API_KEY_CREATED = object({
  key: { type: 'string', pattern: '^al_key_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$', description: 'Shown once' },
  key_id: STRING,
  level: { enum: ['read', 'write', 'admin'] },
  project: STRING,
  project_id: STRING,
})

// ---- parameters -------------------------------------------------------------------------------------

const PATH_PARAMS: Record<string, JsonSchema> = {
  sink_id: { ...schema(SINK_REF), description: 'The sink’s id (snk_…) or its name' },
  warehouse: { ...schema(WAREHOUSE_NAME), description: 'The warehouse’s name' },
  namespace: { type: 'string', pattern: '^[^.\\u0000]+(?:\\.[^.\\u0000]+)*$', description: 'The namespace; a nested one with its levels joined by dots' },
  table: { ...schema(TABLE_PART), description: 'The table’s name' },
}

// ---- bodies: what the routes check past their valibot schema, where JSON Schema can say it -----------------

/** POST /v1/tables: the columns or a whole schema (one of them), of at least one column. */
const CREATE_TABLE: JsonSchema = (() => {
  const s = schema(CreateTable) as { properties: Record<string, JsonSchema & { properties?: Record<string, JsonSchema> }> }
  const whole = s.properties.schema
  return {
    ...s,
    properties: {
      ...s.properties,
      columns: { ...s.properties.columns, minItems: 1 },
      schema: { ...whole, properties: { ...whole.properties, fields: { ...whole.properties?.fields, minItems: 1 } } },
    },
    oneOf: [{ required: ['columns'] }, { required: ['schema'] }],
  }
})()

/** PATCH …/docs: a doc, a column doc, or both. */
const DOCUMENT_TABLE: JsonSchema = {
  ...schema(DocumentTable),
  anyOf: [{ required: ['doc'] }, { required: ['columns'], properties: { columns: { minProperties: 1 } } }],
}

const IDEMPOTENCY_KEY: Parameter = {
  name: 'Idempotency-Key',
  in: 'header',
  required: true,
  description: 'The batch id: a retry with the same id and body is answered 200 as a duplicate',
  schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' },
}

const SEND_BODY = {
  type: 'array',
  description:
    'A JSON array of objects (rows), ≤ 16 MiB (decompressed). Each element is stored byte for byte, one a line. ' +
    'An element that is not an object is answered as rejected (reasons: not_an_object, by index), and the roll writes it ' +
    'to the rejects file with its index and bytes.',
  // Any JSON value is taken: one that is not an object is a rejected row, not a refused batch.
  items: { description: 'A row: an object whose members are the table’s columns' },
}

/** What every operation of a kind of key may answer besides its own statuses. */
const AUTH_ERRORS: Record<Exclude<Auth, null>, Record<number, string>> = {
  api_key: {
    401: 'unauthorized: no key, or an unknown or revoked one',
    403: 'forbidden: the key’s level is too low (read < write < admin); send_only: a send key',
  },
  send_key: {
    401: 'unauthorized: no send key, a wrong one, or no such sink (answered alike)',
    403: 'send_only: an API key (this route takes the sink’s send key only)',
  },
  // Any other credential, none included, is refused alike (the internal routes are never served publicly).
  bootstrap: { 403: 'forbidden: not the bootstrap secret' },
}
const MALFORMED = 'invalid_request: a parameter or the body does not match the schema (issues names which)'
const BODY_ERRORS = { 400: `${MALFORMED}; malformed_json`, 415: 'unsupported_media_type: not Content-Type: application/json' }
const UNAVAILABLE =
  'unavailable: the database, the bucket or the Iceberg catalog did not answer, or a commit’s outcome is unknown (Retry-After; failed names which)'
const BAD_TABLE_PATH = 'invalid_request: the path is not <warehouse>.<namespace>.<table>'
const SINK_NOT_FOUND = 'sink_not_found (another project’s sink is not found either)'

const OPERATIONS: Record<string, Record<string, Operation>> = {
  '/healthz': {
    get: {
      summary: 'The database and the bucket answer',
      auth: null,
      statuses: { 200: 'Healthy', 503: 'unavailable: not ready (failed names which)' },
      answers: { 200: object({ ok: { const: true }, database: { const: 'ok' }, bucket: { const: 'ok' } }) },
    },
  },
  '/internal/keys': {
    post: {
      summary: 'Create an API key (and its project)',
      auth: 'bootstrap',
      body: CreateKey,
      statuses: { 201: 'The key, shown once' },
      answers: { 201: API_KEY_CREATED },
    },
  },
  '/v1/warehouses': {
    get: {
      summary: 'List the project’s warehouses',
      auth: 'api_key',
      level: 'read',
      statuses: { 200: 'Warehouses' },
      answers: { 200: object({ warehouses: array(WAREHOUSE) }) },
    },
    post: {
      summary: 'Create a warehouse',
      auth: 'api_key',
      level: 'admin',
      body: CreateWarehouse,
      statuses: { 201: 'Created', 409: 'warehouse_exists' },
      answers: { 201: WAREHOUSE },
    },
  },
  '/v1/tables': {
    get: {
      summary: 'List the tables of a warehouse (of one namespace with ?namespace=)',
      auth: 'api_key',
      level: 'read',
      params: queryParams(ListTablesQuery),
      statuses: { 200: 'Tables', 404: 'warehouse_not_found, namespace_not_found' },
      answers: { 200: object({ warehouse: STRING, tables: array(object({ namespace: STRING, name: STRING, table: STRING })) }) },
    },
    post: {
      summary: 'Create a table',
      auth: 'api_key',
      level: 'write',
      body: CREATE_TABLE,
      statuses: {
        201: 'Created',
        400: `${MALFORMED}; malformed_json; invalid_schema (an unknown type, a name twice, a v3 type on a v2 table); invalid_partition`,
        404: 'warehouse_not_found, namespace_not_found',
        409: 'table_exists',
      },
      answers: { 201: TABLE },
    },
  },
  '/v1/tables/{warehouse}.{namespace}.{table}': {
    get: {
      summary: 'A table: schema, partitioning, docs, snapshots',
      auth: 'api_key',
      level: 'read',
      statuses: { 200: 'The table', 400: BAD_TABLE_PATH, 404: 'warehouse_not_found, table_not_found, namespace_not_found' },
      answers: { 200: TABLE },
    },
  },
  '/v1/tables/{warehouse}.{namespace}.{table}/docs': {
    patch: {
      summary: 'Describe a table and its columns (one commit)',
      auth: 'api_key',
      level: 'write',
      body: DOCUMENT_TABLE,
      statuses: {
        200: 'The table',
        400: `${MALFORMED}; malformed_json; unknown_column; ${BAD_TABLE_PATH}`,
        404: 'warehouse_not_found, table_not_found, namespace_not_found',
        409: 'commit_conflict',
      },
      answers: { 200: TABLE },
    },
  },
  '/v1/sinks': {
    get: {
      summary: 'List the project’s sinks (?warehouse=, ?include_deleted=true)',
      auth: 'api_key',
      level: 'read',
      params: queryParams(ListSinksQuery),
      statuses: { 200: 'Sinks' },
      answers: { 200: object({ sinks: array(SINK) }) },
    },
    post: {
      summary: 'Create a sink; answers its send key once',
      auth: 'api_key',
      level: 'write',
      body: CreateSink,
      statuses: {
        201: 'Created',
        400: `${MALFORMED}; malformed_json; unknown_column (a key column the table lacks)`,
        404: 'warehouse_not_found, table_not_found (with the namespace’s tables)',
        409: 'sink_exists, sink_name_taken, partitioned_table_unsupported, unsupported_column_type, key_unsupported, key_type_unsupported',
      },
      answers: { 201: SINK_CREATED },
    },
  },
  '/v1/sinks/{sink_id}': {
    post: {
      summary: 'Send a batch (the send key only; Idempotency-Key required)',
      auth: 'send_key',
      body: SEND_BODY,
      path: { sink_id: { type: 'string', pattern: '^snk_[0-9a-f]+$', description: 'The sink’s id (never its name)' } },
      params: [IDEMPOTENCY_KEY],
      answers: { 200: SEND_ANSWER, 202: SEND_ANSWER },
      statuses: {
        200: 'Duplicate of an earlier batch',
        400: 'invalid_idempotency_key; malformed_json (offset says where); not_an_array; malformed_gzip',
        202: 'Stored; the elements that are not objects are counted rejected (not_an_object) and reach the rejects file at the roll',
        409: 'idempotency_key_reused, quota_exceeded',
        413: 'Over 16 MiB',
        415: 'Not application/json',
      },
    },
    get: {
      summary: 'A sink: state, policy, lag, received, last roll, rejects, dedupe',
      auth: 'api_key',
      level: 'read',
      statuses: { 200: 'The sink', 404: SINK_NOT_FOUND },
      answers: { 200: SINK },
    },
    patch: {
      summary: 'Change the key or the roll policy (key null: append again)',
      auth: 'api_key',
      level: 'write',
      body: UpdateSink,
      statuses: {
        200: 'The sink',
        400: `${MALFORMED}; malformed_json; unknown_column (a key column the table lacks)`,
        404: `${SINK_NOT_FOUND}; table_not_found`,
        409: 'key_unsupported, key_type_unsupported',
      },
      answers: { 200: SINK },
    },
    delete: {
      summary: 'Delete a sink; discards its pending batches (the table is untouched)',
      auth: 'api_key',
      level: 'write',
      statuses: { 202: '{pending_batches_discarded}', 404: SINK_NOT_FOUND },
      answers: { 202: object({ id: STRING, state: { const: 'deleted' }, pending_batches_discarded: INTEGER }) },
    },
  },
  '/v1/sinks/{sink_id}/dedupe': {
    post: {
      summary: 'Ask for a whole-table dedupe at the next tick',
      auth: 'api_key',
      level: 'write',
      statuses: { 202: '{dedupe}', 404: SINK_NOT_FOUND, 409: 'sink_not_keyed, sink_not_active, dedupe_too_soon (Retry-After)' },
      answers: { 202: object({ dedupe: object({ requested_at: orNull(TIME), last: orNull(OBJECT) }) }) },
    },
  },
  '/v1/usage': {
    get: { summary: 'ingest_bytes this month', auth: 'api_key', level: 'read', statuses: { 200: 'Usage' }, answers: { 200: USAGE } },
  },
  '/v1/connection': {
    get: {
      summary: 'How engines reach the tables; sinks_note and ingest_url',
      auth: 'api_key',
      level: 'read',
      statuses: { 200: 'Connection' },
      answers: { 200: CONNECTION },
    },
  },
  '/internal/sinks': {
    get: {
      summary: 'The roller’s view; ?roller=&lease_seconds= leases the due sinks',
      auth: 'bootstrap',
      params: queryParams(SinksQuery, { lease_seconds: { type: 'integer', minimum: 10, maximum: 3600, default: 300 } }),
      statuses: { 200: 'Sinks' },
      answers: { 200: schema(SinkList) },
    },
  },
  '/internal/sinks/{sink_id}/roll': {
    post: {
      summary: 'The roller’s report',
      auth: 'bootstrap',
      path: { sink_id: { type: 'string' } },
      body: RollReport,
      statuses: { 200: 'Recorded', 404: 'sink_not_found' },
      answers: { 200: schema(RollAnswer) },
    },
  },
}

const ENVELOPE = {
  type: 'object',
  required: ['error'],
  properties: {
    error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } }, additionalProperties: true },
  },
}

const json = (schema: JsonSchema) => ({ 'application/json': { schema } })

export function openApiDocument() {
  const paths: Record<string, Record<string, unknown>> = {}
  for (const [path, ops] of Object.entries(OPERATIONS)) {
    paths[path] = {}
    const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1])
    for (const [method, op] of Object.entries(ops)) {
      const statuses: Record<number, string> = Object.assign(
        {},
        op.params?.length ? { 400: MALFORMED } : {},
        op.body ? BODY_ERRORS : {},
        op.auth ? { ...AUTH_ERRORS[op.auth], 503: UNAVAILABLE } : {},
        op.statuses,
      )
      const responses: Record<string, unknown> = {}
      for (const [status, description] of Object.entries(statuses)) {
        const answer = Number(status) >= 400 ? { $ref: '#/components/schemas/Error' } : op.answers?.[Number(status)]
        responses[status] = { description, ...(answer ? { content: json(answer) } : {}) }
      }
      const parameters = [
        ...names.map((name) => {
          const { description, ...s } = op.path?.[name] ?? PATH_PARAMS[name]
          return { name, in: 'path', required: true, ...(description ? { description } : {}), schema: s }
        }),
        ...(op.params ?? []),
      ]
      paths[path][method] = {
        summary: op.summary,
        ...(op.level ? { 'x-level': op.level } : {}),
        ...(op.auth ? { security: [{ [op.auth]: [] }] } : {}),
        ...(parameters.length ? { parameters } : {}),
        ...(op.body ? { requestBody: { required: true, content: json('kind' in op.body ? schema(op.body as GenericSchema) : op.body) } } : {}),
        responses,
      }
    }
  }
  return {
    openapi: '3.1.0',
    info: { title: 'lhbox ingest sinks', version: '1' },
    paths,
    components: {
      schemas: { ...COMPONENTS, Error: ENVELOPE },
      securitySchemes: {
        api_key: { type: 'http', scheme: 'bearer', description: 'al_key_<12 hex>_<43 base64url>, with a level' },
        send_key: { type: 'http', scheme: 'bearer', description: 'al_send_<12 hex>_<43 base64url>, one sink’s send route only' },
        bootstrap: { type: 'http', scheme: 'bearer', description: 'LHBOX_BOOTSTRAP_SECRET' },
      },
    },
  }
}

export const openapi = new Hono<AppEnv>().get('/openapi.json', (c) => c.json(openApiDocument()))
