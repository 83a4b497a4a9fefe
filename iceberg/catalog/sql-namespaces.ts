// Namespaces of the SQL catalog, as PyIceberg's SqlCatalog and Java's JdbcCatalog keep them: rows of
// iceberg_namespace_properties (catalog_name, namespace, property_key, property_value), the levels
// joined by dots, an empty namespace marked by the property exists=true. A namespace also exists
// while a table names it (a table created by a catalog that writes no property rows).
import { NamespaceAlreadyExists, NamespaceNotEmpty, NoSuchNamespace } from './index.ts'

/** What the catalog needs of a Postgres client: pg's Pool/Client and neon's Client both fit. */
export interface SqlExecutor {
  query(text: string, params?: unknown[]): Promise<{ rows: any[]; rowCount: number | null }>
}

const joined = (namespace: string[]) => namespace.join('.')

/** What a properties update did (the REST catalog's UpdateNamespacePropertiesResponse). */
export interface PropertiesUpdate {
  updated: string[]
  removed: string[]
  missing: string[]
}

export class SqlNamespaces {
  constructor(
    private readonly sql: SqlExecutor,
    private readonly catalogName: string,
  ) {}

  async exists(namespace: string[]): Promise<boolean> {
    const { rows } = await this.sql.query(
      `select 1 from iceberg_namespace_properties where catalog_name = $1 and namespace = $2
       union all select 1 from iceberg_tables where catalog_name = $1 and table_namespace = $2 limit 1`,
      [this.catalogName, joined(namespace)],
    )
    return rows.length > 0
  }

  /**
   * The namespaces one level below `parent` (all top-level ones for []), as the REST catalog lists
   * them: a level that only deeper namespaces imply is listed too. NoSuchNamespace for a parent
   * nothing lies in.
   */
  async children(parent: string[]): Promise<string[][]> {
    const { rows } = await this.sql.query(
      `select namespace as ns from iceberg_namespace_properties where catalog_name = $1
       union select table_namespace from iceberg_tables where catalog_name = $1`,
      [this.catalogName],
    )
    const all = rows.map((r) => String(r.ns).split('.'))
    const within = all.filter((n) => n.length >= parent.length && parent.every((p, i) => n[i] === p))
    if (parent.length > 0 && within.length === 0) throw new NoSuchNamespace(`Namespace does not exist: ${joined(parent)}`)
    const seen = new Map<string, string[]>()
    for (const n of within) if (n.length > parent.length) seen.set(joined(n.slice(0, parent.length + 1)), n.slice(0, parent.length + 1))
    return [...seen.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, n]) => n)
  }

  /** The namespace's properties (exists=true included, as PyIceberg's SqlCatalog answers them). NoSuchNamespace. */
  async properties(namespace: string[]): Promise<Record<string, string>> {
    if (!(await this.exists(namespace))) throw new NoSuchNamespace(`Namespace does not exist: ${joined(namespace)}`)
    const { rows } = await this.sql.query(
      `select property_key, property_value from iceberg_namespace_properties where catalog_name = $1 and namespace = $2 order by property_key`,
      [this.catalogName, joined(namespace)],
    )
    return Object.fromEntries(rows.map((r) => [String(r.property_key), r.property_value === null ? '' : String(r.property_value)]))
  }

  /** Creates the namespace with its properties in one statement; NamespaceAlreadyExists when it exists. */
  async create(namespace: string[], properties: Record<string, string>): Promise<void> {
    const entries = Object.entries({ exists: 'true', ...properties })
    const res = await this.sql.query(
      `insert into iceberg_namespace_properties (catalog_name, namespace, property_key, property_value)
       select $1::text, $2::text, k, v from unnest($3::text[], $4::text[]) as p(k, v)
       where not exists (select 1 from iceberg_namespace_properties where catalog_name = $1::text and namespace = $2::text)
         and not exists (select 1 from iceberg_tables where catalog_name = $1::text and table_namespace = $2::text)
       on conflict do nothing`,
      [this.catalogName, joined(namespace), entries.map(([k]) => k), entries.map(([, v]) => v)],
    )
    if (!res.rowCount) throw new NamespaceAlreadyExists(`Namespace already exists: ${joined(namespace)}`)
  }

  /** Drops an empty namespace. NoSuchNamespace; NamespaceNotEmpty while a table or a deeper namespace lies in it. */
  async drop(namespace: string[]): Promise<void> {
    const name = joined(namespace)
    const { rows } = await this.sql.query(
      `select exists (select 1 from iceberg_tables where catalog_name = $1 and (table_namespace = $2 or table_namespace like $3)) as tables,
              exists (select 1 from iceberg_namespace_properties where catalog_name = $1 and namespace like $3) as deeper`,
      [this.catalogName, name, `${name.replace(/[\\%_]/g, '\\$&')}.%`],
    )
    if (rows[0].tables || rows[0].deeper) throw new NamespaceNotEmpty(`namespace ${name} is not empty`)
    const res = await this.sql.query(`delete from iceberg_namespace_properties where catalog_name = $1 and namespace = $2`, [this.catalogName, name])
    if (!res.rowCount) throw new NoSuchNamespace(`Namespace does not exist: ${name}`)
  }

  /** Sets and removes properties; a removal of a key that is not there is `missing`. NoSuchNamespace. */
  async update(namespace: string[], removals: string[], updates: Record<string, string>): Promise<PropertiesUpdate> {
    const before = await this.properties(namespace)
    const name = joined(namespace)
    const removed = removals.filter((k) => k in before)
    const missing = removals.filter((k) => !(k in before))
    if (removed.length > 0) {
      await this.sql.query(`delete from iceberg_namespace_properties where catalog_name = $1 and namespace = $2 and property_key = any($3::text[])`, [
        this.catalogName,
        name,
        removed,
      ])
    }
    const entries = Object.entries(updates)
    if (entries.length > 0) {
      await this.sql.query(
        `insert into iceberg_namespace_properties (catalog_name, namespace, property_key, property_value)
         select $1::text, $2::text, k, v from unnest($3::text[], $4::text[]) as p(k, v)
         on conflict (catalog_name, namespace, property_key) do update set property_value = excluded.property_value`,
        [this.catalogName, name, entries.map(([k]) => k), entries.map(([, v]) => v)],
      )
    }
    return { updated: entries.map(([k]) => k), removed, missing }
  }
}
