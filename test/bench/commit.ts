// npm run bench:commit — what a table's history costs each commit, and what the maintenance sweep
// gives back: the time of one small commit (a 1-row fastAppend through the SQL catalog, the roll's
// commit) at 1, 20 and 200 retained snapshots, without and with maintenance, side by side.
//
// Starts its own Postgres (+ migrations, for iceberg_tables) and s3rver on loopback ports in a temp
// folder. Six unpartitioned v2 tables {id long, name string} with the sink tables' retention
// properties, each built by N one-row fast appends (N = 1, 20, 200: N snapshots, N manifests, N data
// files); the "with" tables then get the roller's sweep (roller/maintain.ts maintainTable: expire to
// 20, delete the unreachable files, compact). Then, round-robin over the six tables so drift hits all
// alike, each sample times loadTable (the roll's step 1) and fastAppend of one pre-written data file
// (manifest, manifest list over the parent's manifests, metadata file, compare-and-swap), and then
// puts the table back where it was (the catalog row's metadata_location, untimed): every sample commits
// on the same history. Prints the medians, the table shapes and the ratios; stops everything.
//
//   BENCH_SAMPLES=41 npm run bench:commit      (more samples; default 21, plus 3 warm-up rounds)
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { migrateTo } from '../../db/migrate.ts'
import { freePort } from '../../dev/ports.ts'
import { startPostgres } from '../../dev/postgres.ts'
import { startS3rver } from '../../dev/s3.ts'
import type { LoadedTable, TableIdentifier } from '../../iceberg/catalog/index.ts'
import { SqlCatalog } from '../../iceberg/catalog/sql.ts'
import { appendFiles } from '../../iceberg/transaction/merge-append.ts'
import { S3FileIO } from '../../iceberg/io/file-io.ts'
import { readManifestList, type DataFile } from '../../iceberg/manifest/manifest.ts'
import { currentSchema, currentSnapshot } from '../../iceberg/spec/metadata.ts'
import { writeDataFile, type Compression } from '../../iceberg/parquet/data-file.ts'
import { loadZstd } from '../../iceberg/parquet/zstd.ts'
import type { SinkView } from '../../roller/api.ts'
import { jsonLogger } from '../../roller/log.ts'
import { maintainTable } from '../../roller/maintain.ts'

const SIZES = [1, 20, 200] as const
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 21)
const WARMUP = 3
const DEADLINE_MS = 15 * 60_000
const CATALOG = 'bench'
const NS = 'bench'
const RETRY = { attempts: 5, minBackoffMs: 20, maxBackoffMs: 100 }
/** What the roller's first roll sets on a sink table (roller/roll.ts). */
const PROPERTIES = { 'write.metadata.delete-after-commit.enabled': 'true', 'write.metadata.previous-versions-max': '5' }
const FIELDS = [
  { id: 1, name: 'id', type: 'long', required: true },
  { id: 2, name: 'name', type: 'string', required: false },
]

const log = (line: string) => console.error(`[bench:commit] ${line}`)

interface Subject {
  size: number
  maintained: boolean
  id: TableIdentifier
  /** The state every sample starts from. */
  metadataLocation: string
  snapshots: number
  manifests: number
  metadataBytes: number
  file: DataFile
  load: number[]
  commit: number[]
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

async function oneRowFile(table: LoadedTable, id: number, compression: Compression): Promise<DataFile> {
  const { bytes, metrics } = writeDataFile(currentSchema(table.metadata), [{ id: BigInt(id), name: `row ${id}` }], { compression })
  const filePath = `${table.metadata.location}/data/${crypto.randomUUID()}.parquet`
  await table.io.write(filePath, bytes, 'application/vnd.apache.parquet')
  return { filePath, fileFormat: 'PARQUET', partition: {}, ...metrics } as DataFile
}

async function shape(table: LoadedTable): Promise<{ snapshots: number; manifests: number; metadataBytes: number }> {
  const current = currentSnapshot(table.metadata)
  const manifests = current?.['manifest-list'] ? (await readManifestList(await table.io.read(current['manifest-list']))).manifests.length : 0
  const metadataBytes = (await table.io.read(table.metadataLocation)).length
  return { snapshots: table.metadata.snapshots.length, manifests, metadataBytes }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'lhbox-bench-commit-'))
  const stops: Array<() => Promise<unknown>> = []
  const stopAll = async () => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => undefined)
    rmSync(dir, { recursive: true, force: true })
  }
  const timer = setTimeout(() => {
    console.error(`bench:commit: still running after ${DEADLINE_MS / 1000} s; stopping everything`)
    void stopAll().finally(() => process.exit(2))
  }, DEADLINE_MS)
  timer.unref()
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stopAll().finally(() => process.exit(130)))

  try {
    const postgres = await startPostgres(dir, await freePort())
    stops.push(() => postgres.stop())
    await migrateTo(postgres.url)
    const s3 = await startS3rver(dir, await freePort(), 'bench')
    stops.push(() => s3.child.stop())
    const pool = new pg.Pool({ connectionString: postgres.url, max: 2 })
    stops.push(() => pool.end())
    const { endpoint, region, accessKeyId, secretAccessKey } = s3.config
    const catalog = new SqlCatalog({
      name: CATALOG,
      sql: pool,
      warehouseLocation: `s3://${s3.config.bucket}/warehouse`,
      io: new S3FileIO({ endpoint, region, accessKeyId, secretAccessKey }),
    })
    const compression = await loadZstd()
    const quiet = jsonLogger({}, () => {})

    // ---- the six tables ----
    const subjects: Subject[] = []
    for (const size of SIZES) {
      for (const maintained of [false, true]) {
        const name = `t${size}_${maintained ? 'with' : 'without'}`
        const t0 = performance.now()
        let table = await catalog.createTable([NS], { name, schema: { fields: FIELDS }, formatVersion: 2, properties: PROPERTIES })
        for (let i = 0; i < size; i++) table = (await appendFiles(catalog, table, [await oneRowFile(table, i, compression)], { retry: RETRY })).table
        let sweep = ''
        if (maintained) {
          const sink = { id: name, table: { namespace: NS, name } } as SinkView
          const r = await maintainTable(
            sink,
            catalog,
            { retainSnapshots: 20, targetFileSizeBytes: 128 * 1024 * 1024, orphanOlderThanMs: 24 * 3600_000 },
            quiet,
            { retry: RETRY },
          )
          sweep = `; sweep: ${r.snapshotsExpired} expired, ${r.filesDeleted} files deleted, ${r.filesCompacted} compacted in ${r.seconds.toFixed(2)} s`
          table = await catalog.loadTable(table.identifier)
        }
        const s = await shape(table)
        subjects.push({
          size,
          maintained,
          id: table.identifier,
          metadataLocation: table.metadataLocation,
          ...s,
          metadataBytes: s.metadataBytes,
          file: await oneRowFile(table, 1_000_000, compression),
          load: [],
          commit: [],
        })
        log(
          `${name}: ${size} appends in ${((performance.now() - t0) / 1000).toFixed(1)} s${sweep} → ${s.snapshots} snapshots, ${s.manifests} manifests, metadata ${(s.metadataBytes / 1024).toFixed(1)} KiB`,
        )
      }
    }

    // ---- the samples, round-robin; each commit is undone (untimed) ----
    for (let round = 0; round < WARMUP + SAMPLES; round++) {
      for (const sub of subjects) {
        const t0 = performance.now()
        const table = await catalog.loadTable(sub.id)
        const t1 = performance.now()
        await appendFiles(catalog, table, [sub.file], { retry: RETRY })
        const t2 = performance.now()
        if (table.metadataLocation !== sub.metadataLocation) throw new Error(`${sub.id.name} moved: ${table.metadataLocation}`)
        const res = await pool.query(
          'update iceberg_tables set metadata_location = $1, previous_metadata_location = null where catalog_name = $2 and table_namespace = $3 and table_name = $4',
          [sub.metadataLocation, CATALOG, NS, sub.id.name],
        )
        if (res.rowCount !== 1) throw new Error(`cannot reset ${sub.id.name}`)
        if (round >= WARMUP) {
          sub.load.push(t1 - t0)
          sub.commit.push(t2 - t1)
        }
      }
    }

    // ---- the report ----
    const of = (size: number, maintained: boolean) => subjects.find((s) => s.size === size && s.maintained === maintained)!
    const cell = (s: Subject) =>
      `${median(s.commit).toFixed(1).padStart(7)} ms ${median(s.load).toFixed(1).padStart(6)} ms  ${String(s.snapshots).padStart(4)} ${String(s.manifests).padStart(4)} ${(s.metadataBytes / 1024).toFixed(1).padStart(6)}`
    console.log(
      `bench:commit — a 1-row fastAppend through the SQL catalog (Postgres + s3rver, loopback); medians of ${SAMPLES} samples, each on the same history`,
    )
    console.log(`                 without maintenance                           with maintenance (expire to 20, clean up, compact)`)
    console.log(`appends       commit    load  snaps mnfs  meta KiB          commit    load  snaps mnfs  meta KiB`)
    for (const size of SIZES) console.log(`${String(size).padStart(7)}   ${cell(of(size, false))}        ${cell(of(size, true))}`)
    const c = (size: number, m: boolean) => median(of(size, m).commit)
    const l = (size: number, m: boolean) => median(of(size, m).commit) + median(of(size, m).load)
    console.log(
      `ratios (commit): 200/1 without ${(c(200, false) / c(1, false)).toFixed(2)}x, 200/1 with ${(c(200, true) / c(1, true)).toFixed(2)}x, 200 with/without ${(c(200, true) / c(200, false)).toFixed(2)}x; 20/1 without ${(c(20, false) / c(1, false)).toFixed(2)}x`,
    )
    console.log(
      `ratios (load + commit): 200/1 without ${(l(200, false) / l(1, false)).toFixed(2)}x, 200 with/without ${(l(200, true) / l(200, false)).toFixed(2)}x`,
    )
  } finally {
    await stopAll()
  }
}

await main()
