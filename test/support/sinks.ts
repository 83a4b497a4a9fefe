// Shared helpers for the sink integration tests: a table through POST /v1/tables, a sink on it, a
// batch through the send route, the ledger in Postgres, the intake in the bucket.
import pg from 'pg'
import { expect } from 'vitest'
import { S3Client } from '../../iceberg/io/s3.ts'
import { call, newApiKey, stack, type Answer } from './stack.ts'

export const SEND_KEY_FORMAT = /^al_send_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/

/** A short unique suffix for names (tables, sinks, batch ids). */
export const uid = (): string => Math.random().toString(36).slice(2, 10)

export interface Column {
  name: string
  type: string
  required?: boolean
  doc?: string
}

export interface TableSpec {
  warehouse?: string
  namespace?: string
  name?: string
  columns?: Column[]
  format_version?: 2 | 3
  partition?: string[]
  doc?: string
}

const DEFAULT_COLUMNS: Column[] = [
  { name: 'x', type: 'long', required: true },
  { name: 'who', type: 'string' },
]

/** POST /v1/tables; answers `<ns>.<table>` (asserts the 201). */
export async function createTable(key: string, spec: TableSpec = {}): Promise<string> {
  const table = `${spec.namespace ?? 'sinks'}.${spec.name ?? `t_${uid()}`}`
  const res = await call('/v1/tables', {
    key,
    json: {
      warehouse: spec.warehouse ?? stack().warehouse,
      table,
      columns: spec.columns ?? DEFAULT_COLUMNS,
      ...(spec.format_version ? { format_version: spec.format_version } : {}),
      ...(spec.partition ? { partition: spec.partition } : {}),
      ...(spec.doc ? { doc: spec.doc } : {}),
    },
  })
  if (res.status !== 201) throw new Error(`POST /v1/tables ${table}: ${res.status} ${res.text}`)
  return table
}

/** POST /v1/sinks, the raw answer. */
export function postSink(key: string, body: Record<string, unknown>): Promise<Answer> {
  return call('/v1/sinks', { key, json: { warehouse: stack().warehouse, ...body } })
}

/**
 * GET /v1/sinks every page, following next_cursor (asserts each 200): the whole list, for a project
 * with more sinks than a page (the shared stack's). `query` is the rest of the query, e.g. `warehouse=w`.
 */
export async function listSinks(key: string, query = ''): Promise<any[]> {
  const sinks: any[] = []
  let cursor: string | null = null
  do {
    const params = new URLSearchParams(query)
    params.set('limit', '1000')
    if (cursor) params.set('cursor', cursor)
    const res = await call(`/v1/sinks?${params}`, { key })
    if (res.status !== 200) throw new Error(`GET /v1/sinks?${params}: ${res.status} ${res.text}`)
    sinks.push(...res.body.sinks)
    cursor = res.body.next_cursor
  } while (cursor)
  return sinks
}

export interface Sink {
  id: string
  name: string
  table: string
  sendKey: string
  created: Answer
}

/** A new table (unless given) and a sink on it; asserts the 201. */
export async function newSink(key: string, opts: { table?: string; tableSpec?: TableSpec; name?: string; sink?: Record<string, unknown> } = {}): Promise<Sink> {
  const table = opts.table ?? (await createTable(key, opts.tableSpec))
  const name = opts.name ?? `s_${uid()}`
  const created = await postSink(key, { name, table, ...opts.sink })
  if (created.status !== 201) throw new Error(`POST /v1/sinks: ${created.status} ${created.text}`)
  return { id: created.body.id, name, table, sendKey: created.body.send_key, created }
}

/** POST /v1/sinks/{id} as a producer: the send key, an Idempotency-Key, application/json. */
export function send(
  sink: { id: string; sendKey: string },
  body: string | Uint8Array | unknown[],
  opts: { batchId?: string | null; headers?: Record<string, string>; key?: string; url?: string; base?: string } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...opts.headers }
  const batchId = opts.batchId === undefined ? `b-${uid()}` : opts.batchId
  if (batchId !== null) headers['idempotency-key'] = batchId
  const raw = typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body)
  return call(`/v1/sinks/${opts.url ?? sink.id}`, { method: 'POST', key: opts.key ?? sink.sendKey, headers, body: raw as BodyInit, base: opts.base })
}

/** The error envelope of the send route's 401 (identical for unknown sink, deleted sink, wrong key). */
export function expect401(answer: Answer): void {
  expect(answer.status).toBe(401)
  expect(answer.body).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } })
}

/** The project database (direct Postgres), one client per file. */
export async function database(): Promise<pg.Client> {
  const db = new pg.Client(stack().databaseUrl)
  await db.connect()
  return db
}

/** The catalog's file bucket (where the intake lives). */
export const bucket = (): S3Client => new S3Client(stack().s3)

export const intakeKey = (sinkId: string, batchId: string): string => `_sink/${sinkId}/${batchId}.ndjson`

/** The keys under _sink/<sink_id>/. */
export async function intakeObjects(sinkId: string): Promise<string[]> {
  const keys: string[] = []
  for await (const o of bucket().list(`_sink/${sinkId}/`)) keys.push(o.key)
  return keys.sort()
}

/** The ledger rows of a sink, oldest first. */
export async function ledger(db: pg.Client, sinkId: string): Promise<Array<Record<string, any>>> {
  const { rows } = await db.query('select * from batches where sink_id = $1 order by received_at, batch_id', [sinkId])
  return rows
}

/**
 * Polls until `check` returns a truthy value, and returns it. When the time is up it throws (naming
 * `what` and the last value): a caller that ignores the result still fails rather than going on with
 * a condition that never held. `ms` is a bound for a slow machine, not a timing assert.
 */
export async function poll<T>(check: () => Promise<T>, ms = 15_000, what = 'the condition'): Promise<T> {
  const until = Date.now() + ms
  for (;;) {
    const v = await check()
    if (v) return v
    if (Date.now() > until) throw new Error(`poll: ${what} did not hold within ${ms} ms (last value: ${JSON.stringify(v)})`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** GET /v1/usage's ingest_bytes for the key's project. */
export async function usage(key: string): Promise<Record<string, any>> {
  const res = await call('/v1/usage', { key })
  expect(res.status).toBe(200)
  return res.body.ingest_bytes
}

export const bytes = (s: string): Uint8Array => new TextEncoder().encode(s)

/** A fresh project with an admin key and one warehouse (optionally on another S3 endpoint). */
export async function newProject(opts: { endpoint?: string } = {}): Promise<{ project: string; key: string; warehouse: string }> {
  const project = `p-${uid()}`
  const key = await newApiKey('admin', project)
  const res = await call('/v1/warehouses', { key, json: { name: 'main', ...(opts.endpoint ? { endpoint: opts.endpoint } : {}) } })
  if (res.status !== 201) throw new Error(`POST /v1/warehouses: ${res.status} ${res.text}`)
  return { project, key, warehouse: 'main' }
}

/**
 * The feed sinks a test file made, deleted after it: the roller service of a later file rolls every due
 * sink of the shared stack, and a feed is due on every slot (its query's server long gone by then).
 */
export function feedSinksDeletedAfter(afterAll: (fn: () => Promise<void>) => void): (id: string) => string {
  const made: string[] = []
  afterAll(async () => {
    for (const id of made) {
      const res = await call(`/v1/sinks/${id}`, { key: stack().adminKey, method: 'DELETE' })
      if (res.status !== 202) throw new Error(`DELETE /v1/sinks/${id}: ${res.status} ${res.text}`)
    }
  })
  return (id) => {
    made.push(id)
    return id
  }
}
