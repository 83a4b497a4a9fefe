// The catalog's typed errors, mapped once in the edge's onError (issue 11, item 4): not found → 404,
// conflict → 409, and a catalog that is unreachable, refuses us or leaves a commit's outcome unknown
// → 503 unavailable with Retry-After and failed: ["catalog"] (the shape of the database's and the
// bucket's 503s), never a 500. Routes on the real app, no HTTP server but a closed port.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { freePort } from '../../../dev/ports.ts'
import { createApp } from '../../../edge/app.ts'
import type { Env } from '../../../edge/env.ts'
import { ApiError } from '../../../edge/errors.ts'
import { CatalogError, CommitConflict, CommitStateUnknown, NoSuchNamespace, NoSuchTable, TableAlreadyExists } from '../../../iceberg/catalog/index.ts'
import { RestCatalog } from '../../../iceberg/catalog/rest.ts'
import { CommitAbandoned, PlanStale } from '../../../iceberg/transaction/transact.ts'

const env = { DATABASE_URL: 'postgres://x@127.0.0.1:1/x', LHBOX_BOOTSTRAP_SECRET: 's' } as Env

/** The answer of a route that throws `err`. */
async function answer(err: () => unknown) {
  const app = createApp()
  app.get('/t/catalog', async () => {
    throw await err()
  })
  const res = await app.request('/t/catalog', {}, env)
  const text = await res.text()
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    text,
    error: JSON.parse(text).error as { code: string; message: string; failed?: string[] },
  }
}

function expectUnavailable(a: Awaited<ReturnType<typeof answer>>) {
  expect({ status: a.status, retryAfter: a.retryAfter, code: a.error.code, failed: a.error.failed }).toEqual({
    status: 503,
    retryAfter: '5',
    code: 'unavailable',
    failed: ['catalog'],
  })
  expect(a.text).not.toMatch(/\n\s+at\s|\.ts:\d+/)
}

describe('catalog errors in onError', () => {
  let log: ReturnType<typeof vi.spyOn> | undefined
  const quiet = () => (log = vi.spyOn(console, 'error').mockImplementation(() => undefined))
  afterEach(() => log?.mockRestore())

  it('not found → 404: table_not_found, namespace_not_found', async () => {
    const table = await answer(() => new NoSuchTable('table ns.t does not exist'))
    expect({ status: table.status, code: table.error.code, retryAfter: table.retryAfter }).toEqual({ status: 404, code: 'table_not_found', retryAfter: null })
    expect(table.error.message).toContain('ns.t does not exist')
    const ns = await answer(() => new NoSuchNamespace('namespace ns does not exist'))
    expect({ status: ns.status, code: ns.error.code }).toEqual({ status: 404, code: 'namespace_not_found' })
  })

  it('conflict → 409: table_exists; commit_conflict for a conflict left after the retries, a stale plan, an abandoned change', async () => {
    const exists = await answer(() => new TableAlreadyExists('table ns.t already exists'))
    expect({ status: exists.status, code: exists.error.code }).toEqual({ status: 409, code: 'table_exists' })
    for (const err of [new CommitConflict('ns.t changed during the commit'), new PlanStale('files gone'), new CommitAbandoned('no longer applies')]) {
      const a = await answer(() => err)
      expect({ err: err.name, status: a.status, code: a.error.code, retryAfter: a.retryAfter }).toEqual({
        err: err.name,
        status: 409,
        code: 'commit_conflict',
        retryAfter: null,
      })
    }
  })

  it('an unknown commit outcome → 503 unavailable, Retry-After, failed ["catalog"]; the message says to read the table first', async () => {
    quiet()
    const a = await answer(() => new CommitStateUnknown('committing to ns.t: 503 ServiceUnavailableException: gateway lost the answer'))
    expectUnavailable(a)
    expect(a.error.message).toMatch(/may or may not have been applied/)
    expect(log).toHaveBeenCalledOnce() // the operator sees it
  })

  it('any other catalog failure (OAuth refused, a bad answer) → 503, not 500', async () => {
    quiet()
    expectUnavailable(await answer(() => new CatalogError('OAuth2 token request to http://c/v1/oauth/tokens failed: 401 invalid_client')))
    expectUnavailable(await answer(() => new CatalogError('loading table ns.t: 500 java.lang.NullPointerException')))
  })

  it('a REST catalog nobody answers at (a real client, a closed port) → 503 failed ["catalog"]', async () => {
    quiet()
    const uri = `http://127.0.0.1:${await freePort()}`
    const a = await answer(() =>
      new RestCatalog({ name: 'down', uri, s3: {} }).loadTable({ namespace: ['ns'], name: 't' }).then(
        () => new Error('loaded?'),
        (err) => err,
      ),
    )
    expectUnavailable(a)
    expect(a.error.message).toContain('reading the catalog config')
  })

  it('a catalog error is no ApiError: an ApiError a route throws still wins, and other errors stay 500', async () => {
    const api = await answer(() => new ApiError(404, 'table_not_found', 'ns.t does not exist in wh', { tables: ['ns.u'] }))
    expect(api.error).toEqual({ code: 'table_not_found', message: 'ns.t does not exist in wh', tables: ['ns.u'] })
    quiet()
    const other = await answer(() => new TypeError('x is undefined'))
    expect({ status: other.status, code: other.error.code }).toEqual({ status: 500, code: 'internal' })
  })
})
