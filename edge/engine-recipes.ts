// Connection recipes (issue 28): the lines that open a SQL-catalog warehouse's tables through the
// edge's Iceberg REST catalog (<origin>/iceberg) in DuckDB, PyIceberg and Spark. One place, read by
// GET /v1/connection (so `lhbox connect`) and the console's table page. Secrets are never filled in:
// the API key (any level; read is enough to query) and the store's own S3 keys (engines bring them
// while the catalog vends none) stay placeholders a person replaces.

export const API_KEY = '<API key>'
const STORE_KEY_ID = '<store access key id>'
const STORE_SECRET = '<store secret access key>'

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
  `and ${STORE_KEY_ID} / ${STORE_SECRET} with the store's S3 keys (the catalog vends none yet). ` +
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

/** The store's host and scheme: validated as an http(s) URL when the warehouse was made; a row that is not one gives its text as is. */
function storeHost(endpoint: string): { host: string; protocol: string } {
  try {
    return new URL(endpoint)
  } catch {
    return { host: endpoint, protocol: 'https:' }
  }
}

/** DuckDB: the store's S3 secret, the catalog's secret, ATTACH, then a query (of `table`, <namespace>.<name>, when given). */
export function duckdbLines(origin: string, w: RecipeWarehouse, table?: { namespace: string[]; name: string }): string[] {
  const alias = catalogAlias(w.name)
  const store = storeHost(w.endpoint)
  return [
    `CREATE SECRET ${alias}_store (TYPE S3, KEY_ID ${sqlText(STORE_KEY_ID)}, SECRET ${sqlText(STORE_SECRET)}, ` +
      `REGION ${sqlText(w.region)}, ENDPOINT ${sqlText(store.host)}, URL_STYLE 'path', USE_SSL ${store.protocol === 'https:'}, SCOPE ${sqlText(`s3://${w.bucket}`)});`,
    `CREATE SECRET ${alias} (TYPE ICEBERG, TOKEN ${sqlText(API_KEY)});`,
    `ATTACH ${sqlText(w.name)} AS ${alias} (TYPE ICEBERG, ENDPOINT ${sqlText(`${origin}/iceberg`)}, SECRET ${alias}, ACCESS_DELEGATION_MODE 'none');`,
    table ? `SELECT * FROM ${[alias, ...table.namespace, table.name].map(sqlName).join('.')} LIMIT 10;` : 'SHOW ALL TABLES;',
  ]
}

/** PyIceberg: load_catalog with the REST type, the catalog URI, the warehouse and the key. */
function pyicebergLines(origin: string, w: RecipeWarehouse): string[] {
  return [
    'from pyiceberg.catalog import load_catalog',
    `catalog = load_catalog(${pyText(catalogAlias(w.name))}, **{"type": "rest", "uri": ${pyText(`${origin}/iceberg`)}, "warehouse": ${pyText(w.name)},`,
    `    "token": ${pyText(API_KEY)}, "s3.access-key-id": ${pyText(STORE_KEY_ID)}, "s3.secret-access-key": ${pyText(STORE_SECRET)}})`,
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
    `${c}.s3.access-key-id=${STORE_KEY_ID}`,
    `${c}.s3.secret-access-key=${STORE_SECRET}`,
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
