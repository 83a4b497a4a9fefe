// Tables: POST /v1/tables (write), GET /v1/tables (read), GET /v1/tables/{wh}.{ns}.{table} (read),
// GET /v1/tables/{wh}.{ns}.{table}/sample (read; the newest data file's first rows),
// PATCH /v1/tables/{wh}.{ns}.{table}/docs (write; one commit).
import * as v from 'valibot'
import { Hono, type Context } from 'hono'
import type { Catalog, LoadedTable } from '../../iceberg/catalog/index.ts'
import { documentChange } from '../../iceberg/transaction/changes.ts'
import { commitWithRetry } from '../../iceberg/transaction/transact.ts'
import { sampleRows } from '../../iceberg/read/sample.ts'
import { currentSchema, currentSnapshot, defaultSpec } from '../../iceberg/spec/metadata.ts'
import type { NestedField } from '../../iceberg/spec/types.ts'
import { requireKey } from '../auth.ts'
import { catalogFor, warehouseByName, type WarehouseRow } from '../catalogs.ts'
import type { AppEnv } from '../env.ts'
import { ApiError } from '../errors.ts'
import { Column, createTable, tableRequest } from '../table-create.ts'
import { jsonBody, query, record, text } from '../validate.ts'

const QualifiedTable = v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*$/, 'give the table as <namespace>.<table>'))

/**
 * An Iceberg type in the spec's JSON form, for a whole schema (nested types): a primitive's name, or a
 * struct, list or map of such types. Ids are placeholders (the catalog assigns fresh ones). Unknown
 * primitive names are caught after this, by schemaProblem (400 invalid_schema).
 */
const typeRef = v.lazy(() => IcebergTypeJson)
export const IcebergTypeJson: v.GenericSchema = v.union([
  v.string(),
  v.looseObject({ type: v.literal('struct'), fields: v.array(v.lazy(() => NestedFieldJson)) }),
  v.looseObject({ type: v.literal('list'), 'element-id': v.optional(v.number()), element: typeRef, 'element-required': v.boolean() }),
  v.looseObject({
    type: v.literal('map'),
    'key-id': v.optional(v.number()),
    key: typeRef,
    'value-id': v.optional(v.number()),
    value: typeRef,
    'value-required': v.boolean(),
  }),
])
export const NestedFieldJson = v.looseObject({
  id: v.optional(v.number()),
  name: v.string(),
  type: IcebergTypeJson,
  required: v.boolean(),
  doc: v.optional(v.string()),
})

export const CreateTable = v.object({
  warehouse: text(),
  table: QualifiedTable,
  columns: v.optional(v.array(Column)),
  /** A whole schema ({fields: [...]}, field ids are placeholders), for nested types. */
  schema: v.optional(v.object({ fields: v.array(NestedFieldJson) })),
  format_version: v.optional(v.picklist([2, 3]), 2),
  partition: v.optional(v.array(v.string()), []),
  doc: v.optional(v.string()),
  properties: v.optional(record(v.string(), v.string()), {}),
})

/** GET /v1/tables: the tables of a warehouse, or of one of its namespaces. */
export const ListTablesQuery = v.object({ warehouse: text(), namespace: v.optional(text()) })

/** A table's name in a path ({warehouse}.{namespace}.{table}); a namespace is such parts joined by dots. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is the character refused here (Postgres cannot hold it)
export const TABLE_PART = v.pipe(v.string(), v.regex(/^[^.\u0000]+$/))

/** GET /v1/tables/{…}/sample */
export const SampleQuery = v.object({
  // Exactly 1 to 100 in the pattern itself, so the OpenAPI document says what is taken (schemathesis holds us to it).
  limit: v.optional(v.pipe(v.string(), v.regex(/^(?:100|[1-9][0-9]?)$/, 'limit: 1 to 100'), v.transform(Number)), '20'),
})

export const DocumentTable = v.object({
  doc: v.optional(v.string()),
  columns: v.optional(record(v.string(), v.string())),
})

export async function catalogOf(c: Context<AppEnv>, warehouse: string): Promise<{ catalog: Catalog; w: WarehouseRow }> {
  const db = await c.var.db()
  const w = await warehouseByName(db, c.var.principal.projectId, warehouse)
  return { catalog: await catalogFor(c.env, db, w), w }
}

/** {warehouse}.{namespace}.{table} → its parts (the namespace may have several levels). */
export function parseTablePath(path: string): { warehouse: string; namespace: string[]; name: string } {
  const parts = path.split('.')
  if (parts.length < 3 || !parts.every((p) => v.is(TABLE_PART, p)))
    throw new ApiError(400, 'invalid_request', 'give the table as <warehouse>.<namespace>.<table>')
  return { warehouse: parts[0], namespace: parts.slice(1, -1), name: parts[parts.length - 1] }
}

function tableView(warehouse: string, t: LoadedTable) {
  const m = t.metadata
  const schema = currentSchema(m)
  const byId = new Map(schema.fields.map((f) => [f.id, f.name]))
  const undocumented = schema.fields.filter((f) => !f.doc).map((f) => f.name)
  return {
    warehouse,
    namespace: t.identifier.namespace.join('.'),
    name: t.identifier.name,
    table: `${t.identifier.namespace.join('.')}.${t.identifier.name}`,
    format_version: m['format-version'],
    location: m.location,
    doc: m.properties.comment ?? null,
    schema: { schema_id: schema['schema-id'], fields: schema.fields },
    partition_spec: defaultSpec(m).fields.map((f) => ({ name: f.name, transform: f.transform, source: byId.get(f['source-id']) ?? null })),
    snapshot_count: m.snapshots.length,
    // A string: 63-bit ids do not survive JSON numbers in most clients.
    current_snapshot_id: currentSnapshot(m)?.['snapshot-id'].toString() ?? null,
    undocumented_columns: undocumented,
    properties: m.properties,
  }
}

/** The answer of GET /v1/tables/{path}/sample as JSON text (the MCP tool sample_rows answers it too). */
export async function tableSample(c: Context<AppEnv>, path: string, limit: number): Promise<string> {
  const { warehouse, namespace, name } = parseTablePath(path)
  const { catalog } = await catalogOf(c, warehouse)
  const sample = await sampleRows(await catalog.loadTable({ namespace, name }), limit)
  const head = JSON.stringify({ warehouse, table: `${namespace.join('.')}.${name}`, snapshot_id: sample.snapshotId, file: sample.file })
  return `${head.slice(0, -1)},"rows":[${sample.rows.join(',')}]}`
}

export const tableRoutes = new Hono<AppEnv>()
  .post('/v1/tables', requireKey('write'), async (c) => {
    const body = await jsonBody(c, CreateTable)
    const [namespace, name] = body.table.split('.')
    if (!body.columns === !body.schema) throw new ApiError(400, 'invalid_request', 'give the columns or a schema (one of them)')
    const request = tableRequest(name, {
      columns: body.columns,
      fields: body.schema?.fields as unknown as NestedField[] | undefined,
      partition: body.partition,
      formatVersion: body.format_version,
      properties: body.properties,
      doc: body.doc,
    })
    const { catalog, w } = await catalogOf(c, body.warehouse)
    return c.json(tableView(body.warehouse, await createTable(catalog, namespace, request, { db: await c.var.db(), w })), 201)
  })
  .get('/v1/tables', requireKey('read'), async (c) => {
    const q = query(c, ListTablesQuery)
    const { catalog } = await catalogOf(c, q.warehouse)
    const namespaces = q.namespace ? [q.namespace.split('.')] : await catalog.listNamespaces()
    const tables = []
    for (const ns of namespaces) {
      const ids = await catalog.listTables(ns)
      tables.push(...ids.map((id) => ({ namespace: id.namespace.join('.'), name: id.name, table: `${id.namespace.join('.')}.${id.name}` })))
    }
    return c.json({ warehouse: q.warehouse, tables })
  })
  .get('/v1/tables/:path', requireKey('read'), async (c) => {
    const { warehouse, namespace, name } = parseTablePath(c.req.param('path'))
    const { catalog } = await catalogOf(c, warehouse)
    const table = await catalog.loadTable({ namespace, name })
    return c.json(tableView(warehouse, table))
  })
  // The rows as JSON text, spliced (never a JSON.parse and stringify: lossless numbers).
  .get('/v1/tables/:path/sample', requireKey('read'), async (c) => {
    const q = query(c, SampleQuery)
    return c.body(await tableSample(c, c.req.param('path'), q.limit), 200, { 'content-type': 'application/json' })
  })
  .patch('/v1/tables/:path/docs', requireKey('write'), async (c) => {
    const { warehouse, namespace, name } = parseTablePath(c.req.param('path'))
    const body = await jsonBody(c, DocumentTable)
    if (body.doc === undefined && Object.keys(body.columns ?? {}).length === 0) throw new ApiError(400, 'invalid_request', 'give a doc, columns, or both')
    const { catalog } = await catalogOf(c, warehouse)
    const table = await catalog.loadTable({ namespace, name })
    const names = new Set(currentSchema(table.metadata).fields.map((f) => f.name))
    const unknown = Object.keys(body.columns ?? {}).filter((col) => !names.has(col))
    if (unknown.length > 0) throw new ApiError(400, 'unknown_column', `no column ${unknown.join(', ')} in ${namespace.join('.')}.${name}`, { columns: unknown })
    const updated = await commitWithRetry(catalog, table, async (base) => documentChange(base.metadata, { table: body.doc, columns: body.columns }))
    return c.json(tableView(warehouse, updated))
  })
