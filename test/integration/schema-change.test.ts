// Schema changes between send and roll (issue 15): batches wait in the intake while another engine
// (PyIceberg, table.update_schema(): test/interop/pyiceberg_evolve.py) adds, renames or drops columns
// and promotes int→long, float→double, decimal(5,2)→decimal(7,2); then the roll. The spec: "The
// table's current schema is the contract" and the roll "validates them row by row against the table's
// current schema". So a row is checked against the schema at roll time, not at send time:
//
// - a member naming a column that exists now (added, or the new name of a renamed one) is written to it;
// - a member naming a column that no longer exists (dropped, or the old name of a renamed one) is a
//   row reject, unknown_field — never ignored: "dropping a field silently is the one failure a producer
//   cannot see" (the earlier spec's rule; the current one keeps unknown_field among its reasons), even
//   when its value is null;
// - a value that fits only the promoted type is accepted, written as the promoted type.
//
// Nothing is lost silently: every row sent is either in the table (read back with PyIceberg) or in the
// batch's rejects file with its reason and its bytes as sent. Append and keyed sinks; v2 and v3.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startRestCatalog, type RestCatalogServer } from '../../dev/rest-catalog.ts'
import { parseLossless } from '../../iceberg/spec/json.ts'
import { freePorts } from '../support/ports.ts'
import { ensureVenv, runPython, toExact } from '../support/python.ts'
import { ledgerStates, pyCatalogArgs, sinkSnapshots, warehouseId, type PyCatalog } from '../support/roller-check.ts'
import { tickInProcess, type TickResult } from '../support/roller.ts'
import { bucket, createTable, database, intakeObjects, newSink, send, uid, type Column, type Sink } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

let db: pg.Client
let wh: PyCatalog

beforeAll(async () => {
  await ensureVenv()
  db = await database()
  wh = { sql: await warehouseId(stack().warehouse) }
}, 15 * 60_000)

afterAll(() => db?.end())

// ---- helpers -------------------------------------------------------------------------------------

type TestSink = Sink & { rollerId: string }

async function sinkWith(columns: Column[], opts: { key?: string[]; formatVersion?: 2 | 3 } = {}): Promise<TestSink> {
  const sink = await newSink(stack().adminKey, {
    tableSpec: { columns, ...(opts.formatVersion ? { format_version: opts.formatVersion } : {}) },
    sink: opts.key ? { key: opts.key } : {},
  })
  return { ...sink, rollerId: `schema-${uid()}` }
}

/** Sends the rows as written (each element's bytes are stored as they are); answers the batch id. */
async function sendLines(sink: Sink, lines: string[]): Promise<string> {
  const batchId = `b-${uid()}`
  const res = await send(sink, `[${lines.join(',')}]`, { batchId })
  expect(res.status, res.text).toBe(202)
  return batchId
}

async function tick(sink: TestSink, rollerId = sink.rollerId): Promise<TickResult> {
  const t = await tickInProcess({ sink: sink.id, rollerId })
  expect({ code: t.code, signal: t.signal }, t.stdout + t.stderr).toEqual({ code: 0, signal: null })
  return t
}

/** Another engine's schema change: PyIceberg update_schema(), one commit. */
async function evolve(table: string, ops: unknown[], catalog: PyCatalog = wh): Promise<any> {
  return toExact(await runPython('pyiceberg_evolve.py', [...pyCatalogArgs(catalog), table, '--ops', JSON.stringify(ops)]))
}

/** The table through PyIceberg: rows by `orderBy`, the current schema, the snapshots (with their schema ids). */
async function pyScan(table: string, orderBy = 'x', catalog: PyCatalog = wh): Promise<any> {
  return toExact(await runPython('pyiceberg_scan.py', [...pyCatalogArgs(catalog), table, '--order-by', orderBy, '--no-files']))
}

interface RejectLine {
  index: bigint
  reason: string
  field?: string
  /** every problem of the row, when it has more than one */
  problems?: Array<{ reason: string; field?: string }>
  /** the row as the producer sent it */
  row: string
}

async function rejectsOf(sinkId: string, batchId: string): Promise<RejectLine[]> {
  const got = await bucket().get(`_sink/${sinkId}/rejects/${batchId}.ndjson`)
  if (!got) return []
  return Buffer.from(got.body)
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const parsed = toExact(parseLossless(l))
      return { index: parsed.index, reason: parsed.reason, field: parsed.field, problems: parsed.problems, row: l.slice(l.indexOf(',"row":') + 7, -1) }
    })
}

const fields = (s: any) => s.schema.fields.map((f: any) => [f.name, f.type, f.required])
const view = async (sink: Sink) => (await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })).body
const batchObjects = async (sinkId: string) => (await intakeObjects(sinkId)).filter((k) => !k.includes('/rejects/') && !k.includes('/committed/'))
/** A row as PyIceberg read it, without __ingest_ts (the arrival time, checked elsewhere). */
const plain = (r: Record<string, any>) => Object.fromEntries(Object.entries(r).filter(([k]) => k !== '__ingest_ts'))

/**
 * Nothing lost silently: each line sent is in the table (its x, with the sent line's index) or in the
 * rejects (by its index, with its bytes as sent), never both, never neither. `storedKeys`: x values
 * already in the table before the roll (a keyed sink's rejected update leaves its key's stored row).
 */
function expectAccounted(lines: string[], tableXs: bigint[], rejects: RejectLine[], committed: number[], storedKeys: bigint[] = []): void {
  const rejected = new Set(rejects.map((r) => Number(r.index)))
  for (const r of rejects) expect(r.row).toBe(lines[Number(r.index)])
  expect([...rejected, ...committed].sort((a, b) => a - b)).toEqual(lines.map((_, i) => i))
  const sentX = (i: number) => BigInt((parseLossless(lines[i]) as any).x.value)
  for (const i of committed) expect(tableXs).toContain(sentX(i))
  for (const i of rejected) if (!storedKeys.includes(sentX(i))) expect(tableXs).not.toContain(sentX(i))
}

// ---- an append sink ------------------------------------------------------------------------------

describe('schema changes while batches wait', { timeout: 180_000 }, () => {
  it('append (v2): added, renamed, dropped and promoted columns; the roll follows the current schema', async () => {
    const sink = await sinkWith([
      { name: 'x', type: 'long', required: true },
      { name: 'who', type: 'string' },
      { name: 'name', type: 'string' },
      { name: 'old', type: 'string' },
      { name: 'n', type: 'int' },
      { name: 'f', type: 'float' },
      { name: 'd', type: 'decimal(5,2)' },
    ])
    await sendLines(sink, ['{"x": 1, "who": "a", "name": "n1", "old": "o1", "n": 1, "f": 0.1, "d": "1.25"}'])
    await tick(sink) // a file written under the first schema

    const lines = [
      '{"x": 10, "who": "keep"}', //                0 fits both schemas
      '{"x": 11, "label": "new name"}', //          1 the new name of `name`: written to it
      '{"x": 12, "name": "old name"}', //           2 the old name: unknown_field
      '{"x": 13, "old": "dropped"}', //             3 a dropped column: unknown_field
      '{"x": 14, "old": null}', //                  4 a dropped column, even null: unknown_field
      '{"x": 15, "n": 3000000000}', //              5 fits long, not int
      '{"x": 16, "f": 1e300}', //                   6 fits double, not float
      '{"x": 17, "f": 0.1}', //                     7 written as the double 0.1
      '{"x": 18, "extra": "e"}', //                 8 a column added meanwhile
      '{"x": 19, "d": "12345.67"}', //              9 fits decimal(7,2), not decimal(5,2)
    ]
    const batch = await sendLines(sink, lines)
    const evolved = await evolve(sink.table, [
      { op: 'add', name: 'extra', type: 'string' },
      { op: 'rename', from: 'name', to: 'label' },
      { op: 'drop', name: 'old' },
      { op: 'promote', name: 'n', type: 'long' },
      { op: 'promote', name: 'f', type: 'double' },
      { op: 'promote', name: 'd', type: 'decimal(7, 2)' },
    ])

    await tick(sink)
    const s = await pyScan(sink.table)
    expect(fields(s)).toEqual([
      ['x', 'long', true],
      ['who', 'string', false],
      ['label', 'string', false],
      ['n', 'long', false],
      ['f', 'double', false],
      ['d', 'decimal(7, 2)', false],
      ['__ingest_ts', 'timestamptz', false],
      ['extra', 'string', false],
    ])
    const empty = { who: null, label: null, n: null, f: null, d: null, extra: null }
    expect(s.rows.map(plain)).toEqual([
      // the row of the first roll, read under the new schema (its float widened as stored)
      { x: 1n, who: 'a', label: 'n1', n: 1n, f: 0.10000000149011612, d: '1.25', extra: null },
      { ...empty, x: 10n, who: 'keep' },
      { ...empty, x: 11n, label: 'new name' },
      { ...empty, x: 15n, n: 3000000000n },
      { ...empty, x: 16n, f: 1e300 },
      { ...empty, x: 17n, f: 0.1 },
      { ...empty, x: 18n, extra: 'e' },
      { ...empty, x: 19n, d: '12345.67' },
    ])
    // committed under the current schema: the roll's snapshot carries it
    const roll = sinkSnapshots(s, sink.id).at(-1)! as any
    expect(roll.schema_id).toBe(evolved.schema_id)
    expect(roll.summary).toMatchObject({ 'lakehousebox.sink.batches': batch, 'lakehousebox.sink.rows': '7', 'lakehousebox.sink.rejected_rows': '3' })

    const rejects = await rejectsOf(sink.id, batch)
    expect(rejects.map((r) => [r.index, r.reason, r.field])).toEqual([
      [2n, 'unknown_field', 'name'],
      [3n, 'unknown_field', 'old'],
      [4n, 'unknown_field', 'old'],
    ])
    expectAccounted(
      lines,
      s.rows.map((r: any) => r.x),
      rejects,
      [0, 1, 5, 6, 7, 8, 9],
    )
    const v = await view(sink)
    expect(v).toMatchObject({ lag: { batches_waiting: 0 }, last_roll: { rows: 7, rejected_rows: 3 } })
    expect(await batchObjects(sink.id)).toEqual([])
    expect((await ledgerStates(db, sink.id))[batch]).toBe('committed')
  })

  // ---- a keyed sink ------------------------------------------------------------------------------

  it('keyed (v2): its int key promoted to long, a column renamed, one dropped, one added; the latest row per key replaces the stored one', async () => {
    const sink = await sinkWith(
      [
        { name: 'x', type: 'int', required: true },
        { name: 'who', type: 'string' },
        { name: 'name', type: 'string' },
        { name: 'old', type: 'string' },
      ],
      { key: ['x'] },
    )
    await sendLines(sink, [
      '{"x": 1, "who": "v1", "name": "n", "old": "o"}',
      '{"x": 2, "who": "v1", "name": "n", "old": "o"}',
      '{"x": 3, "who": "v1", "name": "n", "old": "o"}',
    ])
    await tick(sink) // one file, x stored as INT32

    const lines = [
      '{"x": 2, "who": "v2", "label": "L2"}', //     0 replaces key 2
      '{"x": 3, "old": "gone"}', //                  1 unknown_field: key 3 keeps its stored row
      '{"x": 3000000000, "who": "big"}', //          2 a key only the promoted type holds
      '{"x": 1, "name": "n1"}', //                   3 unknown_field: key 1 keeps its stored row
      '{"x": 5, "extra": "e5"}', //                  4 a new key, in the added column
    ]
    const batch = await sendLines(sink, lines)
    const evolved = await evolve(sink.table, [
      { op: 'promote', name: 'x', type: 'long' },
      { op: 'rename', from: 'name', to: 'label' },
      { op: 'drop', name: 'old' },
      { op: 'add', name: 'extra', type: 'string' },
    ])

    await tick(sink)
    const s = await pyScan(sink.table)
    expect(fields(s)).toEqual([
      ['x', 'long', true],
      ['who', 'string', false],
      ['label', 'string', false],
      ['__ingest_ts', 'timestamptz', false],
      ['extra', 'string', false],
    ])
    expect(s.rows.map(plain)).toEqual([
      { x: 1n, who: 'v1', label: 'n', extra: null },
      { x: 2n, who: 'v2', label: 'L2', extra: null },
      { x: 3n, who: 'v1', label: 'n', extra: null },
      { x: 5n, who: null, label: null, extra: 'e5' },
      { x: 3000000000n, who: 'big', label: null, extra: null },
    ])
    const roll = sinkSnapshots(s, sink.id).at(-1)! as any
    expect(roll.operation).toBe('overwrite')
    expect(roll.schema_id).toBe(evolved.schema_id)
    expect(roll.summary).toMatchObject({ 'lakehousebox.sink.batches': batch, 'lakehousebox.sink.rejected_rows': '2' })
    const rejects = await rejectsOf(sink.id, batch)
    expect(rejects.map((r) => [r.index, r.reason, r.field])).toEqual([
      [1n, 'unknown_field', 'old'],
      [3n, 'unknown_field', 'name'],
    ])
    expectAccounted(
      lines,
      s.rows.map((r: any) => r.x),
      rejects,
      [0, 2, 4],
      [1n, 3n], // their stored rows stay, as read above
    )
  })

  it('keyed (v2): its key column renamed while a batch waits: disabled (upsert_key_missing), nothing committed; keyed by the new name, the waiting rows are rejected by field, none dropped', async () => {
    const sink = await sinkWith(
      [
        { name: 'x', type: 'long', required: true },
        { name: 'who', type: 'string' },
      ],
      { key: ['x'] },
    )
    await sendLines(sink, ['{"x": 1, "who": "v1"}'])
    await tick(sink)
    const lines = ['{"x": 1, "who": "v2"}', '{"x": 2, "who": "v2"}']
    const batch = await sendLines(sink, lines)
    await evolve(sink.table, [{ op: 'rename', from: 'x', to: 'id' }])
    const before = await pyScan(sink.table, 'id')

    const t = await tick(sink)
    expect(JSON.stringify(t.logs)).toContain('upsert_key_missing')
    expect(await view(sink)).toMatchObject({ state: 'disabled', disabled_reason: 'upsert_key_missing', lag: { batches_waiting: 1 } })
    const after = await pyScan(sink.table, 'id')
    expect(after.snapshots.map((s: any) => s.snapshot_id)).toEqual(before.snapshots.map((s: any) => s.snapshot_id))
    expect(after.rows.map(plain)).toEqual([{ id: 1n, who: 'v1' }])
    expect(await batchObjects(sink.id)).toEqual([`_sink/${sink.id}/${batch}.ndjson`])

    // Keyed by the new name: the waiting rows name a column the table no longer has, each a reject
    // (never a silent drop); a row sent by the new name replaces the stored one.
    const p = await call(`/v1/sinks/${sink.id}`, { method: 'PATCH', key: stack().adminKey, json: { key: ['id'] } })
    expect(p.status, p.text).toBe(200)
    const byNew = await sendLines(sink, ['{"id": 1, "who": "v3"}'])
    await tick(sink, `schema-other-${uid()}`)
    const rolled = await pyScan(sink.table, 'id')
    expect(rolled.rows.map(plain)).toEqual([{ id: 1n, who: 'v3' }])
    const rejects = await rejectsOf(sink.id, batch)
    // One line per row (spec: one JSON object per rejected row), with both of its problems.
    expect(rejects.map((r) => Number(r.index))).toEqual([0, 1])
    for (const i of [0, 1]) {
      expect(rejects[i].problems?.map((p) => [p.reason, p.field])).toEqual([
        ['key_null', 'id'],
        ['unknown_field', 'x'],
      ])
      expect(rejects[i].row).toBe(lines[i])
    }
    expect(await rejectsOf(sink.id, byNew)).toEqual([])
    expect(await ledgerStates(db, sink.id)).toMatchObject({ [batch]: 'committed', [byNew]: 'committed' })
  })
})

// ---- format version 3 --------------------------------------------------------------------------------

// PyIceberg 0.12 commits no metadata of a v3 table itself ("Writing V3 is not yet supported"), so with
// the SQL catalog it cannot change a v3 schema; through a REST catalog the server writes the metadata.
// The table lives in Apache Iceberg's REST fixture (dev/rest-catalog.ts) behind a REST warehouse.
describe('schema changes while batches wait, format version 3 (REST catalog)', { timeout: 180_000 }, () => {
  let dir: string
  let fixture: RestCatalogServer
  let warehouse: string
  let rest: PyCatalog

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'lhbox-schema-'))
    fixture = await startRestCatalog(join(dir, 'rest'), (await freePorts(1))[0], stack().s3, `s3://${stack().s3.bucket}/rest-schema-${uid()}`)
    rest = { rest: fixture.uri }
    warehouse = `rest-schema-${uid()}`
    const res = await call('/v1/warehouses', {
      key: stack().adminKey,
      json: { name: warehouse, catalog: { type: 'rest', uri: fixture.uri }, bucket: stack().s3.bucket },
    })
    expect(res.status, res.text).toBe(201)
  }, 15 * 60_000)

  afterAll(async () => {
    await fixture?.child.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('append (v3, day(ts)): a required column added with a default, one dropped; an absent member takes the default, an explicit null is missing_required', async () => {
    const key = stack().adminKey
    const table = await createTable(key, {
      warehouse,
      namespace: `schema_${uid()}`,
      format_version: 3,
      partition: ['day(ts)'],
      columns: [
        { name: 'x', type: 'long', required: true },
        { name: 'ts', type: 'timestamptz', required: true },
        { name: 'old', type: 'string' },
      ],
    })
    const sink: TestSink = { ...(await newSink(key, { table, sink: { warehouse } })), rollerId: `schema-${uid()}` }
    await sendLines(sink, ['{"x": 1, "ts": "2026-03-01T10:00:00Z", "old": "o1"}'])
    await tick(sink)
    const lines = [
      '{"x": 10, "ts": "2026-03-01T11:00:00Z"}', //                  0 absent: the write-default
      '{"x": 11, "ts": "2026-03-02T11:00:00Z", "level": 8}', //      1
      '{"x": 12, "ts": "2026-03-02T12:00:00Z", "level": null}', //   2 a null for a required column: missing_required
      '{"x": 13, "ts": "2026-03-02T13:00:00Z", "level": "high"}', // 3 type_mismatch
      '{"x": 14, "ts": "2026-03-02T14:00:00Z", "old": "o"}', //      4 a dropped column: unknown_field
    ]
    const batch = await sendLines(sink, lines)
    const evolved = await evolve(
      table,
      [
        { op: 'add', name: 'level', type: 'long', required: true, default: 7 },
        { op: 'drop', name: 'old' },
      ],
      rest,
    )

    await tick(sink)
    const s = await pyScan(table, 'x', rest)
    expect(s.format_version).toBe(3n)
    expect(fields(s)).toEqual([
      ['x', 'long', true],
      ['ts', 'timestamptz', true],
      ['__ingest_ts', 'timestamptz', false],
      ['level', 'long', true],
    ])
    expect(s.schema.fields.find((f: any) => f.name === 'level')).toMatchObject({ 'initial-default': 7n, 'write-default': 7n })
    expect(s.rows.map(plain)).toEqual([
      { x: 1n, ts: '2026-03-01T10:00:00.000000+00:00', level: 7n }, // written before the column: its initial-default
      { x: 10n, ts: '2026-03-01T11:00:00.000000+00:00', level: 7n }, // absent: the write-default
      { x: 11n, ts: '2026-03-02T11:00:00.000000+00:00', level: 8n },
    ])
    const roll = sinkSnapshots(s, sink.id).at(-1)! as any
    expect(roll.schema_id).toBe(evolved.schema_id)
    const rejects = await rejectsOf(sink.id, batch)
    expect(rejects.map((r) => [r.index, r.reason, r.field])).toEqual([
      [2n, 'missing_required', 'level'],
      [3n, 'type_mismatch', 'level'],
      [4n, 'unknown_field', 'old'],
    ])
    expectAccounted(
      lines,
      s.rows.map((r: any) => r.x),
      rejects,
      [0, 1],
    )
  })
})
