// The REST catalog's table routes over the SQL catalog: list, load (and HEAD), create (and staged
// create), commit, drop, rename, metrics. Table metadata goes out exactly as the catalog holds it
// (lossless); commits go through SqlCatalog.commitRequest, the roller's commit path.
import { and, eq, ne } from 'drizzle-orm'
import type { Context } from 'hono'
import { sinks } from '../../db/schema.ts'
import type { LoadedTable, TableIdentifier } from '../../iceberg/catalog/index.ts'
import type { SqlCatalog } from '../../iceberg/catalog/sql.ts'
import { currentSchema, defaultSpec, newTableMetadata, type TableMetadata } from '../../iceberg/spec/metadata.ts'
import { bindSpec, PartitionSpecError } from '../../iceberg/spec/partition.ts'
import { schemaProblem } from '../../iceberg/spec/schema.ts'
import { transformProblem } from '../../iceberg/spec/transforms.ts'
import type { NestedField } from '../../iceberg/spec/types.ts'
import type { TableUpdate } from '../../iceberg/spec/updates.ts'
import type { WarehouseRow } from '../catalogs.ts'
import type { AppEnv } from '../env.ts'
import { sha256Hex } from '../keys.ts'
import { need } from './auth.ts'
import { answer, answerWithMetadata, readBody } from './body.ts'
import { badRequest, IcebergError } from './errors.ts'
import { namespaceParam } from './namespaces.ts'
import { CommitTableRequest, CommitTransactionRequest, commitOf, CreateTableRequest, RenameTableRequest } from './schemas.ts'
import { checkLocation } from './location.ts'
import { accessTag, storageAccess } from './storage-access.ts'
import { catalogAt, warehouseCatalogAt } from './warehouse.ts'

const named = (id: TableIdentifier) => [...id.namespace, id.name].join('.')

export function tableParam(c: Context<AppEnv>): TableIdentifier {
  const name = c.req.param('table') ?? ''
  // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is refused here (Postgres cannot hold it)
  if (!/^[^\u0000]{1,255}$/.test(name)) throw badRequest('table: a name of 1 to 255 characters')
  return { namespace: namespaceParam(c.req.param('namespace')), name }
}

/** Table metadata an engine may commit: known column types for its format version, partitions that fit their columns. */
export function checkMetadata(m: TableMetadata): void {
  const formatVersion = m['format-version'] === 3 ? 3 : 2
  for (const schema of m.schemas) {
    const problem = schemaProblem(schema.fields as NestedField[], formatVersion)
    if (problem) throw badRequest(`schema ${schema['schema-id']}: ${problem}`)
  }
  for (const b of bindSpec(defaultSpec(m), currentSchema(m))) {
    const problem = transformProblem(b.transform, b.sourceType)
    if (problem) throw new PartitionSpecError(`partition field ${b.field.name}: ${problem}`)
  }
}

/** What the catalog would write as given: locations in the warehouse (location.ts), known column types. */
async function checkUpdates(c: Context<AppEnv>, w: WarehouseRow, catalog: SqlCatalog, updates: TableUpdate[]): Promise<void> {
  for (const u of updates) {
    if (u.action === 'set-location') await checkLocation(c, w, catalog, u.location)
    if (u.action === 'add-schema') {
      const problem = schemaProblem(u.schema.fields, 3)
      if (problem) throw badRequest(`add-schema: ${problem}`)
    }
  }
}

/** A table with a live sink is the sink's: dropping or renaming it would leave the sink writing nowhere. */
export async function refuseIfSink(c: Context<AppEnv>, catalog: SqlCatalog, id: TableIdentifier, what: string): Promise<void> {
  const db = await c.var.db()
  const [sink] = await db
    .select({ id: sinks.id, name: sinks.name })
    .from(sinks)
    .where(and(eq(sinks.warehouseId, catalog.name), eq(sinks.tableNamespace, id.namespace.join('.')), eq(sinks.tableName, id.name), ne(sinks.state, 'deleted')))
    .limit(1)
  if (sink)
    throw new IcebergError(409, 'CommitFailedException', `cannot ${what} ${named(id)}: sink ${sink.name} (${sink.id}) writes to it; delete the sink first`)
}

/**
 * LoadTableResult: the metadata, and how the caller reaches the table's files (storage-access.ts).
 * The metadata goes out as the catalog's JSON text when it has it (the file as stored), else written;
 * `metadata` given (a view of the table's, e.g. ?snapshots=refs) is always written.
 */
export async function answerTable(c: Context<AppEnv>, w: WarehouseRow, t: LoadedTable, metadata?: TableMetadata): Promise<Response> {
  const access = await storageAccess(c, w, t.identifier, t.metadata.location)
  const head = { 'metadata-location': t.metadataLocation }
  if (metadata === undefined && t.metadataJson !== undefined) return answerWithMetadata(c, head, t.metadataJson, access)
  return answer(c, { ...head, metadata: metadata ?? t.metadata, ...access })
}

/** ?snapshots=refs: only the snapshots a branch or tag points at (the spec's snapshot loading mode); undefined for all. */
function withSnapshots(m: TableMetadata, mode: string | undefined): TableMetadata | undefined {
  if (mode === undefined || mode === 'all') return undefined
  if (mode !== 'refs') throw badRequest('snapshots: all or refs')
  const kept = new Set(Object.values(m.refs).map((r) => r['snapshot-id']))
  return { ...m, snapshots: m.snapshots.filter((s) => kept.has(s['snapshot-id'])) }
}

export async function listTables(c: Context<AppEnv>) {
  const namespace = namespaceParam(c.req.param('namespace'))
  const catalog = await catalogAt(c)
  return answer(c, { identifiers: await catalog.listTables(namespace) })
}

/** GET: LoadTableResult with an ETag (If-None-Match: 304); HEAD (Hono serves it with the GET route): 204 when the table exists. */
export async function loadTable(c: Context<AppEnv>) {
  const id = tableParam(c)
  const { warehouse, catalog } = await warehouseCatalogAt(c)
  // The table's row as the key's statement read it (edge/auth.ts keyRow), when it read this table.
  const read = c.var.warehouseRead?.table
  const readHere = read !== undefined && read.id.name === id.name && read.id.namespace.join('\x1f') === id.namespace.join('\x1f')
  if (c.req.method === 'HEAD') {
    if (!(readHere ? read.location !== null : await catalog.tableExists(id)))
      throw new IcebergError(404, 'NoSuchTableException', `Table does not exist: ${named(id)}`)
    return c.body(null, 204)
  }
  const table = readHere ? await catalog.loadTableAt(id, read.location) : await catalog.loadTable(id)
  const mode = c.req.query('snapshots')
  // A metadata file never changes: its location (and the snapshots asked for) names the answer, with
  // the caller's storage access (accessTag: its level, keys asked for, a token young enough).
  const etag = `"${(await sha256Hex(`${table.metadataLocation}\n${mode ?? 'all'}\n${accessTag(c)}`)).slice(0, 32)}"`
  c.header('ETag', etag)
  if (c.req.header('if-none-match') === etag) return c.body(null, 304)
  return answerTable(c, warehouse, table, withSnapshots(table.metadata, mode))
}

/** CreateTableRequest; stage-create answers the metadata to be (no metadata-location) and writes nothing. */
export async function createTable(c: Context<AppEnv>) {
  need(c, 'write')
  const namespace = namespaceParam(c.req.param('namespace'))
  const body = await readBody(c, CreateTableRequest)
  const id = { namespace, name: body.name }
  const { 'format-version': version = '2', ...properties } = body.properties
  if (version !== '2' && version !== '3') throw badRequest('properties.format-version: 2 or 3')
  const { warehouse, catalog } = await warehouseCatalogAt(c)
  const metadata = newTableMetadata({
    location: body.location ?? catalog.defaultLocation(id),
    schema: body.schema as { fields: NestedField[] },
    spec: { 'spec-id': 0, fields: (body['partition-spec']?.fields ?? []).map((f) => ({ ...f, 'field-id': f['field-id'] ?? 0 })) },
    sortOrder: body['write-order'] ? { 'order-id': 1, fields: body['write-order'].fields } : undefined,
    formatVersion: Number(version) as 2 | 3,
    properties,
  })
  checkMetadata(metadata)
  // The default location too: where warehouses share a root (made before roots were unique), another's table may be there.
  await checkLocation(c, warehouse, catalog, metadata.location)
  if (!(await catalog.namespaces.exists(namespace))) throw new IcebergError(404, 'NoSuchNamespaceException', `Namespace does not exist: ${namespace.join('.')}`)
  if (body['stage-create']) {
    if (await catalog.tableExists(id)) throw new IcebergError(409, 'AlreadyExistsException', `Table already exists: ${named(id)}`)
    return answer(c, { metadata, ...(await storageAccess(c, warehouse, id, metadata.location)) })
  }
  return answerTable(c, warehouse, await catalog.createWithMetadata(id, metadata))
}

/** CommitTableRequest: requirements checked and updates applied by the catalog, the staged create's commit included. */
export async function commitTable(c: Context<AppEnv>) {
  need(c, 'write')
  const id = tableParam(c)
  const body = await readBody(c, CommitTableRequest)
  if (body.identifier && named(body.identifier) !== named(id)) throw badRequest(`the body names ${named(body.identifier)}, the path ${named(id)}`)
  const { requirements, updates } = commitOf(body)
  const { warehouse, catalog } = await warehouseCatalogAt(c)
  await checkUpdates(c, warehouse, catalog, updates)
  const table = await catalog.commitRequest(id, requirements, updates)
  const head = { 'metadata-location': table.metadataLocation }
  if (table.metadataJson !== undefined) return answerWithMetadata(c, head, table.metadataJson, {})
  return answer(c, { ...head, metadata: table.metadata })
}

/** CommitTransactionRequest: every table's change or none, in one Postgres transaction (204). */
export async function commitTransaction(c: Context<AppEnv>) {
  need(c, 'write')
  const body = await readBody(c, CommitTransactionRequest)
  const { warehouse, catalog } = await warehouseCatalogAt(c)
  const changes = []
  for (const change of body['table-changes']) {
    const { requirements, updates } = commitOf(change)
    if (requirements.some((r) => r.type === 'assert-create')) throw badRequest('a transaction commits to existing tables: create a table on its own')
    await checkUpdates(c, warehouse, catalog, updates)
    changes.push({ id: change.identifier, requirements, updates })
  }
  await catalog.commitTransaction(changes)
  return c.body(null, 204)
}

/** Drops the table from the catalog (204); its files stay, purgeRequested or not. */
export async function dropTable(c: Context<AppEnv>) {
  need(c, 'write')
  const id = tableParam(c)
  const catalog = await catalogAt(c)
  await refuseIfSink(c, catalog, id, 'drop')
  await catalog.dropTable(id)
  return c.body(null, 204)
}

export async function renameTable(c: Context<AppEnv>) {
  need(c, 'write')
  const body = await readBody(c, RenameTableRequest)
  const catalog = await catalogAt(c)
  await refuseIfSink(c, catalog, body.source, 'rename')
  await catalog.renameTable(body.source, body.destination)
  return c.body(null, 204)
}

/** Metrics reports are accepted and dropped (the spec's 204): nothing here keeps them. */
export async function reportMetrics(c: Context<AppEnv>) {
  tableParam(c)
  await catalogAt(c)
  return c.body(null, 204)
}
