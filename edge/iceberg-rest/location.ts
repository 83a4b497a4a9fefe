// Where a client may put a table (create's `location` and its default, commit's `set-location`,
// register's metadata file and the table location it names): inside the warehouse's root, with no .
// or .. segment (an HTTP client may resolve it away), and nowhere table-location.ts refuses (_sink/,
// another warehouse's root or a sharing warehouse's table). 400 BadRequestException otherwise.
import type { Context } from 'hono'
import type { SqlCatalog } from '../../iceberg/catalog/sql.ts'
import type { WarehouseRow } from '../catalogs.ts'
import type { AppEnv } from '../env.ts'
import { tableLocationProblem } from '../table-location.ts'
import { badRequest } from './errors.ts'

export async function checkLocation(c: Context<AppEnv>, w: WarehouseRow, catalog: SqlCatalog, location: string): Promise<void> {
  const path = location.replace(/\/+$/, '')
  if (!path.startsWith(`${catalog.warehouseLocation}/`) || /\/\.\.?(\/|$)/.test(path)) {
    throw badRequest(`location ${location} is outside the warehouse (${catalog.warehouseLocation}/…)`)
  }
  const problem = await tableLocationProblem(await c.var.db(), w, path)
  if (problem) throw badRequest(problem)
}
