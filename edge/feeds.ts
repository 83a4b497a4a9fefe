// A sink the roller feeds itself (contract/feeds.ts): what the control plane checks at create and PATCH.
// The query is judged by DuckDB's own parser, which the Worker cannot hold: the edge asks the roller's
// port (LHBOX_SQL_CHECK_URL, POST /sql/check with the bootstrap secret). Unset, the query is stored
// unchecked and each run checks it (last_run.error).
import * as v from 'valibot'
import { compilePattern, FilesFeed, SqlFeed, type Feed } from '../contract/feeds.ts'
import { SqlCheckAnswer } from '../contract/internal.ts'
import { currentSchema, type TableMetadata } from '../iceberg/spec/metadata.ts'
import type { Env } from './env.ts'
import { jsonObject } from './validate.ts'
import { ApiError, unavailable } from './errors.ts'

/** PATCH's halves: a field left out keeps its value. */
export const SqlFeedPatch = jsonObject(v.partial(SqlFeed))
export const FilesFeedPatch = jsonObject(v.partial(FilesFeed))

export async function checkSql(env: Env, query: string): Promise<void> {
  if (!env.LHBOX_SQL_CHECK_URL) return
  let answer: SqlCheckAnswer
  try {
    const res = await fetch(env.LHBOX_SQL_CHECK_URL, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.LHBOX_BOOTSTRAP_SECRET}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    })
    if (!res.ok) throw new Error(`HTTP ${res.status}`)
    answer = v.parse(SqlCheckAnswer, await res.json())
  } catch (err) {
    throw unavailable('sql_check', `the SQL check (DuckDB's parser, on the roller) did not answer: ${(err as Error).message}; retry shortly`)
  }
  if (!answer.ok) throw new ApiError(400, 'invalid_query', answer.error ?? 'DuckDB refuses this query', { query })
}

/**
 * A files-to-rows table needs a string `path` column (one row per file); a pattern must compile. The
 * prefix stays a key prefix of the bucket, inside the warehouse's root (`root`, its normalized prefix)
 * when it has one: the bucket may hold other warehouses' files. A whole-bucket root ('', a warehouse
 * made before roots were unique) keeps the bucket, _sink/ aside.
 */
export function checkFilesFeed(feed: Extract<Feed, { kind: 'files' }>, meta: TableMetadata, root: string): void {
  if (root && !feed.prefix.startsWith(`${root}/`))
    throw new ApiError(400, 'invalid_request', `a files sink lists its warehouse's own files: give a prefix beginning ${root}/`, { prefix: feed.prefix })
  if (feed.pattern) {
    const compiled = compilePattern(feed.pattern)
    if ('error' in compiled) throw new ApiError(400, 'invalid_pattern', compiled.error, { pattern: feed.pattern })
  }
  const path = currentSchema(meta).fields.find((f) => f.name === 'path')
  if (path?.type !== 'string')
    throw new ApiError(
      409,
      'files_table_unsupported',
      'a files-to-rows table needs a string column `path` (and may have size, etag, last_modified, content_type)',
    )
}

/** The feed a create asks for, checked; null for a send sink. */
export async function feedOf(
  env: Env,
  body: { sql?: v.InferOutput<typeof SqlFeed>; files?: v.InferOutput<typeof FilesFeed>; mapping?: unknown; device_require?: unknown; device_strip?: unknown },
  meta: TableMetadata,
  root: string,
): Promise<Feed | null> {
  if (body.sql && body.files) throw new ApiError(400, 'invalid_request', 'a sink runs a query (sql) or indexes files (files), not both')
  const feed: Feed | null = body.sql ? { kind: 'sql', ...body.sql } : body.files ? { kind: 'files', ...body.files } : null
  if (!feed) return null
  if (body.mapping || body.device_require || body.device_strip)
    throw new ApiError(400, 'invalid_request', 'a feed sink has no producer: mapping and device settings are for send sinks')
  if (feed.kind === 'sql') await checkSql(env, feed.query)
  else checkFilesFeed(feed, meta, root)
  return feed
}
