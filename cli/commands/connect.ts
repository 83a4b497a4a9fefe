// lhbox connect [<warehouse>] [--engine duckdb|pyiceberg|spark]: GET /v1/connection — how engines reach
// the project's tables (per warehouse: the catalog, the store, and for a SQL-catalog warehouse the
// recipes for lhbox's Iceberg REST catalog), and where producers send rows. --engine prints only that
// engine's lines for one warehouse, ready to paste (or pipe into duckdb) once the placeholders are
// replaced. --json for the raw answer.
import { api, CliError, type Connection } from '../http.ts'
import { json } from '../output.ts'

type Flags = Record<string, string | boolean | string[] | undefined>

export const CONNECT_FLAGS = { engine: { type: 'string' } } as const

const ENGINES = { duckdb: 'DuckDB', pyiceberg: 'PyIceberg', spark: 'Spark' } as const
type Engine = keyof typeof ENGINES

interface Recipes {
  catalog_uri: string
  alias: string
  duckdb: string[]
  pyiceberg: string[]
  spark: string[]
  note: string
}

interface WarehouseConnection {
  name: string
  catalog: { type: 'sql'; catalog_name: string; rest_uri?: string; note?: string } | { type: 'rest'; uri: string; warehouse: string | null; note?: string }
  storage: { bucket: string; endpoint: string; region: string; path_style: boolean }
  engines?: Recipes | null
}

interface ConnectionView {
  warehouses: WarehouseConnection[]
  ingest_url: string
  sinks_note: string
}

function showWarehouse(w: WarehouseConnection): string[] {
  const lines = [`warehouse ${w.name}`]
  if (w.catalog.type === 'sql') {
    lines.push(`  catalog  sql, catalog name ${w.catalog.catalog_name}`)
    if (w.catalog.rest_uri) lines.push(`           Iceberg REST ${w.catalog.rest_uri}, warehouse ${w.name}`)
  } else {
    lines.push(`  catalog  rest, ${w.catalog.uri}${w.catalog.warehouse ? ` (warehouse ${w.catalog.warehouse})` : ''}`)
  }
  if (w.catalog.note) lines.push(`           ${w.catalog.note}`)
  lines.push(`  storage  s3://${w.storage.bucket} at ${w.storage.endpoint}, region ${w.storage.region}${w.storage.path_style ? ', path-style' : ''}`)
  if (w.engines) {
    for (const [engine, title] of Object.entries(ENGINES)) {
      lines.push(`  ${title}`, ...w.engines[engine as Engine].map((l) => `    ${l}`))
    }
    lines.push(`  ${w.engines.note}`)
  }
  return lines
}

function showConnection(c: ConnectionView, only: string | undefined): string {
  const shown = only ? c.warehouses.filter((w) => w.name === only) : c.warehouses
  if (only && shown.length === 0) throw new CliError('warehouse_not_found', `no warehouse ${only} in this project`)
  const lines: string[] = []
  if (c.warehouses.length === 0) lines.push('no warehouses yet (lhbox warehouse create <name>)')
  for (const w of shown) lines.push(...showWarehouse(w), '')
  lines.push(`ingest_url ${c.ingest_url}`, `sinks      ${c.sinks_note}`)
  return lines.join('\n')
}

/** One engine's lines for one warehouse: the one named, else the project's only SQL-catalog one. */
function engineLines(c: ConnectionView, engine: string, only: string | undefined): string {
  if (!(engine in ENGINES)) throw new CliError('usage', `--engine takes ${Object.keys(ENGINES).join(', ')}`)
  const served = c.warehouses.filter((w) => w.engines && (!only || w.name === only))
  if (served.length !== 1) {
    const named = c.warehouses.find((w) => w.name === only)
    if (named) throw new CliError('external_catalog', `warehouse ${only} keeps its tables in an external REST catalog: ${named.catalog.note ?? ''}`)
    throw new CliError('usage', only ? `no warehouse ${only} in this project` : 'name the warehouse: lhbox connect <warehouse> --engine …')
  }
  return (served[0].engines as Recipes)[engine as Engine].join('\n')
}

export async function connect(conn: Connection, args: string[], flags: Flags): Promise<string> {
  const c = await api<ConnectionView>(conn, 'GET', '/v1/connection')
  const [warehouse] = args
  if (typeof flags.engine === 'string') return engineLines(c, flags.engine, warehouse)
  return flags.json ? json(c) : showConnection(c, warehouse)
}
