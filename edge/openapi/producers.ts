import { IDEMPOTENCY_KEY, INTEGER, OBJECT, object, SEND_ANSWER, SEND_BODY, STRING } from './shapes.ts'

import { type Operation, SINKS_DISABLED, RATE_LIMITED } from './operation.ts'

export const DEVICE_OPERATION: Operation = {
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
export const OTLP_LOGS_OPERATION: Operation = {
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
export const MCP_OPERATION: Operation = {
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
