// One error path: throw ApiError anywhere; app.onError turns it into the envelope
// {"error": {"code", "message", ...details}}. The catalog's typed errors are mapped here too, once
// (catalogFailure), so a route lets them propagate unless the spec names a route-specific answer.
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { CatalogError, CommitConflict, CommitStateUnknown, NoSuchNamespace, NoSuchTable, TableAlreadyExists } from '../iceberg/catalog/index.ts'
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

export const unavailable = (what: 'database' | 'bucket' | 'catalog', message: string) =>
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
  if (err instanceof CatalogError) return unavailable('catalog', `the catalog is unavailable (${reason(err)}); retry shortly`)
  return undefined
}
