// GET /v1/sinks a page at a time (and the console's overview): a keyset over the list's order, name
// then created_at then id (a name is unique among live sinks only, so include_deleted needs the rest).
// The cursor carries the last row's key, so a page costs an index range and its own rows whatever the
// number of sinks before it, and a sink created or deleted meanwhile shifts nothing (no offset).
import * as v from 'valibot'
import type { EdgeDb } from '../db/edge.ts'
import { decodeCursor, encodeCursor } from './cursor.ts'
import { type SinkRow, viewOf, viewRow } from './sink-view.ts'

// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is refused (Postgres cannot hold it in text)
const TEXT = v.pipe(v.string(), v.regex(/^[^\u0000]*$/))

/** Where the next page starts: after this name, created_at (microseconds since 1970) and id. */
const SinkCursor = v.strictObject({
  name: TEXT,
  created_us: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
  id: TEXT,
})

const ORDER = 's.name, s.created_at, s.id'

export interface SinkPageQuery {
  warehouse?: string
  includeDeleted: boolean
  /** A next_cursor a page gave (decoded here: 400 invalid_request for anything else). */
  cursor?: string
  limit: number
}

export interface SinkPage {
  rows: SinkRow[]
  /** The cursor of the page after this one; null on the last. */
  next: string | null
}

export async function sinkPage(db: EdgeDb, projectId: string, q: SinkPageQuery): Promise<SinkPage> {
  const after = q.cursor === undefined ? null : decodeCursor(SinkCursor, q.cursor)
  const params: unknown[] = [projectId]
  const param = (value: unknown) => `$${params.push(value)}`
  const where = ['s.project_id = $1']
  if (!q.includeDeleted) where.push(`s.state <> 'deleted'`)
  if (q.warehouse !== undefined) where.push(`s.warehouse_id = (select w.id from warehouses w where w.project_id = $1 and w.name = ${param(q.warehouse)})`)
  if (after) {
    const at = `to_timestamp(0) + ${param(after.created_us)}::float8 * interval '1 microsecond'`
    where.push(`(${ORDER}) > (${param(after.name)}::text, ${at}, ${param(after.id)}::text)`)
  }
  // One row past the page says whether another follows, so the last page answers a null cursor.
  const chosen = `select * from sinks s where ${where.join(' and ')} order by ${ORDER} limit ${param(q.limit + 1)}`
  const rows = (await db.$client.query(`${viewOf(chosen)} order by ${ORDER}`, params)).rows.map(viewRow)
  if (rows.length <= q.limit) return { rows, next: null }
  const last = rows[q.limit - 1]
  return { rows: rows.slice(0, q.limit), next: encodeCursor({ name: last.name, created_us: Number(last.created_us), id: last.id }) }
}
