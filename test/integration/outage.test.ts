// A database or a bucket that does not answer: 503 with Retry-After, naming which, never a 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startWrangler } from '../../dev/wrangler.ts'
import type { Child } from '../../dev/process.ts'
import { DEAD_HOST_PORT, freePorts } from '../support/ports.ts'
import { stack } from '../support/stack.ts'

async function workerWith(vars: Record<string, string>): Promise<{ url: string; child: Child }> {
  const [port, inspector] = await freePorts(2)
  const child = await startWrangler(stack().dir, port, inspector, vars)
  return { url: `http://127.0.0.1:${port}`, child }
}

describe('outages', () => {
  let bothDown: { url: string; child: Child }
  let bucketDown: { url: string; child: Child }

  beforeAll(async () => {
    const s = stack()
    const base = {
      DATABASE_URL: `postgres://lhbox:lhbox-dev@127.0.0.1:${s.ports.pgbouncer}/lhbox`,
      NEON_WS_PROXY: `127.0.0.1:${s.ports.bridge}`,
      LHBOX_BOOTSTRAP_SECRET: s.bootstrapSecret,
      S3_ENDPOINT: `http://${DEAD_HOST_PORT}`, // nothing listens there
      S3_BUCKET: s.s3.bucket,
      S3_REGION: s.s3.region,
      S3_ACCESS_KEY_ID: s.s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: s.s3.secretAccessKey,
    }
    ;[bothDown, bucketDown] = await Promise.all([workerWith({ ...base, NEON_WS_PROXY: DEAD_HOST_PORT }), workerWith(base)])
  }, 180_000)

  afterAll(async () => {
    await Promise.all([bothDown?.child.stop(), bucketDown?.child.stop()])
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
