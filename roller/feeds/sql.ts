// A scheduled SQL sink's query, run by DuckDB (@duckdb/node-api): one SELECT, http(s) sources through
// httpfs and the run's egress proxy (public addresses only, egress-proxy.ts), no local files and no
// other external access (enable_external_access off but for http(s) URLs, then lock_configuration so
// the query cannot undo it), a memory limit and a time limit per run. The result becomes one Parquet
// file, the run's batch.
import type { DuckDBConnection, DuckDBResultReader, DuckDBTypeId } from '@duckdb/node-api'
import { parquetWriteBuffer } from 'hyparquet-writer'
import { JSON_COLUMNS_KEY } from '../../iceberg/ingest/parquet-batch.ts'
import { formatTimestampMicros, formatTimestamptzMicros } from '../../iceberg/spec/temporal.ts'
import type { EgressPolicy } from '../../contract/egress-policy.ts'
import { isNested, nestedJson } from './sql-json.ts'
import { type EgressProxy, startEgressProxy } from './egress-proxy.ts'

export interface SqlLimits {
  /** DuckDB's memory_limit, e.g. "256MB". */
  memoryLimit: string
  /** A run is interrupted past this. */
  timeoutSeconds: number
  threads: number
  /** The httpfs extension file to LOAD (offline); unset: DuckDB installs it from its repository. */
  httpfsPath?: string
  /** A run's Parquet larger than this is not stored (batch_too_large; spec: 256 MiB). */
  maxBatchBytes: number
  /** Where a run may connect (LHBOX_SQL_ALLOW_HOSTS beside the public addresses). */
  egress: EgressPolicy
}

/** A query DuckDB says is not one SELECT: refused at create, and never run. */
export class SqlRefused extends Error {
  override name = 'SqlRefused'
}

/** A run that ends without a batch: its message goes to last_run.error. */
export class SqlRunFailed extends Error {
  override name = 'SqlRunFailed'
}

type ColumnSource = Parameters<typeof parquetWriteBuffer>[0]['columnData'][number]

const quote = (s: string) => `'${s.replaceAll("'", "''")}'`

/** DuckDB (a native addon, 0.3 s to load) is loaded by the first run or check, not with the roller. */
let loaded: Promise<typeof import('@duckdb/node-api')> | null = null
const duckdb = () => {
  loaded ??= import('@duckdb/node-api')
  return loaded
}

/** A run's network: httpfs (a file to LOAD; unset: installed) and the proxy it goes through. The check has none. */
type Network = { httpfs: string | undefined; proxy: EgressProxy } | null

async function connect(limits: Pick<SqlLimits, 'memoryLimit' | 'threads'>, network: Network): Promise<{ c: DuckDBConnection; close: () => void }> {
  const { DuckDBInstance } = await duckdb()
  const instance = await DuckDBInstance.create(':memory:', {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    allow_community_extensions: 'false',
    // Persistent secrets live in ~/.duckdb: with the local file system off, their lookup would fail every read.
    allow_persistent_secrets: 'false',
    memory_limit: limits.memoryLimit,
    threads: String(limits.threads),
  })
  const c = await instance.connect()
  const close = () => {
    c.closeSync()
    instance.closeSync()
  }
  try {
    if (network) {
      const { httpfs, proxy } = network
      await c.run(httpfs ? `LOAD ${quote(httpfs)}` : 'INSTALL httpfs; LOAD httpfs')
      // Every http(s) request goes through the run's proxy, which checks where it connects (not the
      // HTTP_PROXY of the roller's environment: set here, then locked).
      await c.run(`SET http_proxy = ${quote(proxy.url)}`)
      await c.run(`SET http_proxy_username = ${quote(proxy.username)}`)
      await c.run(`SET http_proxy_password = ${quote(proxy.password)}`)
      await c.run("SET allowed_directories = ['http://', 'https://']")
    }
    // The query may read http(s) URLs and nothing else: no local files, no credentialed stores, no
    // extension loaded or installed; with external access off, the URL prefixes above are all it may name.
    await c.run('SET enable_external_access = false')
    await c.run("SET disabled_filesystems = 'LocalFileSystem,S3FileSystem,HuggingFaceFileSystem'")
    await c.run("SET TimeZone = 'UTC'")
    await c.run('SET lock_configuration = true')
  } catch (err) {
    close()
    throw err
  }
  return { c, close }
}

/** Null when `query` is one DuckDB SELECT; else why not (DuckDB's parser decides, not a pattern). */
export async function checkQuery(
  query: string,
  limits: Pick<SqlLimits, 'memoryLimit' | 'threads'> = { memoryLimit: '64MB', threads: 1 },
): Promise<string | null> {
  const { c, close } = await connect(limits, null)
  try {
    // No httpfs and no external access: parsing a tenant's query reaches nothing.
    return await refusal(c, query)
  } finally {
    close()
  }
}

async function refusal(c: DuckDBConnection, query: string): Promise<string | null> {
  let count: number
  try {
    count = (await c.extractStatements(query)).count
  } catch (err) {
    return firstLine((err as Error).message.replace(/^Failed to extract statements: /, ''))
  }
  if (count !== 1) return `a SQL sink runs one statement, a SELECT; this query has ${count}`
  // json_serialize_sql serializes SELECT statements only: DuckDB's own word on what the statement is.
  const r = await c.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR) AS j', [query])
  const parsed = JSON.parse(String(r.getRowObjectsJson()[0].j)) as { error?: boolean; error_message?: string }
  if (!parsed.error) return null
  return parsed.error_message?.startsWith('Only SELECT')
    ? 'a SQL sink runs a SELECT only (DuckDB parses this statement as another kind)'
    : firstLine(parsed.error_message ?? 'unreadable')
}

const firstLine = (s: string) => s.split('\n')[0].trim()

/** Runs the query within the limits; its rows as one Parquet file. */
export async function runQuery(query: string, limits: SqlLimits): Promise<{ parquet: Uint8Array; rows: number }> {
  // httpfs' default client is curl, which goes around any proxy for the hosts NO_PROXY names (measured:
  // NO_PROXY=127.0.0.1 in the roller's environment let a run read loopback). The roller needs neither.
  delete process.env.NO_PROXY
  delete process.env.no_proxy
  const proxy = await startEgressProxy(limits.egress)
  try {
    return await runThrough(query, limits, proxy)
  } finally {
    proxy.close()
  }
}

/** A refused connection is the run's error, whatever DuckDB made of the proxy's answer; a failed one is added to DuckDB's. */
function runError(proxy: EgressProxy, duckdb: string): string {
  const first = proxy.refused[0]
  if (first) return `egress refused: ${first.target}: ${first.reason}`
  return proxy.failed.length ? `${duckdb} (egress proxy: ${proxy.failed[0]})` : duckdb
}

async function runThrough(query: string, limits: SqlLimits, proxy: EgressProxy): Promise<{ parquet: Uint8Array; rows: number }> {
  let conn: Awaited<ReturnType<typeof connect>>
  try {
    conn = await connect(limits, { httpfs: limits.httpfsPath, proxy })
  } catch (err) {
    throw new SqlRunFailed(`DuckDB could not start: ${firstLine((err as Error).message)}`)
  }
  const { c, close } = conn
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    c.interrupt()
  }, limits.timeoutSeconds * 1000)
  try {
    const refused = await refusal(c, query)
    if (refused) throw new SqlRefused(refused)
    let reader: DuckDBResultReader
    try {
      reader = await c.runAndReadAll(query)
    } catch (err) {
      if (timedOut) throw new SqlRunFailed(`the query ran past the time limit of ${limits.timeoutSeconds} s and was stopped`)
      throw new SqlRunFailed(runError(proxy, firstLine((err as Error).message)))
    }
    const { DuckDBTypeId } = await duckdb()
    const parquet = toParquet(reader, DuckDBTypeId)
    if (parquet.byteLength > limits.maxBatchBytes)
      throw new SqlRunFailed(`batch_too_large: the result is ${parquet.byteLength} bytes of Parquet; a run's batch may be ${limits.maxBatchBytes} at most`)
    return { parquet, rows: reader.currentRowCount }
  } finally {
    clearTimeout(timer)
    close()
  }
}

type Shape = 'boolean' | 'int32' | 'int64' | 'double' | 'string' | 'json' | 'blob' | 'timestamp' | 'timestamptz'

/** How each DuckDB type is stored in the run's Parquet. */
const shapes = (T: typeof DuckDBTypeId): Partial<Record<DuckDBTypeId, Shape>> => ({
  [T.BOOLEAN]: 'boolean',
  [T.TINYINT]: 'int32',
  [T.SMALLINT]: 'int32',
  [T.INTEGER]: 'int32',
  [T.UTINYINT]: 'int32',
  [T.USMALLINT]: 'int32',
  [T.BIGINT]: 'int64',
  [T.UINTEGER]: 'int64',
  [T.FLOAT]: 'double',
  [T.DOUBLE]: 'double',
  [T.BLOB]: 'blob',
  [T.TIMESTAMP]: 'timestamp',
  [T.TIMESTAMP_TZ]: 'timestamptz',
  // Beyond int64, and nested values: JSON text, written into the row as it is (nested ones by sql-json.ts).
  [T.UBIGINT]: 'json',
  [T.HUGEINT]: 'json',
  [T.UHUGEINT]: 'json',
  [T.BIGNUM]: 'json',
  [T.LIST]: 'json',
  [T.ARRAY]: 'json',
  [T.STRUCT]: 'json',
  [T.MAP]: 'json',
  [T.UNION]: 'json',
  [T.INTERVAL]: 'json',
  [T.VARIANT]: 'json',
})

const PARQUET_TYPE: Record<Shape, ColumnSource['type']> = {
  boolean: 'BOOLEAN',
  int32: 'INT32',
  int64: 'INT64',
  double: 'DOUBLE',
  string: 'STRING',
  json: 'STRING',
  blob: 'BYTE_ARRAY',
  timestamp: 'STRING',
  timestamptz: 'STRING',
}

/**
 * The result as Parquet: booleans, integers and doubles in their own types; timestamps as RFC 3339
 * text; decimals, dates, times, uuids and strings as text; bytes as bytes; the rest as JSON text.
 */
function toParquet(reader: DuckDBResultReader, T: typeof DuckDBTypeId): Uint8Array {
  const byType = shapes(T)
  const names = reader.columnNames()
  const dup = names.find((n, i) => names.indexOf(n) !== i)
  if (dup !== undefined) throw new SqlRunFailed(`the result has two columns named ${dup}; name each column once (AS …)`)
  const types = reader.columnTypes()
  const json = reader.getColumnsJson()
  const native = reader.getColumns()
  const columnData: ColumnSource[] = names.map((name, i) => {
    const shape = byType[types[i].typeId] ?? 'string'
    const values = isNested(T, types[i])
      ? native[i].map((v) => (v === null ? null : nestedJson(T, types[i], v)))
      : json[i].map((v, row) => (v === null ? null : stored(shape, v, native[i][row])))
    return { name, data: values, type: PARQUET_TYPE[shape], nullable: true }
  })
  const jsonColumns = names.filter((_, i) => byType[types[i].typeId] === 'json')
  const buffer = parquetWriteBuffer({ columnData, kvMetadata: [{ key: JSON_COLUMNS_KEY, value: JSON.stringify(jsonColumns) }] })
  return new Uint8Array(buffer)
}

function stored(shape: Shape, json: unknown, native: unknown): unknown {
  switch (shape) {
    case 'int64':
      return BigInt(json as string)
    case 'double':
      return typeof json === 'number' ? json : Number(json)
    case 'json':
      return typeof json === 'string' ? json : JSON.stringify(json)
    case 'blob':
      return (native as { bytes: Uint8Array }).bytes
    case 'timestamp':
      return formatTimestampMicros((native as { micros: bigint }).micros)
    case 'timestamptz':
      return formatTimestamptzMicros((native as { micros: bigint }).micros)
    case 'string':
      return typeof json === 'string' ? json : JSON.stringify(json)
    default:
      return json
  }
}
