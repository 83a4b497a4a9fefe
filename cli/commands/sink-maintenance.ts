// The maintenance line of `lhbox sink get`: the roller's last sweep of the sink's table and the next.

interface Sweep {
  at: string
  next_at: string
  snapshots_expired: number
  files_compacted: number
  manifests_rewritten: number
  files_deleted: number
  seconds: number
  error?: string
}

export interface MaintenanceView {
  /** Absent from an edge older than the sweep reports: no line then. */
  maintenance?: { last: Sweep | null; next_at: string | null }
}

export function maintenanceLines(s: MaintenanceView): string[] {
  if (!s.maintenance) return []
  const { last, next_at } = s.maintenance
  const work = (w: Sweep) =>
    `${w.snapshots_expired} snapshots expired, ${w.files_compacted} files compacted, ${w.manifests_rewritten} manifests rewritten, ${w.files_deleted} files deleted`
  const done = last
    ? last.error
      ? `last ${last.at} failed after ${last.seconds.toFixed(1)} s (${last.error}); before it: ${work(last)}`
      : `last ${last.at}: ${work(last)} in ${last.seconds.toFixed(1)} s`
    : 'none yet'
  // No next: before the first sweep, a deleted sink, or a warehouse whose catalog maintains its tables.
  return [`sweeps     ${done}${next_at ? `; next due ${next_at}` : last ? '; none due' : ''}`]
}
