// A SQL run's nested values (struct, list, array, map) as JSON text, each leaf as a top-level column
// of its type is stored (sql.ts): integers as their exact digits, timestamps as RFC 3339, decimals,
// dates and the rest as text. DuckDB's own JSON writes a BIGINT inside a struct as a string and a
// timestamptz as "2026-01-02 03:04:05+00", which the table's long and timestamptz columns refuse.
import type { DuckDBListValue, DuckDBMapValue, DuckDBStructType, DuckDBStructValue, DuckDBType, DuckDBTypeId, DuckDBValue } from '@duckdb/node-api'
import { formatTimestampMicros, formatTimestamptzMicros } from '../../iceberg/spec/temporal.ts'

type TypeIds = typeof DuckDBTypeId

/** Whether a column of this type is written by nestedJson (the other JSON-text columns keep DuckDB's). */
export const isNested = (T: TypeIds, type: DuckDBType): boolean => [T.STRUCT, T.LIST, T.ARRAY, T.MAP].includes(type.typeId)

export function nestedJson(T: TypeIds, type: DuckDBType, value: DuckDBValue): string {
  if (value === null) return 'null'
  switch (type.typeId) {
    case T.STRUCT: {
      const { entryNames, entryTypes } = type as DuckDBStructType
      const { entries } = value as DuckDBStructValue
      return `{${entryNames.map((name, i) => `${JSON.stringify(name)}:${nestedJson(T, entryTypes[i], entries[name])}`).join(',')}}`
    }
    case T.LIST:
    case T.ARRAY: {
      const item = (type as DuckDBType & { valueType: DuckDBType }).valueType
      return `[${(value as DuckDBListValue).items.map((v) => nestedJson(T, item, v)).join(',')}]`
    }
    case T.MAP: {
      // An array of {"key", "value"}: a map column takes it whatever its key type (an object only for string keys).
      const { keyType, valueType } = type as DuckDBType & { keyType: DuckDBType; valueType: DuckDBType }
      const pairs = (value as DuckDBMapValue).entries.map((e) => `{"key":${nestedJson(T, keyType, e.key)},"value":${nestedJson(T, valueType, e.value)}}`)
      return `[${pairs.join(',')}]`
    }
    case T.BOOLEAN:
    case T.TINYINT:
    case T.SMALLINT:
    case T.INTEGER:
    case T.BIGINT:
    case T.UTINYINT:
    case T.USMALLINT:
    case T.UINTEGER:
    case T.UBIGINT:
    case T.HUGEINT:
    case T.UHUGEINT:
      return String(value) // a number's digits, exact (bigint), or true/false
    case T.FLOAT:
    case T.DOUBLE:
      return Number.isFinite(value) ? String(value) : JSON.stringify(String(value))
    case T.TIMESTAMP_TZ:
      return JSON.stringify(formatTimestamptzMicros((value as { micros: bigint }).micros))
    case T.TIMESTAMP:
      return JSON.stringify(formatTimestampMicros((value as { micros: bigint }).micros))
    default:
      return JSON.stringify(String(value))
  }
}
