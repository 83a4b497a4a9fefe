// The roller end to end (issue 5, "Done when"): batches with good and bad rows are sent through the
// edge, `roller/main.ts tick --force` runs in a child process, and the table is read back with
// PyIceberg and DuckDB (never our own reader): exactly the good rows, exact values, __ingest_ts from
// each batch's received_at; the rejects files with reasons and the original row bytes (also through
// DuckDB read_json), elements that are not objects among them (not_an_object); the sink's view, the
// ledger, usage, the snapshot summary and the first-roll commit.
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseLossless } from '../../iceberg/spec/json.ts'
import { runPython, s3Args, sqlCatalogArgs, toExact } from '../support/python.ts'
import { rollerTick, type TickResult } from '../support/roller.ts'
import { bucket, intakeObjects, ledger, newSink, send, uid, usage, type Sink } from '../support/sinks.ts'
import { rollerSetup, SETUP_TIMEOUT } from '../support/roller-check.ts'
import { call, stack } from '../support/stack.ts'

const MAX = 9223372036854775807n
const MIN = -9223372036854775808n
const MICROS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/

let db: pg.Client
let whId: string
beforeAll(async () => ({ db, whId } = await rollerSetup()), SETUP_TIMEOUT)
afterAll(() => db?.end())

// ---- helpers -------------------------------------------------------------------------------------

/** The table through PyIceberg (the SQL catalog's catalog_name is the warehouse id). */
async function pyiceberg(table: string, ...extra: string[]): Promise<any> {
  return toExact(
    await runPython('pyiceberg_scan.py', [...sqlCatalogArgs({ databaseUrl: stack().databaseUrl, catalogName: whId, s3: stack().s3 }), table, ...extra]),
  )
}

async function duckdb(...args: string[]): Promise<any> {
  return toExact(await runPython('duckdb_scan.py', [...s3Args(stack().s3), ...args]))
}

/** A table metadata file, parsed losslessly. */
async function metadataFile(location: string): Promise<any> {
  const key = location.replace(`s3://${stack().s3.bucket}/`, '')
  const got = await bucket().get(key)
  return toExact(parseLossless(Buffer.from(got!.body).toString('utf8')))
}

async function sent(sink: Sink, body: string, batchId = `b-${uid()}`): Promise<{ batchId: string; receivedAt: string; rejected: number }> {
  const res = await send(sink, body, { batchId })
  expect(res.status, res.text).toBe(202)
  expect(res.body.received_at).toMatch(MICROS)
  return { batchId, receivedAt: res.body.received_at, rejected: res.body.rejected }
}

/** A received_at (…ffffffZ) as the readers print a timestamptz. */
const asTz = (receivedAt: string) => receivedAt.replace(/Z$/, '+00:00')

async function tick(sink: Sink): Promise<TickResult> {
  const t = await rollerTick({ sink: sink.id })
  expect({ code: t.code, signal: t.signal }, t.stdout + t.stderr).toEqual({ code: 0, signal: null })
  return t
}

async function rejectsLines(sink: Sink, batchId: string): Promise<{ text: string[]; parsed: any[] }> {
  const got = await bucket().get(`_sink/${sink.id}/rejects/${batchId}.ndjson`)
  expect(got, `rejects file of ${batchId}`).not.toBeNull()
  const text = Buffer.from(got!.body).toString('utf8').split('\n').filter(Boolean)
  return { text, parsed: text.map((l) => toExact(parseLossless(l))) }
}

/** Every intake batch, marker or other object left under _sink/<id>/ (rejects aside). */
async function leftInIntake(sinkId: string): Promise<string[]> {
  return (await intakeObjects(sinkId)).filter((k) => !k.startsWith(`_sink/${sinkId}/rejects/`))
}

const view = async (sink: Sink) => (await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })).body

// ---- append: good and bad rows -------------------------------------------------------------------

describe('a roll of good and bad rows', () => {
  let sink: Sink
  let b1: Awaited<ReturnType<typeof sent>>
  let b2: Awaited<ReturnType<typeof sent>>
  let scan: any
  let first: TickResult

  // Rows as the producer writes them (whitespace inside elements is kept byte for byte).
  const b1Rows = [
    '{"x": 9223372036854775807, "who": "max", "amount": "9999999999999999999999999999.9999999999"}',
    '{"x": "7",  "who": "string x"}', //                                        type_mismatch x
    '{"who": "no x"}', //                                                       missing_required x
    '{"x": 3, "colour": "red"}', //                                             unknown_field colour
    '{"x": 4, "amount": "1.00000000001"}', //                                   type_mismatch amount (scale)
  ]
  const b2Rows = [
    '{"x": -9223372036854775808, "amount": -9999999999999999999999999999.9999999999}',
    '{"x": 2, "who": null, "amount": 0.0000000001, "__ingest_ts": "2000-01-01T00:00:00Z"}', // __ingest_ts comes from the batch, never the producer
    '{"x": 1.5}', //                                                             type_mismatch x (not an integer)
  ]

  beforeAll(async () => {
    sink = await newSink(stack().adminKey, {
      tableSpec: {
        columns: [
          { name: 'x', type: 'long', required: true },
          { name: 'who', type: 'string' },
          { name: 'amount', type: 'decimal(38,10)' },
        ],
      },
    })
    // A non-object element is counted rejected at the edge, by index, and stored for the rejects file.
    b1 = await sent(sink, `[${b1Rows[0]}, 42, ${b1Rows.slice(1).join(',')}]`)
    expect(b1.rejected).toBe(1)
    b2 = await sent(sink, `[${b2Rows.join(',\n')}]`)
    first = await tick(sink)
    scan = await pyiceberg(sink.table, '--order-by', 'x')
  }, 120_000)

  const expectedRows = () => [
    { x: MIN, who: null, amount: '-9999999999999999999999999999.9999999999', __ingest_ts: asTz(b2.receivedAt) },
    { x: 2n, who: null, amount: '0.0000000001', __ingest_ts: asTz(b2.receivedAt) },
    { x: MAX, who: 'max', amount: '9999999999999999999999999999.9999999999', __ingest_ts: asTz(b1.receivedAt) },
  ]

  it('PyIceberg reads exactly the good rows, exact values, __ingest_ts = each batch’s received_at', () => {
    expect(first.logs.some((l) => l.msg === 'rolled' || l.message === 'rolled')).toBe(true)
    expect(scan.row_count).toBe(3n)
    expect(scan.rows).toEqual(expectedRows())
  })

  it('DuckDB iceberg_scan reads the same rows', async () => {
    const out = await duckdb('--metadata', scan.metadata_location, '--order-by', 'x')
    expect(out.rows).toEqual(expectedRows())
    expect(out.snapshots.map((s: any) => s.snapshot_id)).toEqual([scan.current_snapshot_id])
  })

  it('the first roll added an optional __ingest_ts timestamptz and the retention properties in one commit', async () => {
    const ingest = scan.schema.fields.find((f: any) => f.name === '__ingest_ts')
    expect(ingest).toMatchObject({ type: 'timestamptz', required: false })
    expect(scan.properties).toMatchObject({ 'write.metadata.delete-after-commit.enabled': 'true', 'write.metadata.previous-versions-max': '5' })
    // create → first-roll changes → append: three metadata files, the middle one holding both changes and no snapshot.
    const md = await metadataFile(scan.metadata_location)
    expect(md['metadata-log']).toHaveLength(2)
    const [created, firstRoll] = await Promise.all(md['metadata-log'].map((e: any) => metadataFile(e['metadata-file'])))
    const names = (m: any) => m.schemas.find((s: any) => s['schema-id'] === m['current-schema-id']).fields.map((f: any) => f.name)
    expect(names(created)).toEqual(['x', 'who', 'amount'])
    expect(created.properties['write.metadata.previous-versions-max']).toBeUndefined()
    expect(names(firstRoll)).toEqual(['x', 'who', 'amount', '__ingest_ts'])
    expect(firstRoll.properties).toMatchObject({ 'write.metadata.delete-after-commit.enabled': 'true', 'write.metadata.previous-versions-max': '5' })
    expect(firstRoll.snapshots ?? []).toEqual([])
    expect(md['current-schema-id']).toBe(firstRoll['current-schema-id'])
  })

  it('one snapshot whose summary names the sink, the batches, rows, rejected rows and rolled_at', () => {
    expect(scan.snapshots).toHaveLength(1)
    const s = scan.snapshots[0]
    expect(s.snapshot_id).toBe(scan.current_snapshot_id)
    expect(s.operation).toBe('append')
    expect(s.summary).toMatchObject({
      'lakehousebox.sink.id': sink.id,
      'lakehousebox.sink.rows': '3',
      'lakehousebox.sink.rejected_rows': '6',
      'added-records': '3',
    })
    expect(s.summary['lakehousebox.sink.batches'].split(',').sort()).toEqual([b1.batchId, b2.batchId].sort())
    expect(Date.parse(s.summary['lakehousebox.sink.rolled_at'])).toBeGreaterThan(Date.parse(b2.receivedAt))
    expect(scan.files).toHaveLength(1)
  })

  it('the rejects files hold each bad row with reason, field, expected, got and its original bytes', async () => {
    const r1 = await rejectsLines(sink, b1.batchId)
    expect(r1.parsed.map(({ row, ...rest }) => rest)).toEqual(
      [
        // `index` is the element's place in the array the producer sent; `line` its place in the
        // stored batch: the same, as every element is stored (the 42 at index 1 too).
        { batch_id: b1.batchId, index: 1, line: 1, reason: 'not_an_object', got: 'number 42' },
        { batch_id: b1.batchId, index: 2, line: 2, reason: 'type_mismatch', field: 'x', expected: 'long', got: 'string "7"' },
        { batch_id: b1.batchId, index: 3, line: 3, reason: 'missing_required', field: 'x', expected: 'long' },
        { batch_id: b1.batchId, index: 4, line: 4, reason: 'unknown_field', field: 'colour' },
        {
          batch_id: b1.batchId,
          index: 5,
          line: 5,
          reason: 'type_mismatch',
          field: 'amount',
          expected: 'decimal(38,10)',
          got: expect.stringMatching(/^string "1\.00000000001"/),
        },
      ].map((r) => ({ ...r, index: BigInt(r.index), line: BigInt(r.line) })),
    )
    // The original row, byte for byte, at the end of each line.
    expect(r1.text).toHaveLength(5)
    r1.text.forEach((line, i) => expect(line.endsWith(`,"row":${['42', ...b1Rows.slice(1)][i]}}`), line).toBe(true))

    const r2 = await rejectsLines(sink, b2.batchId)
    expect(r2.parsed).toEqual([
      {
        batch_id: b2.batchId,
        index: 2n,
        line: 2n,
        reason: 'type_mismatch',
        field: 'x',
        expected: 'long',
        got: expect.stringMatching(/^number 1\.5/),
        row: { x: 1.5 },
      },
    ])
    expect(r2.text[0].endsWith(`,"row":${b2Rows[2]}}`)).toBe(true)
  })

  it('DuckDB read_json reads the rejects prefix', async () => {
    const out = await duckdb(
      '--read-json',
      `s3://${stack().s3.bucket}/_sink/${sink.id}/rejects/*.ndjson`,
      '--order-by',
      'batch_id',
      '--order-by',
      'index',
      '--select',
      'batch_id',
      '--select',
      'index',
      '--select',
      'reason',
      '--select',
      'field',
    )
    const expected = [
      [b1.batchId, 1n, 'not_an_object', null],
      [b1.batchId, 2n, 'type_mismatch', 'x'],
      [b1.batchId, 3n, 'missing_required', 'x'],
      [b1.batchId, 4n, 'unknown_field', 'colour'],
      [b1.batchId, 5n, 'type_mismatch', 'amount'],
      [b2.batchId, 2n, 'type_mismatch', 'x'],
    ].sort((a, b) => String(a[0]).localeCompare(String(b[0])) || Number(a[1]) - Number(b[1]))
    expect(out.rows.map((r: any) => [r.batch_id, r.index, r.reason, r.field])).toEqual(expected)
  })

  it('GET /v1/sinks/{id}: last_roll with the table’s current snapshot id, lag 0, rejects', async () => {
    const v = await view(sink)
    expect(v.last_roll).toMatchObject({ batches: 2, rows: 3, rejected_rows: 6, snapshot_id: scan.current_snapshot_id.toString() })
    expect(v.lag).toEqual({ batches_waiting: 0, bytes_waiting: 0, oldest_waiting_at: null, seconds_behind: 0 })
    expect(v.rejects).toMatchObject({ rows_total: 6, batches_with_rejects: 2, prefix: `s3://${stack().s3.bucket}/_sink/${sink.id}/rejects/` })
  })

  it('the ledger rows are committed with the snapshot id, and the intake is empty', async () => {
    const rows = await ledger(db, sink.id)
    expect(rows.map((r) => [r.batch_id, r.state, String(r.snapshot_id)]).sort()).toEqual(
      [b1.batchId, b2.batchId].map((id) => [id, 'committed', scan.current_snapshot_id.toString()]).sort(),
    )
    expect(await leftInIntake(sink.id)).toEqual([])
  })

  it('a second roll appends its batch and does not repeat the first-roll changes', async () => {
    const before = await metadataFile(scan.metadata_location)
    const b3 = await sent(sink, '[{"x": 10, "who": "third"}, {"x": 11, "nope": 1}]')
    await tick(sink)
    const again = await pyiceberg(sink.table, '--order-by', 'x')
    const [lo, two, hi] = expectedRows()
    expect(again.rows).toEqual([lo, two, { x: 10n, who: 'third', amount: null, __ingest_ts: asTz(b3.receivedAt) }, hi])
    expect(again.snapshots).toHaveLength(2)
    const md = await metadataFile(again.metadata_location)
    // One more commit (the append) and the same schema.
    expect(md['metadata-log'].at(-1)['metadata-file']).toBe(scan.metadata_location)
    expect(md['last-sequence-number']).toBe(before['last-sequence-number'] + 1n)
    expect(md.schemas).toHaveLength(before.schemas.length)
    expect(md['current-schema-id']).toBe(before['current-schema-id'])
    const latest = again.snapshots.find((s: any) => s.snapshot_id === again.current_snapshot_id)
    expect(latest.summary).toMatchObject({ 'lakehousebox.sink.batches': b3.batchId, 'lakehousebox.sink.rows': '1', 'lakehousebox.sink.rejected_rows': '1' })
    const v = await view(sink)
    expect(v.last_roll).toMatchObject({ batches: 1, rows: 1, rejected_rows: 1, snapshot_id: again.current_snapshot_id.toString() })
    expect(v.rejects.rows_total).toBe(7)
    expect(v.lag.batches_waiting).toBe(0)
    expect(await leftInIntake(sink.id)).toEqual([])
  })
})

// ---- elements that are not objects ----------------------------------------------------------------

describe('elements that are not objects (issue 15, defect 3)', () => {
  const body = '[{"a":1}, 42, "x", null, [1,2], {"a":2}]'
  const rejected = [
    { index: 1n, row: '42', got: 'number 42' },
    { index: 2n, row: '"x"', got: 'string "x"' },
    { index: 3n, row: 'null', got: 'null' },
    { index: 4n, row: '[1,2]', got: 'array of 2' },
  ]

  for (const keyed of [false, true]) {
    it(`${keyed ? 'a keyed' : 'an append'} sink: each in the rejects file as not_an_object, with its index and bytes; counted in rejects, once in usage`, async () => {
      const sink = await newSink(stack().adminKey, {
        tableSpec: { columns: [{ name: 'a', type: 'long', required: true }] },
        ...(keyed ? { sink: { key: ['a'] } } : {}),
      })
      const res = await send(sink, body, { batchId: `nao-${uid()}` })
      // the send answer is unchanged: the objects accepted, the others rejected by index
      expect(res.status).toBe(202)
      expect(res.body).toMatchObject({ accepted: 2, rejected: 4, reasons: [1, 2, 3, 4].map((index) => ({ index, reason: 'not_an_object' })) })
      const batchId = res.body.batch_id
      await tick(sink)

      const { text, parsed } = await rejectsLines(sink, batchId)
      expect(parsed.map(({ row: _, ...r }) => r)).toEqual(
        rejected.map(({ index, got }) => ({ batch_id: batchId, index, line: index, reason: 'not_an_object', got })),
      )
      // the original bytes, as the producer sent them
      expect(text.map((l) => l.slice(l.indexOf(',"row":') + ',"row":'.length, -1))).toEqual(rejected.map((r) => r.row))
      const json = await duckdb(
        '--read-json',
        `s3://${stack().s3.bucket}/_sink/${sink.id}/rejects/*.ndjson`,
        '--order-by',
        'index',
        '--select',
        'index',
        '--select',
        'reason',
      )
      expect(json.rows).toEqual(rejected.map(({ index }) => ({ index, reason: 'not_an_object' })))

      const scan = await pyiceberg(sink.table, '--order-by', 'a')
      const at = asTz(res.body.received_at)
      expect(scan.rows).toEqual([
        { a: 1n, __ingest_ts: at },
        { a: 2n, __ingest_ts: at },
      ])
      expect((await duckdb('--metadata', scan.metadata_location, '--order-by', 'a')).rows).toEqual(scan.rows)
      expect(scan.snapshots.at(-1).summary).toMatchObject({ 'lakehousebox.sink.rows': '2', 'lakehousebox.sink.rejected_rows': '4' })

      const v = await view(sink)
      expect(v.last_roll).toMatchObject({ batches: 1, rows: 2, rejected_rows: 4 })
      expect(v.rejects).toMatchObject({ rows_total: 4, batches_with_rejects: 1 })
      // usage counted them at the send; the roll does not count them again
      const mine = (await usage(stack().adminKey)).by_sink.find((u: { sink_id: string }) => u.sink_id === sink.id)
      expect(mine).toMatchObject({ batches: 1, rows_accepted: 2, rows_rejected: 4 })
      expect(await leftInIntake(sink.id)).toEqual([])
    })
  }
})

// ---- a v3 table partitioned by day(ts) ------------------------------------------------------------

describe('a format-version 3 table partitioned by day(ts)', () => {
  it('rows of two days: two data files in one snapshot', async () => {
    const sink = await newSink(stack().adminKey, {
      tableSpec: {
        format_version: 3,
        partition: ['day(ts)'],
        columns: [
          { name: 'ts', type: 'timestamptz', required: true },
          { name: 'x', type: 'long', required: true },
        ],
      },
    })
    const b = await sent(
      sink,
      '[{"ts": "2026-09-21T23:59:59.999999Z", "x": 1}, {"ts": "2026-09-22T00:00:00+02:00", "x": 2}, {"ts": "2026-09-22T08:00:00Z", "x": 3}, {"ts": "yesterday", "x": 4}]',
    )
    await tick(sink)
    const scan = await pyiceberg(sink.table, '--order-by', 'x')
    expect(scan.format_version).toBe(3n)
    const at = asTz(b.receivedAt)
    expect(scan.rows).toEqual([
      { ts: '2026-09-21T23:59:59.999999+00:00', x: 1n, __ingest_ts: at },
      { ts: '2026-09-21T22:00:00.000000+00:00', x: 2n, __ingest_ts: at },
      { ts: '2026-09-22T08:00:00.000000+00:00', x: 3n, __ingest_ts: at },
    ])
    expect(scan.snapshots).toHaveLength(1)
    expect(scan.files).toHaveLength(2)
    expect(scan.files.map((f: any) => [f.partition.ts_day, f.record_count, f.snapshot_id]).sort()).toEqual([
      ['2026-09-21', 2n, scan.current_snapshot_id],
      ['2026-09-22', 1n, scan.current_snapshot_id],
    ])
    const duck = await duckdb('--metadata', scan.metadata_location, '--order-by', 'x')
    expect(duck.rows).toEqual(scan.rows)
    const { parsed } = await rejectsLines(sink, b.batchId)
    expect(parsed).toEqual([expect.objectContaining({ index: 3n, reason: 'type_mismatch', field: 'ts', expected: 'timestamptz' })])
    expect(await leftInIntake(sink.id)).toEqual([])
  })
})

// ---- every row rejected ----------------------------------------------------------------------------

describe('a roll where every row is rejected', () => {
  it('commits nothing, writes the rejects and empties the intake', async () => {
    const sink = await newSink(stack().adminKey)
    const a = await sent(sink, '[{"x": "one"}, {"who": "nobody"}]')
    const b = await sent(sink, '[{"x": 1, "extra": true}]')
    await tick(sink)
    const scan = await pyiceberg(sink.table)
    expect(scan.current_snapshot_id).toBeNull()
    expect(scan.snapshots).toEqual([])
    expect(scan.rows).toEqual([])
    expect((await rejectsLines(sink, a.batchId)).parsed.map((r) => r.reason)).toEqual(['type_mismatch', 'missing_required'])
    expect((await rejectsLines(sink, b.batchId)).parsed).toEqual([
      expect.objectContaining({ reason: 'unknown_field', field: 'extra', row: { x: 1n, extra: true } }),
    ])
    expect(await leftInIntake(sink.id)).toEqual([])
    const rows = await ledger(db, sink.id)
    expect(rows.map((r) => [r.state, r.snapshot_id])).toEqual([
      ['committed', null],
      ['committed', null],
    ])
    const v = await view(sink)
    expect(v.last_roll).toMatchObject({ batches: 2, rows: 0, rejected_rows: 3, snapshot_id: null })
    expect(v.lag.batches_waiting).toBe(0)
    expect(v.rejects).toMatchObject({ rows_total: 3, batches_with_rejects: 2 })
  })
})
