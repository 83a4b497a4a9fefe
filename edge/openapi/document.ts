// GET /openapi.json: an OpenAPI 3.1 document built from the same valibot schemas that validate the
// requests, so the two cannot drift apart (the shapes: shapes.ts; the paths: paths-*.ts). test/integration/api-schema.test.ts
// runs schemathesis over it against a live stack: every status an operation answers, and the shape of
// its answers, are here.
import type { GenericSchema } from 'valibot'
import { Hono } from 'hono'
import type { AppEnv } from '../env.ts'
import { COMPONENTS, type JsonSchema, PATH_PARAMS, schema } from './shapes.ts'

import { type Operation, SECURITY, AUTH_ERRORS, MALFORMED, BODY_ERRORS, UNAVAILABLE } from './operation.ts'
import { INTERNAL_PATHS } from './paths-internal.ts'
import { SINK_PATHS } from './paths-sinks.ts'
import { TABLE_PATHS } from './paths-tables.ts'

const OPERATIONS: Record<string, Record<string, Operation>> = { ...SINK_PATHS, ...INTERNAL_PATHS, ...TABLE_PATHS }

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
