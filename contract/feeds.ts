// Feeds the platform runs itself (DESIGN.md "What the spec leaves to us"): a scheduled SQL sink runs
// one DuckDB SELECT; a files-to-rows sink indexes the objects under a prefix of its warehouse bucket.
// Each run's rows are one intake batch whose id is the run's slot, so a run is committed once by the
// roll's own recovery rules, however many rollers try it.
import * as v from 'valibot'

/** The shortest schedule: a run a minute. */
const MIN_EVERY_SECONDS = 60
const Every = v.pipe(v.number(), v.integer(), v.minValue(MIN_EVERY_SECONDS, 'every_seconds is 60 at least'), v.maxValue(31 * 86_400))

/** A scheduled SQL sink's query: one DuckDB SELECT (checked by DuckDB's parser, not here). */
export const SqlFeed = v.strictObject({
  query: v.pipe(v.string(), v.trim(), v.minLength(1, 'give a SELECT'), v.maxLength(65_536)),
  every_seconds: Every,
})

/** A files-to-rows index rule. */
export const FilesFeed = v.strictObject({
  prefix: v.pipe(
    v.string(),
    v.maxLength(1024),
    v.check((p) => !p.startsWith('/') && !p.startsWith('_sink/') && p !== '_sink', 'a prefix is a key prefix of the bucket, never under _sink/'),
  ),
  every_seconds: Every,
  pattern: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1), v.maxLength(1024))), null),
})

/** A feed as stored on the sink and handed to the roller. */
export type Feed = ({ kind: 'sql' } & v.InferOutput<typeof SqlFeed>) | ({ kind: 'files' } & v.InferOutput<typeof FilesFeed>)

/** The schedule's slots are aligned to the epoch: a run every hour starts on the hour. */
export function slotStart(at: Date, everySeconds: number): Date {
  const every = everySeconds * 1000
  return new Date(Math.floor(at.getTime() / every) * every)
}

/**
 * A run's id (and its batch's): the slot start as RFC 3339 (whole seconds), or for a run asked for
 * now the request's time (milliseconds). Two rollers trying one slot write and commit one batch.
 */
export function runId(at: Date): string {
  return at.toISOString().replace('.000Z', 'Z')
}

/** The columns every files-to-rows row has; the pattern's parts and x-amz-meta-* columns come after. */
const FILE_COLUMNS = ['path', 'size', 'etag', 'last_modified', 'content_type'] as const

/**
 * A pattern such as `cams/{camera}/{day}/{name}.jpg` → its part names and a matcher over a key. The
 * pattern matches the end of the key from a segment boundary on (so `cams/…` matches
 * `uploads/cams/…`); a part matches within one segment (no `/`), other text matches itself. A key it
 * does not match is not indexed: the pattern says which files, and which parts to take from them.
 */
export function compilePattern(pattern: string): { names: string[]; match: (key: string) => Record<string, string> | null } | { error: string } {
  const names: string[] = []
  let source = '(?:^|/)'
  const re = /\{([A-Za-z_][A-Za-z0-9_]*)\}|([^{}]+)|([{}])/g
  for (let m = re.exec(pattern); m; m = re.exec(pattern)) {
    if (m[3]) return { error: `a brace in ${pattern} is not part of a {name}` }
    if (m[2]) source += m[2].replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
    else {
      if (names.includes(m[1])) return { error: `{${m[1]}} appears twice in the pattern` }
      if ((FILE_COLUMNS as readonly string[]).includes(m[1])) return { error: `{${m[1]}} is a column every file row has; name the part otherwise` }
      names.push(m[1])
      source += `(?<${m[1]}>[^/]+)`
    }
  }
  if (names.length === 0) return { error: 'a pattern names at least one {part}' }
  const matcher = new RegExp(`${source}$`)
  return {
    names,
    match: (key) => {
      const m = matcher.exec(key)
      return m ? { ...m.groups } : null
    },
  }
}
