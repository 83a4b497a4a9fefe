// Keyed sinks, the basic promise: the latest row per key wins across rolls, inside a roll and inside
// a batch; a null key is a row reject; a key that follows arrival time rewrites nothing.
import { beforeAll, describe, expect, it } from 'vitest'
import { ensureVenv } from '../support/python.ts'
import { tickInProcess } from '../support/roller.ts'
import { scan, warehouseId } from '../support/roller-check.ts'
import { newSink, send } from '../support/sinks.ts'
import { stack } from '../support/stack.ts'

const cols = [
  { name: 'x', type: 'long', required: true },
  { name: 'who', type: 'string' },
]

async function tick(sinkId: string) {
  const r = await tickInProcess({ sink: sinkId, rollerId: `keyed-${sinkId}` })
  expect(r.code, r.stdout + r.stderr).toBe(0)
  return r
}

// PyIceberg reads the tables back: the pinned venv first (it may be built on a fresh machine), not
// inside a test's own time.
beforeAll(() => ensureVenv(), 15 * 60_000)

describe('a keyed sink', () => {
  it('keeps the latest row per key across rolls, inside a roll and inside a batch', async () => {
    const sink = await newSink(stack().adminKey, { tableSpec: { columns: cols }, sink: { key: ['x'] } })
    const wh = { sql: await warehouseId(stack().warehouse) }
    expect(
      (
        await send(sink, [
          { x: 1, who: 'a' },
          { x: 2, who: 'a' },
          { x: 1, who: 'b' },
        ])
      ).status,
    ).toBe(202)
    expect(
      (
        await send(sink, [
          { x: 2, who: 'c' },
          { x: 3, who: 'c' },
          { x: null, who: 'no key' },
        ])
      ).status,
    ).toBe(202)
    await tick(sink.id)
    const first = await scan(wh, sink.table)
    expect(first.rows.map((r) => [r.x, r.who])).toEqual([
      [1n, 'b'],
      [2n, 'c'],
      [3n, 'c'],
    ])

    expect(
      (
        await send(sink, [
          { x: 3, who: 'd' },
          { x: 4, who: 'd' },
        ])
      ).status,
    ).toBe(202)
    await tick(sink.id)
    const second = await scan(wh, sink.table)
    expect(second.rows.map((r) => [r.x, r.who])).toEqual([
      [1n, 'b'],
      [2n, 'c'],
      [3n, 'd'],
      [4n, 'd'],
    ])
    const last = second.snapshots.at(-1)!
    expect(last.operation).toBe('overwrite')
    expect(last.summary).toMatchObject({
      'lakehousebox.sink.id': sink.id,
      'lakehousebox.sink.rewritten_files': '1',
      'deleted-data-files': '1',
      'added-data-files': '2',
    })
  })

  it('a key that follows arrival time rewrites 0 bytes: the previous roll’s file is dropped whole', async () => {
    const sink = await newSink(stack().adminKey, { tableSpec: { columns: cols }, sink: { key: ['x'] } })
    const wh = { sql: await warehouseId(stack().warehouse) }
    expect(
      (
        await send(sink, [
          { x: 1, who: 'v1' },
          { x: 2, who: 'v1' },
        ])
      ).status,
    ).toBe(202)
    await tick(sink.id)
    expect(
      (
        await send(sink, [
          { x: 1, who: 'v2' },
          { x: 2, who: 'v2' },
        ])
      ).status,
    ).toBe(202)
    await tick(sink.id)
    const s = await scan(wh, sink.table)
    expect(s.rows.map((r) => [r.x, r.who])).toEqual([
      [1n, 'v2'],
      [2n, 'v2'],
    ])
    expect(s.snapshots.at(-1)!.summary).toMatchObject({
      'lakehousebox.sink.rewritten_bytes': '0',
      'lakehousebox.sink.rewritten_files': '0',
      'deleted-data-files': '1',
      'added-data-files': '1',
      'total-data-files': '1',
    })
  })
})
