// The rejects line is written by the roller (roller/rejects.ts) and read by the edge's rejects route
// (contract/rejects.ts): every line the roller writes splits into its head and the producer's row,
// whatever the row or the reported value holds.
import { describe, expect, it } from 'vitest'
import { hasReason, readableLine, REJECT_REASONS, rejectHead } from '../../../contract/rejects.ts'
import { decodeCursor, encodeCursor } from '../../../edge/rejects.ts'
import { rejectLine, wholeBatchLine, type RowReject } from '../../../roller/rejects.ts'

const rowOf = (line: string) => line.slice(line.indexOf(',"row":') + ',"row":'.length, -1)

describe('rejectHead', () => {
  it('reads the roller’s fields of a row reject, and leaves the row as sent', () => {
    const row = '{"x":12345678901234567890123,"s":",\\"row\\":{}"}'
    const rejects: RowReject[] = [
      { reason: 'type_mismatch', field: 'x', expected: 'long', got: 'number 12345678901234567890123 (",\\"row\\":" out of range)' },
      { reason: 'unknown_field', field: 's' },
    ]
    const line = rejectLine('b-1', 4, 4, rejects, row)
    expect(rejectHead(line)).toEqual({
      batch_id: 'b-1',
      index: 4,
      line: 4,
      reason: 'type_mismatch',
      field: 'x',
      expected: 'long',
      got: rejects[0].got,
      problems: rejects.map(({ reason, field, expected, got }) => ({ reason, field, expected, got })),
    })
    expect(rowOf(line)).toBe(row)
    expect(hasReason(rejectHead(line)!, 'unknown_field')).toBe(true)
    expect(hasReason(rejectHead(line)!, 'missing_required')).toBe(false)
  })

  it('reads a whole batch’s line, with or without a row', () => {
    const unread = wholeBatchLine('b-2', 'batch_unreadable', 'line 2: unexpected end')
    expect(rejectHead(unread)).toEqual({ batch_id: 'b-2', index: null, reason: 'batch_unreadable', error: 'line 2: unexpected end' })
    expect(rowOf(unread)).toBe('null')
    const unwritten = wholeBatchLine('b-3', 'batch_unwritable', 'no', '[1, 2]', 7)
    expect(rejectHead(unwritten)).toMatchObject({ index: 7, reason: 'batch_unwritable' })
    expect(rowOf(unwritten)).toBe('[1, 2]')
  })

  it('gives null for a line the roller did not write', () => {
    for (const line of ['', '{}', '{"row":1}', 'not json,"row":1}', '{"batch_id":"b","row":1}', '{"reason":"x","row":1}']) expect(rejectHead(line)).toBeNull()
  })

  it('knows every reason the roller writes', () => {
    const written: string[] = ['missing_required', 'unknown_field', 'type_mismatch', 'unsupported_type', 'not_an_object', 'key_null']
    for (const r of [...written, 'batch_unreadable', 'batch_too_large', 'batch_unwritable']) expect(REJECT_REASONS).toContain(r)
  })
})

describe('the rejects cursor', () => {
  it('comes back as it went, in URL-safe characters', () => {
    const c = { batch: 'b/+?=é→', line: 12 }
    const text = encodeCursor(c)
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(decodeCursor(text)).toEqual(c)
  })

  it('refuses anything a page did not give', () => {
    for (const text of ['%%%', btoa('[]'), btoa('{"batch":"","line":0}'), btoa('{"batch":"b","line":1.5}'), btoa('{"batch":"b","line":0,"x":1}')])
      expect(() => decodeCursor(text)).toThrow(/cursor/)
  })
})

describe('readableLine', () => {
  it('is true for every line the roller writes, whatever the row holds, and false for a line cut short, overwritten or with a row that is not JSON', () => {
    const good = rejectLine('b', 0, 0, [{ reason: 'type_mismatch', field: 'x' }], '{"x":12345678901234567890123,"s":"}\\n"}')
    expect(readableLine(good)).toBe(true)
    expect(readableLine(wholeBatchLine('b', 'batch_unreadable', 'not UTF-8'))).toBe(true)
    const head = good.slice(0, good.indexOf(',"row":'))
    for (const bad of [good.slice(0, -1), good.slice(0, 20), '', 'garbage', `${head},"row":{"x":1,}}`, `${head},"row":{"x":01}}`, `${head},"row":}`])
      expect(readableLine(bad), bad).toBe(false)
  })
})
