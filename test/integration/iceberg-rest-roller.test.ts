// Engines beside the roller (issue 28, part 4): a sink's table is also written by DuckDB 1.5.5 through
// lhbox's REST catalog (ATTACH with a write key, INSERT), before the first roll, between rolls, in the
// middle of a roll (its commit then conflicts and retries on DuckDB's snapshot) and after roller
// kills — so the roll that must be recognised on restart is no longer the current snapshot. Read back
// with PyIceberg's RestCatalog: every sent row once, every DuckDB row once; the ledger committed, the
// intake empty. Exactly once by recovery counts every retained snapshot, not the latest (the spec).
import type pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { ctx, deleteCatalogSinks, duck, scan, setupCatalogProjects } from '../support/iceberg-rest.ts'
import { holdSink, inProcessRoller, rollerTick, tickInProcess } from '../support/roller.ts'
import { bucket, database, ledger, newSink, send, uid } from '../support/sinks.ts'
import { call } from '../support/stack.ts'

let db: pg.Client
beforeAll(async () => {
  await setupCatalogProjects()
  db = await database()
}, 15 * 60_000)
afterAll(async () => {
  await deleteCatalogSinks()
  await db?.end()
})

it('DuckDB inserts between rolls, during one and around roller kills: every sent row once, every DuckDB row once', { timeout: 180_000 }, async () => {
  const sink = await newSink(ctx.project.key, { tableSpec: { warehouse: ctx.project.warehouse }, sink: { warehouse: ctx.project.warehouse } })
  // No other roller (another file's roller service) rolls it meanwhile: every tick here is this roller's.
  const rollerId = `engines-${uid()}`
  await holdSink(sink.id, rollerId)
  const insert = (x: number) => duck({ token: ctx.writeKey }, { exec: [`INSERT INTO cat.${sink.table} (x, who) VALUES (${x}, 'duck')`] })
  const sendRows = async (i: number) => {
    const batchId = `e${i}-${uid()}`
    const res = await send(
      sink,
      [
        { x: i * 10 + 1, who: 'sent' },
        { x: i * 10 + 2, who: 'sent' },
      ],
      { batchId },
    )
    expect(res.status, res.text).toBe(202)
    return batchId
  }
  const killedAt = async (killAt: string) => {
    const t = await rollerTick({ sink: sink.id, killAt, rollerId })
    expect({ killAt, signal: t.signal }, t.stdout + t.stderr).toEqual({ killAt, signal: 'SIGKILL' })
  }

  // DuckDB writes first: the first roll adds __ingest_ts to a table that has DuckDB's snapshot.
  await insert(101)
  const b1 = await sendRows(1)
  // Killed right after its commit (no marker, b1 still in the intake); DuckDB commits on top of it.
  await killedAt('commit')
  await insert(102)

  // Restarted: step 2 finds b1 in a snapshot that is no longer current and deletes it, then rolls b2.
  // DuckDB commits while the roll validates, so the roll's commit conflicts and goes again on DuckDB's.
  const b2 = await sendRows(2)
  let raced = false
  const p = inProcessRoller({ LHBOX_ROLLER_ID: rollerId }, async (name) => {
    if (name !== 'rejects' || raced) return
    raced = true
    await insert(103)
  })
  try {
    const result = await p.roller.tick({ sink: sink.id, force: true })
    expect(result.failed, JSON.stringify(p.logs)).toBe(0)
  } finally {
    await p.roller.close()
  }
  expect(raced).toBe(true)
  expect(p.logs.filter((l) => l.msg === 'repaired a consumed batch').map((l) => l.batch_id)).toEqual([b1])
  expect(await p.metrics.registry.getSingleMetricAsString('lhbox_commit_retries_total')).toMatch(/ [1-9]\d*$/m)

  // Killed before its report (batches deleted, marker left); DuckDB commits; restarted twice.
  const b3 = await sendRows(3)
  await killedAt('before-report')
  await insert(104)
  for (const n of [1, 2]) {
    const t = await tickInProcess({ sink: sink.id, rollerId })
    expect({ n, code: t.code }, t.stdout + t.stderr).toEqual({ n, code: 0 })
  }

  // PyIceberg through the same catalog: each row once.
  const read = await scan(ctx.readKey, sink.table)
  expect(read.rows.map((r: any) => [r.x, r.who])).toEqual([
    [11n, 'sent'],
    [12n, 'sent'],
    [21n, 'sent'],
    [22n, 'sent'],
    [31n, 'sent'],
    [32n, 'sent'],
    [101n, 'duck'],
    [102n, 'duck'],
    [103n, 'duck'],
    [104n, 'duck'],
  ])
  // Each batch named by exactly one of the sink's snapshots; DuckDB's snapshots name none.
  const named = read.snapshots.flatMap((s: any) => (s.summary['lakehousebox.sink.batches'] ?? '').split(',').filter(Boolean))
  expect(named.sort()).toEqual([b1, b2, b3].sort())
  // The ledger committed, with the snapshots that name them; nothing left in the intake but nothing else.
  const rows = await ledger(db, sink.id)
  expect(rows.map((r) => [r.batch_id, r.state]).sort()).toEqual([b1, b2, b3].map((b) => [b, 'committed']).sort())
  const left: string[] = []
  for await (const o of bucket().list(`_sink/${sink.id}/`)) left.push(o.key)
  expect(left).toEqual([])
  const view = (await call(`/v1/sinks/${sink.id}`, { key: ctx.project.key })).body
  expect(view.lag).toMatchObject({ batches_waiting: 0 })
})
