// Connection recipes (issue 28): the lines that open a SQL-catalog warehouse's tables through the
// edge's Iceberg REST catalog (<origin>/iceberg) in DuckDB, PyIceberg and Spark. One place, read by
// GET /v1/connection (so `lhbox connect`) and the console's table page. Secrets are never filled in:
// the API key (any level; read is enough to query) stays a placeholder a person replaces. No store
// keys: DuckDB and PyIceberg take the table-scoped credentials the catalog vends (iceberg-rest/
// storage-access.ts), Spark (Java's S3FileIO) the catalog's remote signing.

export const API_KEY = '<API key>'

export interface RecipeWarehouse {
  name: string
  bucket: string
  endpoint: string
  region: string
}

export interface EngineRecipes {
  catalog_uri: string
  /** The catalog's name in each recipe (DuckDB's database, Spark's catalog). */
  alias: string
  duckdb: string[]
  pyiceberg: string[]
  spark: string[]
  note: string
}

const NOTE =
  `Replace ${API_KEY} with an API key of this project (a read key lists and reads; INSERT needs write), ` +
  'No S3 keys: the catalog vends credentials scoped to each table (DuckDB, PyIceberg) or signs requests (Spark). ' +
  'DuckDB 1.5.5 with its iceberg and httpfs extensions; PyIceberg with pyarrow; Spark with iceberg-spark-runtime and iceberg-aws-bundle.'

/** A SQL string literal. */
const sqlText = (s: string) => `'${s.replaceAll("'", "''")}'`
/** A SQL name: as it is when plain, else double-quoted. */
const sqlName = (s: string) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(s) ? s : `"${s.replaceAll('"', '""')}"`)
/** A Python string literal (JSON's escapes are Python's too). */
const pyText = (s: string) => JSON.stringify(s)

/** The catalog's name in the recipes: lhbox_<warehouse>, letters, digits and _ only. */
function catalogAlias(warehouse: string): string {
  return `lhbox_${warehouse.replace(/[^A-Za-z0-9_]/g, '_')}`
}

/** DuckDB: the catalog's secret, ATTACH with vended credentials, then a query (of `table`, <namespace>.<name>, when given). */
export function duckdbLines(origin: string, w: RecipeWarehouse, table?: { namespace: string[]; name: string }): string[] {
  const alias = catalogAlias(w.name)
  return [
    `CREATE SECRET ${alias} (TYPE ICEBERG, TOKEN ${sqlText(API_KEY)});`,
    `ATTACH ${sqlText(w.name)} AS ${alias} (TYPE ICEBERG, ENDPOINT ${sqlText(`${origin}/iceberg`)}, SECRET ${alias}, ACCESS_DELEGATION_MODE 'vended_credentials');`,
    table ? `SELECT * FROM ${[alias, ...table.namespace, table.name].map(sqlName).join('.')} LIMIT 10;` : 'SHOW ALL TABLES;',
  ]
}

/** PyIceberg: load_catalog with the REST type, the catalog URI, the warehouse and the key (it asks for vended credentials itself). */
function pyicebergLines(origin: string, w: RecipeWarehouse): string[] {
  return [
    'from pyiceberg.catalog import load_catalog',
    `catalog = load_catalog(${pyText(catalogAlias(w.name))}, **{"type": "rest", "uri": ${pyText(`${origin}/iceberg`)}, "warehouse": ${pyText(w.name)},`,
    `    "token": ${pyText(API_KEY)}})`,
  ]
}

/** Spark: the spark.sql.catalog.<alias>.* configuration of Iceberg's SparkCatalog on the REST catalog. */
function sparkConf(origin: string, w: RecipeWarehouse): string[] {
  const c = `spark.sql.catalog.${catalogAlias(w.name)}`
  return [
    'spark.sql.extensions=org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions',
    `${c}=org.apache.iceberg.spark.SparkCatalog`,
    `${c}.type=rest`,
    `${c}.uri=${origin}/iceberg`,
    `${c}.warehouse=${w.name}`,
    `${c}.token=${API_KEY}`,
    `${c}.io-impl=org.apache.iceberg.aws.s3.S3FileIO`,
  ]
}

export function engineRecipes(origin: string, w: RecipeWarehouse): EngineRecipes {
  return {
    catalog_uri: `${origin}/iceberg`,
    alias: catalogAlias(w.name),
    duckdb: duckdbLines(origin, w),
    pyiceberg: pyicebergLines(origin, w),
    spark: sparkConf(origin, w),
    note: NOTE,
  }
}
