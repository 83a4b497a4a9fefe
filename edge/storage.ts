// The storage meter's figures as the API answers them: per warehouse (GET /v1/warehouses) and for the
// project (GET /v1/usage). The roller measures (roller/measure.ts) and reports on /internal.
import type { StorageFigure } from '../contract/internal.ts'
import type { WarehouseRow } from './catalogs.ts'

/** A warehouse's last figure (null fields before its first) and a figure asked for, not yet made. */
export function storageView(w: WarehouseRow) {
  const figure = (w.storage as StorageFigure | null) ?? { bytes: null, intake_bytes: null, rejects_bytes: null, objects: null, tables: {}, measured_at: null }
  // rejects_bytes: null in a figure measured before rollers counted it apart.
  return { ...figure, rejects_bytes: figure.rejects_bytes ?? null, requested_at: w.measureRequestedAt ? new Date(w.measureRequestedAt).toISOString() : null }
}

/**
 * The project's storage: every warehouse's figure summed; `tables` keyed `<ns>.<table>` (summed where
 * two warehouses hold the same name; `warehouses` has each one apart); measured_at is the oldest figure's (a
 * warehouse not measured yet shows null in `warehouses`).
 */
export function projectStorage(rows: WarehouseRow[]) {
  const warehouses: Record<string, ReturnType<typeof storageView>> = {}
  const tables: Record<string, number> = {}
  let bytes = 0
  let intake = 0
  let rejects = 0
  let measuredAt: string | null = null
  for (const w of rows) {
    const view = storageView(w)
    warehouses[w.name] = view
    if (view.measured_at === null) continue
    bytes += view.bytes ?? 0
    intake += view.intake_bytes ?? 0
    rejects += view.rejects_bytes ?? 0
    for (const [t, n] of Object.entries(view.tables)) tables[t] = (tables[t] ?? 0) + n
    if (measuredAt === null || view.measured_at < measuredAt) measuredAt = view.measured_at
  }
  return { bytes, intake_bytes: intake, rejects_bytes: rejects, tables, measured_at: measuredAt, warehouses }
}
