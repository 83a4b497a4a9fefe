// A Parquet batch (a scheduled SQL run's result) → NDJSON lines, so its rows are checked by exactly the
// rules and reasons of a producer's JSON rows (scan.ts), and a rejected row is readable in its rejects
// file. Columns are matched to the table's by name, as JSON keys are.
//
// Each value becomes the JSON a producer would send for it: integers with their exact digits (INT64 as
// bigint, never through a double), doubles in their shortest exact form (3.0 is `3`, so an integral
// double fits a long column; 3.5 does not), strings quoted, bytes as base64, timestamps as RFC 3339.
// Columns named in the key-value metadata `lhbox.json_columns` hold JSON text (nested values, 128-bit
// integers) and are written into the line as they are. Runtime-neutral.
import { parquetMetadata, parquetReadObjects } from 'hyparquet'

/** The key-value metadata key naming the columns that hold JSON text. */
export const JSON_COLUMNS_KEY = 'lhbox.json_columns'

export class ParquetBatchUnreadable extends Error {
  override name = 'ParquetBatchUnreadable'
}

/** The batch's rows as NDJSON (one line per row), and how many there are. */
export async function parquetBatchLines(bytes: Uint8Array): Promise<{ body: Uint8Array; rows: number }> {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer
  let rows: Record<string, unknown>[]
  let jsonColumns: Set<string>
  try {
    const meta = parquetMetadata(file)
    const named = meta.key_value_metadata?.find((kv) => kv.key === JSON_COLUMNS_KEY)?.value
    jsonColumns = new Set(named ? (JSON.parse(named) as string[]) : [])
    rows = (await parquetReadObjects({ file, utf8: false })) as Record<string, unknown>[]
  } catch (err) {
    throw new ParquetBatchUnreadable(`not a Parquet file this roller can read: ${(err as Error).message}`)
  }
  const lines = rows.map((row) => {
    const parts: string[] = []
    for (const [name, value] of Object.entries(row)) {
      if (value === null || value === undefined) continue
      parts.push(`${JSON.stringify(name)}:${jsonColumns.has(name) && typeof value === 'string' ? value : jsonOf(value)}`)
    }
    return `{${parts.join(',')}}`
  })
  return { body: new TextEncoder().encode(lines.join('\n') + (lines.length ? '\n' : '')), rows: lines.length }
}

function jsonOf(value: unknown): string {
  if (typeof value === 'bigint') return value.toString()
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : JSON.stringify(String(value))
  if (typeof value === 'string' || typeof value === 'boolean') return JSON.stringify(value)
  if (value instanceof Date) return JSON.stringify(value.toISOString())
  if (value instanceof Uint8Array) return JSON.stringify(base64(value))
  if (Array.isArray(value)) return `[${value.map((v) => (v === null || v === undefined ? 'null' : jsonOf(v))).join(',')}]`
  if (typeof value === 'object' && value !== null)
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${v === null || v === undefined ? 'null' : jsonOf(v)}`)
      .join(',')}}`
  return 'null'
}

function base64(bytes: Uint8Array): string {
  let s = ''
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000))
  return btoa(s)
}
