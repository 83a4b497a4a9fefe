// A rolling upgrade from the previous release (test/upgrade/previous-release.txt, built from the git
// history by test/support/previous-release.ts) to this tree, in DEPLOY.md's order, while a producer
// keeps sending (issue 31, item 4):
//   1. a database of its own migrated to the previous release's migrations; its Node edge and its
//      roller service (`run`) serve six sinks;
//   2. this tree's migrations applied (db:migrate's migrateTo) while that edge serves sends and that
//      roller rolls; the old roller must go on rolling on the new schema;
//   3. this tree's edge started, and its roller service beside the old one on the same sinks until it
//      has rolled too (sends still on the old edge); the edge's address (a proxy, as a load balancer or
//      a Worker deploy) moved to the new edge, so sends and the old roller reach it, until the old
//      roller has rolled through it (a batch the old edge took, sent again to the new one, is a
//      duplicate); the old roller stopped (SIGTERM);
//   4. drained (a forced tick): PyIceberg reads every acknowledged row of every sink exactly once,
//      the ledger holds every batch committed, no send was answered other than 2xx in any step (no window is allowed),
//      and neither roller logged an error.
// The sinks roll by inactivity (10 s, the floor): the producer's bursts move from sink to sink, so
// each goes quiet long enough between them. The steps wait for what they need (polls with generous
// bounds), not for set times.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { migrate } from 'drizzle-orm/node-postgres/migrator'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrateTo } from '../../db/migrate.ts'
import { nodeDb, nodePool } from '../../db/node.ts'
import { rollerCommand } from '../../dev/roller.ts'
import { startChild, waitFor, type Child } from '../../dev/process.ts'
import { startEdge, type Edge } from '../support/edge.ts'
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts'
import { freePorts } from '../support/ports.ts'
import { previousRelease, type PreviousRelease } from '../support/previous-release.ts'
import { Producer } from '../support/producers.ts'
import { runPython, sqlCatalogArgs, toExact } from '../support/python.ts'
import { rollerEnv, rollerTick } from '../support/roller.ts'
import { poll, send, uid, type Sink } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

const SINKS = 6
const INACTIVITY_SECONDS = 10
/** A burst per sink; the others' bursts (5 × 2.5 s) keep it quiet past its inactivity_seconds. */
const BURST_MS = 2_500
/** Bounds for a slow machine, not timing asserts. */
const ROLL_WAIT_MS = 90_000

/** A roller service (`run`) in a child, its log kept. */
class RollerService {
  readonly proc: ChildProcess
  out = ''
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
  constructor(
    readonly id: string,
    cmd: string,
    args: string[],
    env: Record<string, string>,
  ) {
    this.proc = spawn(cmd, args, { env: { ...(process.env as Record<string, string>), ...env, LHBOX_ROLLER_ID: id }, stdio: ['ignore', 'pipe', 'pipe'] })
    this.proc.stdout?.setEncoding('utf8').on('data', (d: string) => (this.out += d))
    this.proc.stderr?.setEncoding('utf8').on('data', (d: string) => (this.out += `[stderr] ${d}`))
    this.exit = new Promise((res) => this.proc.once('exit', (code, signal) => res({ code, signal })))
  }

  logs(from = 0): Array<Record<string, any>> {
    return this.out
      .slice(from)
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, any>)
  }

  /** Rolls that committed rows, from offset `from` of the log on. */
  rolls(from = 0): number {
    return this.logs(from).filter((l) => l.msg === 'rolled' && l.rows > 0).length
  }

  async stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill('SIGTERM')
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 60_000)
    const out = await this.exit
    clearTimeout(timer)
    return out
  }
}

describe('rolling upgrade from the previous release', { timeout: 240_000 }, () => {
  const dbName = `upgrade_${uid()}`
  const dir = mkdtempSync(join(tmpdir(), 'lhbox-upgrade-'))
  let url: string
  let admin: pg.Client
  let db: pg.Client
  let previous: PreviousRelease
  let oldEdge: Child | undefined
  let newEdge: Edge | undefined
  let lb: FaultProxy | undefined
  const rollers: RollerService[] = []
  let producer: Producer | undefined

  beforeAll(async () => {
    const started = Date.now()
    previous = await previousRelease()
    console.log(`previous release ${previous.commit.slice(0, 7)} (${previous.packages} packages) ready in ${Date.now() - started} ms`)
    admin = new pg.Client({ connectionString: stack().databaseUrl })
    await admin.connect()
    await admin.query(`create database ${dbName}`)
    url = stack().databaseUrl.replace(/\/[^/?]+(\?|$)/, `/${dbName}$1`)
    const pool = nodePool(url, 1)
    try {
      await migrate(nodeDb(pool), { migrationsFolder: previous.migrations })
    } finally {
      await pool.end()
    }
    db = new pg.Client({ connectionString: url })
    await db.connect()
  })

  afterAll(async () => {
    await producer?.stop().catch(() => undefined)
    for (const r of rollers) await r.stop()
    await lb?.stop()
    await newEdge?.stop()
    await oldEdge?.stop()
    await db?.end()
    await admin?.query(`drop database if exists ${dbName} with (force)`)
    await admin?.end()
    rmSync(dir, { recursive: true, force: true })
  })

  it('upgrades edge, schema and roller while sends go on: every row once, no answer but 2xx', async () => {
    const t0 = Date.now()
    const mark = (what: string) => console.log(`${((Date.now() - t0) / 1000).toFixed(1)} s: ${what}`)
    // Each wait ends at once when a send was answered other than 2xx: no window is allowed.
    const until = (check: () => Promise<boolean>, what: string) =>
      poll(
        async () => {
          producer?.assertNoFailures()
          return check()
        },
        ROLL_WAIT_MS,
        what,
      )

    // 1. The previous release: its edge on its schema, a project, six sinks, its roller service.
    const [port] = await freePorts(1)
    const oldEdgeUrl = `http://127.0.0.1:${port}`
    oldEdge = startChild('old edge', process.execPath, [previous.edge], join(dir, 'old-edge.log'), {
      env: { ...process.env, ...stack().edgeVars, DATABASE_URL: url, LHBOX_EDGE_PORT: String(port), LHBOX_EDGE_HOST: '127.0.0.1' },
    })
    await waitFor('the previous release’s edge', async () => (await fetch(`${oldEdgeUrl}/healthz`)).status === 200, 60_000, oldEdge)
    // The edge's address as producers and rollers know it: a proxy moved to the new edge at its deploy.
    lb = await startFaultProxy(oldEdgeUrl)
    const { key, warehouseId } = await project(oldEdgeUrl)
    const sinks: Sink[] = []
    for (let i = 0; i < SINKS; i++) sinks.push(await sinkOn(oldEdgeUrl, key, i))
    const env = (edge: string) =>
      rollerEnv({ LHBOX_URL: edge, DATABASE_URL: url, LHBOX_ROLLER_TICK_SECONDS: '1', LHBOX_ROLLER_LEASE_SECONDS: '30', LHBOX_ROLLER_WAREHOUSES: warehouseId })
    const oldRoller = new RollerService(`old-${uid()}`, process.execPath, [previous.roller, 'run'], env(lb.url))
    rollers.push(oldRoller)
    producer = new Producer(sinks, lb.url, { rowsPerBatch: 5, burstMs: BURST_MS, pauseMs: 20, prefix: `u-${uid()}` })
    producer.phase = 'old release'
    producer.start()
    await producer.acceptedInPhase(20)
    mark('the previous release serves')

    // 2. This tree's migrations while the old edge serves and the old roller rolls.
    producer.phase = 'migrating'
    const before = await appliedMigrations()
    const migrating = Date.now()
    await migrateTo(url, stack().secretsKey)
    const migrateMs = Date.now() - migrating
    const after = await appliedMigrations()
    expect(after).toBeGreaterThan(before)
    mark(`migrations ${before} → ${after} applied in ${migrateMs} ms`)
    producer.phase = 'old release on the new schema'
    const oldFrom = oldRoller.out.length
    await until(async () => oldRoller.rolls(oldFrom) > 0, 'a roll by the previous release’s roller on the new schema')
    mark('the old roller rolled on the new schema')

    // 3. This tree's edge (its /internal for its roller), and its roller beside the old one until it has
    // rolled, while sends still reach the old edge; then the edge's address moves to the new edge (sends
    // and the old roller both reach it) until the old roller has rolled through it; then the old one stops.
    newEdge = await startEdge('node', { DATABASE_URL: url })
    const { cmd, args } = rollerCommand(['run'])
    const newRoller = new RollerService(`new-${uid()}`, cmd, args, env(newEdge.url))
    rollers.push(newRoller)
    producer.phase = 'both rollers, old edge'
    await until(async () => newRoller.rolls() > 0, 'a roll by the current roller beside the old one')
    mark(`the new roller rolled beside the old one (old: ${oldRoller.rolls()} rolls so far)`)
    lb.retarget(newEdge.url)
    producer.phase = 'both rollers, new edge'
    // A batch the old edge acknowledged, retried on the new one (same id, same body): a duplicate, stored once.
    const [sinkId, [batchId, xs]] = [...producer.acked].map(([id, m]) => [id, [...m][0]] as const)[0]
    const again = await send(sinks.find((s) => s.id === sinkId)!, Producer.rows(xs), { batchId, base: newEdge.url })
    expect({ status: again.status, duplicate: again.body?.duplicate }, again.text).toEqual({ status: 200, duplicate: true })
    const throughNew = oldRoller.out.length
    await until(async () => oldRoller.rolls(throughNew) > 0, 'a roll by the old roller through the new edge')
    mark('the old roller rolled through the new edge')
    expect(await oldRoller.stop()).toEqual({ code: 0, signal: null })
    producer.phase = 'new edge, new roller'
    await producer.acceptedInPhase(20)
    await producer.stop()
    mark(`the producer stopped after ${producer.batches} batches`)

    // 4. Drained (one forced tick of the current roller beside its service, rather than waiting out
    // inactivity_seconds: a sink the service holds is left to it): nothing waits in the ledger; every
    // row once in every table; every answer a 2xx.
    const drain = await rollerTick({ env: env(newEdge.url) })
    expect(drain.code, drain.stdout + drain.stderr).toBe(0)
    await until(
      async () => (await db.query(`select count(*)::int as n from batches where state in ('receiving', 'pending')`)).rows[0].n === 0,
      'every batch rolled',
    )
    mark('drained')
    const states = await db.query(`select state, count(*)::int as n from batches group by state`)
    expect(Object.fromEntries(states.rows.map((r) => [r.state, r.n]))).toEqual({ committed: producer.batches })
    // PyIceberg, all six tables in one interpreter: each table's x values, sorted.
    const { tables } = toExact(
      await runPython(
        'pyiceberg_tables_ids.py',
        [...sqlCatalogArgs({ databaseUrl: url, catalogName: warehouseId, s3: stack().s3 }), '--column', 'x'],
        undefined,
        {
          input: JSON.stringify(sinks.map((s) => s.table)),
        },
      ),
    )
    for (const s of sinks) {
      const sent = [...producer.acked.get(s.id)!.values()].flat().sort((a, b) => a - b)
      const read = (tables[s.table].ids as unknown[]).map(Number)
      expect({ sink: s.name, rows: read }).toEqual({ sink: s.name, rows: sent })
    }
    console.log(
      `slowest answer per step (ms): ${JSON.stringify(Object.fromEntries(producer.slowest))}; 2xx per step: ${JSON.stringify(Object.fromEntries(producer.okByPhase))}`,
    )
    expect(producer.failures).toEqual([])
    for (const r of rollers)
      expect(
        r.logs().filter((l) => l.level === 'error'),
        r.id,
      ).toEqual([])
    mark(`checked: ${producer.batches} batches, old roller ${oldRoller.rolls()} rolls, new roller ${newRoller.rolls()}`)
  })

  /** The rows of drizzle's migration journal in this database. */
  async function appliedMigrations(): Promise<number> {
    return (await db.query('select count(*)::int as n from drizzle.__drizzle_migrations')).rows[0].n
  }
})

/** A project with an admin key and a SQL-catalog warehouse, through an edge. */
async function project(base: string): Promise<{ key: string; warehouseId: string }> {
  const k = await call('/internal/keys', { base, key: stack().bootstrapSecret, json: { project: 'upgrade', level: 'admin' } })
  if (k.status !== 201) throw new Error(`POST /internal/keys: ${k.status} ${k.text}`)
  const w = await call('/v1/warehouses', { base, key: k.body.key, json: { name: 'main', catalog: { type: 'sql' } } })
  if (w.status !== 201) throw new Error(`POST /v1/warehouses: ${w.status} ${w.text}`)
  return { key: k.body.key, warehouseId: w.body.id }
}

/** A table (x long, who string) and a sink on it rolled after INACTIVITY_SECONDS of quiet. */
async function sinkOn(base: string, key: string, i: number): Promise<Sink> {
  const table = `upgrade.t${i}_${uid()}`
  const t = await call('/v1/tables', {
    base,
    key,
    json: {
      warehouse: 'main',
      table,
      columns: [
        { name: 'x', type: 'long', required: true },
        { name: 'who', type: 'string' },
      ],
    },
  })
  if (t.status !== 201) throw new Error(`POST /v1/tables: ${t.status} ${t.text}`)
  const name = `s${i}_${uid()}`
  const s = await call('/v1/sinks', { base, key, json: { warehouse: 'main', name, table, inactivity_seconds: INACTIVITY_SECONDS } })
  if (s.status !== 201) throw new Error(`POST /v1/sinks: ${s.status} ${s.text}`)
  return { id: s.body.id, name, table, sendKey: s.body.send_key, created: s }
}
