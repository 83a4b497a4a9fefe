// lhbox sink create|update|dedupe|run|list|get|rejects|delete|send|device-url|rotate-key|retire-previous-key
//
// The device flags (--preset, --mapping-file, --device-require, --device-strip, …) and `device-url`
// live in sink-devices.ts; key rotation and the key file's creation in sink-keys.ts; the feed flags (--sql, --files-prefix, --pattern, --every) and `run` in sink-feeds.ts; createBody and updateBody below are the flags → request-body translation.
//
// The send key is an uploader's secret: `sink create` refuses to run without --save FILE or --show-key
// (before any API call). --save creates FILE itself, exclusively and with mode 0600, before the API is
// called, and never overwrites an existing file: that file may hold another sink's key, whose only copy
// it is. Pick a new path, or remove the old file yourself. If the API call fails, the empty file is removed.
import { closeSync, unlinkSync, writeSync } from 'node:fs'
import { api, CliError, type Connection } from '../http.ts'
import { json } from '../output.ts'
import { seconds, waitSettings } from '../wait.ts'
import { SEND_USAGE, sendBatch, type KeyFile } from './send.ts'
import { FEED_FLAGS, FEED_USAGE, feedCreateFields, feedLines, feedUpdateFields, isFeed, needsKind, runNow, type FeedView } from './sink-feeds.ts'
import { LIST_USAGE, list } from './sink-list.ts'
import { REJECTS_FLAGS, REJECTS_USAGE, rejects } from './sink-rejects.ts'
import { DEVICE_FLAGS, DEVICE_USAGE, type DeviceView, deviceFields, deviceLines, deviceUrl, mappingHint } from './sink-devices.ts'
import { maintenanceLines, type MaintenanceView } from './sink-maintenance.ts'
import { parseColumn } from './table.ts'
import { KEY_FLAGS, KEY_USAGE, keyDestination, openKeyFile, retirePreviousKey, rotateKey } from './sink-keys.ts'
import { LIMIT_FLAGS, LIMIT_USAGE, limitFields, limitLines, type LimitsView } from './sink-limits.ts'

export const SINK_FLAGS = {
  table: { type: 'string' },
  name: { type: 'string' },
  'roll-seconds': { type: 'string' },
  'roll-bytes': { type: 'string' },
  'inactivity-seconds': { type: 'string' },
  'no-inactivity': { type: 'boolean' },
  key: { type: 'string' },
  'no-key': { type: 'boolean' },
  save: { type: 'string' },
  'show-key': { type: 'boolean' },
  wait: { type: 'boolean' },
  all: { type: 'boolean' },
  'discard-pending': { type: 'boolean' },
  'send-key-file': { type: 'string' },
  'send-key': { type: 'string' },
  'batch-id': { type: 'string' },
  ...DEVICE_FLAGS,
  ...FEED_FLAGS,
  ...REJECTS_FLAGS,
  ...KEY_FLAGS,
  ...LIMIT_FLAGS,
} as const

type Flags = Record<string, string | boolean | string[] | undefined>

interface SinkView extends DeviceView, FeedView, MaintenanceView, LimitsView {
  id: string
  name: string
  warehouse: string
  table: string
  state: 'active' | 'disabled' | 'deleted'
  disabled_reason: string | null
  roll: { roll_seconds: number; roll_bytes: number; inactivity_seconds: number | null }
  key: string[] | null
  ingest_url: string
  lag: { batches_waiting: number; bytes_waiting: number; oldest_waiting_at: string | null; seconds_behind: number }
  received: { batches: number; rows: number; bytes: number; last_at: string | null; rate_limited?: number }
  last_roll: { at: string; batches: number; rows: number; rejected_rows: number; snapshot_id: string | null; seconds: number } | null
  rejects: { rows_total: number; batches_with_rejects: number; last_at: string | null; prefix: string }
  dedupe: { requested_at: string | null; last: Record<string, unknown> | null }
  created_at: string
  deleted_at: string | null
}

const USAGE = {
  create: `lhbox sink create <warehouse> --table <ns>.<table> --name NAME [--roll-seconds N] [--roll-bytes N] [--inactivity-seconds N] [--key col[,col]] [--column name:type[:required] ... [--partition day(ts)] [--format-version 2|3]: the table too] ${DEVICE_USAGE.create} ${FEED_USAGE.create} (--save FILE | --show-key; not for a feed sink)`,
  update: `lhbox sink update <sink> [--key col[,col] | --no-key] [--roll-seconds N] [--roll-bytes N] [--inactivity-seconds N | --no-inactivity] ${LIMIT_USAGE} ${DEVICE_USAGE.update} ${FEED_USAGE.update}`,
  dedupe: 'lhbox sink dedupe <sink> [--wait]',
  run: FEED_USAGE.run,
  list: LIST_USAGE,
  get: 'lhbox sink get <sink> [--json]',
  rejects: REJECTS_USAGE,
  delete: 'lhbox sink delete <sink> [--discard-pending]',
  rotateKey: KEY_USAGE.rotate,
  retirePreviousKey: KEY_USAGE.retire,
}
const ALL_USAGE = `lhbox sink create | update | dedupe | run | list | get | rejects | delete | send | device-url | rotate-key | retire-previous-key\n  ${[...Object.values(USAGE), SEND_USAGE, DEVICE_USAGE.deviceUrl].join('\n  ')}\n  (${DEVICE_USAGE.notes})`

// --- small helpers -------------------------------------------------------------------------------

function integer(flags: Flags, name: string): number | undefined {
  const raw = flags[name]
  if (raw === undefined) return undefined
  if (!/^\d+$/.test(String(raw))) throw new CliError('usage', `--${name} ${raw}: give a whole number`)
  return Number(raw)
}

function keyColumns(flags: Flags): string[] | undefined {
  if (flags.key === undefined) return undefined
  const cols = String(flags.key)
    .split(',')
    .map((c) => c.trim())
  if (cols.some((c) => !c)) throw new CliError('usage', `--key ${flags.key}: give column names separated by commas`)
  return cols
}

const sinkPath = (ref: string) => `/v1/sinks/${encodeURIComponent(ref)}`

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let v = n
  let u = -1
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024
    u++
  }
  return `${v.toFixed(v < 10 ? 1 : 0).replace(/\.0$/, '')} ${units[u]}`
}

const plural = (n: number, word: string, many = `${word}s`) => `${n} ${n === 1 ? word : many}`
const batches = (n: number) => plural(n, 'batch', 'batches')

function policy(r: SinkView['roll']): string {
  return `roll every ${r.roll_seconds} s or ${bytes(r.roll_bytes)}, whichever first${r.inactivity_seconds ? `, or after ${r.inactivity_seconds} s quiet` : ''}`
}

function compact(value: Record<string, unknown>): string {
  return Object.entries(value)
    .map(([k, v]) => `${k}=${typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v)}`)
    .join(', ')
}

/** The readable summary of GET /v1/sinks/{id}. */
function showSink(s: SinkView): string {
  const state = s.state === 'disabled' && s.disabled_reason ? `disabled (${s.disabled_reason})` : s.state
  const lag = s.lag.batches_waiting
    ? `${batches(s.lag.batches_waiting)} (${bytes(s.lag.bytes_waiting)}) waiting, oldest ${s.lag.oldest_waiting_at} (${s.lag.seconds_behind} s behind)`
    : 'nothing waiting'
  const received = s.received.batches
    ? `${batches(s.received.batches)}, ${plural(s.received.rows, 'row')}, ${bytes(s.received.bytes)}; last at ${s.received.last_at}`
    : 'nothing yet'
  const r = s.last_roll
  const lastRoll = r
    ? `${r.at}: ${batches(r.batches)}, ${plural(r.rows, 'row')}, ${r.rejected_rows} rejected, snapshot ${r.snapshot_id ?? '(none)'}, ${r.seconds} s`
    : 'none yet'
  const rejects = `${plural(s.rejects.rows_total, 'row')} in ${batches(s.rejects.batches_with_rejects)}${s.rejects.last_at ? `, last at ${s.rejects.last_at}` : ''}; ${s.rejects.prefix}*.ndjson`
  const dedupe = [
    s.dedupe.requested_at ? `requested at ${s.dedupe.requested_at}, waiting for the roller` : null,
    s.dedupe.last ? `last: ${compact(s.dedupe.last)}` : null,
  ]
    .filter(Boolean)
    .join('; ')
  const lines = [
    `${s.name} (${s.id})  ${state}`,
    `table      ${s.warehouse}.${s.table}`,
    `key        ${s.key ? s.key.join(', ') + ' (one row per key; the latest wins)' : '(none: rows are appended)'}`,
    `policy     ${policy(s.roll)}`,
    `ingest     ${s.ingest_url}`,
    ...deviceLines(s),
    ...limitLines(s),
    `lag        ${lag}`,
    `received   ${received}`,
    `last roll  ${lastRoll}`,
    `rejects    ${rejects}`,
    ...(dedupe ? [`dedupe     ${dedupe}`] : []),
    ...maintenanceLines(s),
    ...feedLines(s),
    `created    ${s.created_at}${s.deleted_at ? `; deleted ${s.deleted_at}` : ''}`,
  ]
  return lines.join('\n')
}

function docsHint(hint: unknown): string[] {
  const h = hint as { message?: string; command?: string } | undefined
  if (!h) return []
  return ['', h.message ?? 'Describe the table and its columns.', `  ${h.command ?? 'lhbox table document'}`]
}

// --- create ----------------------------------------------------------------------------------------

/** POST /v1/sinks's body from the flags (undefined fields are left out of the JSON). */
export function createBody(warehouse: string, flags: Flags, read?: (path: string) => string): Record<string, unknown> {
  return {
    name: String(flags.name),
    table: String(flags.table),
    warehouse,
    roll_seconds: integer(flags, 'roll-seconds'),
    roll_bytes: integer(flags, 'roll-bytes'),
    inactivity_seconds: integer(flags, 'inactivity-seconds'),
    key: keyColumns(flags),
    ...deviceFields(flags, 'create', read),
    ...feedCreateFields(flags),
    ...tableFields(flags),
  }
}

/** --column (and --partition, --format-version): the table is created with the sink, in the same request. */
function tableFields(flags: Flags): Record<string, unknown> {
  const columns = ((flags.column as string[] | undefined) ?? []).map(parseColumn)
  if (columns.length === 0) return {}
  const version = flags['format-version']
  if (version !== undefined && version !== '2' && version !== '3') throw new CliError('usage', `--format-version ${version}: 2 or 3`)
  return {
    columns,
    ...(flags.partition ? { partition: flags.partition } : {}),
    ...(version !== undefined ? { format_version: Number(version) } : {}),
  }
}

async function create(conn: () => Connection, args: string[], flags: Flags, err: (s: string) => void): Promise<string> {
  const [warehouse] = args
  if (!warehouse || args.length > 1 || !flags.table || !flags.name) throw new CliError('usage', USAGE.create)
  if (isFeed(flags)) return createFeed(conn, warehouse, flags)
  const save = keyDestination(flags, USAGE.create, 'sink create')
  const body = createBody(warehouse, flags)
  const fd = save !== undefined ? openKeyFile(save) : undefined
  let created: SinkView & { send_key: string; docs_hint?: unknown; iam_writes: unknown[] }
  try {
    created = await api(conn(), 'POST', '/v1/sinks', body)
  } catch (e) {
    if (fd !== undefined) {
      closeSync(fd)
      unlinkSync(save!)
    }
    throw mappingHint(e, flags)
  }
  const head = `created sink ${created.name} (${created.id}) on ${created.warehouse}.${created.table}`
  if (fd !== undefined) {
    const file: KeyFile = { sink_id: created.id, name: created.name, send_key: created.send_key, ingest_url: created.ingest_url }
    try {
      writeSync(fd, JSON.stringify(file, null, 2) + '\n')
      closeSync(fd)
    } catch (e) {
      // The key exists nowhere else: say so, without printing it.
      err(`error: the send key could not be written to ${save}: ${(e as Error).message}`)
      throw new CliError('save_failed', `the sink was created but its key is lost; delete it (lhbox sink delete ${created.id}) and create it again`)
    }
    const { send_key: _secret, ...shown } = created
    if (flags.json) return json(shown)
    return [
      head,
      `ingest_url ${created.ingest_url}`,
      `send key   saved to ${save} (mode 0600); send with: lhbox sink send ${created.name} batch.json --send-key-file ${save}`,
      ...docsHint(created.docs_hint),
    ].join('\n')
  }
  if (flags.json) return json(created)
  return [
    head,
    `ingest_url ${created.ingest_url}`,
    `send key   ${created.send_key}`,
    '           (shown once: only its hash is kept; to replace it: lhbox sink rotate-key)',
    ...docsHint(created.docs_hint),
  ].join('\n')
}

/** A feed sink has no producer and so no send key: nothing to save or show. */
async function createFeed(conn: () => Connection, warehouse: string, flags: Flags): Promise<string> {
  if (flags.save !== undefined || flags['show-key']) throw new CliError('usage', 'a SQL or files sink has no send key: leave out --save and --show-key')
  const created = await api<SinkView & { docs_hint?: unknown }>(conn(), 'POST', '/v1/sinks', createBody(warehouse, flags))
  if (flags.json) return json(created)
  return [
    `created ${created.kind} sink ${created.name} (${created.id}) on ${created.warehouse}.${created.table}`,
    ...feedLines(created),
    ...docsHint(created.docs_hint),
  ].join('\n')
}

// --- update, dedupe, list, get, delete -------------------------------------------------------------

/** PATCH /v1/sinks/{id}'s body from the flags: only what they change; null removes. */
export function updateBody(flags: Flags, read?: (path: string) => string, kind?: 'sql' | 'files'): Record<string, unknown> {
  if (flags.key !== undefined && flags['no-key']) throw new CliError('usage', 'give one of --key and --no-key')
  if (flags['inactivity-seconds'] !== undefined && flags['no-inactivity']) throw new CliError('usage', 'give one of --inactivity-seconds and --no-inactivity')
  const body: Record<string, unknown> = {}
  if (flags['no-key']) body.key = null
  else if (flags.key !== undefined) body.key = keyColumns(flags)
  for (const [flag, field] of [
    ['roll-seconds', 'roll_seconds'],
    ['roll-bytes', 'roll_bytes'],
    ['inactivity-seconds', 'inactivity_seconds'],
  ] as const) {
    const n = integer(flags, flag)
    if (n !== undefined) body[field] = n
  }
  if (flags['no-inactivity']) body.inactivity_seconds = null
  Object.assign(body, limitFields(flags), deviceFields(flags, 'update', read), feedUpdateFields(flags, kind))
  if (Object.keys(body).length === 0) throw new CliError('usage', `nothing to change\n${USAGE.update}`)
  return body
}

async function update(conn: Connection, ref: string | undefined, flags: Flags): Promise<string> {
  if (!ref) throw new CliError('usage', USAGE.update)
  // --every alone changes the schedule of whichever feed the sink has.
  const kind = needsKind(flags) ? (await api<SinkView>(conn, 'GET', sinkPath(ref))).kind : undefined
  const body = updateBody(flags, undefined, kind === 'send' ? undefined : kind)
  const s = await api<SinkView>(conn, 'PATCH', sinkPath(ref), body).catch((e) => {
    throw mappingHint(e, flags)
  })
  return flags.json ? json(s) : `updated sink ${s.name} (${s.id})\n\n${showSink(s)}`
}

async function dedupe(conn: Connection, ref: string | undefined, flags: Flags, err: (s: string) => void): Promise<string> {
  if (!ref) throw new CliError('usage', USAGE.dedupe)
  const asked = await api<{ dedupe: SinkView['dedupe'] }>(conn, 'POST', `${sinkPath(ref)}/dedupe`)
  if (!flags.wait) {
    if (flags.json) return json(asked)
    return `dedupe of sink ${ref} requested at ${asked.dedupe.requested_at}; the roller runs it at its next tick (lhbox sink get ${ref}, or --wait)`
  }
  const before = JSON.stringify(asked.dedupe.last ?? null)
  const { pollMs, timeoutMs } = waitSettings('DEDUPE', 15 * 60_000)
  const started = Date.now()
  const progressEvery = Math.max(pollMs, 10_000)
  let lastProgress = started
  err(`dedupe of sink ${ref} requested at ${asked.dedupe.requested_at}; waiting for the roller…`)
  for (;;) {
    const elapsed = Date.now() - started
    if (elapsed >= timeoutMs) {
      throw new CliError(
        'dedupe_timeout',
        `no dedupe result after ${seconds(elapsed)} s; the request stays queued (see lhbox sink get ${ref}; --wait again to keep waiting)`,
      )
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(pollMs, timeoutMs - elapsed)))
    const s = await api<SinkView>(conn, 'GET', sinkPath(ref))
    if (s.state === 'deleted') throw new CliError('sink_deleted', `sink ${ref} was deleted while waiting for its dedupe`)
    const changed = JSON.stringify(s.dedupe.last ?? null) !== before
    if (changed || !s.dedupe.requested_at) {
      const last = s.dedupe.last ?? {}
      if (flags.json) return json(s.dedupe)
      if (typeof last.refused === 'string' || typeof last.error === 'string' || last.ok === false) {
        throw new CliError('dedupe_failed', `the roller did not dedupe sink ${s.name}: ${compact(last)}`)
      }
      return `dedupe of sink ${s.name} done: ${compact(last) || '(no details reported)'}`
    }
    if (Date.now() - lastProgress >= progressEvery) {
      lastProgress = Date.now()
      err(`  still waiting (${seconds(Date.now() - started)} s; ${s.state}, ${batches(s.lag.batches_waiting)} waiting)`)
    }
  }
}

async function remove(conn: Connection, ref: string | undefined, flags: Flags): Promise<string> {
  if (!ref) throw new CliError('usage', USAGE.delete)
  const s = await api<SinkView>(conn, 'GET', sinkPath(ref))
  if (s.state === 'deleted') throw new CliError('sink_not_found', `sink ${s.name} (${s.id}) is already deleted`)
  if (s.lag.batches_waiting > 0 && !flags['discard-pending']) {
    throw new CliError(
      'pending_batches',
      `sink ${s.name} has ${batches(s.lag.batches_waiting)} (${bytes(s.lag.bytes_waiting)}) not yet in the table; wait for the roll (lhbox sink get ${s.name}) or pass --discard-pending to drop them`,
    )
  }
  // Batches sent between the check above and this call are discarded too: the route has no guard.
  const res = await api<{ id: string; state: string; pending_batches_discarded: number }>(conn, 'DELETE', sinkPath(s.id))
  if (flags.json) return json(res)
  return `deleted sink ${s.name} (${res.id}): ${plural(res.pending_batches_discarded, 'pending batch', 'pending batches')} discarded; its send key no longer works; the table ${s.warehouse}.${s.table} is untouched`
}

export async function sink(conn: () => Connection, args: string[], flags: Flags, err: (s: string) => void = (s) => console.error(s)): Promise<string> {
  const [sub, ...rest] = args
  switch (sub) {
    case 'create':
      return create(conn, rest, flags, err)
    case 'update':
      return update(conn(), rest[0], flags)
    case 'dedupe':
      return dedupe(conn(), rest[0], flags, err)
    case 'run':
      return runNow(conn(), rest[0] && sinkPath(rest[0]), rest[0], flags)
    case 'list':
      return list(conn(), rest[0], flags)
    case 'get': {
      if (!rest[0]) throw new CliError('usage', USAGE.get)
      const s = await api<SinkView>(conn(), 'GET', sinkPath(rest[0]))
      return flags.json ? json(s) : showSink(s)
    }
    case 'rejects':
      return rejects(conn(), rest[0], flags)
    case 'delete':
      return remove(conn(), rest[0], flags)
    case 'send':
      return sendBatch(conn, rest, flags, err)
    case 'device-url':
      return deviceUrl(conn, rest, flags, err)
    case 'rotate-key':
      return rotateKey(conn(), rest, flags, err)
    case 'retire-previous-key':
      return retirePreviousKey(conn(), rest, flags)
    default:
      throw new CliError('usage', ALL_USAGE)
  }
}
