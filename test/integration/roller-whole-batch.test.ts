// Whole-batch rejects: a batch the roller cannot parse (batch_unreadable) or an intake object larger
// than a producer may send (batch_too_large, not read) is rejected whole; the sink goes on.
import { beforeAll, describe, expect, it } from 'vitest'
import { ensureVenv } from '../support/python.ts'
import { tickInProcess } from '../support/roller.ts'
import { expectExactlyOnce, scan, warehouseId } from '../support/roller-check.ts'
import { bucket, intakeKey, intakeObjects, newSink, send } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

async function rejectsOf(sinkId: string, batchId: string): Promise<Array<Record<string, unknown>>> {
  const got = await bucket().get(`_sink/${sinkId}/rejects/${batchId}.ndjson`)
  expect(got, `rejects file of ${batchId}`).not.toBeNull()
  return new TextDecoder()
    .decode(got!.body)
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
}

// PyIceberg reads the tables back: the pinned venv first (it may be built on a fresh machine), not
// inside a test's own time.
beforeAll(() => ensureVenv(), 15 * 60_000)

describe('whole-batch rejects', () => {
  it('rejects an unreadable batch and a too-large one whole, and rolls the others', async () => {
    const sink = await newSink(stack().adminKey)
    expect((await send(sink, [{ x: 1 }, { x: 2 }], { batchId: 'good-1' })).status).toBe(202)
    const received = new Date().toISOString().replace('Z', '000Z')
    // Stored as if by the edge, but not JSON a roller can read: invalid UTF-8, then broken JSON.
    await bucket().put(intakeKey(sink.id, 'bad-utf8'), new Uint8Array([0x7b, 0x22, 0x78, 0x22, 0x3a, 0xff, 0xfe, 0x7d, 0x0a]), {
      contentType: 'application/x-ndjson',
      metadata: { received, rows: '1', sink: sink.id },
    })
    await bucket().put(intakeKey(sink.id, 'bad-json'), '{"x": 3}\n{"x": \n', {
      contentType: 'application/x-ndjson',
      metadata: { received, rows: '2', sink: sink.id },
    })
    // Larger than a producer's batch may be: never read.
    const big = new Uint8Array(16 * 1024 * 1024 + 1).fill(0x20)
    await bucket().put(intakeKey(sink.id, 'too-big'), big, { contentType: 'application/x-ndjson', metadata: { received, rows: '7', sink: sink.id } })
    expect((await send(sink, [{ x: 4 }], { batchId: 'good-2' })).status).toBe(202)

    const tick = await tickInProcess({ sink: sink.id, rollerId: `whole-${sink.id}` })
    expect(tick.code, tick.stdout + tick.stderr).toBe(0)

    expect(await rejectsOf(sink.id, 'bad-utf8')).toEqual([
      { batch_id: 'bad-utf8', index: null, reason: 'batch_unreadable', error: expect.stringMatching(/UTF-8/), row: null },
    ])
    expect(await rejectsOf(sink.id, 'bad-json')).toEqual([
      { batch_id: 'bad-json', index: null, reason: 'batch_unreadable', error: expect.any(String), row: null },
    ])
    expect(await rejectsOf(sink.id, 'too-big')).toEqual([
      { batch_id: 'too-big', index: null, reason: 'batch_too_large', error: expect.stringMatching(/16777217 bytes/), row: null },
    ])

    const table = await scan({ sql: await warehouseId(stack().warehouse) }, sink.table)
    expectExactlyOnce(table, [1, 2, 4])
    expect((await intakeObjects(sink.id)).filter((k) => !k.includes('/rejects/'))).toEqual([])
    const view = await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })
    expect(view.body.state).toBe('active')
    expect(view.body.last_roll).toMatchObject({ batches: 5, rows: 3, rejected_rows: 1 + 2 + 7 })
    expect(view.body.rejects).toMatchObject({ rows_total: 10, batches_with_rejects: 3 })
  }, 120_000)
})
