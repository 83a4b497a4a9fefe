// GET /v1/connection (read): how engines reach the project's tables, and where producers send rows.
// A SQL-catalog warehouse is served at <origin>/iceberg (the REST catalog) with ready recipes; an
// external REST catalog is named as it is (its own URI; lhbox does not proxy it).
import { Hono } from 'hono'
import { asc, eq } from 'drizzle-orm'
import { warehouses } from '../../db/schema.ts'
import { sqlCatalogName } from '../catalogs.ts'
import { engineRecipes } from '../engine-recipes.ts'
import { requireKey } from '../auth.ts'
import type { AppEnv } from '../env.ts'
import { sinksEnabled } from '../../contract/switch.ts'
import { SINKS_OFF } from '../sinks-switch.ts'

export const connectionRoutes = new Hono<AppEnv>().get('/v1/connection', requireKey('read'), async (c) => {
  const db = await c.var.db()
  const rows = await db.select().from(warehouses).where(eq(warehouses.projectId, c.var.principal.projectId)).orderBy(asc(warehouses.name))
  const origin = new URL(c.req.url).origin
  return c.json({
    warehouses: rows.map((w) => {
      const catalog = w.catalog as { type: string; uri?: string; warehouse?: string }
      const sql = catalog.type === 'sql'
      return {
        name: w.name,
        catalog: sql
          ? {
              type: 'sql',
              catalog_name: sqlCatalogName(w),
              rest_uri: `${origin}/iceberg`,
              note: 'Any Iceberg REST client at rest_uri with warehouse = this name and an API key (engines below); or PyIceberg SqlCatalog / Java JdbcCatalog on the project database with catalog_name',
            }
          : {
              type: 'rest',
              uri: catalog.uri,
              warehouse: catalog.warehouse ?? null,
              note: 'An external REST catalog: engines connect to it at this URI with its own credentials (lhbox does not proxy it)',
            },
        storage: { bucket: w.bucket, endpoint: w.endpoint, region: w.region, path_style: true },
        engines: sql ? engineRecipes(origin, w) : null,
      }
    }),
    ingest_url: `${origin}/v1/sinks/{sink_id}`,
    sinks_note:
      'Sinks append JSON rows to these tables: POST a JSON array to ingest_url with the sink’s send key and an Idempotency-Key. ' +
      'Rows that do not fit the schema are kept in s3://<bucket>/_sink/<sink_id>/rejects/*.ndjson (read_json in DuckDB).' +
      (sinksEnabled(c.env) ? '' : ` Now: ${SINKS_OFF}.`),
    sinks_enabled: sinksEnabled(c.env),
  })
})
