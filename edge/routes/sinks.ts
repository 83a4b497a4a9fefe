// The sinks' control plane: POST/GET/PATCH/DELETE /v1/sinks, POST /v1/sinks/{id}/dedupe and /run (a feed's run now).
import * as v from 'valibot'
import { Hono, type Context } from 'hono'
import { and, eq, inArray, isNull, sql, type SQL } from 'drizzle-orm'
import { BATCH_ID, intakeEntry, sinkPrefix } from '../../contract/bucket.ts'
import { isUpsertReason } from '../../contract/key-rule.ts'
import { REJECT_REASONS } from '../../contract/rejects.ts'
import { batches, sinks, warehouses } from '../../db/schema.ts'
import { NoSuchNamespace, NoSuchTable, type CreateTableRequest, type LoadedTable } from '../../iceberg/catalog/index.ts'
import { audit } from '../audit.ts'
import { requireKey } from '../auth.ts'
import { catalogFor, warehouseByName, type WarehouseRow } from '../catalogs.ts'
import { sinksEnabled } from '../../contract/switch.ts'
import { SINKS_OFF } from '../sinks-switch.ts'
import type { AppEnv } from '../env.ts'
import { ApiError } from '../errors.ts'
import { newKey, randomHex, sha256Hex } from '../keys.ts'
import { decodeCursor, encodeCursor, readRejects } from '../rejects.ts'
import { bucketClient } from '../s3.ts'
import { checkColumnTypes, checkKey, checkPartitioning, docsHint, POLICY } from '../sink-rules.ts'
import { sinkPage } from '../sink-page.ts'
import { selectSink, sinkView, type SinkRow } from '../sink-view.ts'
import { Column, createTable, previewMetadata, tableRequest } from '../table-create.ts'
import { jsonBody, query, text } from '../validate.ts'
import { exactAnswer } from '../exact-json.ts'
import { compileDevice } from '../devices/compile.ts'
import { DeviceRequire, DeviceStrip, Mapping } from '../devices/schemas.ts'
import { FilesFeed, SqlFeed, type Feed } from '../../contract/feeds.ts'
import { checkFilesFeed, checkSql, feedOf, FilesFeedPatch, SqlFeedPatch } from '../feeds.ts'
import type { DeviceSettings } from '../devices/settings.ts'
import { LimitsPatch, patchedLimits } from '../limits/settings.ts'
import { normalPrefix } from '../warehouse-roots.ts'

const int = (min: number, max: number) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max))
const Key = v.pipe(v.array(v.pipe(text(), v.minLength(1))), v.minLength(1), v.maxLength(8))

export const CreateSink = v.strictObject({
  // Not snk_…: a name must never read as an id in /v1/sinks/{id|name}.
  name: v.pipe(v.string(), v.regex(/^(?!snk_)[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/, 'a sink name is 1–63 chars of A-Z a-z 0-9 _ -, not starting with snk_')),
  table: v.pipe(v.string(), v.regex(/^[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*$/, 'give the table as <namespace>.<table>')),
  warehouse: text(),
  roll_seconds: v.optional(int(POLICY.rollSeconds.min, POLICY.rollSeconds.max), POLICY.rollSeconds.default),
  roll_bytes: v.optional(int(POLICY.rollBytes.min, POLICY.rollBytes.max), POLICY.rollBytes.default),
  inactivity_seconds: v.optional(int(POLICY.inactivitySeconds.min, POLICY.inactivitySeconds.max)),
  key: v.optional(Key),
  mapping: v.optional(v.nullable(Mapping)),
  device_require: v.optional(v.nullable(DeviceRequire)),
  device_strip: v.optional(v.nullable(DeviceStrip)),
  /** A scheduled SQL sink: the roller runs the query every every_seconds (no producer, no send key). */
  sql: v.optional(SqlFeed),
  /** A files-to-rows sink: one row per object under the prefix. */
  files: v.optional(FilesFeed),
  /** The table too, in the same request: created when it does not exist (as POST /v1/tables takes them). */
  columns: v.optional(v.pipe(v.array(Column), v.minLength(1))),
  partition: v.optional(v.array(v.string())),
  format_version: v.optional(v.picklist([2, 3])),
})

/** /v1/sinks/{sink_id}: a sink's id (snk_…) or its name; nothing else can name a sink. */
export const SINK_REF = v.pipe(v.string(), v.regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/))

/** GET /v1/sinks: a page of the project's sinks, from the cursor a page gave. */
export const ListSinksQuery = v.object({
  warehouse: v.optional(text()),
  include_deleted: v.optional(v.picklist(['true', 'false'])),
  // Exactly 1 to 1000 in the pattern itself, so the OpenAPI document says what is taken (schemathesis holds us to it).
  limit: v.optional(v.pipe(v.string(), v.regex(/^(?:1000|[1-9][0-9]{0,2})$/, 'limit: 1 to 1000'), v.transform(Number)), '100'),
  cursor: v.optional(v.pipe(v.string(), v.minLength(1))),
})

export const UpdateSink = v.strictObject({
  key: v.optional(v.nullable(Key)),
  roll_seconds: v.optional(int(POLICY.rollSeconds.min, POLICY.rollSeconds.max)),
  roll_bytes: v.optional(int(POLICY.rollBytes.min, POLICY.rollBytes.max)),
  inactivity_seconds: v.optional(v.nullable(int(POLICY.inactivitySeconds.min, POLICY.inactivitySeconds.max))),
  mapping: v.optional(v.nullable(Mapping)),
  device_require: v.optional(v.nullable(DeviceRequire)),
  device_strip: v.optional(v.nullable(DeviceStrip)),
  sql: v.optional(SqlFeedPatch),
  files: v.optional(FilesFeedPatch),
  /** Rate limits on the producer routes (edge/limits): null, or a member null, drops them. */
  limits: v.optional(LimitsPatch),
})

export const origin = (c: Context) => new URL(c.req.url).origin

export async function findSink(c: Context<AppEnv>, idOrName: string): Promise<SinkRow> {
  const db = await c.var.db()
  // Text that is neither an id nor a name (a NUL, say, which Postgres refuses) names no sink.
  const row = v.is(SINK_REF, idOrName) ? await selectSink(db, c.var.principal.projectId, idOrName) : undefined
  // Another project's sink is simply not found: nothing about it is told.
  if (!row) throw new ApiError(404, 'sink_not_found', `no sink ${idOrName} in this project`)
  return row
}

/** The sink's warehouse bucket, where its batches and rejects are. */
const sinkBucket = (c: Context<AppEnv>, row: SinkRow) => bucketClient(c.env, { bucket: row.bucket, endpoint: row.bucket_endpoint, region: row.bucket_region })

/** GET /v1/sinks/{id}/rejects */
export const RejectsQuery = v.object({
  reason: v.optional(v.picklist(REJECT_REASONS)),
  batch_id: v.optional(v.pipe(v.string(), v.regex(BATCH_ID, 'batch_id: 1–128 of A-Z a-z 0-9 . _ : -'))),
  cursor: v.optional(v.pipe(v.string(), v.minLength(1))),
  limit: v.optional(v.pipe(v.string(), v.regex(/^[1-9][0-9]{0,3}$/, 'limit: 1 to 1000'), v.transform(Number), v.maxValue(1000, 'limit: 1 to 1000')), '100'),
})

/** A page of a sink's rejects as GET /v1/sinks/{id}/rejects takes its query (the console's view reads the same). */
export const sinkRejects = (c: Context<AppEnv>, row: SinkRow, q: v.InferOutput<typeof RejectsQuery>, limit: number) =>
  readRejects(sinkBucket(c, row), row.id, { reason: q.reason, batchId: q.batch_id, cursor: q.cursor === undefined ? undefined : decodeCursor(q.cursor), limit })

/** The answer of GET /v1/sinks/{id}/rejects as JSON text, spliced (the MCP tool get_rejects answers it too). */
export async function rejectsText(c: Context<AppEnv>, ref: string, q: v.InferOutput<typeof RejectsQuery>): Promise<string> {
  const page = await sinkRejects(c, await findSink(c, ref), q, q.limit)
  const next = page.next ? JSON.stringify(encodeCursor(page.next)) : 'null'
  return `{"rejects":[${page.lines.join(',')}],"next_cursor":${next}}`
}

/** The answer of GET /v1/sinks: a page of the project's sinks (the MCP tool list_sinks answers it too). */
export async function sinkList(c: Context<AppEnv>, q: v.InferOutput<typeof ListSinksQuery>) {
  const page = await sinkPage(await c.var.db(), c.var.principal.projectId, {
    warehouse: q.warehouse,
    includeDeleted: q.include_deleted === 'true',
    cursor: q.cursor,
    limit: q.limit,
  })
  return { sinks: page.rows.map((r) => sinkView(r, origin(c))), next_cursor: page.next, ...switchedOff(c) }
}

/**
 * The table a sink create brings along (`columns`, `partition`, `format_version`), as it will be made:
 * its request and the metadata the sink's checks read. Null when the body names an existing table
 * (409 table_exists when it gives columns for one; 400 when partition or format_version come alone).
 */
async function plannedTable(
  c: Context<AppEnv>,
  w: WarehouseRow,
  body: v.InferOutput<typeof CreateSink>,
  name: string,
): Promise<(Pick<LoadedTable, 'metadata'> & { request: CreateTableRequest }) | null> {
  if (!body.columns) {
    if (body.partition !== undefined || body.format_version !== undefined)
      throw new ApiError(400, 'invalid_request', 'partition and format_version describe a table to create: give its columns too')
    return null
  }
  const [namespace] = body.table.split('.')
  const catalog = await catalogFor(c.env, await c.var.db(), w)
  const exists = await catalog.loadTable({ namespace: [namespace], name }).then(
    () => true,
    (err) => {
      if (err instanceof NoSuchTable || err instanceof NoSuchNamespace) return false
      throw err
    },
  )
  if (exists) throw new ApiError(409, 'table_exists', `${body.table} exists in ${w.name}: leave out columns to put a sink on it`)
  const request = tableRequest(name, { columns: body.columns, partition: body.partition ?? [], formatVersion: body.format_version ?? 2 })
  return { request, metadata: previewMetadata(request) }
}

/** While the switch is off, the control plane says so beside every sink it shows. */
export const switchedOff = (c: Context<AppEnv>) => (sinksEnabled(c.env) ? {} : { sinks_enabled: false, notice: SINKS_OFF })

/**
 * The sink's table. A missing table (or namespace) is the spec's 404 table_not_found with the
 * namespace's tables; any other catalog failure goes to onError like everywhere else.
 */
export async function loadSinkTable(c: Context<AppEnv>, w: WarehouseRow, table: string): Promise<LoadedTable> {
  const [namespace, name] = table.split('.')
  const catalog = await catalogFor(c.env, await c.var.db(), w)
  try {
    return await catalog.loadTable({ namespace: [namespace], name })
  } catch (err) {
    if (!(err instanceof NoSuchTable || err instanceof NoSuchNamespace)) throw err
    const tables = await catalog.listTables([namespace]).then(
      (ids) => ids.map((id) => `${namespace}.${id.name}`),
      () => [],
    )
    throw new ApiError(404, 'table_not_found', `${table} does not exist in ${w.name}; create the table first (lhbox table create)`, { tables })
  }
}

type DeviceFields = Pick<v.InferOutput<typeof UpdateSink>, 'mapping' | 'device_require' | 'device_strip'>

/** The device settings after a change (a field left out keeps its value); null when none is set. Checked against the table. */
function deviceSettings(current: DeviceSettings | null, change: DeviceFields, meta: LoadedTable['metadata']): DeviceSettings | null {
  const next = {
    mapping: change.mapping !== undefined ? change.mapping : (current?.mapping ?? null),
    require: change.device_require !== undefined ? change.device_require : (current?.require ?? null),
    strip: change.device_strip !== undefined ? change.device_strip : (current?.strip ?? null),
  }
  const compiled = compileDevice(next, meta)
  return compiled ? { ...next, compiled } : null
}

/** A PATCH of a feed: the same kind as the sink's, merged over it, checked again. */
async function changedFeed(
  c: Context<AppEnv>,
  current: Feed | null,
  body: Pick<v.InferOutput<typeof UpdateSink>, 'sql' | 'files'>,
  tableMeta: () => Promise<LoadedTable['metadata']>,
  root: () => Promise<string>,
): Promise<Feed> {
  const kind = body.sql ? 'sql' : 'files'
  if (!current || current.kind !== kind || (body.sql && body.files))
    throw new ApiError(400, 'invalid_request', `this sink ${current ? `is a ${current.kind} sink` : 'is a send sink'}; a sink's kind is set when it is created`)
  if (current.kind === 'sql') {
    const next = { ...current, ...body.sql }
    if (body.sql?.query !== undefined) await checkSql(c.env, next.query)
    return next
  }
  const next = { ...current, ...body.files }
  checkFilesFeed(next, await tableMeta(), await root())
  return next
}

const touchesDevice = (b: DeviceFields) => b.mapping !== undefined || b.device_require !== undefined || b.device_strip !== undefined

const isUniqueViolation = (err: unknown) => (err as { code?: string })?.code === '23505' || (err as { cause?: { code?: string } })?.cause?.code === '23505'

export const sinkRoutes = new Hono<AppEnv>()
  .post('/v1/sinks', requireKey('write'), async (c) => {
    // Exact: a mapping's constants keep their digits (the rest of the body reads as JSON.parse reads it).
    const body = await jsonBody(c, CreateSink, { exact: true })
    const db = await c.var.db()
    const principal = c.var.principal
    const w = await warehouseByName(db, principal.projectId, body.warehouse)
    const [namespace, tableName] = body.table.split('.')
    const planned = await plannedTable(c, w, body, tableName)
    const table = planned ?? (await loadSinkTable(c, w, body.table))
    const [existing] = await db
      .select({ id: sinks.id, name: sinks.name })
      .from(sinks)
      .where(and(eq(sinks.warehouseId, w.id), eq(sinks.tableNamespace, namespace), eq(sinks.tableName, tableName), sql`${sinks.state} <> 'deleted'`))
    if (existing)
      throw new ApiError(409, 'sink_exists', `${body.table} already has a sink (${existing.name}); a table has one sink at most`, { sink_id: existing.id })
    checkPartitioning(table.metadata)
    checkColumnTypes(table.metadata)
    if (body.key) checkKey(table.metadata, body.key)
    const feed = await feedOf(c.env, body, table.metadata, normalPrefix(w.prefix))
    const device = deviceSettings(null, body, table.metadata)

    if (planned) {
      // Every check above passed on the table as it will be: only now is it made (a name taken is
      // found first, so that a sink that cannot be inserted leaves no table behind).
      const [named] = await db
        .select({ id: sinks.id })
        .from(sinks)
        .where(and(eq(sinks.projectId, principal.projectId), eq(sinks.name, body.name), sql`${sinks.state} <> 'deleted'`))
      if (named) throw new ApiError(409, 'sink_name_taken', `a sink named ${body.name} exists in this project`)
      await createTable(await catalogFor(c.env, db, w), namespace, planned.request, { db, w })
    }
    const id = `snk_${randomHex(8)}`
    const { key: sendKey } = newKey('send')
    try {
      await db.insert(sinks).values({
        id,
        projectId: principal.projectId,
        warehouseId: w.id,
        name: body.name,
        tableNamespace: namespace,
        tableName,
        sendKeySha256: await sha256Hex(sendKey),
        rollSeconds: body.roll_seconds,
        rollBytes: body.roll_bytes,
        inactivitySeconds: body.inactivity_seconds ?? null,
        keyColumns: body.key ?? null,
        device,
        feed,
        // A feed's first run is at the next tick; then on its slots.
        feedNextRunAt: feed ? sql`now()` : null,
      })
    } catch (err) {
      if (!isUniqueViolation(err)) throw err
      const byName = String((err as { constraint?: string }).constraint ?? (err as { cause?: { constraint?: string } }).cause?.constraint).includes('name')
      if (byName) throw new ApiError(409, 'sink_name_taken', `a sink named ${body.name} exists in this project`)
      throw new ApiError(409, 'sink_exists', `${body.table} already has a sink; a table has one sink at most`)
    }
    await audit(db, {
      projectId: principal.projectId,
      actor: principal.keyId,
      action: 'sink.create',
      subject: id,
      details: { name: body.name, warehouse: w.name, table: body.table },
    })
    // Just inserted in this project: it is there.
    const row = (await selectSink(db, principal.projectId, id)) as SinkRow
    const hint = docsHint(table.metadata, `${w.name}.${body.table}`)
    // The send key is answered once; only its SHA-256 is kept. No IAM write, no commit. A feed sink has
    // no producer: its key is never answered, so nothing can send to it.
    return exactAnswer(c, { ...sinkView(row, origin(c)), ...(feed ? {} : { send_key: sendKey }), iam_writes: [], ...(hint ? { docs_hint: hint } : {}) }, 201)
  })
  .get('/v1/sinks', requireKey('read'), async (c) => {
    return exactAnswer(c, await sinkList(c, query(c, ListSinksQuery)), 200)
  })
  .get('/v1/sinks/:sink', requireKey('read'), async (c) =>
    exactAnswer(c, { ...sinkView(await findSink(c, c.req.param('sink')), origin(c)), ...switchedOff(c) }, 200),
  )
  .patch('/v1/sinks/:sink', requireKey('write'), async (c) => {
    const body = await jsonBody(c, UpdateSink, { exact: true })
    const row = await findSink(c, c.req.param('sink'))
    if (row.state === 'deleted') throw new ApiError(404, 'sink_not_found', `sink ${row.id} is deleted`)
    const db = await c.var.db()
    const set: Partial<Omit<typeof sinks.$inferInsert, 'feedNextRunAt'>> & { feedNextRunAt?: SQL } = {}
    if (body.roll_seconds !== undefined) set.rollSeconds = body.roll_seconds
    if (body.roll_bytes !== undefined) set.rollBytes = body.roll_bytes
    if (body.inactivity_seconds !== undefined) set.inactivitySeconds = body.inactivity_seconds
    if (body.limits !== undefined) {
      if (row.feed) throw new ApiError(400, 'invalid_request', 'a feed sink has no producer: rate limits are for send sinks')
      set.limits = patchedLimits(row.limits, body.limits)
    }
    let meta: LoadedTable['metadata'] | undefined
    const warehouse = async () => (await db.select().from(warehouses).where(eq(warehouses.id, row.warehouse_id)))[0]
    const tableMeta = async () => {
      meta ??= (await loadSinkTable(c, await warehouse(), `${row.table_namespace}.${row.table_name}`)).metadata
      return meta
    }
    if (touchesDevice(body)) {
      if (row.feed) throw new ApiError(400, 'invalid_request', 'a feed sink has no producer: mapping and device settings are for send sinks')
      set.device = deviceSettings(row.device, body, await tableMeta())
    }
    if (body.sql || body.files) {
      const feed = await changedFeed(c, row.feed, body, tableMeta, async () => normalPrefix((await warehouse()).prefix))
      set.feed = feed
      // A new schedule runs at the next tick, then on its own slots; a new query alone keeps the schedule.
      if (feed.every_seconds !== row.feed.every_seconds) set.feedNextRunAt = sql`now()`
    }
    if (body.key !== undefined) {
      if (body.key) checkKey(await tableMeta(), body.key)
      set.keyColumns = body.key
      // A new key (or none) is what a sink disabled by its key waits for.
      if (row.state === 'disabled' && isUpsertReason(row.disabled_reason)) {
        set.state = 'active'
        set.disabledReason = null
      }
    }
    if (Object.keys(set).length > 0) await db.update(sinks).set(set).where(eq(sinks.id, row.id))
    // This isolate's (this process's) next send reads the new limits with its statement.
    if (body.limits !== undefined) c.var.limiter.forget(row.id)
    return exactAnswer(c, sinkView(await findSink(c, row.id), origin(c)), 200)
  })
  // The rows the roller rejected, as it wrote them, the producer's row byte for byte: the body is
  // spliced, never a JSON.parse and stringify of the rows (lossless numbers).
  .get('/v1/sinks/:sink/rejects', requireKey('read'), async (c) => {
    const q = query(c, RejectsQuery)
    return c.body(await rejectsText(c, c.req.param('sink'), q), 200, { 'content-type': 'application/json' })
  })
  .delete('/v1/sinks/:sink', requireKey('write'), async (c) => {
    const row = await findSink(c, c.req.param('sink'))
    if (row.state === 'deleted') throw new ApiError(404, 'sink_not_found', `sink ${row.id} is already deleted`)
    const db = await c.var.db()
    // The key stops working with this update: the send route ignores deleted sinks.
    await db.update(sinks).set({ state: 'deleted', deletedAt: sql`now()`, leaseOwner: null, leaseExpiresAt: null }).where(eq(sinks.id, row.id))
    const discarded = await db
      .update(batches)
      .set({ state: 'discarded' })
      .where(and(eq(batches.sinkId, row.id), inArray(batches.state, ['receiving', 'pending'])))
      .returning({ batchId: batches.batchId })
    const s3 = sinkBucket(c, row)
    const keys: string[] = []
    for await (const o of s3.list(sinkPrefix(row.id))) if (intakeEntry(row.id, o.key)?.kind === 'batch') keys.push(o.key)
    await s3.deleteMany(keys)
    await audit(db, {
      projectId: row.project_id,
      actor: c.var.principal.keyId,
      action: 'sink.delete',
      subject: row.id,
      details: { pending_batches_discarded: discarded.length, objects_deleted: keys.length },
    })
    return c.json({ id: row.id, state: 'deleted', pending_batches_discarded: discarded.length }, 202)
  })
  .post('/v1/sinks/:sink/run', requireKey('write'), async (c) => {
    const row = await findSink(c, c.req.param('sink'))
    if (row.state === 'deleted') throw new ApiError(404, 'sink_not_found', `sink ${row.id} is deleted`)
    if (!row.feed) throw new ApiError(409, 'not_a_feed', `sink ${row.name} is a send sink; only a SQL or files sink runs`)
    if (row.state !== 'active')
      throw new ApiError(409, 'sink_not_active', `sink ${row.name} is ${row.state}${row.disabled_reason ? ` (${row.disabled_reason})` : ''}`)
    const db = await c.var.db()
    // A run already asked for and not yet done is answered as it is.
    await db
      .update(sinks)
      .set({ feedRunRequestedAt: sql`now()` })
      .where(and(eq(sinks.id, row.id), isNull(sinks.feedRunRequestedAt)))
    const view = sinkView(await findSink(c, row.id), origin(c))
    return c.json({ run: { requested_at: view.run_requested_at }, [row.feed.kind]: view[row.feed.kind as 'sql' | 'files'] }, 202)
  })
  .post('/v1/sinks/:sink/dedupe', requireKey('write'), async (c) => {
    const row = await findSink(c, c.req.param('sink'))
    if (row.state === 'deleted') throw new ApiError(404, 'sink_not_found', `sink ${row.id} is deleted`)
    if (row.state !== 'active')
      throw new ApiError(409, 'sink_not_active', `sink ${row.name} is ${row.state}${row.disabled_reason ? ` (${row.disabled_reason})` : ''}`)
    if (!row.key_columns) throw new ApiError(409, 'sink_not_keyed', `sink ${row.name} has no key; set one first (lhbox sink update ${row.name} --key col)`)
    const answer = (r: SinkRow) => c.json({ dedupe: { requested_at: r.dedupe_requested_at, last: r.dedupe_last } }, 202)
    if (row.dedupe_requested_at) return answer(row)
    // Only a dedupe that ran starts the hour; a refused one may be asked again at once.
    const lastAt = row.dedupe_last?.at && !row.dedupe_last.refused ? Date.parse(row.dedupe_last.at) : 0
    const wait = Math.ceil((lastAt + 3600_000 - Date.now()) / 1000)
    if (wait > 0)
      throw new ApiError(
        409,
        'dedupe_too_soon',
        `the last dedupe ran at ${row.dedupe_last.at}; the next may run an hour after it`,
        { retry_after_seconds: wait },
        { 'Retry-After': String(wait) },
      )
    const db = await c.var.db()
    await db
      .update(sinks)
      .set({ dedupeRequestedAt: sql`now()` })
      .where(and(eq(sinks.id, row.id), isNull(sinks.dedupeRequestedAt)))
    // Answered as GET shows it (microseconds), so a repeat answers the very same string.
    return answer(await findSink(c, row.id))
  })
