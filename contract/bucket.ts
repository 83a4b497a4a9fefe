// A sink's objects in its warehouse bucket (DESIGN.md "Data layout in the bucket"; spec "The send
// route", "Rejects", "Exactly once"): the edge writes the batches, the roller reads and deletes them
// and writes the rejects and the committed markers.

/** Everything of one sink: its batches at the top, rejects/ and committed/ below. */
export const sinkPrefix = (sinkId: string) => `_sink/${sinkId}/`

/** A batch waiting in the intake, stored by the send route. */
export const batchKey = (sinkId: string, batchId: string) => `_sink/${sinkId}/${batchId}.ndjson`

/** The rejects of a sink; DuckDB reads them with read_json('s3://<bucket>/_sink/<id>/rejects/*.ndjson'). */
export const rejectsPrefix = (sinkId: string) => `_sink/${sinkId}/rejects/`

/** One batch's rejected rows. */
export const rejectsKey = (sinkId: string, batchId: string) => `_sink/${sinkId}/rejects/${batchId}.ndjson`

/** A roll's committed marker, named after its data file: {batch_ids, snapshot_id, committed_at}. */
export const markerKey = (sinkId: string, dataFileName: string) => `_sink/${sinkId}/committed/${dataFileName}.json`

/** What a key listed under sinkPrefix(sinkId) is: a waiting batch, a committed marker, or neither (rejects). */
export function intakeEntry(sinkId: string, key: string): { kind: 'batch'; batchId: string } | { kind: 'marker' } | null {
  const prefix = sinkPrefix(sinkId)
  if (!key.startsWith(prefix)) return null
  const rest = key.slice(prefix.length)
  if (rest.startsWith('committed/') && rest.endsWith('.json')) return { kind: 'marker' }
  if (!rest.includes('/') && rest.endsWith('.ndjson')) return { kind: 'batch', batchId: rest.slice(0, -'.ndjson'.length) }
  return null
}

/** The Content-Type of batches and rejects files. */
export const NDJSON = 'application/x-ndjson'

/**
 * The x-amz-meta-* headers on a batch, names without the `x-amz-meta-` prefix (the S3 client adds and
 * strips it). received: the intake's clock (RFC 3339, microseconds), which __ingest_ts is set from;
 * rows: the elements stored; sink: the sink id; skipped: see skippedValue.
 */
export const BATCH_META = { received: 'received', rows: 'rows', sink: 'sink', skipped: 'skipped' } as const

/** Past this many characters the skipped list is not kept (S3 user metadata is small). */
const SKIPPED_MAX_CHARS = 1024
const UNRECORDED = 'unrecorded'

/**
 * x-amz-meta-skipped: the indexes of the elements the edge did not store (not objects), so a reject
 * can name a row by its index in the array the producer sent; `unrecorded` when the list is too long;
 * no header when every element was stored.
 */
export function skippedValue(indexes: number[]): string | undefined {
  if (indexes.length === 0) return undefined
  const list = indexes.join(',')
  return list.length <= SKIPPED_MAX_CHARS ? list : UNRECORDED
}

/** The skipped indexes, sorted; [] when every element was stored; null when the list was not kept. */
export function parseSkipped(value: string | undefined): number[] | null {
  if (value === undefined) return []
  if (value === UNRECORDED) return null
  return value
    .split(',')
    .map(Number)
    .sort((a, b) => a - b)
}
