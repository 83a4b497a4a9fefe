// One Catalog interface (SQL catalog in Postgres, Iceberg REST catalog), with errors that say
// what the caller may do: CommitConflict → retry on a fresh base; CommitStateUnknown → reload and
// look for your own snapshot, never retry blindly; NoSuchTable / NoSuchNamespace / TableAlreadyExists.
import type { FileIO } from '../io/file-io.ts'
import type { TableMetadata } from '../spec/metadata.ts'
import type { PartitionFieldInput } from '../spec/partition.ts'
import type { NestedField } from '../spec/types.ts'
import type { TableRequirement, TableUpdate } from '../spec/updates.ts'

export interface TableIdentifier {
  namespace: string[]
  name: string
}

export interface LoadedTable {
  identifier: TableIdentifier
  metadataLocation: string
  metadata: TableMetadata
  /**
   * `metadata` as JSON text, when the catalog has it at hand (a file it wrote, or one its cache holds):
   * an answer may carry it as is instead of serializing the metadata again.
   */
  metadataJson?: string
  /** The FileIO to read and write this table's files with (vended credentials where given). */
  io: FileIO
}

export interface CreateTableRequest {
  name: string
  /** Field ids are placeholders: fresh ids are assigned as Java and PyIceberg do. */
  schema: { fields: NestedField[] }
  partition?: PartitionFieldInput[]
  formatVersion?: 2 | 3
  properties?: Record<string, string>
  doc?: string
}

export interface Catalog {
  readonly name: string
  listNamespaces(): Promise<string[][]>
  /** Creates the namespace when it does not exist (no error when it does). */
  ensureNamespace(namespace: string[]): Promise<void>
  listTables(namespace: string[]): Promise<TableIdentifier[]>
  loadTable(id: TableIdentifier): Promise<LoadedTable>
  createTable(namespace: string[], request: CreateTableRequest): Promise<LoadedTable>
  /** Applies updates if every requirement holds on the catalog's current metadata. */
  commitTable(table: LoadedTable, requirements: TableRequirement[], updates: TableUpdate[], opts?: CommitOptions): Promise<LoadedTable>
}

export interface CommitOptions {
  /**
   * Writes of files the updates name (a manifest list, data files) still in flight: the catalog
   * finishes them before the commit becomes visible, overlapping them with its own writes. When
   * one fails, nothing is committed and its error is thrown.
   */
  ready?: Promise<unknown>
}

export class CatalogError extends Error {
  /** Whether the same call may succeed if made again (after a reload, for commits). */
  readonly retryable: boolean = false
  constructor(message: string) {
    super(message)
    this.name = new.target.name
  }
}

export class NoSuchTable extends CatalogError {}
export class NoSuchNamespace extends CatalogError {}
export class TableAlreadyExists extends CatalogError {}
export class NamespaceAlreadyExists extends CatalogError {}
/** A namespace that still holds tables or namespaces cannot be dropped. */
export class NamespaceNotEmpty extends CatalogError {}
/** The updates cannot apply to the table (an unknown schema id, a stale sequence number): the request is wrong, not the base. */
export class InvalidUpdate extends CatalogError {}

/** The base moved or a requirement failed: nothing was committed; re-apply on a fresh base. */
export class CommitConflict extends CatalogError {
  override readonly retryable = true
}

/** The catalog refused the credentials (401/403, or the token endpoint refused the client): no retry helps until they change. */
export class CatalogUnauthorized extends CatalogError {}

/** The catalog may or may not have committed (5xx, timeout, lost connection): reload and look. */
export class CommitStateUnknown extends CatalogError {}
