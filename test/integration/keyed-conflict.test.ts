// PyIceberg appends rows with the same keys during a keyed roll (issue 6, "Done when"). The roller
// runs in this process (createRoller) and its checkpoint holds the roll at 'data-file' — files
// uploaded, nothing committed — while PyIceberg appends rows carrying some of the roll's keys. The
// overwrite then conflicts, is planned again on the new base, and the result read with PyIceberg is
// one row per key for the roll's keys, the roll's value winning (it is the later). And the lease race:
// another roller commits the held roll's batch; the held roll re-plans, sees it, and commits nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../roller/config.ts'
import { jsonLogger } from '../../roller/log.ts'
import { createRoller, type Roller } from '../../roller/loop.ts'
import { RollerMetrics } from '../../roller/metrics.ts'
import { ensureVenv } from '../support/python.ts'
import { ledgerStates, pyAppend, scan, warehouseId } from '../support/roller-check.ts'
import { rollerEnv, rollerTick } from '../support/roller.ts'
import { database, intakeObjects, newSink, send, uid, type Sink } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

let whId: string
beforeAll(async () => {
  await ensureVenv()
  whId = await warehouseId(stack().warehouse)
}, 15 * 60_000)

const cols = [
  { name: 'x', type: 'long', required: true },
  { name: 'who', type: 'string' },
]

interface InProcess {
  roller: Roller
  logs: Array<Record<string, any>>
  checkpoints: string[]
}

function inProcessRoller(onCheckpoint: (name: string, seen: number) => void | Promise<void>): InProcess {
  const logs: Array<Record<string, any>> = []
  const checkpoints: string[] = []
  const config = loadConfig(rollerEnv({ LHBOX_ROLLER_ID: `kconflict-${uid()}` }))
  const roller = createRoller(
    config,
    jsonLogger({}, (l) => logs.push(JSON.parse(l))),
    new RollerMetrics(),
    async (name) => {
      checkpoints.push(name)
      await onCheckpoint(name, checkpoints.filter((c) => c === name).length)
    },
  )
  return { roller, logs, checkpoints }
}

const rollers: Roller[] = []
afterAll(async () => {
  for (const r of rollers) await r.close()
})

async function sendOk(sink: Sink, rows: unknown[]): Promise<void> {
  const res = await send(sink, rows)
  expect(res.status, res.text).toBe(202)
}

describe('a foreign append during a keyed roll', () => {
  it('PyIceberg appends rows with the roll’s keys while the roll is held: the overwrite re-plans, one row per key, the roll’s value', async () => {
    const sink = await newSink(stack().adminKey, { tableSpec: { columns: cols }, sink: { key: ['x'] } })
    const wh = { sql: whId }
    const warm = inProcessRoller(() => {})
    rollers.push(warm.roller)
    // v1 of keys 1..4, in one file.
    await sendOk(
      sink,
      [1, 2, 3, 4].map((x) => ({ x, who: 'v1' })),
    )
    expect(await warm.roller.tick({ sink: sink.id, force: true })).toEqual({ rolled: 1, failed: 0 })

    // The keyed roll replaces 2, 3 and adds 5; held at its first 'data-file' while PyIceberg appends
    // 2, 5 (the roll's keys) and 7 (not), plus a second 3 in its own append.
    await sendOk(sink, [
      { x: 2, who: 'roll' },
      { x: 3, who: 'roll' },
      { x: 5, who: 'roll' },
    ])
    const foreign: bigint[] = []
    const held = inProcessRoller(async (name, seen) => {
      if (name !== 'data-file' || seen !== 1) return
      foreign.push(
        await pyAppend(wh, sink.table, [
          { x: 2, who: 'py' },
          { x: 5, who: 'py' },
          { x: 7, who: 'py' },
        ]),
      )
      foreign.push(await pyAppend(wh, sink.table, [{ x: 3, who: 'py' }]))
    })
    rollers.push(held.roller)
    const r = await held.roller.tick({ sink: sink.id, force: true })
    expect(r, JSON.stringify(held.logs.filter((l) => l.level === 'error'))).toEqual({ rolled: 1, failed: 0 })
    // Planned twice: the first commit was refused (the table moved), the second made on the new base.
    expect(held.checkpoints.filter((c) => c === 'data-file')).toHaveLength(2)
    expect(held.checkpoints.filter((c) => c === 'commit')).toHaveLength(1)

    const s = await scan(wh, sink.table)
    expect(s.rows.map((row) => [Number(row.x), row.who])).toEqual([
      [1, 'v1'],
      [2, 'roll'],
      [3, 'roll'],
      [4, 'v1'],
      [5, 'roll'],
      [7, 'py'],
    ])
    // The history: the foreign appends are kept as made; the roll's overwrite comes after them.
    const ops = s.snapshots.map((x) => [x.operation, x.summary['lakehousebox.sink.id'] ?? 'foreign'])
    expect(ops).toEqual([
      ['overwrite', sink.id],
      ['append', 'foreign'],
      ['append', 'foreign'],
      ['overwrite', sink.id],
    ])
    const last = s.snapshots.at(-1)!
    expect(last.parent).toBe(foreign[1])
    // The v1 file is partly replaced (2, 3 of 1..4), the first foreign file partly (2, 5 of 2, 5, 7),
    // the second dropped whole (its only row, 3, replaced).
    expect(last.summary).toMatchObject({ 'lakehousebox.sink.rows': '3', 'lakehousebox.sink.rewritten_files': '2', 'deleted-data-files': '3' })

    // The batch is committed, the intake empty, the sink active.
    expect(await intakeObjects(sink.id)).toEqual([])
    const view = (await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })).body
    expect(view).toMatchObject({ state: 'active', lag: { batches_waiting: 0 } })
    expect(view.last_roll.snapshot_id).toBe(String(last.snapshot_id))
  })

  it('a foreign append of other keys only: the re-planned roll keeps every foreign row', async () => {
    const sink = await newSink(stack().adminKey, { tableSpec: { columns: cols }, sink: { key: ['x'] } })
    const wh = { sql: whId }
    await sendOk(sink, [
      { x: 1, who: 'roll' },
      { x: 2, who: 'roll' },
    ])
    const held = inProcessRoller(async (name, seen) => {
      if (name === 'data-file' && seen === 1)
        await pyAppend(wh, sink.table, [
          { x: 10, who: 'py' },
          { x: 11, who: 'py' },
        ])
    })
    rollers.push(held.roller)
    expect(await held.roller.tick({ sink: sink.id, force: true })).toEqual({ rolled: 1, failed: 0 })
    const s = await scan(wh, sink.table)
    expect(s.rows.map((row) => [Number(row.x), row.who])).toEqual([
      [1, 'roll'],
      [2, 'roll'],
      [10, 'py'],
      [11, 'py'],
    ])
    expect(s.snapshots.at(-1)!.summary).toMatchObject({ 'lakehousebox.sink.rewritten_files': '0', 'lakehousebox.sink.key_files_read': '0' })
  })
  it('the lease expired under a held keyed roll: the other roller rolls, the held one re-plans, finds the batch committed and commits nothing', async () => {
    const sink = await newSink(stack().adminKey, { tableSpec: { columns: cols }, sink: { key: ['x'] } })
    const wh = { sql: whId }
    const db = await database()
    try {
      await sendOk(
        sink,
        [1, 2].map((x) => ({ x, who: 'v1' })),
      )
      expect((await rollerTick({ sink: sink.id })).code).toBe(0)
      const batch = `b-${uid()}`
      expect(
        (
          await send(
            sink,
            [
              { x: 2, who: 'v2' },
              { x: 3, who: 'v2' },
            ],
            { batchId: batch },
          )
        ).status,
      ).toBe(202)
      let other: Awaited<ReturnType<typeof rollerTick>> | undefined
      const held = inProcessRoller(async (name, seen) => {
        if (name !== 'data-file' || seen !== 1) return
        await db.query(`update sinks set lease_expires_at = now() - interval '1 second' where id = $1`, [sink.id])
        other = await rollerTick({ sink: sink.id, rollerId: `kconflict-other-${uid()}` })
      })
      rollers.push(held.roller)
      const r = await held.roller.tick({ sink: sink.id, force: true })
      expect(other?.code, other?.stdout).toBe(0)
      expect(r).toEqual({ rolled: 0, failed: 1 })
      // Ended, as an append's roll is in the same race (roller-races), not failed.
      expect(held.logs.filter((l) => l.level === 'error').map((l) => [l.msg, /already holds batch/.test(String(l.error))])).toEqual([
        ['tick ended; the sink waits for the next one', true],
      ])
      expect(held.checkpoints).not.toContain('commit')

      const s = await scan(wh, sink.table)
      expect(s.rows.map((row) => [Number(row.x), row.who])).toEqual([
        [1, 'v1'],
        [2, 'v2'],
        [3, 'v2'],
      ])
      expect(s.snapshots.filter((x) => (x.summary['lakehousebox.sink.batches'] ?? '').split(',').includes(batch))).toHaveLength(1)
      expect(await ledgerStates(db, sink.id)).toMatchObject({ [batch]: 'committed' })
      expect(await intakeObjects(sink.id)).toEqual([])
    } finally {
      await db.end()
    }
  })
})
