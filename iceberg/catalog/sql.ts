// The SQL catalog in Postgres: PyIceberg's SqlCatalog / Java's JdbcCatalog tables, so both open our
// tables with no server. A commit writes metadata/<n>-<uuid>.metadata.json, then compare-and-swaps
// the row's metadata_location (0 rows → the current metadata decides: CommitConflict, or again on it).
import { FileNotFound, type FileIO } from '../io/file-io.ts'
import type { MetadataLookup } from './metadata-cache.ts'
import { SqlNamespaces, type SqlExecutor } from './sql-namespaces.ts'
import { metadataFromUpdates } from '../spec/from-updates.ts'
import { MetadataError, newTableMetadata, parseMetadata, serializeMetadata, type TableMetadata } from '../spec/metadata.ts'
import { applyUpdates, requirementFailure, type TableRequirement, type TableUpdate } from '../spec/updates.ts'
import {
  CommitConflict,
  InvalidUpdate,
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

export interface SqlCatalogOptions {
  /** catalog_name in the rows: the warehouse name. */
  name: string
  sql: SqlExecutor
  /** Where new tables go: s3://bucket/prefix → s3://bucket/prefix/<ns>/<table>. */
  warehouseLocation: string
  io: FileIO
  /** Metadata read or written before, by location: a load whose location is cached reads no file. */
  cache?: MetadataLookup
}

/** A metadata file as read: its parse, and its text (what a REST answer may carry as is). */
export interface MetadataFile {
  metadata: TableMetadata
  text: string
}

/** A namespace as the rows hold it: levels joined by dots, as PyIceberg's SqlCatalog and Java's JdbcCatalog write it. */
export const ns = (namespace: string[]) => namespace.join('.')

/** The rows of iceberg_tables that are tables (views have iceberg_type VIEW; rows older than the column have none). */
export const TABLE_ROWS = `(iceberg_type = 'TABLE' or iceberg_type is null)`

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
  /** Namespaces and their properties (the REST catalog's namespace routes). */
  readonly namespaces: SqlNamespaces

  constructor(private readonly opts: SqlCatalogOptions) {
    this.name = opts.name
    this.namespaces = new SqlNamespaces(opts.sql, opts.name)
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
    if (!(await this.namespaces.exists(namespace))) throw new NoSuchNamespace(`Namespace does not exist: ${ns(namespace)}`)
    const { rows } = await this.opts.sql.query(
      `select table_name from iceberg_tables where catalog_name = $1 and table_namespace = $2
       and ${TABLE_ROWS} order by table_name`,
      [this.name, ns(namespace)],
    )
    return rows.map((r) => ({ namespace, name: String(r.table_name) }))
  }

  async tableExists(id: TableIdentifier): Promise<boolean> {
    return this.currentLocation(id).then(
      () => true,
      (err) => {
        if (err instanceof NoSuchTable) return false
        throw err
      },
    )
  }

  async loadTable(id: TableIdentifier): Promise<LoadedTable> {
    return this.loadAt(id, await this.currentLocation(id))
  }

  /**
   * The table as its row read elsewhere said it was: `metadataLocation` from iceberg_tables (TABLE_ROWS)
   * in a statement of the caller's own, or null where that statement found no row (NoSuchTable).
   */
  async loadTableAt(id: TableIdentifier, metadataLocation: string | null): Promise<LoadedTable> {
    if (!metadataLocation) throw new NoSuchTable(`Table does not exist: ${ns(id.namespace)}.${id.name}`)
    return this.loadAt(id, metadataLocation)
  }

  private async currentLocation(id: TableIdentifier): Promise<string> {
    const { rows } = await this.opts.sql.query(
      `select metadata_location from iceberg_tables where catalog_name = $1 and table_namespace = $2 and table_name = $3
       and ${TABLE_ROWS}`,
      [this.name, ns(id.namespace), id.name],
    )
    if (rows.length === 0 || !rows[0].metadata_location) throw new NoSuchTable(`Table does not exist: ${ns(id.namespace)}.${id.name}`)
    return String(rows[0].metadata_location)
  }

  private async loadAt(id: TableIdentifier, metadataLocation: string): Promise<LoadedTable> {
    let cached = this.opts.cache?.get(metadataLocation)
    if (!cached) {
      const text = new TextDecoder().decode(await this.opts.io.read(metadataLocation))
      const metadata = parseMetadata(text)
      this.opts.cache?.set(metadataLocation, metadata, text)
      cached = this.opts.cache?.get(metadataLocation) ?? { metadata }
    }
    return { identifier: id, metadataLocation, metadata: cached.metadata, metadataJson: cached.json, io: this.opts.io }
  }

  /** Where a new table goes when its creator names no location: <warehouse>/<ns levels>/<table>. */
  defaultLocation(id: TableIdentifier): string {
    return `${this.warehouseLocation}/${id.namespace.join('/')}/${id.name}`
  }

  /** s3://bucket/prefix, no trailing slash: every table location of this catalog's own lies under it. */
  get warehouseLocation(): string {
    return this.opts.warehouseLocation.replace(/\/+$/, '')
  }

  async createTable(namespace: string[], request: CreateTableRequest): Promise<LoadedTable> {
    const identifier = { namespace, name: request.name }
    const properties = { ...request.properties }
    if (request.doc) properties.comment = request.doc
    const metadata = newTableMetadata({
      location: this.defaultLocation(identifier),
      schema: request.schema,
      partitionFields: request.partition,
      formatVersion: request.formatVersion ?? 2,
      properties,
    })
    await this.ensureNamespace(namespace)
    return this.createWithMetadata(identifier, metadata)
  }

  /**
   * Creates a table from its first metadata, built by the caller (a REST create, or the commit of a
   * staged create): writes metadata/00000-<uuid>.metadata.json, then inserts the row. The namespace
   * is the caller's to check. TableAlreadyExists when the row is there (the file is deleted).
   */
  async createWithMetadata(identifier: TableIdentifier, metadata: TableMetadata): Promise<LoadedTable> {
    const metadataLocation = metadataFileLocation(metadata.location, 0)
    const text = serializeMetadata(metadata)
    await this.opts.io.write(metadataLocation, text, 'application/json')
    const res = await this.opts.sql.query(
      `insert into iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location, iceberg_type)
       values ($1, $2, $3, $4, null, 'TABLE') on conflict do nothing`,
      [this.name, ns(identifier.namespace), identifier.name, metadataLocation],
    )
    if (res.rowCount !== 1) {
      await this.opts.io.delete([metadataLocation]).catch(() => undefined)
      throw new TableAlreadyExists(`Table already exists: ${ns(identifier.namespace)}.${identifier.name}`)
    }
    this.opts.cache?.set(metadataLocation, metadata, text, true)
    return { identifier, metadataLocation, metadata, metadataJson: text, io: this.opts.io }
  }

  /**
   * The table metadata in a file written before (a table to register), read losslessly. MetadataError
   * when there is no file or it is not Iceberg table metadata; the store's own failures pass through.
   * Always read from the store: a file someone asks to register may have been written over since.
   */
  async readMetadata(location: string): Promise<MetadataFile> {
    let bytes: Uint8Array
    try {
      bytes = await this.opts.io.read(location)
    } catch (err) {
      if (err instanceof FileNotFound) throw new MetadataError(`no metadata file at ${location}`)
      throw err
    }
    try {
      const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes)
      return { metadata: parseMetadata(text), text }
    } catch (err) {
      throw new MetadataError(`${location} is not Iceberg table metadata: ${(err as Error).message}`)
    }
  }

  /**
   * Registers a table at `metadataLocation`, whose `file` the caller read with readMetadata and
   * checked (JdbcCatalog's registerTable: the row names the file as it is, nothing is copied).
   * NoSuchNamespace; TableAlreadyExists unless `overwrite`, which points the table's row at the file
   * (its previous location kept as previous_metadata_location).
   */
  async registerTable(id: TableIdentifier, metadataLocation: string, file: MetadataFile, overwrite = false): Promise<LoadedTable> {
    if (!(await this.namespaces.exists(id.namespace))) throw new NoSuchNamespace(`Namespace does not exist: ${ns(id.namespace)}`)
    const replace = overwrite
      ? `do update set metadata_location = excluded.metadata_location, previous_metadata_location = iceberg_tables.metadata_location
         where iceberg_tables.iceberg_type = 'TABLE' or iceberg_tables.iceberg_type is null`
      : 'do nothing'
    const res = await this.opts.sql.query(
      `insert into iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location, iceberg_type)
       values ($1, $2, $3, $4, null, 'TABLE') on conflict (catalog_name, table_namespace, table_name) ${replace}`,
      [this.name, ns(id.namespace), id.name, metadataLocation],
    )
    if (res.rowCount !== 1) throw new TableAlreadyExists(`Table already exists: ${ns(id.namespace)}.${id.name}`)
    // Kept as registered (a file written over since is read again here, so this isolate's entry follows it).
    this.opts.cache?.set(metadataLocation, file.metadata, file.text)
    return { identifier: id, metadataLocation, metadata: file.metadata, metadataJson: this.opts.cache?.get(metadataLocation)?.json, io: this.opts.io }
  }

  /** Removes the table from the catalog; its files stay (they are the store's, as in PyIceberg's SqlCatalog). NoSuchTable when absent. */
  async dropTable(id: TableIdentifier): Promise<void> {
    const res = await this.opts.sql.query(
      `delete from iceberg_tables where catalog_name = $1 and table_namespace = $2 and table_name = $3
       and ${TABLE_ROWS}`,
      [this.name, ns(id.namespace), id.name],
    )
    if (res.rowCount !== 1) throw new NoSuchTable(`Table does not exist: ${ns(id.namespace)}.${id.name}`)
  }

  /** Moves the row to another name (the files stay where they are). NoSuchTable, NoSuchNamespace (the destination's), TableAlreadyExists. */
  async renameTable(from: TableIdentifier, to: TableIdentifier): Promise<void> {
    if (!(await this.namespaces.exists(to.namespace))) throw new NoSuchNamespace(`Namespace does not exist: ${ns(to.namespace)}`)
    const res = await this.opts.sql.query(
      `update iceberg_tables set table_namespace = $4, table_name = $5
       where catalog_name = $1 and table_namespace = $2 and table_name = $3 and ${TABLE_ROWS}
       and not exists (select 1 from iceberg_tables where catalog_name = $1 and table_namespace = $4 and table_name = $5)`,
      [this.name, ns(from.namespace), from.name, ns(to.namespace), to.name],
    )
    if (res.rowCount === 1) return
    await this.currentLocation(from) // NoSuchTable when the source is gone
    throw new TableAlreadyExists(`Table already exists: ${ns(to.namespace)}.${to.name}`)
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
    if (failure) throw new CommitConflict(`${failure} (${ns(table.identifier.namespace)}.${table.identifier.name})`)
    const done = await this.swap(current, updates, opts.ready)
    if (!done) throw new CommitConflict(`${ns(table.identifier.namespace)}.${table.identifier.name} changed during the commit`)
    return done
  }

  /**
   * A commit as a REST client sends it (CommitTableRequest): with assert-create, the commit of a
   * staged create, whose updates make the table from nothing (metadataFromUpdates); the other
   * requirements then hold of no table at all, and a table already there is a CommitConflict.
   * Otherwise the updates apply to the current table (commitTable), the roller's path.
   */
  async commitRequest(id: TableIdentifier, requirements: TableRequirement[], updates: TableUpdate[]): Promise<LoadedTable> {
    if (!requirements.some((r) => r.type === 'assert-create')) return this.commitTable(await this.loadTable(id), requirements, updates)
    const failure = requirementFailure(
      null,
      requirements.filter((r) => r.type !== 'assert-create'),
    )
    if (failure) throw new CommitConflict(`${failure} (${ns(id.namespace)}.${id.name})`)
    if (!(await this.namespaces.exists(id.namespace))) throw new NoSuchNamespace(`Namespace does not exist: ${ns(id.namespace)}`)
    let metadata: TableMetadata
    try {
      metadata = metadataFromUpdates(updates, { location: this.defaultLocation(id) })
    } catch (err) {
      throw new InvalidUpdate(`cannot create ${ns(id.namespace)}.${id.name} from the updates: ${(err as Error).message}`)
    }
    try {
      return await this.createWithMetadata(id, metadata)
    } catch (err) {
      if (err instanceof TableAlreadyExists) throw new CommitConflict(`Requirement failed: table already exists (${ns(id.namespace)}.${id.name})`)
      throw err
    }
  }

  /**
   * Commits to several tables at once, all or none (the REST catalog's transactions/commit): each
   * change's requirements are checked on its table's current metadata, its updates applied and its
   * metadata file written; then every row is swapped inside one Postgres transaction, rolled back
   * when any row moved (CommitConflict, nothing committed). Needs a client that is one session (the
   * edge's per-request connection), not a pool: BEGIN and COMMIT must reach the same connection.
   */
  async commitTransaction(changes: Array<{ id: TableIdentifier; requirements: TableRequirement[]; updates: TableUpdate[] }>): Promise<void> {
    const planned = await Promise.all(
      changes.map(async ({ id, requirements, updates }) => {
        const current = await this.loadTable(id)
        const failure = requirementFailure(current.metadata, requirements)
        if (failure) throw new CommitConflict(`${failure} (${ns(id.namespace)}.${id.name})`)
        let next: TableMetadata
        try {
          next = applyUpdates(current.metadata, updates, { previousMetadataLocation: current.metadataLocation })
        } catch (err) {
          throw new InvalidUpdate(`${ns(id.namespace)}.${id.name}: cannot apply the updates: ${(err as Error).message}`)
        }
        const text = serializeMetadata(next)
        return { id, current, next, text, location: metadataFileLocation(next.location, metadataVersion(current.metadataLocation) + 1) }
      }),
    )
    await Promise.all(planned.map((p) => this.opts.io.write(p.location, p.text, 'application/json')))
    const discard = () => this.opts.io.delete(planned.map((p) => p.location)).catch(() => undefined)
    let moved: TableIdentifier | undefined
    let committing = false
    try {
      await this.opts.sql.query('begin')
      for (const p of planned) {
        const res = await this.opts.sql.query(
          `update iceberg_tables set metadata_location = $4, previous_metadata_location = $5
           where catalog_name = $1 and table_namespace = $2 and table_name = $3 and metadata_location = $5`,
          [this.name, ns(p.id.namespace), p.id.name, p.location, p.current.metadataLocation],
        )
        if (res.rowCount !== 1) {
          moved = p.id
          break
        }
      }
      committing = !moved
      await this.opts.sql.query(moved ? 'rollback' : 'commit')
    } catch (err) {
      await this.opts.sql.query('rollback').catch(() => undefined)
      // A COMMIT that did not answer may or may not have committed; any earlier failure committed nothing.
      if (committing) throw new CommitStateUnknown(`transaction over ${planned.length} tables unknown: ${(err as Error).message}`)
      await discard()
      throw err
    }
    if (moved) {
      await discard()
      throw new CommitConflict(`${ns(moved.namespace)}.${moved.name} changed during the commit`)
    }
    for (const p of planned) this.opts.cache?.set(p.location, p.next, p.text, true)
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
      throw new InvalidUpdate(`cannot apply the updates: ${(err as Error).message}`)
    }
    const nextLocation = metadataFileLocation(next.location, metadataVersion(current.metadataLocation) + 1)
    // Never rejects, so a failed metadata write leaves no rejection unheard.
    const written = ready?.then(
      () => null,
      (error: unknown) => ({ error }),
    )
    const text = serializeMetadata(next)
    const [, failed] = await Promise.all([this.opts.io.write(nextLocation, text, 'application/json'), written])
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
    this.opts.cache?.set(nextLocation, next, text, true)
    // In the background: clean-up is best effort (a file left behind is garbage, never a wrong table).
    void this.deleteExpiredMetadata(current.metadata, next)
    return { identifier: id, metadataLocation: nextLocation, metadata: next, metadataJson: text, io: this.opts.io }
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
