// GET /iceberg/v1/config?warehouse=<name>: the catalog's settings for one of the caller's warehouses.
// overrides: the path prefix (the warehouse's id) and the store engines read and write the tables in
// (endpoint, region, path-style addressing). Keys come with each table (storage-access.ts: remote
// signing, or vended credentials when asked).
// endpoints: what this server serves, so that clients check before they call; idempotency-key-lifetime:
// that mutations take an Idempotency-Key.
import type { Context } from 'hono'
import type { AppEnv } from '../env.ts'
import { badRequest } from './errors.ts'
import { IDEMPOTENCY_LIFETIME } from './idempotency.ts'
import { warehouseOf } from './warehouse.ts'

const P = '/v1/{prefix}'

/** Every route this catalog serves (the REST spec's endpoint strings). */
const ENDPOINTS = [
  `GET ${P}/namespaces`,
  `POST ${P}/namespaces`,
  `GET ${P}/namespaces/{namespace}`,
  `HEAD ${P}/namespaces/{namespace}`,
  `DELETE ${P}/namespaces/{namespace}`,
  `POST ${P}/namespaces/{namespace}/properties`,
  `GET ${P}/namespaces/{namespace}/tables`,
  `POST ${P}/namespaces/{namespace}/tables`,
  `POST ${P}/namespaces/{namespace}/register`,
  `GET ${P}/namespaces/{namespace}/tables/{table}`,
  `HEAD ${P}/namespaces/{namespace}/tables/{table}`,
  `POST ${P}/namespaces/{namespace}/tables/{table}`,
  `DELETE ${P}/namespaces/{namespace}/tables/{table}`,
  `POST ${P}/namespaces/{namespace}/tables/{table}/metrics`,
  `GET ${P}/namespaces/{namespace}/tables/{table}/credentials`,
  `POST ${P}/tables/rename`,
  `POST ${P}/transactions/commit`,
]

export async function config(c: Context<AppEnv>) {
  const name = c.req.query('warehouse')
  if (!name) throw badRequest('give the warehouse: /iceberg/v1/config?warehouse=<name> (the lhbox warehouse’s name)')
  const w = await warehouseOf(c, { name })
  return c.json({
    defaults: {},
    overrides: {
      prefix: w.id,
      's3.endpoint': w.endpoint,
      's3.region': w.region,
      'client.region': w.region,
      's3.path-style-access': 'true',
    },
    endpoints: ENDPOINTS,
    // Mutations take the spec's Idempotency-Key (idempotency.ts).
    'idempotency-key-lifetime': IDEMPOTENCY_LIFETIME,
  })
}
