// Delete files written by an independent engine (issue 15, "Delete files"), and the v3 writer's refusal.
//
// The tables live in a real Iceberg REST catalog (Apache Iceberg's REST fixture, dev/rest-catalog.ts)
// with their files in the stack's S3, behind a REST warehouse of the stack: the roller commits to them
// and DuckDB 1.5.5 attaches the same catalog and runs `DELETE` (test/interop/duckdb_iceberg_sql.py).
// DuckDB's DELETE is merge-on-read: a v2 table gets positional delete files (Parquet), a v3 table
// deletion vectors (Puffin). PyIceberg 0.12 reads both; every table is read back with it.
//
// - A keyed sink on a table with delete files: the roll disables the sink (upsert_delete_files), commits
//   nothing and leaves its batches waiting; appending again (PATCH {key: null}) rolls them.
// - An append sink on such a table keeps appending; no deleted row comes back, and the maintenance
//   sweep (`roller maintain --sink`, orphans of any age, one snapshot kept) compacts nothing where a
//   delete file applies: every file of an unpartitioned v2 table, the deleted day of a v3 day(ts)
//   table, while the other day's small files are compacted.
// - batch_unwritable (v3): the one input our writer refuses after the row checks is a schema it
//   cannot write. Java Iceberg (the fixture, through its REST commit route, as any engine sends it)
//   adds a `variant` column while batches wait: the roll falls back to committing its batches one by
//   one, each is refused by the writer, and every row lands in the rejects with the writer's error.
import { mkdtempSync, rmSync } from 'node:fs'
import { spawn } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rollerCommand } from '../../dev/roller.ts'
import { startRestCatalog, type RestCatalogServer } from '../../dev/rest-catalog.ts'
import { parseLossless, stringifyLossless } from '../../iceberg/spec/json.ts'
import { freePorts } from '../support/ports.ts'
import { ensureVenv, runPython, s3Args, toExact } from '../support/python.ts'
import { ledgerStates, pyCatalogArgs, sinkSnapshots, type PyCatalog } from '../support/roller-check.ts'
import { rollerEnv, tickInProcess, type TickResult } from '../support/roller.ts'
import { bucket, createTable, database, intakeObjects, newSink, send, uid, type Column, type Sink } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

let db: pg.Client
let dir: string
let fixture: RestCatalogServer
let warehouse: string
let catalog: PyCatalog
const NS = `del_${uid()}`

beforeAll(async () => {
  await ensureVenv()
  db = await database()
  dir = mkdtempSync(join(tmpdir(), 'lhbox-deletes-'))
  fixture = await startRestCatalog(join(dir, 'rest'), (await freePorts(1))[0], stack().s3, `s3://${stack().s3.bucket}/rest-deletes-${uid()}`)
  catalog = { rest: fixture.uri }
  warehouse = `rest-del-${uid()}`
  const res = await call('/v1/warehouses', {
    key: stack().adminKey,
    json: { name: warehouse, catalog: { type: 'rest', uri: fixture.uri }, bucket: stack().s3.bucket },
  })
  expect(res.status, res.text).toBe(201)
}, 15 * 60_000)

afterAll(async () => {
  await db?.end()
  await fixture?.child.stop()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

// ---- helpers -------------------------------------------------------------------------------------

interface TestSink extends Sink {
  rollerId: string
}

async function restSink(columns: Column[], opts: { formatVersion?: 2 | 3; partition?: string[]; key?: string[] } = {}): Promise<TestSink> {
  const key = stack().adminKey
  const table = await createTable(key, { warehouse, namespace: NS, columns, format_version: opts.formatVersion, partition: opts.partition })
  const sink = await newSink(key, { table, sink: { warehouse, ...(opts.key ? { key: opts.key } : {}) } })
  return { ...sink, rollerId: `deletes-${uid()}` }
}

async function sendOk(sink: Sink, rows: unknown[] | string, batchId = `b-${uid()}`): Promise<string> {
  const res = await send(sink, rows, { batchId })
  expect(res.status, res.text).toBe(202)
  return batchId
}

async function tick(sink: TestSink): Promise<TickResult> {
  const t = await tickInProcess({ sink: sink.id, rollerId: sink.rollerId })
  expect({ code: t.code, signal: t.signal }, t.stdout + t.stderr).toEqual({ code: 0, signal: null })
  return t
}

/** `roller maintain --sink ID` in a child process: orphans of any age, one snapshot kept (the strictest sweep). */
async function maintain(sink: Sink): Promise<Record<string, any>> {
  const { cmd, args } = rollerCommand(['maintain', '--sink', sink.id])
  const env = {
    ...(process.env as Record<string, string>),
    ...rollerEnv({
      LHBOX_ROLLER_ID: `sweep-${uid()}`,
      LHBOX_MAINTENANCE_ORPHAN_HOURS: '0',
      LHBOX_MAINTENANCE_RETAIN_SNAPSHOTS: '1',
    }),
  }
  const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('error', reject)
    child.on('exit', (code) => resolve({ code, stdout, stderr }))
  })
  expect(out.code, out.stdout + out.stderr).toBe(0)
  const logs = out.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, any>) // the roller's own log lines (counts and ids as strings)
  const done = logs.find((l) => l.msg === 'maintenance done')
  expect(done, out.stdout).toMatchObject({ maintained: 1, failed: 0, skipped: 0 })
  const maintained = logs.find((l) => l.msg === 'maintained')
  expect(maintained, out.stdout).toBeDefined()
  return maintained!
}

/** The table through PyIceberg (REST catalog): rows by x, snapshots, and the live data and delete files. */
async function pyScan(table: string): Promise<any> {
  return toExact(await runPython('pyiceberg_scan.py', [...pyCatalogArgs(catalog), table, '--order-by', 'x'], undefined, { timeoutMs: 180_000 }))
}

/** DuckDB with the REST catalog attached as `cat`: statements in order, then a query. */
async function duck(statements: string[], query?: string): Promise<any> {
  const args = [...s3Args(stack().s3), '--rest-uri', fixture.uri, ...statements.flatMap((s) => ['--exec', s])]
  if (query) args.push('--query', query)
  return toExact(await runPython('duckdb_iceberg_sql.py', args, undefined, { timeoutMs: 180_000 }))
}

const xs = (rows: Array<Record<string, any>>) => rows.map((r) => Number(r.x))
const dataFiles = (s: any) => (s.files as any[]).filter((f) => f.content === 'DATA')
const deleteFiles = (s: any) => (s.files as any[]).filter((f) => f.content !== 'DATA')
const paths = (files: any[]) => files.map((f) => f.file_path as string).sort()
const view = async (sink: Sink) => (await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })).body
const batchObjects = async (sinkId: string) => (await intakeObjects(sinkId)).filter((k) => !k.includes('/rejects/') && !k.includes('/committed/'))
const rowsOf = (from: number, n: number, who: string) => Array.from({ length: n }, (_, i) => ({ x: from + i, who }))

const XW: Column[] = [
  { name: 'x', type: 'long', required: true },
  { name: 'who', type: 'string' },
]

// ---- delete files (DuckDB DELETE, merge-on-read) ----------------------------------------------------

describe('a table with delete files written by DuckDB', { timeout: 240_000 }, () => {
  it('a keyed sink: the roll disables it (upsert_delete_files), commits nothing, its batches wait; PyIceberg reads without the deleted rows', async () => {
    const sink = await restSink(XW, { key: ['x'] })
    await sendOk(sink, rowsOf(1, 3, 'v1'))
    await tick(sink)
    await sendOk(sink, rowsOf(4, 3, 'v1'))
    await tick(sink)

    // DuckDB deletes one row of each data file: two positional delete files (v2), no data file rewritten.
    const dataBefore = paths(dataFiles(await pyScan(sink.table)))
    expect(dataBefore).toHaveLength(2)
    const deleted = await duck([`DELETE FROM cat.${sink.table} WHERE x IN (2, 5)`])
    expect(deleted.executed).toEqual([2n])
    const before = await pyScan(sink.table)
    expect(paths(dataFiles(before))).toEqual(dataBefore)
    expect(deleteFiles(before).length).toBeGreaterThan(0)
    expect(deleteFiles(before).every((f: any) => f.content === 'POSITION_DELETES')).toBe(true)
    expect(before.snapshots.at(-1).operation).toBe('delete')
    expect(xs(before.rows)).toEqual([1, 3, 4, 6])

    const waiting = await sendOk(sink, [
      { x: 3, who: 'v2' },
      { x: 7, who: 'v2' },
    ])
    const t = await tick(sink)
    expect(JSON.stringify(t.logs)).toContain('upsert_delete_files')
    const v = await view(sink)
    expect(v).toMatchObject({ state: 'disabled', disabled_reason: 'upsert_delete_files' })
    expect(v.lag.batches_waiting).toBe(1)
    const after = await pyScan(sink.table)
    expect(after.snapshots.map((s: any) => s.snapshot_id)).toEqual(before.snapshots.map((s: any) => s.snapshot_id))
    expect(after.rows).toEqual(before.rows)
    expect(await batchObjects(sink.id)).toEqual([`_sink/${sink.id}/${waiting}.ndjson`])
    expect((await ledgerStates(db, sink.id))[waiting]).toBe('pending')

    // The batch waited intact: appending again (key null) rolls it; the deleted rows stay deleted.
    const p = await call(`/v1/sinks/${sink.id}`, { method: 'PATCH', key: stack().adminKey, json: { key: null } })
    expect(p.status, p.text).toBe(200)
    expect(p.body).toMatchObject({ state: 'active' })
    await tick({ ...sink, rollerId: `deletes-${uid()}` })
    const appended = await pyScan(sink.table)
    expect(appended.rows.map((r: any) => [Number(r.x), r.who])).toEqual([
      [1, 'v1'],
      [3, 'v1'],
      [3, 'v2'],
      [4, 'v1'],
      [6, 'v1'],
      [7, 'v2'],
    ])
    expect(sinkSnapshots(appended, sink.id).at(-1)!.summary['lakehousebox.sink.batches']).toBe(waiting)
    expect((await ledgerStates(db, sink.id))[waiting]).toBe('committed')
  })

  it('an append sink keeps appending after the delete; the sweep compacts nothing (the deletes apply to every file of an unpartitioned table); no deleted row comes back', async () => {
    const sink = await restSink(XW)
    await sendOk(sink, rowsOf(1, 4, 'a'))
    await tick(sink)
    await sendOk(sink, rowsOf(5, 4, 'b'))
    await tick(sink)
    await duck([`DELETE FROM cat.${sink.table} WHERE x IN (2, 6)`])

    await sendOk(sink, rowsOf(9, 2, 'c'))
    await tick(sink)
    await sendOk(sink, rowsOf(11, 2, 'd'))
    await tick(sink)
    const live = [1, 3, 4, 5, 7, 8, 9, 10, 11, 12]
    const before = await pyScan(sink.table)
    expect(xs(before.rows)).toEqual(live)
    expect(sinkSnapshots(before, sink.id)).toHaveLength(4)
    expect(dataFiles(before)).toHaveLength(4)
    expect(deleteFiles(before).length).toBeGreaterThan(0)
    // DuckDB, reading the same snapshot with its own delete handling, agrees.
    expect(xs((await duck([], `SELECT x FROM cat.${sink.table} ORDER BY x`)).rows)).toEqual(live)

    const m = await maintain(sink)
    expect(m).toMatchObject({ filesCompacted: 0 })
    const after = await pyScan(sink.table)
    expect(after.rows).toEqual(before.rows)
    expect(paths(dataFiles(after))).toEqual(paths(dataFiles(before)))
    expect(paths(deleteFiles(after))).toEqual(paths(deleteFiles(before)))
    expect(after.snapshots).toHaveLength(1) // the sweep expired the rest: the delete files are reached from the current one
    expect(xs((await duck([], `SELECT x FROM cat.${sink.table} ORDER BY x`)).rows)).toEqual(live)

    // And the sink goes on appending after the sweep.
    await sendOk(sink, rowsOf(13, 1, 'e'))
    await tick(sink)
    expect(xs((await pyScan(sink.table)).rows)).toEqual([...live, 13])
  })

  it('v3 day(ts): deletion vectors on one day; the sweep leaves that day’s files alone and compacts the other day; every live row once', async () => {
    const sink = await restSink(
      [
        { name: 'x', type: 'long', required: true },
        { name: 'who', type: 'string' },
        { name: 'ts', type: 'timestamptz', required: true },
      ],
      { formatVersion: 3, partition: ['day(ts)'] },
    )
    // Three rolls, each one file on 2026-03-01 (x = 10r+1, 10r+2) and one on 2026-03-02 (x = 10r+3, 10r+4).
    for (const r of [1, 2, 3]) {
      await sendOk(sink, [
        { x: r * 10 + 1, who: `r${r}`, ts: `2026-03-01T0${r}:00:00Z` },
        { x: r * 10 + 2, who: `r${r}`, ts: `2026-03-01T1${r}:00:00Z` },
        { x: r * 10 + 3, who: `r${r}`, ts: `2026-03-02T0${r}:00:00Z` },
        { x: r * 10 + 4, who: `r${r}`, ts: `2026-03-02T1${r}:00:00Z` },
      ])
      await tick(sink)
    }
    const day = (f: any) => String(f.partition.ts_day)
    const first = await pyScan(sink.table)
    expect(dataFiles(first)).toHaveLength(6)
    const days = [...new Set(dataFiles(first).map(day))].sort()
    expect(days).toHaveLength(2)
    const [dayA, dayB] = days // 2026-03-01, 2026-03-02

    await duck([`DELETE FROM cat.${sink.table} WHERE x IN (11, 22)`]) // two files of the first day
    const before = await pyScan(sink.table)
    const live = [12, 13, 14, 21, 23, 24, 31, 32, 33, 34]
    expect(xs(before.rows)).toEqual(live)
    const dvs = deleteFiles(before)
    expect(dvs).toHaveLength(2)
    expect(dvs.map((f: any) => [f.content, f.file_format, day(f)])).toEqual([
      ['POSITION_DELETES', 'PUFFIN', dayA],
      ['POSITION_DELETES', 'PUFFIN', dayA],
    ])

    const m = await maintain(sink)
    expect(m).toMatchObject({ filesCompacted: 3 })
    const after = await pyScan(sink.table)
    expect(after.rows).toEqual(before.rows) // x, who, ts and __ingest_ts, each live row once
    const onDay = (s: any, d: string) => dataFiles(s).filter((f: any) => day(f) === d)
    expect(paths(onDay(after, dayA))).toEqual(paths(onDay(before, dayA)))
    expect(onDay(after, dayB)).toHaveLength(1)
    expect(onDay(after, dayB)[0].record_count).toBe(6n)
    expect(paths(deleteFiles(after))).toEqual(paths(dvs))
    expect(after.snapshots).toHaveLength(1)
    expect(xs((await duck([], `SELECT x FROM cat.${sink.table} ORDER BY x`)).rows)).toEqual(live)
  })
})

// ---- batch_unwritable (v3) ------------------------------------------------------------------------

/** The table's metadata as the REST catalog (Java Iceberg) serves it, parsed losslessly. */
async function restMetadata(table: string): Promise<any> {
  const [ns, name] = table.split('.')
  const res = await fetch(`${fixture.uri}/v1/namespaces/${encodeURIComponent(ns)}/tables/${encodeURIComponent(name)}`)
  expect(res.status).toBe(200)
  return parseLossless(await res.text())
}

/**
 * A schema change committed through the REST catalog's own route (POST .../tables/{t}), the request any
 * engine sends; the fixture (Java Iceberg 1.10) validates it. With `fields`: add-schema and make it
 * current; with a schema id: make that earlier schema current again. Answers the schema id current before.
 */
async function restSchemaChange(table: string, change: ((fields: any[], lastColumnId: number) => any[]) | number): Promise<number> {
  const [ns, name] = table.split('.')
  const { metadata } = await restMetadata(table)
  const currentId = Number(metadata['current-schema-id'])
  let updates: unknown[]
  if (typeof change === 'number') updates = [{ action: 'set-current-schema', 'schema-id': change }]
  else {
    const current = metadata.schemas.find((s: any) => Number(s['schema-id']) === currentId)
    const lastColumnId = Number(metadata['last-column-id'])
    const fields = change(current.fields, lastColumnId)
    const maxId = Math.max(lastColumnId, ...fields.map((f: any) => Number(f.id)))
    const nextId = Math.max(...metadata.schemas.map((s: any) => Number(s['schema-id']))) + 1
    updates = [
      { action: 'add-schema', schema: { type: 'struct', 'schema-id': nextId, fields }, 'last-column-id': maxId },
      { action: 'set-current-schema', 'schema-id': -1 },
    ]
  }
  const res = await fetch(`${fixture.uri}/v1/namespaces/${encodeURIComponent(ns)}/tables/${encodeURIComponent(name)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: stringifyLossless({ requirements: [{ type: 'assert-current-schema-id', 'current-schema-id': currentId }], updates }),
  })
  expect(res.status, await res.clone().text()).toBe(200)
  return currentId
}

async function rejectsOf(sinkId: string, batchId: string): Promise<{ text: string[]; parsed: any[] }> {
  const got = await bucket().get(`_sink/${sinkId}/rejects/${batchId}.ndjson`)
  expect(got, `rejects file of ${batchId}`).not.toBeNull()
  const text = Buffer.from(got!.body).toString('utf8').split('\n').filter(Boolean)
  return { text, parsed: text.map((l) => toExact(parseLossless(l))) }
}

describe('batch_unwritable on a format-version 3 table', { timeout: 240_000 }, () => {
  it('a column the writer cannot write (variant, added by Java Iceberg): the batches go one by one, each refused whole; every row in its rejects with the writer’s error; nothing committed, nothing lost', async () => {
    const sink = await restSink(XW, { formatVersion: 3 })
    await sendOk(sink, rowsOf(1, 2, 'before'))
    await tick(sink) // the first roll: __ingest_ts and the retention properties, rows 1 and 2
    const snapshotsBefore = (await restMetadata(sink.table)).metadata.snapshots.length

    const a = ['{"x": 3, "who": "a"}', '{"x": 4}']
    const b = ['{"x": 5,  "who": "b"}', '{"x": "five"}']
    const c = ['{"x": 6.5}']
    const batchA = await sendOk(sink, `[${a.join(',')}]`)
    const batchB = await sendOk(sink, `[${b.join(',')}]`)
    const batchC = await sendOk(sink, `[${c.join(',')}]`)
    const schemaBefore = await restSchemaChange(sink.table, (fields, last) => [...fields, { id: last + 1, name: 'v', type: 'variant', required: false }])

    const t = await tick(sink)
    expect(
      t.logs.some((l) => l.msg === 'the writer refused the roll; committing its batches one by one'),
      t.stdout,
    ).toBe(true)
    const writerError = /cannot write variant column v to Parquet/

    // Nothing committed (Java's view of the table), and DuckDB reads the rows of before only.
    expect((await restMetadata(sink.table)).metadata.snapshots).toHaveLength(snapshotsBefore)
    expect(xs((await duck([], `SELECT x FROM cat.${sink.table} ORDER BY x`)).rows)).toEqual([1, 2])

    // Every row of a refused batch is in its rejects with the writer's error and its bytes as sent;
    // a row the checks refused keeps its own reason.
    const ra = await rejectsOf(sink.id, batchA)
    expect(ra.parsed.map((r) => [r.index, r.reason])).toEqual([
      [0n, 'batch_unwritable'],
      [1n, 'batch_unwritable'],
    ])
    for (const r of ra.parsed) expect(r.error).toMatch(writerError)
    expect(ra.text.map((l) => l.slice(l.indexOf('"row":') + 6, -1))).toEqual(a)
    const rb = await rejectsOf(sink.id, batchB)
    expect(rb.parsed.map((r) => [r.index, r.reason]).sort()).toEqual([
      [0n, 'batch_unwritable'],
      [1n, 'type_mismatch'],
    ])
    expect(rb.parsed.find((r) => r.reason === 'batch_unwritable').error).toMatch(writerError)
    expect(rb.text.map((l) => l.slice(l.indexOf('"row":') + 6, -1)).sort()).toEqual([...b].sort())
    const rc = await rejectsOf(sink.id, batchC)
    expect(rc.parsed.map((r) => [r.index, r.reason])).toEqual([[0n, 'type_mismatch']])

    // The batches are consumed (rejected, not waiting), the sink goes on.
    expect(await batchObjects(sink.id)).toEqual([])
    const states = await ledgerStates(db, sink.id)
    expect([states[batchA], states[batchB], states[batchC]]).toEqual(['committed', 'committed', 'committed'])
    const v = await view(sink)
    expect(v).toMatchObject({ state: 'active', lag: { batches_waiting: 0 }, last_roll: { batches: 3, rows: 0, rejected_rows: 5 } })
    expect(v.rejects.rows_total).toBe(5)

    // Java drops the column again: the next batch is committed.
    await restSchemaChange(sink.table, schemaBefore)
    await sendOk(sink, rowsOf(7, 1, 'after'))
    await tick(sink)
    expect(xs((await duck([], `SELECT x FROM cat.${sink.table} ORDER BY x`)).rows)).toEqual([1, 2, 7])
  })
})
