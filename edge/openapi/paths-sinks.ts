import { CreateSink, ListSinksQuery, RejectsQuery, UpdateSink } from '../routes/sinks.ts'
import { RotateSendKey } from '../routes/send-keys.ts'
import {
  array,
  IDEMPOTENCY_KEY,
  INTEGER,
  OBJECT,
  object,
  orNull,
  queryParams,
  schema,
  REJECTS_PAGE,
  SEND_ANSWER,
  SEND_BODY,
  SEND_KEY_ROTATED,
  SEND_LINES,
  SINK,
  SINK_CREATED,
  STRING,
  TIME,
} from './shapes.ts'

import { type Operation, MALFORMED, BODY_ERRORS, SINK_NOT_FOUND, SINKS_DISABLED, RATE_LIMITED, CATALOG_REFUSED } from './operation.ts'
import { DEVICE_OPERATION, MCP_OPERATION, OTLP_LOGS_OPERATION } from './producers.ts'

export const SINK_PATHS: Record<string, Record<string, Operation>> = {
  '/mcp': { post: MCP_OPERATION },
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
}
