// Elements that are not objects (spec "Rejects"; issue 15, defect 3). The edge stores every element
// of the array sent as a line (line i = element i), and the roller rejects each non-object line as
// not_an_object: in the rejects file with its index in the array and its bytes, counted in the roll's
// rejected rows, and never stopping the batch's other rows. The batches here come from the edge's own
// splitter, so the two sides are checked against each other.
import { afterAll, describe, expect, it } from 'vitest'
import { parseSkipped, rejectsKey } from '../../../contract/bucket.ts'
import { splitBatch } from '../../../edge/intake.ts'
import { Scanner } from '../../../iceberg/ingest/scan.ts'
import { currentSchema, currentSnapshot } from '../../../iceberg/spec/metadata.ts'
import { ScanPool } from '../../../roller/scan-pool.ts'
import { elementIndexes } from '../../../roller/validate.ts'
import { leftovers, rejectsOf, rollOnce, send, SINK, tableRows, world, xs, type World } from './harness.ts'

const BIG = '123456789012345678901234567890'
/** The array a producer posts: objects and every other kind of JSON value, spaced as sent. */
const ELEMENTS = [
  '{"x": 1}',
  '42',
  '"x"',
  'null',
  '[1,  2]',
  'true',
  BIG,
  '{"x": 2, "who": "w"}',
  // an object nested in a non-object may repeat a member: still one not_an_object row
  '[{"a": 1, "a": 2}]',
  '-0.1e-400',
  '"\\u00e9\\n\\"q\\""',
  '{"x": 3}',
]
const BODY = `[${ELEMENTS.join(',\r\n ')}]`
const NON_OBJECTS = ELEMENTS.flatMap((e, index) => (e.startsWith('{') ? [] : [index]))
const GOT: Record<number, string> = {
  1: 'number 42',
  2: 'string "x"',
  3: 'null',
  4: 'array of 2',
  5: 'boolean true',
  6: `number ${BIG}`,
  8: 'array of 1',
  9: 'number -0.1e-400',
  10: 'string "é\\n\\"q\\""',
}

const dec = (b: Uint8Array) => new TextDecoder().decode(b)

/** Posts BODY through the edge's splitter and stores what it gives, as the send route does. */
function sendArray(w: World, batchId: string, body = BODY): string[] {
  const batch = splitBatch(new TextEncoder().encode(body))
  const lines = dec(batch.ndjson).split('\n').slice(0, -1)
  expect(lines).toHaveLength(batch.accepted + batch.rejected)
  send(w, batchId, lines)
  return lines
}

/** The rejects file's raw lines (a big number's digits are checked as text, not through JSON.parse). */
const rawRejects = (w: World, batchId: string) => w.bucket.text(rejectsKey(SINK, batchId))!.split('\n').filter(Boolean)

function expectNotAnObjectRejects(w: World, batchId: string): void {
  expect(rejectsOf(w, batchId).map(({ row: _, ...r }) => r)).toEqual(
    NON_OBJECTS.map((index) => ({ batch_id: batchId, index, line: index, reason: 'not_an_object', got: GOT[index] })),
  )
  // the row exactly as the producer sent it
  expect(rawRejects(w, batchId).map((l) => l.slice(l.indexOf(',"row":') + 7, -1))).toEqual(NON_OBJECTS.map((i) => ELEMENTS[i]))
}

describe('a non-object line', () => {
  it('append sink: rejected as not_an_object with its index and bytes; the objects are rolled', async () => {
    const w = await world({ prepared: true })
    sendArray(w, 'b1')
    send(w, 'b2', ['{"x": 4}'])
    const result = await rollOnce(w)

    expect(result).toMatchObject({ batches: 2, rows: 4, rejectedRows: NON_OBJECTS.length })
    expect(await xs(w)).toEqual([1, 2, 3, 4])
    expectNotAnObjectRejects(w, 'b1')
    expect(currentSnapshot(w.catalog.current.metadata)!.summary).toMatchObject({
      'lakehousebox.sink.rows': '4',
      'lakehousebox.sink.rejected_rows': String(NON_OBJECTS.length),
    })
    expect(w.ledger.reports[0].rejects).toEqual({ rows: NON_OBJECTS.length, batches: 1 })
    expect(w.ledger.reports[0].last_roll).toMatchObject({ rows: 4, rejected_rows: NON_OBJECTS.length })
    expect(leftovers(w)).toEqual({ intake: [], markers: [], rejects: ['b1'] })
  })

  it('keyed sink: rejected the same way, the objects upserted', async () => {
    const w = await world({ prepared: true })
    sendArray(w, 'b1')
    send(w, 'b2', ['{"x": 1, "who": "later"}'])
    const result = await rollOnce(w, { key: ['x'] })

    expect(result).toMatchObject({ batches: 2, rows: 4, rejectedRows: NON_OBJECTS.length })
    const rows = (await tableRows(w)).map((r) => [Number(r.x), r.who]).sort((a, b) => Number(a[0]) - Number(b[0]))
    expect(rows).toEqual([
      [1, 'later'],
      [2, 'w'],
      [3, null],
    ])
    expectNotAnObjectRejects(w, 'b1')
    expect(w.ledger.reports[0].rejects).toEqual({ rows: NON_OBJECTS.length, batches: 1 })
  })

  it('a batch of nothing but non-objects is an empty roll of rejects; the roll’s other batches commit', async () => {
    for (const key of [undefined, ['x']]) {
      const w = await world({ prepared: true })
      sendArray(w, 'none', '[1, "two", [3], null]')
      send(w, 'good', ['{"x": 5}'])
      const result = await rollOnce(w, { key })
      expect(result).toMatchObject({ batches: 2, rows: 1, rejectedRows: 4 })
      expect(await xs(w)).toEqual([5])
      expect(rejectsOf(w, 'none').map((r) => [r.index, r.reason, r.row])).toEqual([
        [0, 'not_an_object', 1],
        [1, 'not_an_object', 'two'],
        [2, 'not_an_object', [3]],
        [3, 'not_an_object', null],
      ])
      expect(leftovers(w).intake).toEqual([])
    }
  })

  describe('on the scan threads', () => {
    const pool = new ScanPool(1)
    afterAll(() => pool.close())

    it('gives the same rejects as this thread’s scanner', async () => {
      const w = await world({ prepared: true })
      const schema = currentSchema(w.catalog.current.metadata)
      const opts = { formatVersion: 2 as const, constants: ['__ingest_ts'] }
      const body = splitBatch(new TextEncoder().encode(BODY)).ndjson
      const here = new Scanner(schema, opts).scan(body.slice(), { __ingest_ts: 1n })
      const there = await pool.scan(schema, opts, body.slice(), { __ingest_ts: 1n })

      expect(there.rejected).toEqual(here.rejected)
      expect(there.rejected.map((r) => [r.line, r.text, r.rejects])).toEqual(
        NON_OBJECTS.map((i) => [i, ELEMENTS[i], [{ reason: 'not_an_object', got: GOT[i] }]]),
      )
      expect([there.lines, there.columns.rows]).toEqual([ELEMENTS.length, 3])
    })
  })
})

describe('batches an older edge stored (objects only, x-amz-meta-skipped)', () => {
  it('parseSkipped: the skipped indexes sorted, [] without the header, null when unrecorded', () => {
    expect(parseSkipped(undefined)).toEqual([])
    expect(parseSkipped('4,0,2')).toEqual([0, 2, 4])
    expect(parseSkipped('unrecorded')).toBeNull()
  })

  it('elementIndexes: a line’s index in the array sent', () => {
    const lines = [0, 1, 2, 3]
    expect(lines.map(elementIndexes({}))).toEqual([0, 1, 2, 3])
    // elements 0 and 2 were not objects: the stored lines were elements 1, 3, 4, 5
    expect(lines.map(elementIndexes({ skipped: '2,0' }))).toEqual([1, 3, 4, 5])
    expect(lines.map(elementIndexes({ skipped: 'unrecorded' }))).toEqual([null, null, null, null])
  })
})
