// A bucket failure outside the send route (a table's metadata written on create, a sink's intake
// listed on delete) is the spec's 503 unavailable with Retry-After and failed: ["bucket"], or 409
// quota_exceeded; it was a 500.
import { describe, expect, it, vi } from 'vitest'
import { createApp } from '../../../edge/app.ts'
import type { Env } from '../../../edge/env.ts'
import { S3Error } from '../../../iceberg/io/s3.ts'

const env = { DATABASE_URL: 'postgres://x@127.0.0.1:1/x', LHBOX_BOOTSTRAP_SECRET: 's' } as Env

async function answer(err: Error) {
  const app = createApp()
  app.get('/t/bucket', () => {
    throw err
  })
  const log = vi.spyOn(console, 'error').mockImplementation(() => undefined)
  try {
    const res = await app.request('/t/bucket', {}, env)
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as { error: { code: string; failed?: string[] } } }
  } finally {
    log.mockRestore()
  }
}

describe('bucket failures', () => {
  it('answers 503 unavailable, failed: ["bucket"], Retry-After for a bucket that is down, refuses or is missing', async () => {
    for (const err of [
      new S3Error(0, 'NetworkError', 'S3 unreachable: Network connection lost.'),
      new S3Error(503, 'SlowDown', 'PUT a/b: 503 SlowDown'),
      new S3Error(403, 'SignatureDoesNotMatch', 'PUT a/b: 403 SignatureDoesNotMatch'),
      new S3Error(404, 'NoSuchBucket', 'PUT a/b: 404 NoSuchBucket'),
    ]) {
      const res = await answer(err)
      expect([res.status, res.retryAfter, res.body.error.code, res.body.error.failed], err.message).toEqual([503, '5', 'unavailable', ['bucket']])
    }
  })

  it('answers 409 quota_exceeded for a bucket whose quota is used up', async () => {
    const res = await answer(new S3Error(403, 'QuotaExceeded', 'PUT a/b: 403 QuotaExceeded'))
    expect([res.status, res.body.error.code]).toEqual([409, 'quota_exceeded'])
  })

  it('leaves other errors to the 500 path', async () => {
    const res = await answer(new TypeError('x is undefined'))
    expect([res.status, res.body.error.code]).toEqual([500, 'internal'])
  })
})
