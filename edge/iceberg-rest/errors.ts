// The Iceberg REST catalog's error answers: its ErrorModel, {"error": {"message", "type", "code"}},
// with the status codes of the REST OpenAPI spec (apache/iceberg open-api/rest-catalog-open-api.yaml).
// Everything a handler throws becomes one here: our IcebergError, the catalog's typed errors, the
// edge's own ApiError (the database or the bucket unavailable) and malformed input (400, never 5xx).
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import {
  CatalogError,
  CatalogUnauthorized,
  CommitConflict,
  CommitStateUnknown,
  InvalidUpdate,
  NamespaceAlreadyExists,
  NamespaceNotEmpty,
  NoSuchNamespace,
  NoSuchTable,
  TableAlreadyExists,
} from '../../iceberg/catalog/index.ts'
import { MetadataError } from '../../iceberg/spec/metadata.ts'
import { PartitionSpecError } from '../../iceberg/spec/partition.ts'
import { ApiError, bucketFailure, databaseFailure } from '../errors.ts'

export class IcebergError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly type: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
    this.name = 'IcebergError'
  }
}

export const badRequest = (message: string) => new IcebergError(400, 'BadRequestException', message)
export const forbidden = (message: string) => new IcebergError(403, 'ForbiddenException', message)
export const notAuthorized = (message: string) => new IcebergError(401, 'NotAuthorizedException', message)

export const errorModel = (e: IcebergError) => ({ error: { message: e.message, type: e.type, code: e.status } })

/** The catalog's one-line reason, kept short. */
const reason = (err: Error) => {
  const text = err.message.replace(/\s+/g, ' ').trim()
  return text.length > 300 ? `${text.slice(0, 300)}…` : text
}

/** The ErrorModel type of an edge ApiError's status (the database or the bucket unavailable, a full bucket). */
const TYPES: Record<number, string> = {
  401: 'NotAuthorizedException',
  403: 'ForbiddenException',
  404: 'NotFoundException',
  409: 'CommitFailedException',
  503: 'ServiceUnavailableException',
}

/** Any error a handler let go, as the REST catalog answers it; undefined for a bug (logged, 500). */
export function icebergFailure(err: unknown): IcebergError | undefined {
  if (err instanceof IcebergError) return err
  if (err instanceof NoSuchTable) return new IcebergError(404, 'NoSuchTableException', reason(err))
  if (err instanceof NoSuchNamespace) return new IcebergError(404, 'NoSuchNamespaceException', reason(err))
  if (err instanceof TableAlreadyExists || err instanceof NamespaceAlreadyExists) return new IcebergError(409, 'AlreadyExistsException', reason(err))
  if (err instanceof NamespaceNotEmpty) return new IcebergError(409, 'NamespaceNotEmptyException', reason(err))
  // A requirement failed, or the table moved during the commit: nothing was committed; the client retries.
  if (err instanceof CommitConflict) return new IcebergError(409, 'CommitFailedException', reason(err))
  if (err instanceof CommitStateUnknown) return new IcebergError(500, 'CommitStateUnknownException', reason(err))
  if (err instanceof InvalidUpdate || err instanceof MetadataError || err instanceof PartitionSpecError) return badRequest(reason(err))
  if (err instanceof CatalogUnauthorized || err instanceof CatalogError) {
    return new IcebergError(503, 'ServiceUnavailableException', `the catalog is unavailable (${reason(err)}); retry shortly`, { 'Retry-After': '5' })
  }
  const api = err instanceof ApiError ? err : (bucketFailure(err) ?? databaseFailure(err))
  if (api) return new IcebergError(api.status, TYPES[api.status] ?? 'BadRequestException', api.message, api.headers)
  return undefined
}
