// The storage meter in Postgres: which warehouses are due a figure (every_seconds since the last, or
// one asked for), leased to one roller at a time, and the figure the roller reports.
import { eq, sql } from 'drizzle-orm'
import type { StorageReport } from '../contract/internal.ts'
import type { EdgeDb } from '../db/edge.ts'
import { warehouses } from '../db/schema.ts'
import type { WarehouseRow } from './catalogs.ts'

/** Leases the warehouses due a figure (or the one asked for, due or not) to one roller for leaseSeconds. */
export async function leaseMeasures(db: EdgeDb, o: { everySeconds: number; leaseSeconds: number; warehouseId: string | null }): Promise<WarehouseRow[]> {
  const w = warehouses
  // The next figure is due every_seconds after this lease: a roller that dies mid-listing leaves the
  // lease to expire and the warehouse due again. A row another roller is leasing now is skipped.
  // every_seconds 0: periodic figures are off for this roller; only those asked for are due.
  const periodic = o.everySeconds > 0 ? sql`${w.measureNextAt} <= now()` : sql`false`
  const due = o.warehouseId ? sql`${w.id} = ${o.warehouseId}` : sql`(${w.measureRequestedAt} is not null or ${periodic})`
  return db
    .update(w)
    .set({
      measureLeaseUntil: sql`now() + make_interval(secs => ${o.leaseSeconds})`,
      measureNextAt: o.everySeconds > 0 ? sql`now() + make_interval(secs => ${o.everySeconds})` : sql`${w.measureNextAt}`,
    })
    .where(sql`${w.id} in (select id from ${w} where ${due} and (${w.measureLeaseUntil} is null or ${w.measureLeaseUntil} < now()) for update skip locked)`)
    .returning()
}

/**
 * The roller's figure, kept as the last one, and the lease given back; a figure asked for before the
 * listing began is answered by it (one asked for since waits for the next). A failed listing (no
 * figure) keeps the request. False: no such warehouse.
 */
export async function applyStorage(db: EdgeDb, warehouseId: string, r: StorageReport): Promise<boolean> {
  const w = warehouses
  const rows = await db
    .update(w)
    .set({
      ...(r.figure ? { storage: r.figure } : {}),
      measureLeaseUntil: null,
      measureRequestedAt: r.figure
        ? sql`case when ${w.measureRequestedAt} <= ${r.started_at}::timestamptz then null else ${w.measureRequestedAt} end`
        : sql`${w.measureRequestedAt}`,
    })
    .where(eq(w.id, warehouseId))
    .returning({ id: w.id })
  return rows.length > 0
}
