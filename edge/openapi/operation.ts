// What an operation of the document says (its key, level, parameters, body, statuses and answers), and the
// status texts many operations share: the document (document.ts) adds each kind of key's own refusals.
import type { GenericSchema } from 'valibot'
import { type JsonSchema, type Parameter, PATH_PARAMS } from './shapes.ts'
type Auth = 'api_key' | 'send_key' | 'device_key' | 'mcp' | 'bootstrap' | null

export interface Operation {
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
export const SECURITY: Partial<Record<Exclude<Auth, null>, Record<string, never[]>[]>> = {
  device_key: [{ send_key: [] }, { send_key_basic: [] }, { send_key_query: [] }],
  mcp: [{ api_key: [] }, { send_key: [] }],
}

/** What every operation of a kind of key may answer besides its own statuses. */
export const AUTH_ERRORS: Record<Exclude<Auth, null>, Record<number, string>> = {
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
export const MALFORMED = 'invalid_request: a parameter or the body does not match the schema (issues names which)'
export const BODY_ERRORS = { 400: `${MALFORMED}; malformed_json`, 415: 'unsupported_media_type: not Content-Type: application/json' }
export const UNAVAILABLE =
  'unavailable: the database, the bucket or the Iceberg catalog did not answer, or a commit’s outcome is unknown (Retry-After; failed names which)'
export const BAD_TABLE_PATH = 'invalid_request: the path is not <warehouse>.<namespace>.<table>'
export const SINK_NOT_FOUND = 'sink_not_found (another project’s sink is not found either)'
export const SINKS_DISABLED = 'sinks_disabled: sinks are switched off on this service (Retry-After; what was accepted waits); unavailable'
export const RATE_LIMITED =
  'rate_limited: over the sink’s limits or its project’s ceiling (Retry-After, whole seconds; retry_after says the same); nothing was stored'
export const CATALOG_REFUSED = 'catalog_unauthorized: the warehouse’s catalog refused its token or credential (PATCH /v1/warehouses/{warehouse})'
/** The query strings' numbers, as the routes read them (valibot sees strings there). */
export const LEASE_SECONDS = { type: 'integer', minimum: 10, maximum: 3600, default: 300 }
export const WAREHOUSE_REF = { warehouse: { ...PATH_PARAMS.warehouse, description: 'The warehouse’s name or id' } }
