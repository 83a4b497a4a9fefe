// The shapes of the OpenAPI document (edge/openapi/document.ts): JSON Schema of the answers and bodies, the
// path, query and header parameters, built from the valibot schemas the routes validate with.
import { toJsonSchema } from '@valibot/to-json-schema'
import { REJECT_REASONS } from '../../contract/rejects.ts'
import { UNREADABLE_LINE } from '../rejects.ts'
import type { GenericSchema } from 'valibot'
import { SINK_REF } from '../routes/sinks.ts'
import { CreateTable, DocumentTable, IcebergTypeJson, NestedFieldJson, TABLE_PART } from '../routes/tables.ts'
import { WAREHOUSE_NAME } from '../routes/warehouses.ts'
import { BATCH_ID } from '../../contract/bucket.ts'

export type JsonSchema = Record<string, unknown>

export interface Parameter {
  name: string
  in: 'query' | 'header'
  required?: boolean
  description?: string
  schema: JsonSchema
}

/** Named schemas (recursive ones): each is a component, and its uses refer to it. */
const DEFINITIONS = { IcebergType: IcebergTypeJson, NestedField: NestedFieldJson }
export const COMPONENTS: Record<string, JsonSchema> = {}

/** A valibot schema as JSON Schema; its definitions go to components.schemas, where OpenAPI refers. */
export const schema = (s: GenericSchema): JsonSchema => {
  const converted = toJsonSchema(s, { target: 'draft-2020-12', errorMode: 'ignore', definitions: DEFINITIONS })
  const { $schema: _, $defs, ...json } = JSON.parse(JSON.stringify(converted).replaceAll('"#/$defs/', '"#/components/schemas/')) as JsonSchema
  Object.assign(COMPONENTS, $defs)
  return json
}

/** A valibot object of query strings as OpenAPI query parameters (`override` replaces one's schema). */
export function queryParams(s: GenericSchema, override: Record<string, JsonSchema> = {}): Parameter[] {
  const json = schema(s) as { properties: Record<string, JsonSchema>; required?: string[] }
  return Object.entries(json.properties).map(([name, p]) => ({
    name,
    in: 'query',
    ...(json.required?.includes(name) ? { required: true } : {}),
    schema: override[name] ?? p,
  }))
}

// ---- answers --------------------------------------------------------------------------------------

export const STRING = { type: 'string' }
export const INTEGER = { type: 'integer' }
const NUMBER = { type: 'number' }
export const OBJECT = { type: 'object' }
export const orNull = (s: JsonSchema): JsonSchema => ({ anyOf: [s, { type: 'null' }] })
/** An object whose listed members are all present (more may follow: new members are not a break). */
export const object = (properties: Record<string, JsonSchema>, optional: string[] = []): JsonSchema => ({
  type: 'object',
  required: Object.keys(properties).filter((k) => !optional.includes(k)),
  properties,
})
export const array = (items: JsonSchema): JsonSchema => ({ type: 'array', items })
export const TIME = { type: 'string', description: 'RFC 3339, UTC' }

/** A storage figure (the roller's storage meter); its numbers are null before the first. */
const STORAGE_FIGURE = {
  bytes: { ...orNull(NUMBER), description: 'Every byte in the bucket, _sink/ included' },
  intake_bytes: { ...orNull(NUMBER), description: 'Of which under _sink/: batches waiting, rejects, markers' },
  rejects_bytes: { ...orNull(NUMBER), description: 'Of which rejects files (_sink/<sink_id>/rejects/), kept LHBOX_REJECTS_RETENTION_DAYS' },
  tables: { type: 'object', additionalProperties: NUMBER, description: 'Committed Parquet bytes per <namespace>.<table> (total-files-size)' },
  measured_at: orNull(TIME),
}

export const WAREHOUSE = object({
  id: STRING,
  name: STRING,
  catalog: {
    ...object({ type: { enum: ['sql', 'rest'] }, auth: { enum: ['bearer', 'oauth2', 'none'] } }, ['auth']),
    description: 'A REST catalog says how it signs in (auth); its token or credential is never answered',
  },
  bucket: STRING,
  endpoint: STRING,
  region: STRING,
  prefix: STRING,
  maintenance: { enum: ['roller', 'off'] },
  store_read_key: {
    type: 'boolean',
    description: 'A read-only store key pair is set (the Iceberg REST catalog vends it to read keys); sealed, never answered',
  },
  storage: object({ ...STORAGE_FIGURE, objects: orNull(NUMBER), requested_at: { ...orNull(TIME), description: 'A figure asked for, not made yet' } }),
  created_at: TIME,
})

export const TABLE = object({
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

const LAST_RUN = orNull(
  object({
    run_id: { type: 'string', description: 'The slot start (RFC 3339), or the time a run was asked for' },
    at: TIME,
    rows: INTEGER,
    seconds: NUMBER,
    error: orNull(STRING),
    outcome: { enum: ['ok', 'done_before', 'failed'] },
  }),
)
const SCHEDULE = { every_seconds: INTEGER, next_run_at: orNull(TIME), last_run: LAST_RUN }

/** The last maintenance sweep of a sink's table (contract/internal.ts MaintenanceSweep) and the next. */
const MAINTENANCE = {
  ...object({
    last: orNull(
      object(
        {
          at: TIME,
          next_at: TIME,
          snapshots_expired: INTEGER,
          files_compacted: INTEGER,
          bytes_compacted: INTEGER,
          manifests_rewritten: INTEGER,
          manifests_created: INTEGER,
          files_deleted: INTEGER,
          bytes_deleted: INTEGER,
          rejects_deleted: { ...INTEGER, description: 'Rejects files older than LHBOX_REJECTS_RETENTION_DAYS, deleted' },
          rejects_bytes_deleted: INTEGER,
          seconds: NUMBER,
          error: { type: 'string', description: 'Why the sweep failed; the counts are those of the steps that finished' },
        },
        ['error', 'rejects_deleted', 'rejects_bytes_deleted'],
      ),
    ),
    next_at: {
      ...orNull(TIME),
      description: 'When the next sweep is due; null before the first, for a deleted sink, or where the warehouse says maintenance off',
    },
  }),
  description: 'The roller’s maintenance sweep (expire, compact, rewrite manifests, delete unreachable files): the last one and the next',
}

export const SINK = object(
  {
    id: { type: 'string', pattern: '^snk_[0-9a-f]+$' },
    name: STRING,
    warehouse: STRING,
    table: STRING,
    state: { enum: ['active', 'disabled', 'deleted'] },
    disabled_reason: orNull(STRING),
    roll: object({ roll_seconds: INTEGER, roll_bytes: INTEGER, inactivity_seconds: orNull(INTEGER) }),
    key: orNull(array(STRING)),
    ingest_url: STRING,
    device_url: { type: 'string', description: 'The device route, {device_id} to fill in' },
    mapping: orNull(OBJECT),
    device_require: orNull(OBJECT),
    device_strip: orNull(array(STRING)),
    lag: object({ batches_waiting: INTEGER, bytes_waiting: NUMBER, oldest_waiting_at: orNull(TIME), seconds_behind: INTEGER }),
    received: object({
      batches: NUMBER,
      rows: NUMBER,
      bytes: NUMBER,
      last_at: orNull(TIME),
      rate_limited: { ...NUMBER, description: 'Requests refused 429 rate_limited (each edge isolate or process counts its own)' },
    }),
    limits: {
      ...object({ requests_per_second: orNull(NUMBER), bytes_per_second: orNull(INTEGER) }),
      description: 'The sink’s rate limits on its producer routes; null: the deployment’s defaults (none unless configured)',
    },
    last_roll: orNull(OBJECT),
    last_error: {
      ...orNull(object({ at: TIME, code: { enum: ['catalog_unauthorized', 'quota_exceeded', 'roll_failed'] }, message: STRING })),
      description: 'Why the last roll failed (its batches wait), until a roll succeeds',
    },
    rejects: object({ rows_total: NUMBER, batches_with_rejects: NUMBER, last_at: orNull(TIME), prefix: STRING }),
    dedupe: object({ requested_at: orNull(TIME), last: orNull(OBJECT) }),
    maintenance: MAINTENANCE,
    kind: { enum: ['send', 'sql', 'files'], description: 'A send sink has producers; a sql or files sink is fed by the roller' },
    sql: { ...object({ query: STRING, ...SCHEDULE }), description: 'A scheduled SQL sink’s query and schedule' },
    files: { ...object({ prefix: STRING, pattern: orNull(STRING), ...SCHEDULE }), description: 'A files-to-rows sink’s rule and schedule' },
    run_requested_at: { ...orNull(TIME), description: 'A run asked for (POST /v1/sinks/{id}/run), until it is done' },
    previous_send_key_retires_at: { ...orNull(TIME), description: 'After a rotation: when the previous send key stops working; null when none works' },
    created_at: TIME,
    deleted_at: orNull(TIME),
  },
  ['sql', 'files', 'run_requested_at'],
)

export const SINK_CREATED: JsonSchema = {
  allOf: [
    SINK,
    object(
      {
        send_key: { type: 'string', pattern: '^al_send_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$', description: 'Shown once; a sql or files sink has none' },
        iam_writes: { type: 'array', maxItems: 0 },
        docs_hint: object({ message: STRING, table_doc_missing: { type: 'boolean' }, columns: array(STRING), command: STRING }),
      },
      ['docs_hint', 'send_key'],
    ),
  ],
}

export const SEND_ANSWER = object(
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

const PROBLEM = { reason: STRING, field: STRING, expected: STRING, got: STRING }

/** A rejects file's line (contract/rejects.ts): the roller's fields, then the producer's row as sent. */
export const REJECTS_PAGE = object({
  rejects: array(
    object(
      {
        batch_id: STRING,
        index: { ...orNull(INTEGER), description: 'The row’s place in the array the producer sent' },
        line: { ...INTEGER, description: 'Its line in the stored batch' },
        reason: { enum: [...REJECT_REASONS, UNREADABLE_LINE], description: `${UNREADABLE_LINE}: the file's line is not one the roller wrote (error names it)` },
        field: STRING,
        expected: STRING,
        got: STRING,
        error: { ...STRING, description: 'A whole batch’s: why it was not read or written; an unreadable line’s: where it is' },
        problems: { ...array(object(PROBLEM, ['field', 'expected', 'got'])), description: 'Every problem, when the row has more than one' },
        row: { description: 'The row exactly as sent (null when a whole batch was not read)' },
      },
      ['index', 'line', 'field', 'expected', 'got', 'error', 'problems'],
    ),
  ),
  next_cursor: { ...orNull(STRING), description: 'Give it as ?cursor= for the next page; null: no more' },
})

/** GET /v1/tables/{…}/sample: the first rows of the newest data file, each as its JSON text. */
export const TABLE_SAMPLE = object({
  warehouse: STRING,
  table: STRING,
  snapshot_id: { ...orNull(STRING), description: 'The snapshot read; null: the table has none' },
  file: { ...orNull(STRING), description: 'The data file the rows come from; null: no data file to sample' },
  rows: { ...array(OBJECT), description: 'The rows as written in that file (delete files not applied), in the form a producer sends them' },
})

export const USAGE = object({
  month: { type: 'string', pattern: '^\\d{4}-\\d{2}$' },
  ingest_bytes: object({
    month_to_date: NUMBER,
    batches: NUMBER,
    rows_accepted: NUMBER,
    rows_rejected: NUMBER,
    rate_limited: { ...NUMBER, description: 'Requests refused 429 rate_limited this month' },
    by_sink: array(
      object({ sink_id: STRING, name: orNull(STRING), bytes: NUMBER, batches: NUMBER, rows_accepted: NUMBER, rows_rejected: NUMBER, rate_limited: NUMBER }),
    ),
    enforced: { const: false },
  }),
  storage: object({ ...STORAGE_FIGURE, bytes: NUMBER, intake_bytes: NUMBER, warehouses: { type: 'object', additionalProperties: OBJECT } }),
})

export const CONNECTION = object({
  warehouses: array(
    object({
      name: STRING,
      catalog: object({ type: { enum: ['sql', 'rest'] } }),
      storage: object({ bucket: STRING, endpoint: STRING, region: STRING, path_style: { const: true } }),
      engines: {
        ...orNull(
          object({
            catalog_uri: STRING,
            alias: STRING,
            duckdb: array(STRING),
            pyiceberg: array(STRING),
            spark: array(STRING),
            note: STRING,
          }),
        ),
        description: 'A SQL-catalog warehouse: DuckDB, PyIceberg and Spark lines for <LHBOX_URL>/iceberg; null for an external REST catalog',
      },
    }),
  ),
  ingest_url: STRING,
  sinks_note: STRING,
  sinks_enabled: { type: 'boolean', description: 'false: sinks are switched off on this service (LHBOX_SINKS_ENABLED)' },
})

export const API_KEY_CREATED = object({
  key: { type: 'string', pattern: '^al_key_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$', description: 'Shown once' },
  key_id: STRING,
  level: { enum: ['read', 'write', 'admin'] },
  project: STRING,
  project_id: STRING,
})

// ---- parameters -------------------------------------------------------------------------------------

export const PATH_PARAMS: Record<string, JsonSchema> = {
  sink_id: { ...schema(SINK_REF), description: 'The sink’s id (snk_…) or its name' },
  warehouse: { ...schema(WAREHOUSE_NAME), description: 'The warehouse’s name' },
  namespace: { type: 'string', pattern: '^[^.\\u0000]+(?:\\.[^.\\u0000]+)*$', description: 'The namespace; a nested one with its levels joined by dots' },
  table: { ...schema(TABLE_PART), description: 'The table’s name' },
}

// ---- bodies: what the routes check past their valibot schema, where JSON Schema can say it -----------------

/** POST /v1/tables: the columns or a whole schema (one of them), of at least one column. */
export const CREATE_TABLE: JsonSchema = (() => {
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
export const DOCUMENT_TABLE: JsonSchema = {
  ...schema(DocumentTable),
  anyOf: [{ required: ['doc'] }, { required: ['columns'], properties: { columns: { minProperties: 1 } } }],
}

export const IDEMPOTENCY_KEY: Parameter = {
  name: 'Idempotency-Key',
  in: 'header',
  // Required for a JSON array; NDJSON may leave it out (OpenAPI cannot say "required for one media type").
  required: false,
  description:
    'The batch id: a retry with the same id and body is answered 200 as a duplicate. Required for application/json (400 invalid_idempotency_key without it); NDJSON without it takes the batch id ndjson:<SHA-256 of the decompressed body>, so a retried batch is stored once',
  schema: { type: 'string', pattern: BATCH_ID.source },
}

export const SEND_BODY = {
  type: 'array',
  description:
    'A JSON array of objects (rows), ≤ 16 MiB (decompressed). Each element is stored byte for byte, one a line. ' +
    'An element that is not an object is answered as rejected (reasons: not_an_object, by index), and the roll writes it ' +
    'to the rejects file with its index and bytes.',
  // Any JSON value is taken: one that is not an object is a rejected row, not a refused batch.
  items: { description: 'A row: an object whose members are the table’s columns' },
}

/** The same batch as NDJSON (application/x-ndjson or application/jsonl). */
export const SEND_LINES = {
  type: 'string',
  description:
    'One JSON element a line, ≤ 16 MiB (decompressed): blank lines ignored, the final newline optional, CRLF taken; a line break ' +
    'inside an element is malformed_json. Every other rule as for the array: each line stored byte for byte, a line that is not ' +
    'an object rejected (not_an_object; index counts elements, blank lines not).',
}

/** POST /v1/sinks/{id}/send-keys: the new key, once, and when the one it replaced stops working. */
export const SEND_KEY_ROTATED = object({
  sink_id: STRING,
  name: STRING,
  ingest_url: STRING,
  send_key: { type: 'string', pattern: '^al_send_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$', description: 'Shown once' },
  previous_retires_at: { ...TIME, description: 'Until then the previous key works too (now, when retired at once)' },
})
