// One error path: throw ApiError anywhere; app.onError turns it into the envelope
// {"error": {"code", "message", ...details}}. The catalog's typed errors are mapped here too, once
// (catalogFailure), so a route lets them propagate unless the spec names a route-specific answer.
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import {
  CatalogError,
  CatalogUnauthorized,
  CommitConflict,
  CommitStateUnknown,
  NoSuchNamespace,
  NoSuchTable,
  TableAlreadyExists,
} from '../iceberg/catalog/index.ts'
import { S3Error } from '../iceberg/io/s3.ts'
import { CommitAbandoned, PlanStale } from '../iceberg/transaction/transact.ts'

export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

export function envelope(code: string, message: string, details: Record<string, unknown> = {}) {
  return { error: { code, message, ...details } }
}

export const unavailable = (what: 'database' | 'bucket' | 'catalog' | 'sql_check', message: string) =>
  new ApiError(503, 'unavailable', message, { failed: [what] }, { 'Retry-After': '5' })

/** The catalog's own one-line reason (never a stack), kept short. */
const reason = (err: Error) => {
  const text = err.message.replace(/\s+/g, ' ').trim()
  return text.length > 300 ? `${text.slice(0, 300)}…` : text
}

/**
 * A catalog failure as the API answers it: not found → 404, conflict → 409, and anything else the
 * catalog throws (unreachable, refused, an unknown commit outcome) → 503 unavailable with
 * Retry-After and failed: ["catalog"]. Undefined for an error that is not the catalog's.
 */
export function catalogFailure(err: unknown): ApiError | undefined {
  if (err instanceof NoSuchTable) return new ApiError(404, 'table_not_found', `the catalog has no such table (${reason(err)})`)
  if (err instanceof NoSuchNamespace) return new ApiError(404, 'namespace_not_found', `the catalog has no such namespace (${reason(err)})`)
  if (err instanceof TableAlreadyExists) return new ApiError(409, 'table_exists', `the table already exists (${reason(err)})`)
  // Retries exhausted: the table kept moving under the change.
  if (err instanceof CommitConflict || err instanceof PlanStale) {
    return new ApiError(409, 'commit_conflict', `the table kept changing while this change was committed; read it again and retry (${reason(err)})`)
  }
  if (err instanceof CommitAbandoned) return new ApiError(409, 'commit_conflict', `the change no longer applies to the table as it is now (${reason(err)})`)
  if (err instanceof CommitStateUnknown) {
    return unavailable(
      'catalog',
      `the catalog did not confirm the commit, which may or may not have been applied; read the table before you retry (${reason(err)})`,
    )
  }
  // Not the caller's key and not an outage: the warehouse's own catalog credentials are wrong or revoked.
  if (err instanceof CatalogUnauthorized) {
    return new ApiError(
      409,
      'catalog_unauthorized',
      `the warehouse's catalog refused its credentials (${reason(err)}); set them again with PATCH /v1/warehouses/{name}`,
    )
  }
  if (err instanceof CatalogError) return unavailable('catalog', `the catalog is unavailable (${reason(err)}); retry shortly`)
  return undefined
}

/**
 * A bucket that did not answer as a bucket should (unreachable, refusing, missing) while a route read or
 * wrote table files or the intake: the spec's 503 with Retry-After, failed ["bucket"]; its quota used
 * up: 409 quota_exceeded. Undefined for an error that is not the bucket's.
 */
export function bucketFailure(err: unknown): ApiError | undefined {
  if (!(err instanceof S3Error)) return undefined
  if (err.quotaExceeded) return new ApiError(409, 'quota_exceeded', 'the bucket is read-only: its storage quota is used up')
  return unavailable('bucket', `the bucket is unavailable (${err.message.slice(0, 300)}); retry shortly`)
}

// SQLSTATEs of a database that is going away or cannot take the work now (PostgreSQL appendix A):
// class 08 connection exceptions, 57P01–57P03 shutdowns, 53300 too many connections, and the two
// transient conflicts a retry resolves (40001 serialization failure, 40P01 deadlock).
const TRANSIENT_SQLSTATE = /^(08...|57P0[123]|53300|40001|40P01)$/
// The client's own words for a connection that broke under it (pg and @neondatabase/serverless).
const BROKEN_CONNECTION = /connection terminated|connection error|not queryable|websocket|ECONNRESET|ECONNREFUSED|socket hang up/i

/**
 * A database that dropped or refused the connection mid-request (a restart, a failover, a pooler
 * recycling it) as the API answers it: 503 unavailable, failed: ["database"], Retry-After — so the
 * producer retries with the same Idempotency-Key. Looks through wrappers' `cause` (drizzle wraps
 * query errors). Undefined for any other error: a bad query stays a logged 500.
 */
export function databaseFailure(err: unknown): ApiError | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code
    if ((typeof code === 'string' && TRANSIENT_SQLSTATE.test(code)) || BROKEN_CONNECTION.test(e.message)) {
      return unavailable('database', 'the database dropped the connection; retry shortly with the same request')
    }
  }
  return undefined
}
