// Files to rows: one row per object under the rule's prefix not indexed before. "Not indexed before" is
// read from the table itself — the (path, etag) pairs its current snapshot holds — never from Postgres:
// a run starts only when the sink's intake is empty (every earlier run's batch is committed or
// rejected), so the table alone says what is indexed, and a changed object (a new etag) is a new row.
import { compilePattern, type Feed } from '../../contract/feeds.ts'
import type { LoadedTable } from '../../iceberg/catalog/index.ts'
import type { Bucket } from '../../iceberg/io/s3.ts'
import { readDataFile } from '../../iceberg/parquet/read-rows.ts'
import { currentSchema } from '../../iceberg/spec/metadata.ts'
import { readLiveFiles } from '../../iceberg/read/live-files.ts'

/** Rows a run writes at most (a batch stays far below 16 MiB); the rest are indexed by the next runs. */
const MAX_FILES_PER_RUN = 20_000

type FilesFeed = Extract<Feed, { kind: 'files' }>

/** The pairs already in the table: `<path>\n<etag>`. */
async function indexedFiles(table: LoadedTable): Promise<Set<string>> {
  const schema = currentSchema(table.metadata)
  const hasEtag = schema.fields.some((f) => f.name === 'etag')
  const seen = new Set<string>()
  const files = await readLiveFiles(table)
  for (const e of files.data) {
    const rows = await readDataFile(await table.io.read(e.entry.dataFile.filePath), schema, { columns: hasEtag ? ['path', 'etag'] : ['path'] })
    for (const r of rows) if (typeof r.path === 'string') seen.add(`${r.path}\n${hasEtag ? (r.etag ?? '') : ''}`)
  }
  return seen
}

/** The key prefix of the table's own files in its bucket (its location), or null when elsewhere. */
function tableKeyPrefix(table: LoadedTable, bucket: string): string | null {
  const m = /^s3a?:\/\/([^/]+)\/(.*)$/.exec(table.metadata.location)
  return m && m[1] === bucket ? m[2].replace(/\/?$/, '/') : null
}

/** The run's rows as NDJSON lines: the new and changed objects under the prefix. */
export async function indexFiles(rule: FilesFeed, table: LoadedTable, bucket: Bucket): Promise<string[]> {
  const schema = currentSchema(table.metadata)
  const columns = new Set(schema.fields.map((f) => f.name))
  const hasEtag = columns.has('etag')
  const pattern = rule.pattern ? compilePattern(rule.pattern) : null
  if (pattern && 'error' in pattern) throw new Error(`the pattern cannot be used: ${pattern.error}`)
  const indexed = await indexedFiles(table)
  const own = tableKeyPrefix(table, bucket.config.bucket)
  const lines: string[] = []
  for await (const o of bucket.list(rule.prefix)) {
    // The intake, rejects and markers, and the table's own data and metadata, are never rows.
    if (o.key.startsWith('_sink/') || (own && o.key.startsWith(own)) || o.key.endsWith('/')) continue
    const parts = pattern ? pattern.match(o.key) : {}
    if (!parts) continue
    const path = `s3://${bucket.config.bucket}/${o.key}`
    if (indexed.has(`${path}\n${hasEtag ? (o.etag ?? '') : ''}`)) continue
    const head = await bucket.head(o.key)
    if (!head) continue // deleted since the listing
    const row: Record<string, unknown> = {
      path,
      size: o.size,
      etag: o.etag,
      last_modified: o.lastModified.toISOString(),
      content_type: head.contentType,
      ...parts,
    }
    // x-amz-meta-* the table has columns for (S3 lower-cases their names).
    for (const [name, value] of Object.entries(head.metadata)) if (!(name in row)) row[name] = value
    // Only the columns the table has: a row is checked like a producer's, and an unknown member is a reject.
    lines.push(JSON.stringify(Object.fromEntries(Object.entries(row).filter(([name]) => columns.has(name)))))
    if (lines.length >= MAX_FILES_PER_RUN) break
  }
  return lines
}
