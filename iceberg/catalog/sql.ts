// The SQL catalog in Postgres: PyIceberg's SqlCatalog / Java's JdbcCatalog tables, so both open our
// tables with no server. A commit writes metadata/<n>-<uuid>.metadata.json, then compare-and-swaps
// the row's metadata_location (0 rows → the current metadata decides: CommitConflict, or again on it).
import type { FileIO } from '../io/file-io.ts'
import type { MetadataCache } from './metadata-cache.ts'
import { newTableMetadata, parseMetadata, serializeMetadata, type TableMetadata } from '../spec/metadata.ts'
import { applyUpdates, requirementFailure, type TableRequirement, type TableUpdate } from '../spec/updates.ts'
import {
  CatalogError,
  CommitConflict,
  CommitStateUnknown,
  NoSuchNamespace,
  NoSuchTable,
  TableAlreadyExists,
  type Catalog,
  type CommitOptions,
  type CreateTableRequest,
  type LoadedTable,
  type TableIdentifier,
} from './index.ts'

/** What the catalog needs of a Postgres client: pg's Pool/Client and neon's Client both fit. */
interface SqlExecutor {
  query(text: string, params?: unknown[]): Promise<{ rows: any[]; rowCount: number | null }>
}

export interface SqlCatalogOptions {
  /** catalog_name in the rows: the warehouse name. */
  name: string
  sql: SqlExecutor
  /** Where new tables go: s3://bucket/prefix → s3://bucket/prefix/<ns>/<table>. */
  warehouseLocation: string
  io: FileIO
  /** Metadata read or written before, by location: a load whose location is cached reads no file. */
  cache?: MetadataCache
}

const ns = (namespace: string[]) => namespace.join('.')

function metadataFileLocation(tableLocation: string, version: number): string {
  return `${tableLocation}/metadata/${String(version).padStart(5, '0')}-${crypto.randomUUID()}.metadata.json`
}

/** The version number a metadata file name starts with (00007-<uuid>.metadata.json → 7), or -1. */
function metadataVersion(location: string): number {
  const m = /\/(\d+)-[^/]*\.metadata\.json$/.exec(location)
  return m ? Number(m[1]) : -1
}

export class SqlCatalog implements Catalog {
  readonly name: string

  constructor(private readonly opts: SqlCatalogOptions) {
    this.name = opts.name
  }

  private async namespaceExists(namespace: string[]): Promise<boolean> {
    const { rows } = await this.opts.sql.query(
      `select 1 from iceberg_namespace_properties where catalog_name = $1 and namespace = $2
       union all select 1 from iceberg_tables where catalog_name = $1 and table_namespace = $2 limit 1`,
      [this.name, ns(namespace)],
    )
    return rows.length > 0
  }

  async listNamespaces(): Promise<string[][]> {
    const { rows } = await this.opts.sql.query(
      `select namespace as ns from iceberg_namespace_properties where catalog_name = $1
       union select table_namespace from iceberg_tables where catalog_name = $1 order by 1`,
      [this.name],
    )
    return rows.map((r) => String(r.ns).split('.'))
  }

  async ensureNamespace(namespace: string[]): Promise<void> {
    // PyIceberg marks an empty namespace with the property exists=true.
    await this.opts.sql.query(
      `insert into iceberg_namespace_properties (catalog_name, namespace, property_key, property_value)
       values ($1, $2, 'exists', 'true') on conflict do nothing`,
      [this.name, ns(namespace)],
    )
  }

  async listTables(namespace: string[]): Promise<TableIdentifier[]> {
    if (!(await this.namespaceExists(namespace))) throw new NoSuchNamespace(`namespace ${ns(namespace)} does not exist`)
    const { rows } = await this.opts.sql.query(
      `select table_name from iceberg_tables where catalog_name = $1 and table_namespace = $2
       and (iceberg_type = 'TABLE' or iceberg_type is null) order by table_name`,
      [this.name, ns(namespace)],
    )
    return rows.map((r) => ({ namespace, name: String(r.table_name) }))
  }

  async loadTable(id: TableIdentifier): Promise<LoadedTable> {
    return this.loadAt(id, await this.currentLocation(id))
  }

  private async currentLocation(id: TableIdentifier): Promise<string> {
    const { rows } = await this.opts.sql.query(
      `select metadata_location from iceberg_tables where catalog_name = $1 and table_namespace = $2 and table_name = $3
       and (iceberg_type = 'TABLE' or iceberg_type is null)`,
      [this.name, ns(id.namespace), id.name],
    )
    if (rows.length === 0 || !rows[0].metadata_location) throw new NoSuchTable(`table ${ns(id.namespace)}.${id.name} does not exist`)
    return String(rows[0].metadata_location)
  }

  private async loadAt(id: TableIdentifier, metadataLocation: string): Promise<LoadedTable> {
    let metadata = this.opts.cache?.get(metadataLocation)
    if (!metadata) {
      metadata = parseMetadata(new TextDecoder().decode(await this.opts.io.read(metadataLocation)))
      this.opts.cache?.set(metadataLocation, metadata)
    }
    return { identifier: id, metadataLocation, metadata, io: this.opts.io }
  }

  async createTable(namespace: string[], request: CreateTableRequest): Promise<LoadedTable> {
    const identifier = { namespace, name: request.name }
    const location = `${this.opts.warehouseLocation.replace(/\/+$/, '')}/${namespace.join('/')}/${request.name}`
    const properties = { ...request.properties }
    if (request.doc) properties.comment = request.doc
    const metadata = newTableMetadata({
      location,
      schema: request.schema,
      partitionFields: request.partition,
      formatVersion: request.formatVersion ?? 2,
      properties,
    })
    await this.ensureNamespace(namespace)
    const metadataLocation = metadataFileLocation(location, 0)
    await this.opts.io.write(metadataLocation, serializeMetadata(metadata), 'application/json')
    const res = await this.opts.sql.query(
      `insert into iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location, iceberg_type)
       values ($1, $2, $3, $4, null, 'TABLE') on conflict do nothing`,
      [this.name, ns(namespace), request.name, metadataLocation],
    )
    if (res.rowCount !== 1) {
      await this.opts.io.delete([metadataLocation]).catch(() => undefined)
      throw new TableAlreadyExists(`table ${ns(namespace)}.${request.name} already exists`)
    }
    return { identifier, metadataLocation, metadata, io: this.opts.io }
  }

  async commitTable(table: LoadedTable, requirements: TableRequirement[], updates: TableUpdate[], opts: CommitOptions = {}): Promise<LoadedTable> {
    // First on the caller's metadata, taken as current: the swap below fails if the row moved, so
    // the row need not be read before (one round trip less a commit). When the requirements fail
    // on it, or the row moved, they are checked against the catalog's current metadata, as a REST
    // server does. A metadata file never changes, so a current one is never read again.
    if (!requirementFailure(table.metadata, requirements)) {
      const done = await this.swap(table, updates, opts.ready)
      if (done) return done
    }
    const location = await this.currentLocation(table.identifier)
    const current = location === table.metadataLocation ? table : await this.loadAt(table.identifier, location)
    const failure = requirementFailure(current.metadata, requirements)
    if (failure) throw new CommitConflict(`${ns(table.identifier.namespace)}.${table.identifier.name}: ${failure}`)
    const done = await this.swap(current, updates, opts.ready)
    if (!done) throw new CommitConflict(`${ns(table.identifier.namespace)}.${table.identifier.name} changed during the commit`)
    return done
  }

  /**
   * Writes the metadata of `updates` on `current` (beside the writes still `ready`-ing), then swaps
   * the row from current's location to it. Null when the row had moved (the new file deleted).
   */
  private async swap(current: LoadedTable, updates: TableUpdate[], ready?: Promise<unknown>): Promise<LoadedTable | null> {
    const id = current.identifier
    let next: TableMetadata
    try {
      next = applyUpdates(current.metadata, updates, { previousMetadataLocation: current.metadataLocation })
    } catch (err) {
      throw new CatalogError(`cannot apply the updates: ${(err as Error).message}`)
    }
    const nextLocation = metadataFileLocation(next.location, metadataVersion(current.metadataLocation) + 1)
    // Never rejects, so a failed metadata write leaves no rejection unheard.
    const written = ready?.then(
      () => null,
      (error: unknown) => ({ error }),
    )
    const [, failed] = await Promise.all([this.opts.io.write(nextLocation, serializeMetadata(next), 'application/json'), written])
    if (failed) {
      await this.opts.io.delete([nextLocation]).catch(() => undefined)
      throw failed.error
    }
    let swapped: number | null
    try {
      const res = await this.opts.sql.query(
        `update iceberg_tables set metadata_location = $4, previous_metadata_location = $5
         where catalog_name = $1 and table_namespace = $2 and table_name = $3 and metadata_location = $5`,
        [this.name, ns(id.namespace), id.name, nextLocation, current.metadataLocation],
      )
      swapped = res.rowCount
    } catch (err) {
      // The statement may or may not have run: only a reload can tell.
      throw new CommitStateUnknown(`commit of ${id.name} unknown: ${(err as Error).message}`)
    }
    if (swapped !== 1) {
      await this.opts.io.delete([nextLocation]).catch(() => undefined)
      return null
    }
    this.opts.cache?.set(nextLocation, next)
    // In the background: clean-up is best effort (a file left behind is garbage, never a wrong table).
    void this.deleteExpiredMetadata(current.metadata, next)
    return { identifier: id, metadataLocation: nextLocation, metadata: next, io: this.opts.io }
  }

  /** write.metadata.delete-after-commit.enabled: drop metadata files that fell out of metadata-log. */
  private async deleteExpiredMetadata(base: TableMetadata, next: TableMetadata): Promise<void> {
    if (next.properties['write.metadata.delete-after-commit.enabled'] !== 'true') return
    const kept = new Set(next['metadata-log'].map((e) => e['metadata-file']))
    const removed = base['metadata-log'].map((e) => e['metadata-file']).filter((f) => !kept.has(f))
    // Best effort, as in Java: a file left behind is garbage, never a wrong table.
    if (removed.length > 0) await this.opts.io.delete(removed).catch(() => undefined)
  }
}
