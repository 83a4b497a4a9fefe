// A database or a bucket that does not answer: 503 with Retry-After, naming which, never a 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEdge, type Edge } from '../support/edge.ts'
import { DEAD_HOST_PORT } from '../support/ports.ts'
import { edgeHost, stack } from '../support/stack.ts'

describe('outages', () => {
  let bothDown: Edge
  let bucketDown: Edge

  beforeAll(async () => {
    const bucketGone = { S3_ENDPOINT: `http://${DEAD_HOST_PORT}` } // nothing listens there
    ;[bothDown, bucketDown] = await Promise.all([startEdge(edgeHost(), bucketGone, { databaseDown: true }), startEdge(edgeHost(), bucketGone)])
  }, 180_000)

  afterAll(async () => {
    await Promise.all([bothDown?.stop(), bucketDown?.stop()])
  })

  it('healthz names the database and the bucket when both are down', async () => {
    const res = await fetch(`${bothDown.url}/healthz`)
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBe('5')
    const body = (await res.json()) as { error: { code: string; failed: string[] } }
    expect(body.error.code).toBe('unavailable')
    expect(body.error.failed).toEqual(['database', 'bucket'])
  })

  it('healthz names only the bucket when only the bucket is down', async () => {
    const res = await fetch(`${bucketDown.url}/healthz`)
    expect(res.status).toBe(503)
    expect(((await res.json()) as { error: { failed: string[] } }).error.failed).toEqual(['bucket'])
  })

  it('an API route answers 503 unavailable with Retry-After when the database is down', async () => {
    const res = await fetch(`${bothDown.url}/v1/warehouses`, { headers: { authorization: `Bearer ${stack().adminKey}` } })
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBe('5')
    const text = await res.text()
    expect(JSON.parse(text).error).toMatchObject({ code: 'unavailable', failed: ['database'] })
    expect(text).not.toMatch(/\n\s+at\s/)
  })
})
