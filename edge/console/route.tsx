// The operator console at /console: one page (the shell) whose client script keeps the API key in
// sessionStorage and fetches each view as server-rendered HTML from /console/f/… with that key as
// Authorization. The views follow the API's rules: the key's level and project, the error envelope.
import { Hono, type Context } from 'hono'
import { createMiddleware } from 'hono/factory'
import type { JSX } from 'hono/jsx/jsx-runtime'
import { warehouses } from '../../db/schema.ts'
import { sampleRows } from '../../iceberg/read/sample.ts'
import { eq } from 'drizzle-orm'
import { requireKey } from '../auth.ts'
import type { AppEnv } from '../env.ts'
import { levelAtLeast } from '../keys.ts'
import { duckdbLines } from '../engine-recipes.ts'
import { encodeCursor } from '../rejects.ts'
import { findSink, ListSinksQuery, origin, RejectsQuery, sinkRejects } from '../routes/sinks.ts'
import { catalogOf, parseTablePath } from '../routes/tables.ts'
import { usageView } from '../routes/usage.ts'
import { sinkPage } from '../sink-page.ts'
import { sinkView } from '../sink-view.ts'
import { storageView } from '../storage.ts'
import { query } from '../validate.ts'
import { CLIENT_JS } from './client.ts'
import { binLabels, ingestByDay, lagBins, noRolls, rollBins, rollHistory } from './data.ts'
import { Overview } from './pages/overview.tsx'
import { RejectsPage } from './pages/rejects.tsx'
import { SinkPage } from './pages/sink.tsx'
import { TablePage } from './pages/table.tsx'
import { UsagePage } from './pages/usage.tsx'
import { Shell } from './shell.tsx'
import { CONSOLE_CSS } from './style.ts'

// Nothing but this origin's script, styles and API; no inline script or style, no framing, no forms
// posted by the browser (the client script sends them with fetch).
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

const headers = createMiddleware<AppEnv>(async (c, next) => {
  await next()
  c.header('Content-Security-Policy', CSP)
  c.header('X-Content-Type-Options', 'nosniff')
  c.header('Referrer-Policy', 'no-referrer')
  c.header('X-Frame-Options', 'DENY')
  if (!c.res.headers.has('Cache-Control')) c.header('Cache-Control', 'no-store')
})

/** A view: HTML for the client to place, never cached (it is the key's to see). */
const view = (c: Context<AppEnv>, page: JSX.Element) => {
  const { level, projectId } = c.var.principal
  c.header('X-Lhbox-Principal', `${level} key, project ${projectId}`)
  return c.html(page)
}

const REJECTS_PER_PAGE = 50
// A project of ten thousand sinks shows them a page at a time, as GET /v1/sinks does.
const SINKS_PER_PAGE = 100
const ROLLS_SHOWN = 50
const SAMPLE_ROWS = 10

export const consoleRoutes = new Hono<AppEnv>()
  .use('/console', headers)
  .use('/console/*', headers)
  .get('/console', (c) => c.html(<Shell />))
  .get('/console/console.js', (c) => c.body(CLIENT_JS, 200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache' }))
  .get('/console/console.css', (c) => c.body(CONSOLE_CSS, 200, { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'no-cache' }))
  .get('/console/f/overview', requireKey('read'), async (c) => {
    const { cursor } = query(c, ListSinksQuery)
    const db = await c.var.db()
    const projectId = c.var.principal.projectId
    const [page, whs] = await Promise.all([
      sinkPage(db, projectId, { includeDeleted: false, cursor, limit: SINKS_PER_PAGE }),
      db.select().from(warehouses).where(eq(warehouses.projectId, projectId)).orderBy(warehouses.name),
    ])
    // The day's rolls of this page's sinks only.
    const ids = page.rows.map((r) => r.id)
    const bins = await rollBins(db, projectId, ids)
    const lines = whs.map((w) => ({
      name: w.name,
      bucket: w.bucket,
      catalog: (w.catalog as { type: string }).type,
      maintenance: w.maintenance,
      storage: storageView(w),
    }))
    return view(
      c,
      <Overview
        warehouses={lines}
        sinks={page.rows.map((r) => sinkView(r, origin(c)))}
        bins={bins}
        next={page.next}
        paged={cursor !== undefined}
        now={Date.now()}
      />,
    )
  })
  .get('/console/f/usage', requireKey('read'), async (c) => {
    const db = await c.var.db()
    const [usage, days] = await Promise.all([usageView(db, c.var.principal.projectId), ingestByDay(db, c.var.principal.projectId, 7)])
    return view(c, <UsagePage usage={usage} days={days} now={Date.now()} />)
  })
  .get('/console/f/sinks/:sink', requireKey('read'), async (c) => {
    const row = await findSink(c, c.req.param('sink'))
    const db = await c.var.db()
    const projectId = c.var.principal.projectId
    const [bins, lag, history] = await Promise.all([rollBins(db, projectId, [row.id]), lagBins(db, row.id), rollHistory(db, projectId, row.id, ROLLS_SHOWN)])
    const now = Date.now()
    const canWrite = levelAtLeast(c.var.principal.level, 'write') && row.state !== 'deleted'
    return view(
      c,
      <SinkPage
        sink={sinkView(row, origin(c))}
        bins={bins.get(row.id) ?? noRolls()}
        lag={lag}
        history={history}
        labels={binLabels(now)}
        canWrite={canWrite}
        now={now}
      />,
    )
  })
  .get('/console/f/sinks/:sink/rejects', requireKey('read'), async (c) => {
    const q = query(c, RejectsQuery)
    const row = await findSink(c, c.req.param('sink'))
    const page = await sinkRejects(c, row, q, Math.min(q.limit, REJECTS_PER_PAGE))
    const filter = { reason: q.reason, batch_id: q.batch_id }
    return view(
      c,
      <RejectsPage
        sink={sinkView(row, origin(c))}
        lines={page.lines}
        filter={filter}
        next={page.next ? encodeCursor(page.next) : null}
        paged={q.cursor !== undefined}
      />,
    )
  })
  .get('/console/f/tables/:path', requireKey('read'), async (c) => {
    const { warehouse, namespace, name } = parseTablePath(c.req.param('path'))
    const { catalog, w } = await catalogOf(c, warehouse)
    const table = await catalog.loadTable({ namespace, name })
    // A file the reader cannot read (a codec it lacks, say) costs the sample, not the page.
    const sample = await sampleRows(table, SAMPLE_ROWS).catch((err: Error) => ({ file: null, rows: [], error: err.message }))
    // Only a SQL-catalog warehouse is served at /iceberg.
    const duckdb = (w.catalog as { type: string }).type === 'sql' ? duckdbLines(origin(c), w, { namespace, name }) : null
    return view(c, <TablePage warehouse={warehouse} table={table} sample={sample} duckdb={duckdb} />)
  })
