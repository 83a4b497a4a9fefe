// Field metrics of one Parquet data file, keyed by Iceberg field id, as a manifest's data_file
// carries them (format/spec.md, "Manifests": column_sizes, value_counts, null_value_counts,
// nan_value_counts, lower_bounds, upper_bounds). They follow Java's ParquetMetrics with the default
// metrics mode truncate(16):
// - column_sizes for every leaf column that has a field id (list elements and map keys/values too);
// - counts and bounds for primitive columns at the top level or inside structs only: a column
//   inside a list or a map gets none (Java: "repeated fields are not currently supported");
//   PyIceberg differs here (counts but no bounds for every nested column);
// - nan_value_counts for float and double only; NaN is never a bound;
// - geometry and geography get counts but no bounds (a WKB min/max means nothing);
// - string and binary bounds truncated to 16 code points / bytes (bounds.ts).

import type { RowGroup } from 'hyparquet'
import { compareValues, DEFAULT_TRUNCATE_LENGTH, lowerBoundBytes, upperBoundBytes } from '../spec/bounds.ts'
import type { Primitive, Value } from '../spec/types.ts'

/**
 * What a data_file entry needs from a written Parquet file. Counts and sizes are plain numbers
 * (a single file stays far below 2^53 rows and bytes); maps are keyed by Iceberg field id and hold
 * only the ids that have the metric. Bounds are already in the Appendix D binary form.
 */
export interface DataFileMetrics {
  /** record_count */
  recordCount: number
  /** file_size_in_bytes: the whole file, footer included */
  fileSizeInBytes: number
  /** column_sizes: compressed bytes of the column's chunks across row groups */
  columnSizes: Map<number, number>
  /** value_counts: values including nulls and NaNs (Parquet num_values of the leaf) */
  valueCounts: Map<number, number>
  /** null_value_counts */
  nullValueCounts: Map<number, number>
  /** nan_value_counts (float and double columns only) */
  nanValueCounts: Map<number, number>
  /** lower_bounds */
  lowerBounds: Map<number, Uint8Array>
  /** upper_bounds (omitted for a column whose truncated max cannot be rounded up) */
  upperBounds: Map<number, Uint8Array>
  /** split_offsets: the start of each row group, ascending */
  splitOffsets: number[]
}

/** One primitive Parquet column as the metrics need to know it. */
export interface LeafColumn {
  /** path_in_schema, e.g. ['tags', 'list', 'element'] */
  path: string[]
  /** the Iceberg field id of the leaf; undefined for columns Iceberg gives no id (variant parts) */
  fieldId: number | undefined
  type: Primitive
  /** true inside a list or a map: Java keeps only the column size for such columns */
  repeated: boolean
}

export interface MetricsOptions {
  /** truncate(N) for string and binary bounds; default 16 */
  truncateLength?: number
}

/**
 * Aggregates the row groups' column chunk statistics into per-field-id metrics. The chunk
 * statistics must hold the untruncated min/max values (hyparquet-writer's in-memory RowGroup
 * objects do: it truncates only when it serializes the footer).
 */
export function dataFileMetrics(leaves: LeafColumn[], rowGroups: RowGroup[], fileSizeInBytes: number, opts: MetricsOptions = {}): DataFileMetrics {
  const truncateLength = opts.truncateLength ?? DEFAULT_TRUNCATE_LENGTH
  const byPath = new Map(leaves.map((leaf) => [pathKey(leaf.path), leaf]))
  const m: DataFileMetrics = {
    recordCount: 0,
    fileSizeInBytes,
    columnSizes: new Map(),
    valueCounts: new Map(),
    nullValueCounts: new Map(),
    nanValueCounts: new Map(),
    lowerBounds: new Map(),
    upperBounds: new Map(),
    splitOffsets: [],
  }
  const mins = new Map<number, Value>()
  const maxes = new Map<number, Value>()

  for (const group of rowGroups) {
    m.recordCount += Number(group.num_rows)
    const first = group.columns[0]
    if (first) m.splitOffsets.push(Number(first.file_offset))
    for (const chunk of group.columns) {
      const meta = chunk.meta_data
      if (!meta) continue
      const leaf = byPath.get(pathKey(meta.path_in_schema))
      if (!leaf || leaf.fieldId === undefined) continue
      const id = leaf.fieldId
      add(m.columnSizes, id, Number(meta.total_compressed_size))
      if (leaf.repeated) continue

      add(m.valueCounts, id, Number(meta.num_values))
      const stats = meta.statistics as (typeof meta.statistics & { nan_count?: bigint }) | undefined
      add(m.nullValueCounts, id, Number(stats?.null_count ?? 0n))
      if (leaf.type.kind === 'float' || leaf.type.kind === 'double') {
        add(m.nanValueCounts, id, Number(stats?.nan_count ?? 0n))
      }
      if (!hasBounds(leaf.type)) continue
      const min = stats?.min_value as Value | undefined
      const max = stats?.max_value as Value | undefined
      if (min !== undefined && min !== null && !isNaNValue(min)) {
        const cur = mins.get(id)
        if (cur === undefined || compareValues(min, cur) < 0) mins.set(id, min)
      }
      if (max !== undefined && max !== null && !isNaNValue(max)) {
        const cur = maxes.get(id)
        if (cur === undefined || compareValues(max, cur) > 0) maxes.set(id, max)
      }
    }
  }

  for (const leaf of leaves) {
    const id = leaf.fieldId
    if (id === undefined) continue
    const min = mins.get(id)
    const max = maxes.get(id)
    if (min !== undefined) m.lowerBounds.set(id, lowerBoundBytes(leaf.type, min, truncateLength))
    if (max !== undefined) {
      const upper = upperBoundBytes(leaf.type, max, truncateLength)
      if (upper) m.upperBounds.set(id, upper)
    }
  }
  m.splitOffsets.sort((a, b) => a - b)
  return m
}

function hasBounds(type: Primitive): boolean {
  return type.kind !== 'geometry' && type.kind !== 'geography' && type.kind !== 'variant' && type.kind !== 'unknown'
}

function isNaNValue(v: Value): boolean {
  return typeof v === 'number' && Number.isNaN(v)
}

function add(map: Map<number, number>, id: number, n: number): void {
  map.set(id, (map.get(id) ?? 0) + n)
}

function pathKey(path: string[]): string {
  return path.join('\u0000')
}
