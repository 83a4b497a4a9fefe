// Keyed sinks, the key itself (issue 6, "Done when"): a null in a key column is a row reject key_null
// (its rejects line names the field); a composite key (a string and a long); a string key and an int
// key; the bounds pruning, shown by lakehousebox.sink.key_files_read in the snapshot summary.
// Every table is read back with PyIceberg. The tests share nothing (a sink and a table each): they run at once.
import { beforeAll, describe, expect, it } from 'vitest'
import { ensureVenv } from '../support/python.ts'
import { tickInProcess } from '../support/roller.ts'
import { pyAppend, scan, warehouseId } from '../support/roller-check.ts'
import { bucket, createTable, newSink, send, uid, type Column, type Sink } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

async function tick(sinkId: string) {
  const r = await tickInProcess({ sink: sinkId, rollerId: `keyed-types-${sinkId}` })
  expect(r.code, r.stdout + r.stderr).toBe(0)
  return r
}

async function sendOk(sink: Sink, rows: unknown[], batchId = `b-${uid()}`): Promise<string> {
  const res = await send(sink, rows, { batchId })
  expect(res.status, res.text).toBe(202)
  return batchId
}

async function rejectsOf(sinkId: string, batchId: string): Promise<Array<Record<string, any>>> {
  const got = await bucket().get(`_sink/${sinkId}/rejects/${batchId}.ndjson`)
  if (!got) return []
  return new TextDecoder()
    .decode(got.body)
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l))
}

const wh = async () => ({ sql: await warehouseId(stack().warehouse) })
/** The rows as [cols...] tuples in one order (scan orders by x only): sorted by their text. */
const tuples = (rows: Array<Record<string, any>>, cols: string[]) => {
  const text = (t: unknown[]) => JSON.stringify(t, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))
  return rows.map((r) => cols.map((c) => r[c])).sort((a, b) => text(a).localeCompare(text(b)))
}

// PyIceberg reads the tables back: the pinned venv first (it may be built on a fresh machine), not
// inside a test's own time.
beforeAll(() => ensureVenv(), 15 * 60_000)

describe.concurrent('key_null', () => {
  it('a row with a null (or a missing value) in a key column is rejected key_null, naming the field; the others roll', async () => {
    const cols: Column[] = [
      { name: 'x', type: 'string' },
      { name: 'n', type: 'long' },
      { name: 'who', type: 'string' },
    ]
    const sink = await newSink(stack().adminKey, { tableSpec: { columns: cols }, sink: { key: ['x', 'n'] } })
    const batch = await sendOk(sink, [
      { x: 'a', n: 1, who: 'ok' },
      { x: null, n: 2, who: 'null x' },
      { x: 'b', n: null, who: 'null n' },
      { n: 3, who: 'missing x' },
      { x: 'c', who: 'missing n' },
      { x: 'a', n: 1, who: 'ok, later' },
    ])
    await tick(sink.id)
    const s = await scan(await wh(), sink.table)
    expect(s.rows.map((r) => [r.x, r.n, r.who])).toEqual([['a', 1n, 'ok, later']])
    expect(s.snapshots.at(-1)!.summary).toMatchObject({ 'lakehousebox.sink.rows': '1', 'lakehousebox.sink.rejected_rows': '4' })

    const lines = await rejectsOf(sink.id, batch)
    expect(lines.map((l) => [l.index, l.reason, l.field, l.row.who])).toEqual([
      [1, 'key_null', 'x', 'null x'],
      [2, 'key_null', 'n', 'null n'],
      [3, 'key_null', 'x', 'missing x'],
      [4, 'key_null', 'n', 'missing n'],
    ])
    expect(lines.every((l) => l.batch_id === batch)).toBe(true)
    const view = (await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })).body
    expect(view.rejects).toMatchObject({ rows_total: 4, batches_with_rejects: 1 })
    expect(view.state).toBe('active')
  })
})

describe.concurrent('key_null on a required key column', () => {
  it('a null or a missing value in a required key column is key_null too (not missing_required); other rejects of the row stay', async () => {
    const cols: Column[] = [
      { name: 'x', type: 'long', required: true },
      { name: 'who', type: 'string' },
      { name: 'n', type: 'int' },
    ]
    const sink = await newSink(stack().adminKey, { tableSpec: { columns: cols }, sink: { key: ['x'] } })
    const batch = await sendOk(sink, [{ x: 1, who: 'ok' }, { x: null, who: 'null x' }, { who: 'missing x' }, { x: null, who: 'null x, bad n', n: 'three' }])
    await tick(sink.id)
    const s = await scan(await wh(), sink.table)
    expect(s.rows.map((r) => [r.x, r.who])).toEqual([[1n, 'ok']])
    const lines = await rejectsOf(sink.id, batch)
    // One line per rejected row; a row with two problems lists both.
    expect(lines.map((l) => [l.index, l.reason, l.field, l.row.who])).toEqual([
      [1, 'key_null', 'x', 'null x'],
      [2, 'key_null', 'x', 'missing x'],
      [3, 'key_null', 'x', 'null x, bad n'],
    ])
    expect(lines[2].problems.map((p: { reason: string; field: string }) => [p.reason, p.field])).toEqual([
      ['key_null', 'x'],
      ['type_mismatch', 'n'],
    ])
  })
})

describe.concurrent('edges of a keyed roll', () => {
  it('a roll whose every row is key_null commits nothing; its batch is consumed, the rejects kept', async () => {
    const sink = await newSink(stack().adminKey, {
      tableSpec: {
        columns: [
          { name: 'x', type: 'long' },
          { name: 'who', type: 'string' },
        ],
      },
      sink: { key: ['x'] },
    })
    const batch = await sendOk(sink, [{ x: null, who: 'a' }, { who: 'b' }])
    await tick(sink.id)
    const s = await scan(await wh(), sink.table)
    expect([s.rows, s.snapshots]).toEqual([[], []])
    expect((await rejectsOf(sink.id, batch)).map((l) => [l.reason, l.field])).toEqual([
      ['key_null', 'x'],
      ['key_null', 'x'],
    ])
    const view = (await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })).body
    expect(view).toMatchObject({ state: 'active', lag: { batches_waiting: 0 }, rejects: { rows_total: 2 } })
  })

  it('rows a foreign writer stored before the first roll (no __ingest_ts yet) are replaced or kept whole', async () => {
    const table = await createTable(stack().adminKey, {
      columns: [
        { name: 'x', type: 'long', required: true },
        { name: 'who', type: 'string' },
      ],
    })
    const w = await wh()
    await pyAppend(w, table, [
      { x: 1, who: 'py' },
      { x: 2, who: 'py' },
      { x: 3, who: 'py' },
    ])
    const sink = await newSink(stack().adminKey, { table, sink: { key: ['x'] } })
    await sendOk(sink, [
      { x: 2, who: 'roll' },
      { x: 4, who: 'roll' },
    ])
    await tick(sink.id)
    const s = await scan(w, table)
    expect(s.rows.map((r) => [Number(r.x), r.who, r.__ingest_ts === null])).toEqual([
      [1, 'py', true],
      [2, 'roll', false],
      [3, 'py', true],
      [4, 'roll', false],
    ])
    expect(s.snapshots.at(-1)!.summary).toMatchObject({ 'lakehousebox.sink.rewritten_files': '1', 'lakehousebox.sink.key_files_read': '1' })
  })
})

describe.concurrent('the key columns', () => {
  it('a composite key (a string and a long): rows are replaced only when both match', async () => {
    const cols: Column[] = [
      { name: 'x', type: 'string', required: true },
      { name: 'n', type: 'long', required: true },
      { name: 'who', type: 'string' },
    ]
    const sink = await newSink(stack().adminKey, { tableSpec: { columns: cols }, sink: { key: ['x', 'n'] } })
    await sendOk(sink, [
      { x: 'a', n: 1, who: 'v1' },
      { x: 'a', n: 2, who: 'v1' },
      { x: 'b', n: 1, who: 'v1' },
      { x: 'b', n: 2, who: 'v1' },
    ])
    await tick(sink.id)
    // (a,1) replaced; (b,3) new; ("a1", 0) must not collide with ("a", 10) and the like.
    await sendOk(sink, [
      { x: 'a', n: 1, who: 'v2' },
      { x: 'b', n: 3, who: 'v2' },
      { x: 'a1', n: 0, who: 'v2' },
    ])
    await sendOk(sink, [
      { x: 'b', n: 1, who: 'v3' },
      { x: 'a', n: 10, who: 'v3' },
      { x: 'b', n: 1, who: 'v3 last' },
    ])
    await tick(sink.id)
    const s = await scan(await wh(), sink.table)
    expect(tuples(s.rows, ['x', 'n', 'who'])).toEqual(
      tuples(
        [
          { x: 'a', n: 1n, who: 'v2' },
          { x: 'a', n: 2n, who: 'v1' },
          { x: 'a', n: 10n, who: 'v3' },
          { x: 'a1', n: 0n, who: 'v2' },
          { x: 'b', n: 1n, who: 'v3 last' },
          { x: 'b', n: 2n, who: 'v1' },
          { x: 'b', n: 3n, who: 'v2' },
        ],
        ['x', 'n', 'who'],
      ),
    )
    const last = s.snapshots.at(-1)!
    expect(last.operation).toBe('overwrite')
    expect(last.summary).toMatchObject({
      'lakehousebox.sink.rows': '5',
      'lakehousebox.sink.rewritten_files': '1',
      'deleted-data-files': '1',
      'total-records': '7',
    })
  })

  it('a string key', async () => {
    const cols: Column[] = [
      { name: 'x', type: 'string', required: true },
      { name: 'who', type: 'string' },
    ]
    const sink = await newSink(stack().adminKey, { tableSpec: { columns: cols }, sink: { key: ['x'] } })
    await sendOk(sink, [
      { x: 'obs-1', who: 'v1' },
      { x: 'obs-2', who: 'v1' },
      { x: 'ÿ-ünïcode', who: 'v1' },
      { x: '', who: 'empty' },
    ])
    await tick(sink.id)
    await sendOk(sink, [
      { x: 'obs-2', who: 'v2' },
      { x: 'ÿ-ünïcode', who: 'v2' },
      { x: 'obs-3', who: 'v2' },
      { x: '', who: 'empty v2' },
    ])
    await tick(sink.id)
    const s = await scan(await wh(), sink.table)
    expect(tuples(s.rows, ['x', 'who'])).toEqual(
      tuples(
        [
          { x: '', who: 'empty v2' },
          { x: 'obs-1', who: 'v1' },
          { x: 'obs-2', who: 'v2' },
          { x: 'obs-3', who: 'v2' },
          { x: 'ÿ-ünïcode', who: 'v2' },
        ],
        ['x', 'who'],
      ),
    )
    expect(s.snapshots.at(-1)!.summary).toMatchObject({ 'lakehousebox.sink.rewritten_files': '1', 'total-records': '5' })
  })

  it('an int key (32-bit), negative values included', async () => {
    const cols: Column[] = [
      { name: 'x', type: 'int', required: true },
      { name: 'who', type: 'string' },
    ]
    const sink = await newSink(stack().adminKey, { tableSpec: { columns: cols }, sink: { key: ['x'] } })
    await sendOk(sink, [
      { x: -5, who: 'v1' },
      { x: 0, who: 'v1' },
      { x: 7, who: 'v1' },
      { x: 2147483647, who: 'v1' },
    ])
    await tick(sink.id)
    await sendOk(sink, [
      { x: -5, who: 'v2' },
      { x: 2147483647, who: 'v2' },
      { x: 8, who: 'v2' },
    ])
    await tick(sink.id)
    const s = await scan(await wh(), sink.table)
    expect(s.rows.map((r) => [Number(r.x), r.who])).toEqual([
      [-5, 'v2'],
      [0, 'v1'],
      [7, 'v1'],
      [8, 'v2'],
      [2147483647, 'v2'],
    ])
    expect(s.snapshots.at(-1)!.summary).toMatchObject({ 'lakehousebox.sink.rewritten_files': '1', 'lakehousebox.sink.key_files_read': '1' })
  })
})

describe.concurrent('every key type', () => {
  // One column per key type: a roll of v1, then a roll replacing the same keys — each value must read
  // back from the table's files as the same key the validated row has.
  const TYPES: Array<[string, unknown, unknown]> = [
    ['date', '2026-03-01', '2026-03-02'],
    ['time', '12:34:56.123456', '00:00:00'],
    ['timestamp', '2026-03-01T12:00:00.000001', '2026-03-01T12:00:00'],
    ['timestamptz', '2026-03-01T12:00:00.000001Z', '2026-03-01T13:00:00+01:00'],
    ['uuid', '0f8fad5b-d9cb-469f-a165-70867728950e', '7c9e6679-7425-40de-944b-e07fc1f90ae7'],
    ['decimal(10, 2)', '12.30', 7],
    ['boolean', true, false],
  ]
  it.for(TYPES)('a %s key: replaced, not doubled', async ([type, k1, k2]) => {
    const cols: Column[] = [
      { name: 'k', type, required: true },
      { name: 'x', type: 'long' },
      { name: 'who', type: 'string' },
    ]
    const sink = await newSink(stack().adminKey, { tableSpec: { columns: cols }, sink: { key: ['k'] } })
    await sendOk(sink, [
      { k: k1, x: 1, who: 'v1' },
      { k: k2, x: 2, who: 'v1' },
    ])
    await tick(sink.id)
    await sendOk(sink, [{ k: k1, x: 1, who: 'v2' }])
    await tick(sink.id)
    const s = await scan(await wh(), sink.table)
    expect(s.rows.map((r) => [Number(r.x), r.who])).toEqual([
      [1, 'v2'],
      [2, 'v1'],
    ])
    expect(s.snapshots.at(-1)!.summary).toMatchObject({ 'lakehousebox.sink.rewritten_files': '1', 'total-records': '2' })
  })
})

describe.concurrent('the bounds pruning', () => {
  const summaries = (s: Awaited<ReturnType<typeof scan>>, sinkId: string) =>
    s.snapshots.filter((x) => x.summary['lakehousebox.sink.id'] === sinkId).map((x) => x.summary)

  it('a long key: 5 rolls of disjoint ranges read no file; a roll touching one range reads 1', async () => {
    const cols: Column[] = [
      { name: 'x', type: 'long', required: true },
      { name: 'who', type: 'string' },
    ]
    const sink = await newSink(stack().adminKey, { tableSpec: { columns: cols }, sink: { key: ['x'] } })
    for (const r of [0, 1, 2, 3, 4]) {
      await sendOk(
        sink,
        Array.from({ length: 10 }, (_, i) => ({ x: r * 100 + i, who: `v1` })),
      )
      await tick(sink.id)
    }
    await sendOk(sink, [
      { x: 203, who: 'v2' },
      { x: 205, who: 'v2' },
    ])
    await tick(sink.id)
    const s = await scan(await wh(), sink.table)
    const sums = summaries(s, sink.id)
    expect(sums.map((x) => x['lakehousebox.sink.key_files_read'])).toEqual(['0', '0', '0', '0', '0', '1'])
    expect(sums.at(-1)).toMatchObject({ 'lakehousebox.sink.rewritten_files': '1', 'deleted-data-files': '1', 'added-data-files': '2', 'total-data-files': '6' })
    expect(s.rows).toHaveLength(50)
    expect(s.rows.filter((r) => r.who === 'v2').map((r) => Number(r.x))).toEqual([203, 205])

    // A roll whose keys fall in the gaps between the ranges' bounds reads 0; one spanning two ranges reads 2.
    await sendOk(sink, [
      { x: 50, who: 'gap' },
      { x: 150, who: 'gap' },
    ])
    await tick(sink.id)
    await sendOk(sink, [
      { x: 1, who: 'v3' },
      { x: 401, who: 'v3' },
    ])
    await tick(sink.id)
    const again = summaries(await scan(await wh(), sink.table), sink.id)
    expect(again.slice(-2).map((x) => x['lakehousebox.sink.key_files_read'])).toEqual(['0', '2'])
  })

  it('a string key: 5 rolls of disjoint ranges read no file; a roll touching one range reads 1', async () => {
    const cols: Column[] = [
      { name: 'x', type: 'string', required: true },
      { name: 'who', type: 'string' },
    ]
    const sink = await newSink(stack().adminKey, { tableSpec: { columns: cols }, sink: { key: ['x'] } })
    const long = 'observation-with-a-long-prefix-past-the-bounds-truncation-'
    for (const r of ['a', 'b', 'c', 'd', 'e']) {
      await sendOk(
        sink,
        Array.from({ length: 10 }, (_, i) => ({ x: `${r}-${long}${i}`, who: 'v1' })),
      )
      await tick(sink.id)
    }
    await sendOk(sink, [
      { x: `c-${long}3`, who: 'v2' },
      { x: `c-${long}9`, who: 'v2' },
    ])
    await tick(sink.id)
    const s = await scan(await wh(), sink.table)
    const sums = summaries(s, sink.id)
    expect(sums.map((x) => x['lakehousebox.sink.key_files_read'])).toEqual(['0', '0', '0', '0', '0', '1'])
    expect(sums.at(-1)).toMatchObject({ 'lakehousebox.sink.rewritten_files': '1', 'total-data-files': '6' })
    expect(s.rows).toHaveLength(50)
    expect(s.rows.filter((r) => r.who === 'v2').map((r) => r.x)).toEqual([`c-${long}3`, `c-${long}9`])
  })
})
