// A sink's objects in its warehouse bucket (DESIGN.md "Data layout in the bucket"; spec "The send
// route", "Rejects", "Exactly once"): the edge writes the batches, the roller reads and deletes them
// and writes the rejects and the committed markers.

/** A batch id (the producer's Idempotency-Key, or a feed's run id): 1–128 of A-Z a-z 0-9 . _ : - (spec "The send route"). */
export const BATCH_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** Everything of one sink: its batches at the top, rejects/ and committed/ below. */
export const sinkPrefix = (sinkId: string) => `_sink/${sinkId}/`

/** A batch waiting in the intake, stored by the send route. */
export const batchKey = (sinkId: string, batchId: string) => `_sink/${sinkId}/${batchId}.ndjson`

/** A scheduled SQL run's result, waiting in the intake like a producer's batch (roller/feeds/sql.ts). */
export const parquetBatchKey = (sinkId: string, batchId: string) => `_sink/${sinkId}/${batchId}.parquet`

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
  if (!rest.includes('/') && rest.endsWith('.parquet')) return { kind: 'batch', batchId: rest.slice(0, -'.parquet'.length) }
  return null
}

/** The Content-Type of batches and rejects files. */
export const NDJSON = 'application/x-ndjson'

/**
 * The x-amz-meta-* headers on a batch, names without the `x-amz-meta-` prefix (the S3 client adds and
 * strips it). received: the intake's clock (RFC 3339, microseconds), which __ingest_ts is set from;
 * rows: the lines stored, one per element of the array sent (not_an_object ones included); sink: the
 * sink id; skipped: only on batches stored by an older edge, see parseSkipped.
 */
export const BATCH_META = { received: 'received', rows: 'rows', sink: 'sink', skipped: 'skipped' } as const

/** An older edge's skipped value when the list was too long to keep. */
const UNRECORDED = 'unrecorded'

/**
 * x-amz-meta-skipped, on batches an older edge stored: it kept only the object elements, and listed
 * here the indexes of the others (`unrecorded` past 1,024 characters), so a reject could still name a
 * row by its index in the array sent. The edge now stores every element and writes no such header;
 * the roller reads it for the older batches still waiting. Returns the skipped indexes, sorted; []
 * with no header; null when the list was not kept.
 */
export function parseSkipped(value: string | undefined): number[] | null {
  if (value === undefined) return []
  if (value === UNRECORDED) return null
  return value
    .split(',')
    .map(Number)
    .sort((a, b) => a - b)
}
