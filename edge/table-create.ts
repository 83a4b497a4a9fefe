// A table's creation request from what POST /v1/tables and POST /v1/sinks take (columns, or a whole
// schema; partition; format version), checked once for both: 400 invalid_schema / invalid_partition.
import * as v from 'valibot'
import type { Catalog, CreateTableRequest, LoadedTable } from '../iceberg/catalog/index.ts'
import { TableAlreadyExists } from '../iceberg/catalog/index.ts'
import { newTableMetadata } from '../iceberg/spec/metadata.ts'
import { parsePartitionExpression, PartitionSpecError } from '../iceberg/spec/partition.ts'
import { schemaProblem } from '../iceberg/spec/schema.ts'
import type { NestedField } from '../iceberg/spec/types.ts'
import { ApiError } from './errors.ts'
import type { EdgeDb } from '../db/edge.ts'
import { warehouseLocation, type WarehouseCore } from './catalogs.ts'
import { tableLocationProblem } from './table-location.ts'

const Ident = v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'names are letters, digits and _, not starting with a digit'))

export const Column = v.object({
  name: Ident,
  type: v.pipe(v.string(), v.minLength(1)),
  required: v.optional(v.boolean(), false),
  doc: v.optional(v.string()),
})

export interface TableSpec {
  columns?: v.InferOutput<typeof Column>[]
  /** A whole schema's fields (nested types), ids placeholders. */
  fields?: NestedField[]
  partition: string[]
  formatVersion: 2 | 3
  properties?: Record<string, string>
  doc?: string
}

/** The catalog's request for a new table `name`, or 400 for a schema or partition that cannot be. */
export function tableRequest(name: string, spec: TableSpec): CreateTableRequest {
  const fields: NestedField[] = spec.columns
    ? spec.columns.map((col, i) => ({ id: i + 1, name: col.name, type: col.type, required: col.required, ...(col.doc ? { doc: col.doc } : {}) }))
    : (spec.fields ?? [])
  const problem = schemaProblem(fields, spec.formatVersion)
  if (problem) throw new ApiError(400, 'invalid_schema', problem)
  let partition: CreateTableRequest['partition']
  try {
    partition = spec.partition.map(parsePartitionExpression)
  } catch (err) {
    throw new ApiError(400, 'invalid_partition', (err as Error).message)
  }
  const request = { name, schema: { fields }, partition, formatVersion: spec.formatVersion, properties: spec.properties ?? {}, doc: spec.doc }
  // The partition checked against the schema here, before anything is written (as createTable builds it).
  previewMetadata(request)
  return request
}

/**
 * The metadata a new table would start with (fresh ids, spec, properties), built as the catalog builds
 * it but written nowhere: what a sink's checks read before the table is created.
 */
export function previewMetadata(request: CreateTableRequest): LoadedTable['metadata'] {
  const properties = { ...request.properties, ...(request.doc ? { comment: request.doc } : {}) }
  try {
    return newTableMetadata({
      location: 's3://preview/table',
      schema: request.schema,
      partitionFields: request.partition,
      formatVersion: request.formatVersion ?? 2,
      properties,
    })
  } catch (err) {
    if (err instanceof PartitionSpecError) throw new ApiError(400, 'invalid_partition', err.message)
    throw err
  }
}

/**
 * Creates the table; 409 table_exists when it is there (created meanwhile). In a SQL-catalog
 * warehouse, 409 table_location_taken where its default location reaches another warehouse's files
 * (table-location.ts: possible only in warehouses made before roots were unique).
 */
export async function createTable(
  catalog: Catalog,
  namespace: string,
  request: CreateTableRequest,
  place: { db: EdgeDb; w: WarehouseCore },
): Promise<LoadedTable> {
  if ((place.w.catalog as { type: string }).type === 'sql') {
    const location = `${warehouseLocation(place.w)}/${namespace}/${request.name}`
    const problem = await tableLocationProblem(place.db, place.w, location)
    if (problem) throw new ApiError(409, 'table_location_taken', `${namespace}.${request.name}: ${problem}; give the warehouse a root of its own (DEPLOY.md)`)
  }
  try {
    return await catalog.createTable([namespace], request)
  } catch (err) {
    if (err instanceof PartitionSpecError) throw new ApiError(400, 'invalid_partition', err.message)
    if (err instanceof TableAlreadyExists) throw new ApiError(409, 'table_exists', `${namespace}.${request.name} exists already`)
    throw err
  }
}
