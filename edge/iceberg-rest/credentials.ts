// GET /iceberg/v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials: the REST spec's
// loadCredentials (DuckDB's secret provider and PyIceberg refresh keys so): the storage credentials a
// load of the table would vend this caller (storage-access.ts), or none.
import type { Context } from 'hono'
import type { AppEnv } from '../env.ts'
import { answer } from './body.ts'
import { storageAccess } from './storage-access.ts'
import { tableParam } from './tables.ts'
import { warehouseCatalogAt } from './warehouse.ts'

export async function loadCredentials(c: Context<AppEnv>) {
  const id = tableParam(c)
  const { warehouse, catalog } = await warehouseCatalogAt(c)
  const table = await catalog.loadTable(id)
  const access = await storageAccess(c, warehouse, id, table.metadata.location)
  return answer(c, { 'storage-credentials': access['storage-credentials'] ?? [] })
}
