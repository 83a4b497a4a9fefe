// GET /v1/usage (read): ingest_bytes per project for this month, by sink (metered, not enforced), and
// storage, the storage meter's last figures.
import { Hono } from 'hono'
import { eq } from 'drizzle-orm'
import type { EdgeDb } from '../../db/edge.ts'
import { warehouses } from '../../db/schema.ts'
import { requireKey } from '../auth.ts'
import type { AppEnv } from '../env.ts'
import { projectStorage } from '../storage.ts'

/** The project's usage as GET /v1/usage answers it (the console's usage page shows the same). */
export async function usageView(db: EdgeDb, projectId: string) {
  const { rows } = await db.$client.query(
    `select u.sink_id, s.name, u.batches::float8 as batches, u.bytes::float8 as bytes,
            u.rows_accepted::float8 as rows_accepted, u.rows_rejected::float8 as rows_rejected, u.rate_limited::float8 as rate_limited
     from usage_counters u left join sinks s on s.id = u.sink_id
     where u.project_id = $1 and u.month = to_char(now() at time zone 'UTC', 'YYYY-MM-01')::date
     order by u.bytes desc, u.sink_id`,
    [projectId],
  )
  const stored = await db.select().from(warehouses).where(eq(warehouses.projectId, projectId))
  const sum = (k: string) => rows.reduce((n: number, r: Record<string, number>) => n + r[k], 0)
  return {
    month: new Date().toISOString().slice(0, 7),
    ingest_bytes: {
      month_to_date: sum('bytes'),
      batches: sum('batches'),
      rows_accepted: sum('rows_accepted'),
      rows_rejected: sum('rows_rejected'),
      // Requests refused 429 rate_limited (edge/limits), counted as each isolate or process refuses them.
      rate_limited: sum('rate_limited'),
      by_sink: rows.map((r: Record<string, unknown>) => ({
        sink_id: r.sink_id as string,
        name: r.name as string | null,
        bytes: r.bytes as number,
        batches: r.batches as number,
        rows_accepted: r.rows_accepted as number,
        rows_rejected: r.rows_rejected as number,
        rate_limited: r.rate_limited as number,
      })),
      enforced: false,
    },
    storage: projectStorage(stored),
  }
}

export const usageRoutes = new Hono<AppEnv>().get('/v1/usage', requireKey('read'), async (c) =>
  c.json(await usageView(await c.var.db(), c.var.principal.projectId)),
)
