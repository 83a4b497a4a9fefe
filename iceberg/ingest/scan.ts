// Producer NDJSON → column buffers, without a JavaScript object per row.
//
// A scanner is compiled once per schema. It reads each stored line (one array element, exactly as
// the producer sent it), checks each member in place against its column and appends the value to
// that column's buffer. It only ever says "accepted, with these values" or "not sure": any row it is
// not sure of — a reject, a duplicate or unknown member, an escape or number form it does not read
// itself, invalid JSON — is taken back from the columns and checked the reference way (parseLossless
// + toRow, values.ts). So the rejects, their reasons, fields and order are toRow's by construction,
// and a rejected row leaves nothing in the columns; test/unit/iceberg/scan.test.ts checks on
// generated rows that an accepted row's values are exactly toRow's.

import { parse } from 'lossless-json'
import { parseLossless } from '../spec/json.ts'
import type { ColumnBatch } from '../parquet/columns.ts'
import type { NestedField, Schema, Value } from '../spec/types.ts'
import { toRow, type Reject } from '../spec/values.ts'
import { buildersFor, finishBatch, type ColumnBuilder } from '../parquet/builders.ts'
import { Cursor, isBlank } from './cursor.ts'
import { compileColumn, Kind, type Column } from './plan.ts'
import { readValue } from './read-value.ts'
import type { Instant } from './temporal-bytes.ts'

export interface ScanOptions {
  formatVersion: 2 | 3
  /**
   * Columns whose value is the same for every row of a batch and is the caller's to give (an arrival
   * time; the values come with each `scan`): a producer member of that name is ignored, as toRow's
   * caller deletes it before checking.
   */
  constants?: string[]
}

export interface RejectedLine {
  /** the line's index among the batch's non-blank lines */
  line: number
  /** the line as stored */
  text: string
  rejects: Reject[]
}

export interface ScannedBatch {
  /** the accepted rows, column by column */
  columns: ColumnBatch
  /** non-blank lines: every element stored */
  lines: number
  rejected: RejectedLine[]
  /** lines the fast path was not sure of and the reference checked (rejects among them) */
  slowLines: number
}

/** The batch cannot be read at all: not UTF-8, or a line that is not JSON (the reason is the parser's). */
export class BatchUnreadable extends Error {
  /** `lines`: the batch's non-blank lines; null when it is not text at all */
  constructor(
    message: string,
    readonly lines: number | null,
  ) {
    super(message)
    this.name = 'BatchUnreadable'
  }
}

const utf8Fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })
// Lines and spans of a line: a BOM of their own is kept (only the body's leading one is dropped).
const utf8Line = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/**
 * One stored line, parsed losslessly, as the reference path reads it. The edge stores every element of
 * the array sent, objects or not. A line that is not an object is rejected (not_an_object) whatever it
 * holds, so an object nested in it may repeat a member: the duplicate rule (which value was meant is
 * unknowable) only matters for a row, and such an element must not make its whole batch unreadable.
 */
export function parseLine(text: string): unknown {
  try {
    return parseLossless(text)
  } catch (err) {
    if (text.trimStart().startsWith('{')) throw err
    return parse(text, null, { onDuplicateKey: ({ newValue }) => newValue })
  }
}

/** Not sure: take the row back and check it the reference way. */
const DEFER = -1

export class Scanner {
  private readonly columns: Column[]
  private readonly fields: NestedField[]
  private readonly formatVersion: 2 | 3
  private builders: ColumnBuilder[] = []
  /** per column: the row stamp it was last seen in (duplicate members) */
  private readonly seen: Int32Array
  private readonly countsAtRowStart: Int32Array
  private stamp = 0
  private readonly c = new Cursor()
  private readonly instant: Instant = { seconds: 0, nanos: 0 }

  constructor(
    private readonly schema: Schema,
    opts: ScanOptions,
  ) {
    this.formatVersion = opts.formatVersion
    const constants = new Set(opts.constants ?? [])
    this.fields = schema.fields
    this.columns = schema.fields.map((f) => compileColumn(f, opts.formatVersion, constants))
    this.seen = new Int32Array(this.columns.length)
    this.countsAtRowStart = new Int32Array(this.columns.length)
  }

  /**
   * Scans one stored batch (NDJSON bytes), with this batch's values of the constant columns.
   * Throws BatchUnreadable when it cannot be read at all.
   */
  scan(body: Uint8Array, constants: Record<string, Value> = {}): ScannedBatch {
    this.columns.forEach((col) => {
      if (col.kind === Kind.Constant) col.constant = constants[col.field.name] ?? null
    })
    // UTF-8 is checked as the bytes are read: string contents on the fast path, whole lines on the
    // reference path; everything else the fast path accepts is ASCII.
    let from = 0
    if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) from = 3 // the decoder drops a leading BOM
    let lines = 0
    for (let at = body.indexOf(0x0a); at >= 0; at = body.indexOf(0x0a, at + 1)) lines++
    this.builders = buildersFor(this.fields, lines + 1)
    const rejected: RejectedLine[] = []
    let rows = 0
    lines = 0
    let slowLines = 0
    const c = this.c
    c.buf = body
    while (from <= body.length) {
      let end = body.indexOf(0x0a, from)
      if (end < 0) end = body.length
      if (!isBlank(body, from, end)) {
        c.end = end
        if (this.fastRow(from)) {
          rows++
          lines++
        } else {
          this.truncate(rows)
          slowLines++
          const outcome = this.slowRow(body.subarray(from, end), lines, body)
          if (outcome === 'accepted') rows++
          if (outcome !== 'blank') lines++
          if (typeof outcome === 'object') rejected.push(outcome)
        }
      }
      from = end + 1
    }
    // a constant is the same in every row: written once all rows are known
    this.columns.forEach((col, i) => col.kind === Kind.Constant && this.builders[i].fill(col.constant!, rows))
    return { columns: finishBatch(this.fields, this.builders, rows), lines, rejected, slowLines }
  }

  private truncate(rows: number): void {
    for (let i = 0; i < this.builders.length; i++) if (this.columns[i].kind !== Kind.Constant) this.builders[i].truncate(rows, this.countsAtRowStart[i])
  }

  /** The reference path for one line: lossless parse, the constants' members dropped, toRow. */
  private slowRow(bytes: Uint8Array, line: number, body: Uint8Array): 'accepted' | 'blank' | RejectedLine {
    let text: string
    try {
      text = utf8Line.decode(bytes)
    } catch {
      throw new BatchUnreadable('the batch is not UTF-8 text', null)
    }
    if (text.trim() === '') return 'blank'
    let value: unknown
    try {
      value = parseLine(text)
    } catch (err) {
      // A batch that is not UTF-8 further on is refused as such, as a whole-body decode would.
      throw new BatchUnreadable((err as Error).message, this.countLines(body))
    }
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      for (const col of this.columns) if (col.kind === Kind.Constant) delete (value as Record<string, unknown>)[col.field.name]
    }
    const result = toRow(this.schema, value, { formatVersion: this.formatVersion })
    if (!result.ok) return { line, text, rejects: result.rejects }
    this.columns.forEach((col, i) => col.kind !== Kind.Constant && this.builders[i].appendValue(result.row[col.field.name]))
    return 'accepted'
  }

  /** Non-blank lines, as the reference counts them (for a batch rejected whole). */
  private countLines(body: Uint8Array): number {
    let text: string
    try {
      text = utf8Fatal.decode(body)
    } catch {
      throw new BatchUnreadable('the batch is not UTF-8 text', null)
    }
    return text.split('\n').filter((l) => l.trim() !== '').length
  }

  /** One line, the fast way: true when the row is accepted and in the columns. */
  private fastRow(start: number): boolean {
    const c = this.c
    const cols = this.columns
    const builders = this.builders
    for (let i = 0; i < builders.length; i++) this.countsAtRowStart[i] = builders[i].count
    const stamp = ++this.stamp
    c.pos = start
    c.ws()
    if (c.peek() !== 0x7b /* { */) return false
    c.pos++
    c.ws()
    let guess = 0
    if (c.peek() === 0x7d /* } */) c.pos++
    else {
      for (;;) {
        const i = this.member(guess)
        if (i < 0) return false
        if (this.seen[i] === stamp) return false // a duplicate member: the reference decides
        this.seen[i] = stamp
        guess = i + 1
        c.ws()
        const b = c.peek()
        c.pos++
        if (b === 0x2c /* , */) {
          c.ws()
          continue
        }
        if (b === 0x7d /* } */) break
        return false
      }
    }
    c.ws()
    if (c.pos !== c.end) return false
    // members not sent: a write-default, a constant, or null where null is allowed
    for (let i = 0; i < cols.length; i++) {
      const col = cols[i]
      if (this.seen[i] === stamp || col.kind === Kind.Constant) continue
      if (col.writeDefault !== undefined) builders[i].appendValue(col.writeDefault)
      else if (col.required) return false
      else builders[i].appendNull()
    }
    return true
  }

  /** One `"name": value` member at the cursor; the column's index, or DEFER. */
  private member(guess: number): number {
    const c = this.c
    if (c.peek() !== 0x22) return DEFER
    const keyStart = c.pos + 1
    const keyEnd = c.plainStringEnd(keyStart)
    if (keyEnd < 0) return DEFER
    const i = this.lookup(keyStart, keyEnd, guess)
    if (i < 0) return DEFER // an unknown member is a reject
    c.pos = keyEnd + 1
    c.ws()
    if (c.peek() !== 0x3a /* : */) return DEFER
    c.pos++
    c.ws()
    const col = this.columns[i]
    if (col.kind === Kind.Constant) return this.skipChecked() ? i : DEFER
    if (c.isNull()) {
      c.pos += 4
      if (col.required) return DEFER
      this.builders[i].appendNull()
      return i
    }
    return readValue(c, col, this.builders[i], this.instant) ? i : DEFER
  }

  private lookup(start: number, end: number, guess: number): number {
    const cols = this.columns
    if (guess < cols.length && this.c.equals(start, end, cols[guess].name)) return guess
    for (let i = 0; i < cols.length; i++) if (i !== guess && this.c.equals(start, end, cols[i].name)) return i
    return DEFER
  }

  /** A member the caller's constant replaces: skipped, but it must still be JSON. */
  private skipChecked(): boolean {
    const c = this.c
    const start = c.pos
    if (!c.skipValue()) return false
    try {
      parseLossless(utf8Line.decode(c.buf.subarray(start, c.pos)))
      return true
    } catch {
      return false
    }
  }
}
