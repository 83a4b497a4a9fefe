// GET /openapi.json: an OpenAPI 3.1 document built from the same valibot schemas that validate the
// requests, so the two cannot drift apart (the shapes: openapi-shapes.ts). test/integration/api-schema.test.ts
// runs schemathesis over it against a live stack: every status an operation answers, and the shape of
// its answers, are here.
import type { GenericSchema } from 'valibot'
import { Hono } from 'hono'
import type { AppEnv } from './env.ts'
import {
  FeedBatch,
  FeedBatchRecorded,
  LagList,
  LeaseRenewal,
  LeaseRenewed,
  MeasureList,
  MeasureQuery,
  RollAnswer,
  RollReport,
  SinkList,
  SinksQuery,
  StorageReport,
} from '../contract/internal.ts'
import { CreateKey } from './routes/keys.ts'
import { CreateSink, ListSinksQuery, RejectsQuery, UpdateSink } from './routes/sinks.ts'
import { RotateSendKey } from './routes/send-keys.ts'
import { ListTablesQuery, SampleQuery } from './routes/tables.ts'
import { CreateWarehouse, UpdateWarehouse } from './routes/warehouses.ts'
import {
  API_KEY_CREATED,
  array,
  COMPONENTS,
  CONNECTION,
  CREATE_TABLE,
  DOCUMENT_TABLE,
  IDEMPOTENCY_KEY,
  INTEGER,
  type JsonSchema,
  OBJECT,
  object,
  orNull,
  type Parameter,
  PATH_PARAMS,
  queryParams,
  schema,
  REJECTS_PAGE,
  TABLE_SAMPLE,
  SEND_ANSWER,
  SEND_BODY,
  SEND_KEY_ROTATED,
  SEND_LINES,
  SINK,
  SINK_CREATED,
  STRING,
  TABLE,
  TIME,
  USAGE,
  WAREHOUSE,
} from './openapi-shapes.ts'
type Auth = 'api_key' | 'send_key' | 'device_key' | 'mcp' | 'bootstrap' | null

interface Operation {
  summary: string
  auth: Auth
  level?: 'read' | 'write' | 'admin'
  /** Query and header parameters. Path parameters come from PATH_PARAMS, by name (`path` overrides one). */
  params?: Parameter[]
  path?: Record<string, JsonSchema>
  body?: GenericSchema | JsonSchema
  /** A request body other than required JSON (the device route: any type, or none). */
  requestBody?: Record<string, unknown>
  statuses: Record<number, string>
  /** The schema of each success answer, by status. */
  answers?: Record<number, JsonSchema>
  /** Answers also in application/x-protobuf (OTLP: in the request's encoding). */
  protobuf?: boolean
}

/** Where a kind of key takes more than its own scheme. */
const SECURITY: Partial<Record<Exclude<Auth, null>, Record<string, never[]>[]>> = {
  device_key: [{ send_key: [] }, { send_key_basic: [] }, { send_key_query: [] }],
  mcp: [{ api_key: [] }, { send_key: [] }],
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
  device_key: {
    401: 'unauthorized: no send key (?key=, Basic password or Bearer), a wrong one, or no such sink (answered alike)',
    403: 'send_only: an API key (this route takes the sink’s send key only)',
  },
  mcp: {
    401: 'unauthorized: no key, an unknown or revoked API key, or a send key of no live sink (WWW-Authenticate: Bearer)',
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
const SINKS_DISABLED = 'sinks_disabled: sinks are switched off on this service (Retry-After; what was accepted waits); unavailable'
const RATE_LIMITED = 'rate_limited: over the sink’s limits or its project’s ceiling (Retry-After, whole seconds; retry_after says the same); nothing was stored'
const CATALOG_REFUSED = 'catalog_unauthorized: the warehouse’s catalog refused its token or credential (PATCH /v1/warehouses/{warehouse})'
/** The query strings' numbers, as the routes read them (valibot sees strings there). */
const LEASE_SECONDS = { type: 'integer', minimum: 10, maximum: 3600, default: 300 }
const WAREHOUSE_REF = { warehouse: { ...PATH_PARAMS.warehouse, description: 'The warehouse’s name or id' } }

const DEVICE_OPERATION: Operation = {
  summary: 'Send what a device sends: a JSON object or array, a form, or query parameters; mapped by the sink’s mapping (a preset or columns)',
  auth: 'device_key',
  path: {
    sink_id: { type: 'string', pattern: '^snk_[0-9a-f]+$', description: 'The sink’s id (never its name)' },
    device_id: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,64}$', description: 'The device’s id: a mapping’s {device: true}' },
  },
  params: [{ ...IDEMPOTENCY_KEY, required: false, description: 'Optional: without it, the preset’s natural id or dev:<device_id>:<digest of the payload>' }],
  requestBody: {
    required: false,
    content: {
      // As on the send route, an array element that is not an object is a rejected row, not a refused request.
      'application/json': { schema: { oneOf: [OBJECT, SEND_BODY] } },
      'application/x-www-form-urlencoded': { schema: OBJECT },
    },
  },
  answers: {
    200: { anyOf: [SEND_ANSWER, object({ ignored: { const: true }, reason: STRING }), { type: 'array' }] },
    202: SEND_ANSWER,
  },
  statuses: {
    200: 'A duplicate; a payload device_require drops ({ignored, reason}); or the preset’s own answer (OwnTracks: [])',
    202: 'Stored (mapped), as on the send route',
    400: 'invalid_device_id; invalid_idempotency_key; invalid_payload; malformed_json (offset says where); malformed_gzip',
    409: 'idempotency_key_reused (an Idempotency-Key sent again with other bytes), quota_exceeded',
    413: 'Over 16 MiB',
    415: 'unsupported_encoding: a Content-Encoding other than gzip',
    429: RATE_LIMITED,
    503: SINKS_DISABLED,
  },
}

/** OTLP/HTTP logs (edge/otlp/): the request and the answers in JSON or protobuf; a failure is a google.rpc.Status (JSON: with the envelope beside it). */
const OTLP_LOGS_OPERATION: Operation = {
  summary:
    'OpenTelemetry logs (OTLP/HTTP ExportLogsServiceRequest, JSON or protobuf, gzip allowed): one row per log record through the otlp_logs preset; a retried export is stored once (batch id otlp:<SHA-256 of the body>, or Idempotency-Key)',
  auth: 'device_key',
  path: { sink_id: { type: 'string', pattern: '^snk_[0-9a-f]+$', description: 'The sink’s id (never its name)' } },
  params: [{ ...IDEMPOTENCY_KEY, required: false, description: 'Optional: without it, otlp:<SHA-256 of the (decompressed) body>' }],
  requestBody: {
    required: true,
    content: {
      'application/json': { schema: object({ resourceLogs: { type: 'array', items: OBJECT } }, []) },
      'application/x-protobuf': { schema: { type: 'string', format: 'binary' } },
    },
  },
  protobuf: true,
  answers: {
    200: object({ partialSuccess: object({ rejectedLogRecords: INTEGER, errorMessage: STRING }, []) }, []),
  },
  statuses: {
    200: 'Stored (or a duplicate of an earlier export); partialSuccess.rejectedLogRecords counts the records that cannot be rows (a trace or span id of the wrong length, a time past 2262 for a nanosecond column, an unpaired surrogate); they are stored with the export and reach the sink’s rejects file at the roll',
    400: 'invalid_otlp (not an ExportLogsServiceRequest); malformed_json; malformed_gzip; invalid_idempotency_key',
    409: 'otlp_table_mismatch: the sink’s table lacks the otlp_logs columns (command: the create line); idempotency_key_reused; quota_exceeded',
    413: 'Over 16 MiB',
    415: 'unsupported_media_type: not application/json or application/x-protobuf; unsupported_encoding: not gzip',
    429: RATE_LIMITED,
    503: SINKS_DISABLED,
  },
}

/** A JSON-RPC id that is a number is a safe integer (the SDK's schema): one past 2^53 is a 400. */
const SAFE_INTEGER = { type: 'integer', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }

/** A message's params as the SDK reads them: any members, and `_meta` (a progress token, a related task) when given. */
const MCP_PARAMS = {
  type: 'object',
  properties: {
    _meta: {
      type: 'object',
      properties: {
        progressToken: { anyOf: [STRING, SAFE_INTEGER] },
        'io.modelcontextprotocol/related-task': { type: 'object', required: ['taskId'], properties: { taskId: STRING } },
      },
    },
  },
}

/** POST /mcp (edge/mcp/): one JSON-RPC 2.0 request or notification of the Model Context Protocol, answered in JSON. */
const MCP_OPERATION: Operation = {
  summary:
    'The Model Context Protocol (streamable HTTP, stateless, JSON answers): tools list_sinks, describe_sink, send_rows, get_rejects, sample_rows; levels per tool as on their routes (a send key: send_rows to its own sink only). A tool’s refusal is a result with isError and the envelope plus status in its text',
  auth: 'mcp',
  requestBody: {
    required: true,
    content: {
      'application/json': {
        schema: {
          type: 'object',
          required: ['jsonrpc', 'method'],
          properties: { jsonrpc: { const: '2.0' }, id: { anyOf: [STRING, SAFE_INTEGER] }, method: STRING, params: MCP_PARAMS },
          additionalProperties: false,
        },
      },
    },
  },
  answers: {
    200: {
      type: 'object',
      required: ['jsonrpc'],
      properties: {
        jsonrpc: { const: '2.0' },
        id: { anyOf: [STRING, INTEGER, { type: 'null' }] },
        result: OBJECT,
        error: object({ code: INTEGER, message: STRING }, []),
      },
    },
  },
  statuses: {
    200: 'The JSON-RPC answer to a request (a method or tool it does not know is a JSON-RPC error here, as MCP says)',
    202: 'A notification, taken (no body)',
    400: 'malformed_json; invalid_request: not one JSON-RPC 2.0 request or notification, or an MCP-Protocol-Version it does not speak',
    413: 'Over 32 MiB (16 MiB of rows and their JSON-RPC envelope)',
    415: 'unsupported_media_type: not application/json; unsupported_encoding: not gzip',
  },
}

const OPERATIONS: Record<string, Record<string, Operation>> = {
  '/mcp': { post: MCP_OPERATION },
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
      statuses: {
        201: 'Created',
        400: `${MALFORMED} (a prefix under _sink or wh); malformed_json`,
        409: 'warehouse_exists; warehouse_location_taken: the root (bucket and prefix) equals, lies inside or holds another warehouse’s, of any project',
        503: 'secrets_unavailable: the edge has no LHBOX_SECRETS_KEY to seal a token or credential',
      },
      answers: { 201: WAREHOUSE },
    },
  },
  '/v1/warehouses/{warehouse}': {
    get: {
      summary: 'A warehouse, with its last storage figure',
      auth: 'api_key',
      level: 'read',
      path: WAREHOUSE_REF,
      statuses: { 200: 'The warehouse', 404: 'warehouse_not_found' },
      answers: { 200: WAREHOUSE },
    },
    patch: {
      summary:
        'Replace a REST catalog’s token or credential, or set the read-only store key pair the Iceberg REST catalog vends to read keys (null removes one); sealed, never answered back',
      auth: 'api_key',
      level: 'admin',
      path: WAREHOUSE_REF,
      body: UpdateWarehouse,
      statuses: {
        200: 'The warehouse',
        404: 'warehouse_not_found',
        409: 'not_a_rest_catalog (a catalog secret for a SQL-catalog warehouse)',
        503: 'secrets_unavailable: no LHBOX_SECRETS_KEY, or the old secret does not open',
      },
      answers: { 200: WAREHOUSE },
    },
  },
  '/v1/warehouses/{warehouse}/measure': {
    post: {
      summary: 'Ask for a storage figure now (the roller lists the bucket at its next tick; GET shows it)',
      auth: 'api_key',
      level: 'write',
      path: WAREHOUSE_REF,
      statuses: { 202: 'Asked (storage.requested_at)', 404: 'warehouse_not_found' },
      answers: { 202: WAREHOUSE },
    },
  },
  '/v1/tables': {
    get: {
      summary: 'List the tables of a warehouse (of one namespace with ?namespace=)',
      auth: 'api_key',
      level: 'read',
      params: queryParams(ListTablesQuery),
      statuses: { 200: 'Tables', 404: 'warehouse_not_found, namespace_not_found', 409: CATALOG_REFUSED },
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
        409: `table_exists; table_location_taken (a warehouse sharing the bucket root with another, made before roots were unique: the table's folder is another's); ${CATALOG_REFUSED}`,
      },
      answers: { 201: TABLE },
    },
  },
  '/v1/tables/{warehouse}.{namespace}.{table}': {
    get: {
      summary: 'A table: schema, partitioning, docs, snapshots',
      auth: 'api_key',
      level: 'read',
      statuses: { 200: 'The table', 400: BAD_TABLE_PATH, 404: 'warehouse_not_found, table_not_found, namespace_not_found', 409: CATALOG_REFUSED },
      answers: { 200: TABLE },
    },
  },
  '/v1/tables/{warehouse}.{namespace}.{table}/sample': {
    get: {
      summary:
        'The first rows (?limit= 1–100, default 20) of the newest data file of the current snapshot, as written in that file (delete files not applied): longs exact, decimals as strings, times as RFC 3339',
      auth: 'api_key',
      level: 'read',
      params: queryParams(SampleQuery),
      statuses: {
        200: 'The sample',
        400: `${MALFORMED}; ${BAD_TABLE_PATH}`,
        404: 'warehouse_not_found, table_not_found, namespace_not_found',
        409: CATALOG_REFUSED,
      },
      answers: { 200: TABLE_SAMPLE },
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
        409: `commit_conflict; ${CATALOG_REFUSED}`,
      },
      answers: { 200: TABLE },
    },
  },
  '/v1/sinks': {
    get: {
      summary:
        'List the project’s sinks a page at a time, by name (?warehouse=, ?include_deleted=true, ?limit= 1–1000, default 100, ?cursor= the page’s next_cursor; null on the last)',
      auth: 'api_key',
      level: 'read',
      params: queryParams(ListSinksQuery),
      statuses: { 200: 'A page of sinks', 400: `${MALFORMED}; invalid_request: a cursor no page gave` },
      answers: { 200: object({ sinks: array(SINK), next_cursor: orNull(STRING) }) },
    },
    post: {
      summary: 'Create a sink; answers its send key once (a sql or files sink: none, the roller feeds it)',
      auth: 'api_key',
      level: 'write',
      body: CreateSink,
      statuses: {
        201: 'Created',
        400: `${MALFORMED}; malformed_json; unknown_column (a key column the table lacks); mapping_invalid (names the column); invalid_query (DuckDB: not one SELECT); invalid_pattern`,
        404: 'warehouse_not_found, table_not_found (with the namespace’s tables)',
        409: `sink_exists, sink_name_taken, partitioned_table_unsupported, unsupported_column_type, key_unsupported, key_type_unsupported, files_table_unsupported, table_location_taken (the table created with the sink); ${CATALOG_REFUSED}`,
        503: 'unavailable (the SQL check did not answer; Retry-After)',
      },
      answers: { 201: SINK_CREATED },
    },
  },
  '/v1/sinks/{sink_id}': {
    post: {
      summary: 'Send a batch: a JSON array, or NDJSON lines (the send key only; Idempotency-Key required for an array)',
      auth: 'send_key',
      requestBody: {
        required: true,
        content: { 'application/json': { schema: SEND_BODY }, 'application/x-ndjson': { schema: SEND_LINES }, 'application/jsonl': { schema: SEND_LINES } },
      },
      path: { sink_id: { type: 'string', pattern: '^snk_[0-9a-f]+$', description: 'The sink’s id (never its name)' } },
      params: [IDEMPOTENCY_KEY],
      answers: { 200: SEND_ANSWER, 202: SEND_ANSWER },
      statuses: {
        200: 'Duplicate of an earlier batch',
        400: 'invalid_idempotency_key; malformed_json (offset says where); not_an_array (application/json); malformed_gzip',
        202: 'Stored; the elements that are not objects are counted rejected (not_an_object) and reach the rejects file at the roll',
        409: 'idempotency_key_reused, quota_exceeded',
        413: 'Over 16 MiB',
        415: 'unsupported_media_type: not application/json, application/x-ndjson or application/jsonl; unsupported_encoding: not gzip',
        429: RATE_LIMITED,
        503: SINKS_DISABLED,
      },
    },
    get: {
      summary: 'A sink: state, policy, lag, received, last roll, rejects, dedupe, maintenance sweeps',
      auth: 'api_key',
      level: 'read',
      statuses: { 200: 'The sink', 404: SINK_NOT_FOUND },
      answers: { 200: SINK },
    },
    patch: {
      summary:
        'Change the key, the roll policy, the device settings, the rate limits, or a feed’s query, rule and schedule (key null: append again; mapping null: store payloads as sent; limits null: the defaults)',
      auth: 'api_key',
      level: 'write',
      body: UpdateSink,
      statuses: {
        200: 'The sink',
        400: `${MALFORMED}; malformed_json; unknown_column (a key column the table lacks); mapping_invalid (names the column); invalid_query; invalid_pattern`,
        404: `${SINK_NOT_FOUND}; table_not_found`,
        409: 'key_unsupported, key_type_unsupported, files_table_unsupported',
        503: 'unavailable (the SQL check did not answer; Retry-After)',
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
  '/v1/sinks/{sink_id}/devices/{device_id}': {
    post: DEVICE_OPERATION,
    get: {
      ...DEVICE_OPERATION,
      summary: 'The device route for protocols that send query parameters only (Traccar’s OsmAnd, GPSLogger)',
      requestBody: undefined,
    },
  },
  '/v1/sinks/{sink_id}/otlp/v1/logs': { post: OTLP_LOGS_OPERATION },
  '/v1/sinks/{sink_id}/rejects': {
    get: {
      summary:
        'The rejected rows, a page at a time (?reason=, ?batch_id=, ?limit= up to 1000, ?cursor=): reason, field, expected, got, the batch id and index, and the producer’s row as sent',
      auth: 'api_key',
      level: 'read',
      params: queryParams(RejectsQuery),
      statuses: { 200: 'A page of rejects', 400: `${MALFORMED}; invalid_request: a cursor no page gave`, 404: SINK_NOT_FOUND },
      answers: { 200: REJECTS_PAGE },
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
  '/v1/sinks/{sink_id}/send-keys': {
    post: {
      summary:
        'Rotate the send key: a new one answered once; the previous keeps working retire_previous_after_seconds (default 86400, at most 604800; 0: retired now). Two keys live at most: an older previous one is retired',
      auth: 'api_key',
      level: 'write',
      // Optional: no body at all takes the defaults (the console's button sends none).
      requestBody: { required: false, content: { 'application/json': { schema: schema(RotateSendKey) } } },
      statuses: {
        ...BODY_ERRORS,
        201: 'The new key',
        404: SINK_NOT_FOUND,
        409: 'no_send_key: a sql or files sink has no send key',
      },
      answers: { 201: SEND_KEY_ROTATED },
    },
  },
  '/v1/sinks/{sink_id}/send-keys/previous': {
    delete: {
      summary: 'Retire the previous send key now (the current one keeps working)',
      auth: 'api_key',
      level: 'write',
      statuses: { 200: 'Retired', 404: SINK_NOT_FOUND, 409: 'no_previous_key: none works now; no_send_key: a sql or files sink has no send key' },
      answers: { 200: object({ sink_id: STRING, previous_retired_at: TIME }) },
    },
  },
  '/v1/sinks/{sink_id}/run': {
    post: {
      summary: 'Ask for a run of a sql or files sink at the next tick (its id: the time asked)',
      auth: 'api_key',
      level: 'write',
      statuses: { 202: '{run: {requested_at}}', 404: SINK_NOT_FOUND, 409: 'not_a_feed, sink_not_active' },
      answers: { 202: object({ run: object({ requested_at: TIME }) }, []) },
    },
  },
  '/v1/usage': {
    get: {
      summary: 'ingest_bytes this month, and storage (the last figures)',
      auth: 'api_key',
      level: 'read',
      statuses: { 200: 'Usage' },
      answers: { 200: USAGE },
    },
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
      params: queryParams(SinksQuery, { lease_seconds: LEASE_SECONDS, limit: { type: 'integer', minimum: 1, maximum: 10000 } }),
      statuses: { 200: 'Sinks' },
      answers: { 200: schema(SinkList) },
    },
  },
  '/internal/lag': {
    get: {
      summary: 'Every sink’s lag for the roller’s gauges: waiting batches, the oldest’s arrival, roll_seconds, due, held',
      auth: 'bootstrap',
      statuses: { 200: 'Lags' },
      answers: { 200: schema(LagList) },
    },
  },
  '/internal/leases': {
    post: {
      summary: 'Renews the leases a roller’s rolls still need; answers those it still holds',
      auth: 'bootstrap',
      body: LeaseRenewal,
      statuses: { 200: 'Renewed' },
      answers: { 200: schema(LeaseRenewed) },
    },
  },
  '/internal/sinks/{sink_id}/batches': {
    post: {
      summary: 'A feed run’s stored batch, pending in the ledger (lag shows it); only the lease holder may record one',
      auth: 'bootstrap',
      path: { sink_id: { type: 'string' } },
      body: FeedBatch,
      statuses: { 200: 'Recorded (false: the ledger had it)', 409: 'lease_lost: the sink is not leased by this roller' },
      answers: { 200: schema(FeedBatchRecorded) },
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
  '/internal/warehouses/measure': {
    get: {
      summary: 'The storage meter’s lease: the warehouses whose figure is due (every_seconds) or asked for',
      auth: 'bootstrap',
      params: queryParams(MeasureQuery, {
        every_seconds: { type: 'integer', minimum: 0, maximum: 86400, default: 300 },
        lease_seconds: LEASE_SECONDS,
      }),
      statuses: { 200: 'Warehouses' },
      answers: { 200: schema(MeasureList) },
    },
  },
  '/internal/warehouses/{warehouse_id}/storage': {
    post: {
      summary: 'The storage meter’s figure',
      auth: 'bootstrap',
      path: { warehouse_id: { type: 'string' } },
      body: StorageReport,
      statuses: { 200: 'Recorded', 404: 'warehouse_not_found' },
      answers: { 200: object({ ok: { const: true } }) },
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
        const content = answer
          ? { ...json(answer), ...(op.protobuf ? { 'application/x-protobuf': { schema: { type: 'string', format: 'binary' } } } : {}) }
          : undefined
        responses[status] = { description, ...(content ? { content } : {}) }
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
        ...(op.auth ? { security: SECURITY[op.auth] ?? [{ [op.auth]: [] }] } : {}),
        ...(parameters.length ? { parameters } : {}),
        ...(op.body ? { requestBody: { required: true, content: json('kind' in op.body ? schema(op.body as GenericSchema) : op.body) } } : {}),
        ...(op.requestBody ? { requestBody: op.requestBody } : {}),
        responses,
      }
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'lhbox ingest sinks',
      version: '1',
      // The REST catalog's routes have a document of their own (and its ErrorModel, not this envelope).
      description:
        'The Iceberg REST catalog at /iceberg/v1 (config, oauth/tokens, namespaces, tables) is not listed here: it follows Apache Iceberg’s REST OpenAPI document, linked in externalDocs.',
    },
    externalDocs: {
      description: 'Apache Iceberg REST catalog OpenAPI (served at /iceberg for SQL-catalog warehouses)',
      url: 'https://github.com/apache/iceberg/blob/main/open-api/rest-catalog-open-api.yaml',
    },
    paths,
    components: {
      schemas: { ...COMPONENTS, Error: ENVELOPE },
      securitySchemes: {
        api_key: { type: 'http', scheme: 'bearer', description: 'al_key_<12 hex>_<43 base64url>, with a level' },
        send_key: { type: 'http', scheme: 'bearer', description: 'al_send_<12 hex>_<43 base64url>, one sink’s send route only' },
        send_key_basic: { type: 'http', scheme: 'basic', description: 'The device route: the send key as the password (any user name)' },
        send_key_query: { type: 'apiKey', in: 'query', name: 'key', description: 'The device route: ?key=al_send_… (lands in access logs; prefer Basic)' },
        bootstrap: { type: 'http', scheme: 'bearer', description: 'LHBOX_BOOTSTRAP_SECRET' },
      },
    },
  }
}

export const openapi = new Hono<AppEnv>().get('/openapi.json', (c) => c.json(openApiDocument()))
