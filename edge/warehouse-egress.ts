// Where a warehouse's store endpoint and REST catalog may be: a tenant (an admin key) names them, and
// the edge and the roller then send requests there with their own identity, so an internal URL would
// read the operator's network. Public addresses only (contract/egress-policy.ts), but for the edge's
// own store (S3_ENDPOINT), its SQL check port and LHBOX_WAREHOUSE_ALLOW_HOSTS. At create the URL's host
// is checked as far as it can be without DNS (a Worker has none, and reaches only public addresses
// anyway); the edge on Node checks every connection too (edge/node-main.ts, contract/egress-connect.ts).
import { EgressPolicy, WAREHOUSES } from '../contract/egress-policy.ts'
import type { Env } from './env.ts'
import { ApiError } from './errors.ts'

/** The edge's policy for warehouses' URLs. */
export function warehouseEgress(env: Env): EgressPolicy {
  return EgressPolicy.fromEnv(env.LHBOX_WAREHOUSE_ALLOW_HOSTS, WAREHOUSES, [env.S3_ENDPOINT, env.LHBOX_SQL_CHECK_URL])
}

/** 400 egress_refused when `url` (a field of the request) names an internal host the policy does not open. */
export function checkWarehouseUrl(policy: EgressPolicy, field: string, url: string): void {
  const reason = policy.hostRefusal(new URL(url).hostname)
  if (reason) throw new ApiError(400, 'egress_refused', `${field}: ${reason}`, { field, url })
}
