// The REST spec's Idempotency-Key on mutations (POST and DELETE): the first request with a key runs
// and, once final (2xx and 4xx; a 5xx is not final), its answer is kept in iceberg_idempotency and
// replayed to every retry with the same key, with no second effect. The key belongs to the caller's
// project; one reused for another request (method, path, query or body differ) is 422; a retry
// while the first still runs is 503 with Retry-After. A first request that died mid-way (its row
// still open after a minute) is taken over by the next retry. Rows older than a day are pruned a
// few at a time as keys arrive: the advertised lifetime is 30 minutes.
import type { Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import type { AppEnv } from '../env.ts'
import { sha256Hex } from '../keys.ts'
import { badRequest, IcebergError } from './errors.ts'

/** The lifetime /v1/config advertises (ISO 8601): clients reuse a key at most this long. */
export const IDEMPOTENCY_LIFETIME = 'PT30M'

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/

interface Row {
  request_sha256: string
  status: number | null
  response: string | null
}

async function client(c: Context<AppEnv>) {
  return (await c.var.db()).$client
}

/** Takes the key for this request: true when this request runs it, else the row that holds it. */
async function claim(c: Context<AppEnv>, key: string, request: string): Promise<true | Row> {
  const sql = await client(c)
  const projectId = c.var.principal.projectId
  const inserted = await sql.query(
    `with pruned as (
       delete from iceberg_idempotency where ctid = any(array(
         select ctid from iceberg_idempotency where created_at < now() - interval '1 day' limit 20))
     )
     insert into iceberg_idempotency (project_id, key, request_sha256) values ($1, $2, $3)
     on conflict do nothing returning 1`,
    [projectId, key, request],
  )
  if (inserted.rowCount === 1) return true
  // An open row a minute old is a first request that died: this retry runs it instead.
  const taken = await sql.query(
    `update iceberg_idempotency set created_at = now()
     where project_id = $1 and key = $2 and request_sha256 = $3 and status is null and created_at < now() - interval '1 minute'
     returning 1`,
    [projectId, key, request],
  )
  if (taken.rowCount === 1) return true
  const { rows } = await sql.query(`select request_sha256, status, response from iceberg_idempotency where project_id = $1 and key = $2`, [projectId, key])
  // Pruned in between: the key is free again.
  return rows[0] ?? claim(c, key, request)
}

export const idempotent = createMiddleware<AppEnv>(async (c, next) => {
  const key = c.req.header('idempotency-key')
  if (key === undefined || (c.req.method !== 'POST' && c.req.method !== 'DELETE')) return next()
  if (!UUID.test(key)) throw badRequest('Idempotency-Key: a UUID of 36 characters (UUIDv7, as the spec asks)')
  const url = new URL(c.req.url)
  const request = await sha256Hex(`${c.req.method} ${url.pathname}${url.search}\n${await c.req.text()}`)
  const held = await claim(c, key.toLowerCase(), request)
  if (held !== true) {
    if (held.request_sha256 !== request) {
      throw new IcebergError(422, 'UnprocessableEntityException', 'this Idempotency-Key was used for another request: use a new key for each operation')
    }
    if (held.status === null) {
      throw new IcebergError(503, 'ServiceUnavailableException', 'a request with this Idempotency-Key is still running; retry shortly', { 'Retry-After': '1' })
    }
    if (held.status === 204) return c.body(null, 204)
    return c.body(held.response ?? '', held.status as 200, { 'content-type': 'application/json' })
  }
  await next()
  const sql = await client(c)
  const status = c.res.status
  if (status >= 500) {
    await sql.query(`delete from iceberg_idempotency where project_id = $1 and key = $2`, [c.var.principal.projectId, key.toLowerCase()])
    return
  }
  const response = status === 204 ? null : await c.res.clone().text()
  await sql.query(`update iceberg_idempotency set status = $3, response = $4 where project_id = $1 and key = $2`, [
    c.var.principal.projectId,
    key.toLowerCase(),
    status,
    response,
  ])
})
