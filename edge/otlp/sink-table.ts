// The shape of a sink's table for OTLP logs, read from its catalog once per isolate and kept a
// minute: the route needs it to write the times in the table's precision. Asked only after the send
// key was checked, so a 409 tells nothing to a caller without the key. A table changed within the
// minute is the roller's to judge, row by row, as for any batch.
import { and, eq, sql } from 'drizzle-orm'
import type { Context } from 'hono'
import type { EdgeDb } from '../../db/edge.ts'
import { sinks, warehouses } from '../../db/schema.ts'
import { NoSuchNamespace, NoSuchTable } from '../../iceberg/catalog/index.ts'
import { catalogFor } from '../catalogs.ts'
import type { AppEnv } from '../env.ts'
import { ApiError, unavailable } from '../errors.ts'
import { checkTable, CREATE_LINE, PRESET, type Shape } from './preset.ts'

const TTL_MS = 60_000
const MAX = 1000
const shapes = new Map<string, { shape: Shape; until: number }>()

/** The shape this isolate knows, if it is fresh. */
export function knownShape(sinkId: string): Shape | undefined {
  const hit = shapes.get(sinkId)
  return hit && hit.until > Date.now() ? hit.shape : undefined
}

/** The sink's table checked against the preset (409 otlp_table_mismatch), remembered for a minute. */
export async function loadShape(c: Context<AppEnv>, db: EdgeDb, sinkId: string): Promise<Shape> {
  const [row] = await db
    .select({ w: warehouses, namespace: sinks.tableNamespace, name: sinks.tableName })
    .from(sinks)
    .innerJoin(warehouses, eq(warehouses.id, sinks.warehouseId))
    .where(and(eq(sinks.id, sinkId), sql`${sinks.state} <> 'deleted'`))
  // Deleted between the key's check and this read.
  if (!row) throw unavailable('database', 'the sink changed while this export was read; retry shortly')
  const table = `${row.namespace}.${row.name}`
  const catalog = await catalogFor(c.env, db, row.w)
  const loaded = await catalog.loadTable({ namespace: [row.namespace], name: row.name }).catch((err) => {
    if (err instanceof NoSuchTable || err instanceof NoSuchNamespace)
      throw new ApiError(409, 'otlp_table_mismatch', `the sink's table ${table} does not exist; create it with: ${CREATE_LINE}`, {
        preset: PRESET,
        command: CREATE_LINE,
      })
    throw err
  })
  const shape = checkTable(loaded.metadata, table)
  shapes.delete(sinkId)
  shapes.set(sinkId, { shape, until: Date.now() + TTL_MS })
  if (shapes.size > MAX) shapes.delete(shapes.keys().next().value as string)
  return shape
}
