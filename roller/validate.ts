// One batch, row by row: each stored line checked against the table's schema, __ingest_ts stamped from
// the batch's arrival, and the reject lines collected. An append sink's rows go straight into column
// buffers (iceberg/ingest/scan.ts); a keyed sink's stay rows, since the latest per key is chosen by row.
import { BATCH_META, parseSkipped } from '../contract/bucket.ts'
import { INGEST_TS } from '../contract/table.ts'
import { ParquetBatchUnreadable, parquetBatchLines } from '../iceberg/ingest/parquet-batch.ts'
import { BatchUnreadable, parseLine, Scanner, type ScannedBatch, type ScanOptions } from '../iceberg/ingest/scan.ts'
import type { Bucket } from '../iceberg/io/s3.ts'
import type { ColumnBatch } from '../iceberg/parquet/columns.ts'
import type { Row, Schema } from '../iceberg/spec/types.ts'
import { toRow } from '../iceberg/spec/values.ts'
import { receivedMicros, storedRows } from './intake.ts'
import { rejectLine, wholeBatchLine, type RowReject, type WholeBatchReason } from './rejects.ts'
import type { ScanPool } from './scan-pool.ts'
import { UNMEASURED, type StageCpu } from './stage-cpu.ts'

export const MAX_BATCH_BYTES = 16 * 1024 * 1024
/** A scheduled SQL run's Parquet (spec "Rejects": batch_too_large). */
const MAX_PARQUET_BATCH_BYTES = 256 * 1024 * 1024

const isParquet = (key: string) => key.endsWith('.parquet')

/** A batch chosen in step 4: not read yet. */
export interface PendingBatch {
  batchId: string
  key: string
  size: number
}

export interface CheckedBatch {
  batchId: string
  key: string
  /** rows accepted */
  rows: number
  /** an append sink's accepted rows, column by column */
  columns: ColumnBatch | null
  /** a keyed sink's accepted rows */
  keyedRows: Row[]
  rejected: number
  rejectLines: string[]
}

/** How a roll checks its batches: compiled once per roll from the table's current schema. */
export class BatchChecker {
  private readonly opts: ScanOptions
  private scanner: Scanner | null

  /**
   * `key`: a keyed sink's key columns — a row with a null in one is rejected (key_null).
   * `pool`: threads to read and scan on (an append sink's batches); none: this thread does both.
   * `stages`: where the scans' CPU is counted (LHBOX_ROLL_STAGE_CPU).
   */
  constructor(
    private readonly schema: Schema,
    private readonly formatVersion: 2 | 3,
    private readonly key: string[] | null = null,
    private readonly pool: ScanPool | null = null,
    private readonly stages: StageCpu = UNMEASURED,
  ) {
    this.opts = { formatVersion, constants: [INGEST_TS] }
    this.scanner = key || pool ? null : new Scanner(schema, this.opts)
  }

  /** Null when the object is gone (another roller consumed it meanwhile). */
  async check(s3: Bucket, batch: PendingBatch): Promise<CheckedBatch | null> {
    const whole = (reason: WholeBatchReason, error: string, rows: number): CheckedBatch => ({
      batchId: batch.batchId,
      key: batch.key,
      rows: 0,
      columns: null,
      keyedRows: [],
      rejected: rows,
      rejectLines: [wholeBatchLine(batch.batchId, reason, error)],
    })
    const limit = isParquet(batch.key) ? MAX_PARQUET_BATCH_BYTES : MAX_BATCH_BYTES
    if (batch.size > limit) {
      const head = await s3.head(batch.key)
      if (!head) return null
      const writer = isParquet(batch.key) ? "a scheduled SQL run's Parquet may be 256 MiB" : "a producer's batch may be 16 MiB"
      return whole('batch_too_large', `the object is ${batch.size} bytes; ${writer} at most`, storedRows(head))
    }
    const checked: CheckedBatch = { batchId: batch.batchId, key: batch.key, rows: 0, columns: null, keyedRows: [], rejected: 0, rejectLines: [] }
    try {
      if (this.pool && !this.key && !isParquet(batch.key)) {
        // The thread makes the GET itself (one request, counted here); a function cannot cross to it.
        const { observe, ...config } = s3.config
        const done = observe?.()
        const read = await this.pool.read(config, batch.key, this.schema, this.opts, INGEST_TS, this.stages.enabled).finally(() => done?.())
        if (!read) return null
        if (read.cpu) {
          this.stages.add('get', read.cpu.get)
          this.stages.add('scan', read.cpu.scan)
        }
        this.addScanned(read.scanned, elementIndexes(read.head.metadata), checked)
        return checked
      }
      const got = await s3.get(batch.key)
      if (!got) return null
      const received = receivedMicros(got.head)
      try {
        // A Parquet batch's rows become the JSON lines a producer would send: the same checks, the same reasons.
        const body = isParquet(batch.key) ? await parquetLines(got.body) : got.body
        if (!this.key)
          this.addScanned(
            this.stages.run('scan', () => this.lineScanner().scan(body, { [INGEST_TS]: received })),
            elementIndexes(got.head.metadata),
            checked,
          )
        else this.stages.run('scan', () => this.checkKeyed(body, received, elementIndexes(got.head.metadata), checked))
      } catch (err) {
        if (err instanceof BatchUnreadable && err.lines === null) throw new BatchUnreadable(err.message, storedRows(got.head))
        throw err
      }
    } catch (err) {
      if (!(err instanceof BatchUnreadable)) throw err
      return whole('batch_unreadable', err.message, err.lines ?? 0)
    }
    return checked
  }

  /** This thread's scanner (batches the scan threads do not read: Parquet ones, or all without threads). */
  private lineScanner(): Scanner {
    this.scanner ??= new Scanner(this.schema, this.opts)
    return this.scanner
  }

  private addScanned(scanned: ScannedBatch, elementIndex: (line: number) => number | null, checked: CheckedBatch): void {
    checked.columns = scanned.columns
    checked.rows = scanned.columns.rows
    for (const r of scanned.rejected) {
      checked.rejected++
      checked.rejectLines.push(rejectLine(checked.batchId, elementIndex(r.line), r.line, r.rejects, r.text))
    }
  }

  /** The reference path (parseLossless + toRow), rows kept: a keyed roll picks the latest per key. */
  private checkKeyed(body: Uint8Array, received: bigint, elementIndex: (line: number) => number | null, checked: CheckedBatch): void {
    let lines: string[]
    try {
      lines = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })
        .decode(body)
        .split('\n')
        .filter((l) => l.trim() !== '')
    } catch {
      throw new BatchUnreadable('the batch is not UTF-8 text', null)
    }
    const parsed: unknown[] = []
    try {
      for (const line of lines) parsed.push(parseLine(line))
    } catch (err) {
      throw new BatchUnreadable((err as Error).message, lines.length)
    }
    const key = this.key!
    parsed.forEach((value, index) => {
      // __ingest_ts is the batch's arrival, never the producer's say.
      if (value && typeof value === 'object' && !Array.isArray(value)) delete (value as Record<string, unknown>)[INGEST_TS]
      const result = toRow(this.schema, value, { formatVersion: this.formatVersion })
      // A null (or absent) key value is key_null (spec, keyed sinks), also where the key column is
      // required and toRow says missing_required.
      const rejects: RowReject[] = result.ok
        ? key.filter((k) => result.row[k] === null || result.row[k] === undefined).map((k) => ({ reason: 'key_null', field: k }))
        : result.rejects.map((r) =>
            r.reason === 'missing_required' && r.field !== undefined && key.includes(r.field) ? { reason: 'key_null', field: r.field } : r,
          )
      if (result.ok && rejects.length === 0) {
        result.row[INGEST_TS] = received
        checked.keyedRows.push(result.row)
        checked.rows++
        return
      }
      checked.rejected++
      checked.rejectLines.push(rejectLine(checked.batchId, elementIndex(index), index, rejects, lines[index]))
    })
  }
}

async function parquetLines(bytes: Uint8Array): Promise<Uint8Array> {
  try {
    return (await parquetBatchLines(bytes)).body
  } catch (err) {
    if (err instanceof ParquetBatchUnreadable) throw new BatchUnreadable(err.message, null)
    throw err
  }
}

/**
 * A line's index in the array the producer sent. The edge stores every element, line i = element i,
 * and writes no x-amz-meta-skipped. A batch an older edge stored holds only the objects, and its
 * x-amz-meta-skipped lists the other elements' indexes, so the producer's own index is given back;
 * `unrecorded`: the list was too long to keep, the index is unknown (null).
 */
export function elementIndexes(metadata: Record<string, string>): (line: number) => number | null {
  const skipped = parseSkipped(metadata[BATCH_META.skipped])
  if (skipped === null) return () => null
  if (skipped.length === 0) return (line) => line
  return (line) => {
    let index = line
    for (const s of skipped) if (s <= index) index++
    return index
  }
}
