import { ListTablesQuery, SampleQuery } from '../routes/tables.ts'
import { CreateWarehouse, UpdateWarehouse } from '../routes/warehouses.ts'
import { array, CONNECTION, CREATE_TABLE, DOCUMENT_TABLE, object, queryParams, TABLE_SAMPLE, STRING, TABLE, USAGE, WAREHOUSE } from './shapes.ts'

import { type Operation, MALFORMED, BAD_TABLE_PATH, CATALOG_REFUSED, WAREHOUSE_REF } from './operation.ts'

export const TABLE_PATHS: Record<string, Record<string, Operation>> = {
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
        400: `${MALFORMED} (a prefix under _sink or wh); malformed_json; egress_refused: the endpoint or catalog.uri is a loopback, private or link-local address (or localhost) that LHBOX_WAREHOUSE_ALLOW_HOSTS does not open`,
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
}
