// Where a table may not be, in its warehouse's bucket, whoever places it (the REST catalog's create,
// commit and register; the lhbox routes' table create): a table is signed and vended within its
// location and its orphans swept there, so it must never reach files that are not its warehouse's.
//   - never under the bucket's _sink/ (every sink's intake and rejects);
//   - never into or around another warehouse's root nested under this one (a warehouse made before
//     roots were unique may hold the whole bucket, and newer roots then lie inside it);
//   - for warehouses sharing one root (made before that rule), never into or around another's table
//     (the folder of its metadata file).
import type { EdgeDb } from '../db/edge.ts'
import type { WarehouseCore } from './catalogs.ts'
import { INTAKE_FOLDER, normalPrefix } from './warehouse-roots.ts'

/** Why `location` (s3://<the warehouse's bucket>/…, no trailing slash) is no place for a table of `w`, or null. */
export async function tableLocationProblem(db: EdgeDb, w: Pick<WarehouseCore, 'id' | 'bucket' | 'prefix'>, location: string): Promise<string | null> {
  const at = `s3://${w.bucket}/`
  if (!location.startsWith(at)) return `location ${location} is not in the warehouse's bucket`
  const key = location.slice(at.length)
  if (key === INTAKE_FOLDER || key.startsWith(`${INTAKE_FOLDER}/`)) return `location ${location} is under ${INTAKE_FOLDER}/, the intake's folder`
  const client = db.$client
  const root = normalPrefix(w.prefix)
  const nested = await client.query(
    `select 1 from warehouses where bucket = $1 and id <> $2 and btrim(prefix, '/') <> $3
        and ($3 = '' or starts_with(btrim(prefix, '/') || '/', $3 || '/'))
        and (starts_with($4 || '/', btrim(prefix, '/') || '/') or starts_with(btrim(prefix, '/') || '/', $4 || '/'))
      limit 1`,
    [w.bucket, w.id, root, key],
  )
  if (nested.rows.length > 0) return `location ${location} reaches into another warehouse's root`
  const shared = await client.query(
    `select 1 from warehouses o join iceberg_tables t on t.catalog_name = o.id
      where o.bucket = $1 and o.id <> $2 and btrim(o.prefix, '/') = $3
        and (starts_with($4 || '/', regexp_replace(t.metadata_location, '/metadata/[^/]*$', '') || '/')
          or starts_with(regexp_replace(t.metadata_location, '/metadata/[^/]*$', '') || '/', $4 || '/'))
      limit 1`,
    [w.bucket, w.id, root, location],
  )
  if (shared.rows.length > 0) return `location ${location} reaches into a table of another warehouse sharing this one's root`
  return null
}
