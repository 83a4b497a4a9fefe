// A sink's rejected rows, a page at a time, across its rejects files (GET /v1/sinks/{id}/rejects):
// files in key order, lines in file order. Each line goes out as the roller wrote it, the producer's
// row included byte for byte (contract/rejects.ts); only the roller's head is parsed, to filter.
import * as v from 'valibot'
import { rejectsKey, rejectsPrefix } from '../contract/bucket.ts'
import { hasReason, readableLine, rejectHead } from '../contract/rejects.ts'
import type { S3Client } from '../iceberg/io/s3.ts'
import { decodeCursor as decode, encodeCursor as encode } from './cursor.ts'

/** The reason of a stand-in for an unreadable line (the console shows it as such). */
export const UNREADABLE_LINE = 'unreadable_line'

/** Where the next page starts: a batch's rejects file, and the line in it. */
export interface RejectsCursor {
  batch: string
  line: number
}

export interface RejectsQuery {
  reason?: string
  batchId?: string
  cursor?: RejectsCursor
  limit: number
}

export interface RejectsPage {
  lines: string[]
  next: RejectsCursor | null
}

// One request reads at most this much, matches or not: a filter that matches little answers a short
// page with a cursor instead of reading every file in one request (a Worker's CPU and memory are bounded).
const FILES_PER_PAGE = 200
const BYTES_PER_PAGE = 32 * 1024 * 1024

const Cursor = v.strictObject({ batch: v.pipe(v.string(), v.minLength(1)), line: v.pipe(v.number(), v.integer(), v.minValue(0)) })

/** base64url of the cursor's JSON (UTF-8): opaque to a client, which gives it back unchanged. */
export const encodeCursor = (c: RejectsCursor): string => encode(c)

/** The cursor a page gave; 400 invalid_request for anything else. */
export const decodeCursor = (text: string): RejectsCursor => decode(Cursor, text)

/** The batch ids whose rejects files to read, in key order, from the cursor's on. */
async function* batchesFrom(bucket: S3Client, sinkId: string, q: RejectsQuery): AsyncGenerator<string> {
  if (q.batchId !== undefined) {
    if (!q.cursor || q.cursor.batch === q.batchId) yield q.batchId
    return
  }
  const prefix = rejectsPrefix(sinkId)
  if (q.cursor) yield q.cursor.batch
  for await (const o of bucket.list(prefix, 1000, q.cursor ? rejectsKey(sinkId, q.cursor.batch) : undefined)) {
    if (o.key.endsWith('.ndjson') && !o.key.slice(prefix.length).includes('/')) yield o.key.slice(prefix.length, -'.ndjson'.length)
  }
}

const utf8 = new TextDecoder()

/**
 * What stands for a line that is not one the roller wrote (a file cut short or overwritten): the page
 * stays JSON, and the line's place, size and file are named so that someone can look at it.
 */
function unreadable(sinkId: string, batch: string, at: number, line: string): string {
  return JSON.stringify({
    batch_id: batch,
    index: null,
    reason: UNREADABLE_LINE,
    error: `line ${at + 1} of ${rejectsKey(sinkId, batch)} (${new TextEncoder().encode(line).length} bytes) is not a rejects line the roller wrote: cut short or overwritten`,
    row: null,
  })
}

export async function readRejects(bucket: S3Client, sinkId: string, q: RejectsQuery): Promise<RejectsPage> {
  const lines: string[] = []
  let files = 0
  let bytes = 0
  for await (const batch of batchesFrom(bucket, sinkId, q)) {
    const got = await bucket.get(rejectsKey(sinkId, batch))
    if (!got) continue // swept (7 days) between the listing and the read
    files++
    bytes += got.body.length
    const all = utf8.decode(got.body).split('\n')
    if (all.at(-1) === '') all.pop()
    for (let i = q.cursor?.batch === batch ? q.cursor.line : 0; i < all.length; i++) {
      const whole = readableLine(all[i])
      if (q.reason !== undefined) {
        // An unreadable line matches no reason: its head, even when it reads, is not to be trusted.
        const head = whole ? rejectHead(all[i]) : null
        if (!head || !hasReason(head, q.reason)) continue
      }
      lines.push(whole ? all[i] : unreadable(sinkId, batch, i, all[i]))
      if (lines.length === q.limit) return { lines, next: { batch, line: i + 1 } }
    }
    if (files >= FILES_PER_PAGE || bytes >= BYTES_PER_PAGE) return { lines, next: { batch, line: all.length } }
  }
  return { lines, next: null }
}
