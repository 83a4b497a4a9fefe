// "A keyed sink rolls its batches in the order they arrived" (spec), across rolls too. The store's
// listing gives Last-Modified in whole seconds, so two batches received in the same second must still
// be rolled in arrival order when a roll's 1,000-batch limit falls between them: the later one is
// received first into the table by the first roll, and the earlier one — rolled next — must not
// replace it. Read with PyIceberg.
import { describe, expect, it } from 'vitest'
import { rollerTick } from '../support/roller.ts'
import { scan, warehouseId } from '../support/roller-check.ts'
import { bucket, intakeKey, newSink, send } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

const cols = [
  { name: 'x', type: 'long', required: true },
  { name: 'who', type: 'string' },
]

async function tick(sinkId: string) {
  const r = await rollerTick({ sink: sinkId, rollerId: `korder-${sinkId}` })
  expect(r.code, r.stdout + r.stderr).toBe(0)
  return r
}

describe('arrival order across rolls', () => {
  it('two batches of one second, split by the 1,000-batch limit: the later-received value wins', { timeout: 180_000 }, async () => {
    const sink = await newSink(stack().adminKey, { tableSpec: { columns: cols }, sink: { key: ['x'] } })
    // 999 fillers (ids sorting first), then — in one second — `zzz` with the old value and `aaa` with
    // the new. Sorted by (second, id) the first roll's 1,000 are the fillers and `aaa`; `zzz` is left.
    const fillers = Array.from({ length: 999 }, (_, i) => i)
    for (let i = 0; i < fillers.length; i += 50) {
      const answers = await Promise.all(
        fillers.slice(i, i + 50).map((n) => send(sink, [{ x: 1000 + n, who: 'filler' }], { batchId: `0-${String(n).padStart(4, '0')}` })),
      )
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 202))
    }
    // Just after a second boundary, so both land in one second (two local sends take milliseconds).
    await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 20))
    expect((await send(sink, [{ x: 1, who: 'old' }], { batchId: 'zzz' })).status).toBe(202)
    expect((await send(sink, [{ x: 1, who: 'new' }], { batchId: 'aaa' })).status).toBe(202)
    const [z, a] = await Promise.all([bucket().head(intakeKey(sink.id, 'zzz')), bucket().head(intakeKey(sink.id, 'aaa'))])
    expect(a!.metadata.received > z!.metadata.received).toBe(true)
    expect(z!.lastModified.getTime(), 'the two sends did not land in one second: run again').toBe(a!.lastModified.getTime())

    await tick(sink.id)
    expect((await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })).body.lag.batches_waiting).toBeGreaterThan(0)
    await tick(sink.id)
    expect((await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })).body.lag.batches_waiting).toBe(0)
    const s = await scan({ sql: await warehouseId(stack().warehouse) }, sink.table)
    expect(s.rows.filter((r) => Number(r.x) === 1).map((r) => r.who)).toEqual(['new'])
    expect(s.rows).toHaveLength(1000)
  })
})
