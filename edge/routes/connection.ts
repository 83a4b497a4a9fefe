// GET /v1/connection (read): how engines reach the project's tables, and where producers send rows.
import { Hono } from 'hono'
import { asc, eq } from 'drizzle-orm'
import { warehouses } from '../../db/schema.ts'
import { sqlCatalogName } from '../catalogs.ts'
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
      return {
        name: w.name,
        catalog:
          catalog.type === 'sql'
            ? { type: 'sql', catalog_name: sqlCatalogName(w), note: 'PyIceberg SqlCatalog or Java JdbcCatalog on the project database, with this catalog name' }
            : { type: 'rest', uri: catalog.uri, warehouse: catalog.warehouse ?? null },
        storage: { bucket: w.bucket, endpoint: w.endpoint, region: w.region, path_style: true },
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
