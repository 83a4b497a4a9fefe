// Column buffers: a batch of rows held column by column, in the physical layout Parquet stores
// (format/spec.md Appendix A for the Iceberg → Parquet mapping). The ingest scanner fills them
// straight from the producer's bytes; the Parquet writer encodes them without a JavaScript object
// per row. Nested columns (struct, list, map) and geometry are the exception: they stay as the
// Value representation of types.ts, one per row, and are encoded the general way.

import type { Value } from '../spec/types.ts'

/** The values of the rows that have one (nulls are only in `present`), in row order. */
export type ColumnValues =
  /** boolean: 0 or 1 */
  | { physical: 'BOOLEAN'; values: Uint8Array }
  /** int, date (days), decimal with precision ≤ 9 (the unscaled value) */
  | { physical: 'INT32'; values: Int32Array }
  /** long, time (µs), timestamp(tz) (µs), timestamp(tz)_ns (ns), decimal with precision ≤ 18 (unscaled) */
  | { physical: 'INT64'; values: BigInt64Array }
  | { physical: 'FLOAT'; values: Float32Array }
  | { physical: 'DOUBLE'; values: Float64Array }
  /** string (UTF-8), binary: value i is bytes[offsets[i], offsets[i + 1]) */
  | { physical: 'BYTE_ARRAY'; offsets: Int32Array; bytes: Uint8Array }
  /** uuid (16), fixed[L], decimal with precision > 18 (big-endian two's complement, decimalRequiredBytes wide) */
  | { physical: 'FIXED_LEN_BYTE_ARRAY'; width: number; bytes: Uint8Array }

/** One top-level column of a batch. */
export type ColumnData =
  | {
      kind: 'flat'
      /** 1 where the row has a value, 0 for null; null when every row has one (always for a required column). */
      present: Uint8Array | null
      /** how many rows have a value (the length of `data`) */
      count: number
      data: ColumnValues
    }
  | {
      /** struct, list, map and geometry columns: one Value per row (null for a null), written the general way */
      kind: 'values'
      values: Value[]
    }

/** Rows held column by column: one entry per top-level field of the schema, keyed by field id. */
export interface ColumnBatch {
  rows: number
  columns: Map<number, ColumnData>
}
