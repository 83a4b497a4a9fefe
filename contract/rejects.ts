// A rejects file's line (spec "Rejects"), as the roller writes it (roller/rejects.ts) and the edge's
// rejects route reads it: the roller's fields first, then the producer's row exactly as sent, last,
// under "row". The row is never parsed (lossless numbers): a reader splits it off at the first
// top-level `,"row":`, which the head cannot hold inside a string (JSON.stringify escapes its quotes).
import { parse } from 'lossless-json'

/** Every reason a rejects line can give: a row's, a keyed sink's, or a whole batch's. */
export const REJECT_REASONS = [
  'missing_required',
  'unknown_field',
  'type_mismatch',
  'unsupported_type',
  'not_an_object',
  'key_null',
  'batch_unreadable',
  'batch_too_large',
  'batch_unwritable',
] as const

/** The roller's part of a line: everything but the row. */
export interface RejectHead {
  batch_id: string
  index: number | null
  line?: number
  reason: string
  field?: string
  expected?: string
  got?: string
  error?: string
  problems?: Array<{ reason: string; field?: string; expected?: string; got?: string }>
}

const ROW = ',"row":'

/** The head of a line; null when the line is not one the roller wrote. */
export function rejectHead(line: string): RejectHead | null {
  const at = line.indexOf(ROW)
  if (at < 0 || !line.endsWith('}')) return null
  try {
    const head = JSON.parse(`${line.slice(0, at)}}`)
    return typeof head?.reason === 'string' && typeof head?.batch_id === 'string' ? head : null
  } catch {
    return null
  }
}

/** The producer's row of a line, exactly as sent; null when the line is not one the roller wrote. */
export function rejectRow(line: string): string | null {
  const at = line.indexOf(ROW)
  return at < 0 || !line.endsWith('}') ? null : line.slice(at + ROW.length, -1)
}

/** Whether a line is rejected for `reason`: its first problem's or any other of its problems. */
export const hasReason = (head: RejectHead, reason: string): boolean => head.reason === reason || (head.problems ?? []).some((p) => p.reason === reason)

/**
 * Whether a line is whole: the roller's head and a row that is JSON. A file cut short or overwritten
 * is read as it is, and a line spliced into an answer unchecked would break the answer's JSON. The
 * row is parsed for its syntax only (lossless-json: nothing is converted), and the value dropped.
 */
export function readableLine(line: string): boolean {
  const row = rejectRow(line)
  if (row === null || rejectHead(line) === null) return false
  try {
    parse(row, null, (digits) => digits)
    return true
  } catch {
    return false
  }
}
