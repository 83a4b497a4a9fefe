// npm run bench:age — what a table's age costs once manifests are merged: 10,000 one-row appends
// through our commit path (appendFiles, the roller's append: merged manifests at min-count 100) on
// the SQL catalog, with the roller's maintenance sweep (roller/maintain.ts: compact, rewrite the
// manifests, expire to 20, clean up) every 1,000 rolls, as a sink at the 60 s floor would see in a week.
//
// Starts its own Postgres (+ migrations) and s3rver on loopback ports in a temp folder, like
// bench:commit. Each roll commits a one-row Parquet file on the table the previous commit returned
// (timed: appendFiles, whose catalog commit loads the current metadata itself; the file is written
// while the previous roll commits). PyIceberg (test/bench/age_plan.py, SqlCatalog on the
// same Postgres) times `table.scan().plan_files()` (median of 5, manifest cache cleared each time) at
// 100 rolls and at the end, after and before the last sweep; it also counts the manifests after the
// first sweep and reads back the row count and sum(id), which must be exact before anything is printed.
//
//   BENCH_ROLLS=2000 npm run bench:age      (fewer rolls; BENCH_SWEEP_EVERY changes the 1,000)
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { migrateTo } from '../../db/migrate.ts'
import { freePort } from '../../dev/ports.ts'
import { startPostgres } from '../../dev/postgres.ts'
import { startS3rver } from '../../dev/s3.ts'
import type { LoadedTable } from '../../iceberg/catalog/index.ts'
import { SqlCatalog } from '../../iceberg/catalog/sql.ts'
import { S3FileIO } from '../../iceberg/io/file-io.ts'
import { readManifestList, type DataFile } from '../../iceberg/manifest/manifest.ts'
import { currentSchema, currentSnapshot } from '../../iceberg/spec/metadata.ts'
import { writeDataFile, type Compression } from '../../iceberg/parquet/data-file.ts'
import { appendFiles } from '../../iceberg/transaction/merge-append.ts'
import { loadZstd } from '../../iceberg/parquet/zstd.ts'
import type { SinkView } from '../../roller/api.ts'
import { jsonLogger } from '../../roller/log.ts'
import { maintainTable, type MaintenanceResult } from '../../roller/maintain.ts'
import { ensureVenv, runPython, sqlCatalogArgs, toExact } from '../support/python.ts'
import { Cleanup, deadline, fmt } from './common.ts'

const ROLLS = Number(process.env.BENCH_ROLLS ?? 10_000)
const SWEEP_EVERY = Number(process.env.BENCH_SWEEP_EVERY ?? 1000)
const WINDOW = 100
const DEADLINE_MS = 25 * 60_000
const CATALOG = 'bench'
const NS = 'bench'
const NAME = 'age'
const RETRY = { attempts: 5, minBackoffMs: 20, maxBackoffMs: 100 }
/** What the roller's first roll sets on a sink table (roller/roll.ts). */
const PROPERTIES = { 'write.metadata.delete-after-commit.enabled': 'true', 'write.metadata.previous-versions-max': '5' }
const FIELDS = [
  { id: 1, name: 'id', type: 'long', required: true },
  { id: 2, name: 'name', type: 'string', required: false },
]
const POLICY = { retainSnapshots: 20, targetFileSizeBytes: 128 * 1024 * 1024, orphanOlderThanMs: 24 * 3600_000 }

const log = (line: string) => console.error(`[bench:age] ${line}`)
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

interface Plan {
  median_ms: number
  plan_ms: number[]
  files: bigint
  manifests: bigint
  snapshots: bigint
  row_count?: bigint
  sum?: bigint
}

async function oneRowFile(table: LoadedTable, id: number, compression: Compression): Promise<DataFile> {
  const { bytes, metrics } = writeDataFile(currentSchema(table.metadata), [{ id: BigInt(id), name: `row ${id}` }], { compression })
  const filePath = `${table.metadata.location}/data/${crypto.randomUUID()}.parquet`
  await table.io.write(filePath, bytes, 'application/vnd.apache.parquet')
  return { filePath, fileFormat: 'PARQUET', partition: {}, ...metrics } as DataFile
}

/** Roll i's data file, written ahead (while roll i-1 commits): the bench times commits, not PUTs. */
function writeAhead(table: LoadedTable, id: number, compression: Compression): Promise<DataFile> {
  const p = oneRowFile(table, id, compression)
  p.catch(() => undefined) // awaited by its roll, which sees the error
  return p
}

async function manifestCount(table: LoadedTable): Promise<number> {
  const list = currentSnapshot(table.metadata)?.['manifest-list']
  return list ? (await readManifestList(await table.io.read(list))).manifests.length : 0
}

async function main(): Promise<void> {
  if (!Number.isSafeInteger(ROLLS) || ROLLS < 1 || !Number.isSafeInteger(SWEEP_EVERY) || SWEEP_EVERY < 1)
    throw new Error('BENCH_ROLLS and BENCH_SWEEP_EVERY must be positive integers')
  const cleanup = new Cleanup()
  deadline(cleanup, DEADLINE_MS, 'bench:age')
  const dir = mkdtempSync(join(tmpdir(), 'lhbox-bench-age-'))
  cleanup.add(() => rmSync(dir, { recursive: true, force: true }))
  try {
    await ensureVenv()
    const postgres = await startPostgres(dir, await freePort())
    cleanup.add(() => postgres.stop())
    await migrateTo(postgres.url)
    const s3 = await startS3rver(dir, await freePort(), 'bench')
    cleanup.add(() => s3.child.stop())
    const pool = new pg.Pool({ connectionString: postgres.url, max: 2 })
    cleanup.add(() => pool.end())
    const { endpoint, region, accessKeyId, secretAccessKey } = s3.config
    const catalog = new SqlCatalog({
      name: CATALOG,
      sql: pool,
      warehouseLocation: `s3://${s3.config.bucket}/warehouse`,
      io: new S3FileIO({ endpoint, region, accessKeyId, secretAccessKey }),
    })
    const compression = await loadZstd()
    const quiet = jsonLogger({}, () => {})
    const script = join(dirname(fileURLToPath(import.meta.url)), 'age_plan.py')
    const pyArgs = sqlCatalogArgs({ databaseUrl: postgres.url, catalogName: CATALOG, s3: s3.config })
    const pyPlan = async (read = false): Promise<Plan> =>
      toExact(await runPython(script, [...pyArgs, `${NS}.${NAME}`, ...(read ? ['--read', 'id'] : [])], undefined, { timeoutMs: 600_000 }))
    const sink = { id: NAME, table: { namespace: NS, name: NAME } } as SinkView

    // Warm up on a table of its own, so rolls 1–WINDOW are not timed while the code is still cold.
    let warm = await catalog.createTable([NS], { name: `${NAME}_warmup`, schema: { fields: FIELDS }, formatVersion: 2, properties: PROPERTIES })
    for (let i = 1; i <= 50; i++) warm = (await appendFiles(catalog, warm, [await writeAhead(warm, i, compression)], { retry: RETRY })).table

    let table = await catalog.createTable([NS], { name: NAME, schema: { fields: FIELDS }, formatVersion: 2, properties: PROPERTIES })
    const commit: number[] = []
    const sweeps: Array<MaintenanceResult & { at: number; manifests: number; snapshots: number }> = []
    let planAt100: Plan | undefined
    let planFirstSweep: Plan | undefined
    let planBeforeLast: Plan | undefined
    const started = performance.now()
    let ahead = writeAhead(table, 1, compression)
    for (let i = 1; i <= ROLLS; i++) {
      const file = await ahead
      if (i < ROLLS) ahead = writeAhead(table, i + 1, compression)
      const t0 = performance.now()
      table = (await appendFiles(catalog, table, [file], { retry: RETRY })).table
      commit.push(performance.now() - t0)
      if (i === Math.min(100, ROLLS)) planAt100 = await pyPlan()
      if (i % SWEEP_EVERY === 0) {
        if (i === ROLLS) planBeforeLast = await pyPlan()
        const r = await maintainTable(sink, catalog, POLICY, quiet, { retry: RETRY })
        table = await catalog.loadTable(table.identifier)
        sweeps.push({ ...r, at: i, manifests: await manifestCount(table), snapshots: table.metadata.snapshots.length })
        if (sweeps.length === 1) planFirstSweep = await pyPlan()
      }
      if (i % 1000 === 0)
        log(
          `${fmt(i)} rolls in ${((performance.now() - started) / 1000).toFixed(0)} s; last commit ${commit.at(-1)!.toFixed(1)} ms; ${table.metadata.snapshots.length} snapshots, ${await manifestCount(table)} manifests`,
        )
    }
    const rollSeconds = (performance.now() - started) / 1000
    const final = await pyPlan()

    // The table at its age of ROLLS rolls, at the same point of the sweep cycle as rolls 1–WINDOW
    // (right after a sweep): WINDOW more rolls. Rolls just before a sweep carry up to SWEEP_EVERY
    // snapshots in metadata.json whatever the table's age; that figure is printed too.
    const after: number[] = []
    for (let i = ROLLS + 1; i <= ROLLS + WINDOW; i++) {
      const file = await writeAhead(table, i, compression)
      const t0 = performance.now()
      table = (await appendFiles(catalog, table, [file], { retry: RETRY })).table
      after.push(performance.now() - t0)
    }

    // Read back before anything is printed: every row once.
    const rows = ROLLS + WINDOW
    const readBack = await pyPlan(true)
    const expectedSum = (BigInt(rows) * BigInt(rows + 1)) / 2n
    if (readBack.row_count !== BigInt(rows) || readBack.sum !== expectedSum) {
      throw new Error(`PyIceberg read back ${readBack.row_count} rows, sum(id) ${readBack.sum}; expected ${rows} and ${expectedSum}`)
    }

    const first = commit.slice(0, WINDOW)
    const last = commit.slice(-WINDOW)
    const lastFrom = Math.max(1, ROLLS - WINDOW + 1)
    const [l1, l5, l15] = loadavg()
    console.log(
      `bench:age — ${fmt(ROLLS)} one-row appends through appendFiles (SQL catalog: Postgres + s3rver, loopback) in ${rollSeconds.toFixed(0)} s; sweep every ${fmt(SWEEP_EVERY)} (compact, rewrite manifests, expire to 20, clean up)`,
    )
    console.log(
      `commit median:  rolls 1–${Math.min(WINDOW, ROLLS)} ${median(first).toFixed(1)} ms; at ${fmt(ROLLS)} rolls (the ${WINDOW} after its sweep) ${median(after).toFixed(1)} ms → ${(median(after) / median(first)).toFixed(2)}× (target ≤ 1.3×)`,
    )
    console.log(
      `                rolls ${fmt(lastFrom)}–${fmt(ROLLS)}, the end of a sweep cycle (${fmt(SWEEP_EVERY)} more snapshots in metadata.json): ${median(last).toFixed(1)} ms (${(median(last) / median(first)).toFixed(2)}×)`,
    )
    const p100 = planAt100!
    const shape = (p: Plan) => `${p.manifests} manifests, ${p.files} files, ${p.snapshots} snapshots`
    console.log(`PyIceberg plan_files, median of 5 (manifest cache cleared each time):`)
    console.log(`  at ${fmt(Math.min(100, ROLLS))} rolls:      ${p100.median_ms.toFixed(1)} ms  (${shape(p100)})`)
    console.log(
      `  at ${fmt(ROLLS)} rolls:   ${final.median_ms.toFixed(1)} ms  (${shape(final)})  → ${(final.median_ms / p100.median_ms).toFixed(2)}× (target ≤ 1.3×)`,
    )
    if (planBeforeLast)
      console.log(
        `  at ${fmt(ROLLS)} rolls, before that sweep: ${planBeforeLast.median_ms.toFixed(1)} ms  (${shape(planBeforeLast)})  → ${(planBeforeLast.median_ms / p100.median_ms).toFixed(2)}×`,
      )
    if (sweeps.length) {
      const s = sweeps[0]
      console.log(`manifests after maintain at ${fmt(s.at)} rolls: ${s.manifests} (PyIceberg: ${planFirstSweep!.manifests}; target ≤ 4)`)
    } else {
      console.log(`manifests after maintain: no sweep ran (BENCH_ROLLS < ${SWEEP_EVERY})`)
    }
    console.log(`read back by PyIceberg: ${readBack.row_count} rows, sum(id) ${readBack.sum} (exact)`)
    console.log(`load average: ${l1.toFixed(2)} ${l5.toFixed(2)} ${l15.toFixed(2)} (1/5/15 min)`)
    console.log(`sweeps:   at  expired  compacted  manifests replaced→created  seconds  → snapshots manifests`)
    for (const s of sweeps) {
      console.log(
        `${fmt(s.at).padStart(7)} ${String(s.snapshotsExpired).padStart(8)} ${String(s.filesCompacted).padStart(10)} ${String(s.manifestsRewritten).padStart(12)}→${String(s.manifestsCreated).padEnd(11)} ${s.seconds.toFixed(2).padStart(8)}    ${String(s.snapshots).padStart(9)} ${String(s.manifests).padStart(9)}`,
      )
    }
  } finally {
    await cleanup.run()
  }
}

await main()
