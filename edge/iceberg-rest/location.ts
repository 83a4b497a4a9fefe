// Where a client may put a table (create's `location`, commit's `set-location`, register's metadata
// file and the table location it names): a table is signed and vended within its location and its
// orphans swept there, so a location must never reach files that are not this warehouse's.
//   - inside the warehouse's root, with no . or .. segment (an HTTP client may resolve it away);
//   - never under the bucket's _sink/ (every sink's intake and rejects);
//   - never into another warehouse's root nested under this one, nor around one (a warehouse made
//     before roots were unique may hold the whole bucket, and newer roots then lie inside it);
//   - for warehouses sharing one root (made before that rule), never into another's table.
import type { Context } from 'hono'
import type { SqlCatalog } from '../../iceberg/catalog/sql.ts'
import type { WarehouseRow } from '../catalogs.ts'
import type { AppEnv } from '../env.ts'
import { INTAKE_FOLDER, normalPrefix } from '../warehouse-roots.ts'
import { badRequest } from './errors.ts'

export async function checkLocation(c: Context<AppEnv>, w: WarehouseRow, catalog: SqlCatalog, location: string): Promise<void> {
  const path = location.replace(/\/+$/, '')
  if (!path.startsWith(`${catalog.warehouseLocation}/`) || /\/\.\.?(\/|$)/.test(path)) {
    throw badRequest(`location ${location} is outside the warehouse (${catalog.warehouseLocation}/…)`)
  }
  // The object key in the warehouse's bucket (the warehouse location is s3://<bucket>[/<prefix>]).
  const key = path.slice(`s3://${w.bucket}/`.length)
  if (key === INTAKE_FOLDER || key.startsWith(`${INTAKE_FOLDER}/`)) throw badRequest(`location ${location} is under ${INTAKE_FOLDER}/, the intake's folder`)
  const client = (await c.var.db()).$client
  const root = normalPrefix(w.prefix)
  // Roots strictly inside this one that the location lies in or around.
  const nested = await client.query(
    `select 1 from warehouses where bucket = $1 and id <> $2 and btrim(prefix, '/') <> $3
        and ($3 = '' or starts_with(btrim(prefix, '/') || '/', $3 || '/'))
        and (starts_with($4 || '/', btrim(prefix, '/') || '/') or starts_with(btrim(prefix, '/') || '/', $4 || '/'))
      limit 1`,
    [w.bucket, w.id, root, key],
  )
  if (nested.rows.length > 0) throw badRequest(`location ${location} reaches into another warehouse's root`)
  // The tables of the warehouses sharing this root: their location is the folder of their metadata file.
  const shared = await client.query(
    `select 1 from warehouses o join iceberg_tables t on t.catalog_name = o.id
      where o.bucket = $1 and o.id <> $2 and btrim(o.prefix, '/') = $3
        and (starts_with($4 || '/', regexp_replace(t.metadata_location, '/metadata/[^/]*$', '') || '/')
          or starts_with(regexp_replace(t.metadata_location, '/metadata/[^/]*$', '') || '/', $4 || '/'))
      limit 1`,
    [w.bucket, w.id, root, path],
  )
  if (shared.rows.length > 0) throw badRequest(`location ${location} reaches into a table of another warehouse sharing this one's root`)
}
