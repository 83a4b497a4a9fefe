// The console's own addresses: routes after the '#', so a key never travels in a URL and a page can be
// bookmarked; the client fetches /console/f/<route> for each (console/route.tsx).

export const sinkHref = (sinkId: string) => `#/sinks/${sinkId}`

/** The overview; with a cursor, the page of sinks it starts (GET /v1/sinks's next_cursor). */
export const overviewHref = (cursor?: string) => (cursor ? `#/?${new URLSearchParams({ cursor })}` : '#/')

/** A table as <warehouse>.<namespace>.<table>, the API's own path form. */
export const tableHref = (warehouse: string, table: string) => `#/tables/${encodeURIComponent(`${warehouse}.${table}`)}`

export function rejectsHref(sinkId: string, q: { reason?: string; batch_id?: string; cursor?: string } = {}): string {
  const params = new URLSearchParams(Object.entries(q).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== ''))
  const s = params.toString()
  return `#/sinks/${sinkId}/rejects${s ? `?${s}` : ''}`
}
