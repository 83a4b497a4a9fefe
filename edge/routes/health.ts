// GET /healthz: the database and the bucket both answer, or 503 naming which did not.
import { sql } from 'drizzle-orm'
import { Hono } from 'hono'
import type { AppEnv } from '../env.ts'
import { envelope } from '../errors.ts'
import { bucketClient } from '../s3.ts'

export const health = new Hono<AppEnv>().get('/healthz', async (c) => {
  const failed: string[] = []
  const checks = await Promise.allSettled([c.var.db().then((db) => db.execute(sql`select 1`)), bucketClient(c.env).headBucket()])
  if (checks[0].status === 'rejected') failed.push('database')
  if (checks[1].status === 'rejected') failed.push('bucket')
  if (failed.length > 0) {
    c.header('Retry-After', '5')
    return c.json(envelope('unavailable', `not ready: ${failed.join(' and ')} unreachable`, { failed }), 503)
  }
  return c.json({ ok: true, database: 'ok', bucket: 'ok' })
})
