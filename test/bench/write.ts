// npm run bench:write — our writer against PyIceberg, side by side, on the same rows.
//
// Starts its own Postgres (+ migrations, so iceberg_tables exists) and s3rver on loopback ports in a
// temp folder, generates one NDJSON file of {id: long, name: string, ts: timestamptz} rows
// (BENCH_ROWS, default 1,000,000), then, BENCH_RUNS times (default 3; test/bench/harness.ts), appends
// all of them to two fresh unpartitioned v2 tables of the SQL catalog, each writer in its own child
// process, the order of the two alternated between runs:
//   ours:      `writeOurs` below, in a Node child: NDJSON in 16 MiB chunks of whole lines → the ingest
//              scanner on the roller's scan threads (column buffers) → PartitionedWriter (row groups,
//              zstd) → PUT → append, committed (LHBOX_ROLLER_SCAN_THREADS=0: one thread)
//   pyiceberg: test/bench/pyiceberg_write.py — pyarrow.json.read_json (explicit schema) → table.append
// Work time: ours = the whole writeOurs call; pyiceberg = from its constructed catalog (SqlCatalog
// checks its tables when made: untimed, printed apart) to the committed snapshot; start-up and imports
// excluded on both sides. Process time and peak RSS from /usr/bin/time. After each run PyIceberg reads
// both tables back: BENCH_ROWS rows and sum(id) equal to the generated input's, or the bench fails.
// Prints medians of each side, the ratios and the load average; then stops the services.
//
//   BENCH_ROWS=200000 BENCH_RUNS=3 npm run bench:write     (fewer rows for a quick look)
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { migrateTo } from '../../db/migrate.ts'
import { freePort } from '../../dev/ports.ts'
import { startPostgres } from '../../dev/postgres.ts'
import { startS3rver } from '../../dev/s3.ts'
import { SqlCatalog } from '../../iceberg/catalog/sql.ts'
import { appendFiles } from '../../iceberg/transaction/merge-append.ts'
import { S3FileIO } from '../../iceberg/io/file-io.ts'
import type { S3Config } from '../../iceberg/io/s3.ts'
import { stringifyLossless } from '../../iceberg/spec/json.ts'
import { currentSchema } from '../../iceberg/spec/metadata.ts'
import { Scanner, type ScannedBatch } from '../../iceberg/ingest/scan.ts'
import { ScanPool } from '../../roller/scan-pool.ts'
import { PartitionedWriter, uploadDataFiles } from '../../iceberg/writer/partitioned.ts'
import { loadZstd } from '../../iceberg/parquet/zstd.ts'
import { ensureVenv, sqlCatalogArgs } from '../support/python.ts'
import { fmt } from './common.ts'
import { BENCH_DIR, envInt, lastJson, measured, num, printSummary, runBench, sideBySide, startBench, type Expected } from './harness.ts'

const ROWS = envInt('BENCH_ROWS', 1_000_000)
const CHILD_TIMEOUT_MS = 15 * 60_000
const CATALOG = 'bench'
// The NDJSON is scanned in pieces of whole lines about this big (a producer's batch is at most 16 MiB).
const CHUNK_BYTES = envInt('BENCH_CHUNK_MIB', 8) * 1024 * 1024
const SELF = fileURLToPath(import.meta.url)

/** What a writer gets: the catalog (Postgres + bucket), the NDJSON file, and its table. */
export interface WriteEnv {
  databaseUrl: string
  catalogName: string
  s3: S3Config
  ndjson: string
  /** namespace.table */
  table: string
}

export interface WriteOutcome {
  rows: number
  fileBytes?: number
  /** seconds per step, when the writer reports them */
  phases?: Record<string, number>
}

// ---- ours: the only part that changes when the writer changes -------------------------------------------

/** Appends every row of env.ndjson to env.table and commits; the child around it times the call. */
export async function writeOurs(env: WriteEnv, scanPool: ScanPool | null = null): Promise<WriteOutcome> {
  const pool = new pg.Pool({ connectionString: env.databaseUrl, max: 2 })
  const { endpoint, region, accessKeyId, secretAccessKey } = env.s3
  const catalog = new SqlCatalog({
    name: env.catalogName,
    sql: pool,
    warehouseLocation: `s3://${env.s3.bucket}/warehouse`,
    io: new S3FileIO({ endpoint, region, accessKeyId, secretAccessKey }),
  })
  const [ns, name] = env.table.split('.')
  const compression = await loadZstd()
  const started = performance.now()
  const table = await catalog.loadTable({ namespace: [ns], name })
  const schema = currentSchema(table.metadata)
  const writer = new PartitionedWriter(table, compression)
  // The file in chunks of whole lines (as the roller reads batches of at most 16 MiB), each scanned
  // into column buffers on the roller's scan threads and handed to the writer in order, which encodes
  // a row group at a time while the next chunks are scanned.
  const scanner = new Scanner(schema, { formatVersion: 2 })
  const inflight: Promise<ScannedBatch>[] = []
  const drain = async (keep: number) => {
    while (inflight.length > keep) {
      const out = await inflight.shift()!
      if (out.rejected.length > 0) throw new Error(`rows refused: ${stringifyLossless(out.rejected.slice(0, 3))}`)
      writer.append(out.columns)
    }
  }
  const scan = async (chunk: Uint8Array) => {
    inflight.push(scanPool ? scanPool.scan(schema, { formatVersion: 2 }, chunk, {}) : Promise.resolve(scanner.scan(chunk)))
    await drain(2 * (scanPool?.size ?? 0))
  }
  let carry: Uint8Array = new Uint8Array(0)
  for await (const piece of createReadStream(env.ndjson, { highWaterMark: CHUNK_BYTES }) as AsyncIterable<Buffer>) {
    const bytes = new Uint8Array(piece.buffer, piece.byteOffset, piece.byteLength)
    const cut = bytes.lastIndexOf(0x0a) + 1
    if (cut === 0) {
      carry = concat(carry, bytes)
      continue
    }
    await scan(concat(carry, bytes.subarray(0, cut)))
    carry = bytes.slice(cut)
  }
  if (carry.length > 0) await scan(carry)
  await drain(0)
  const phases: Record<string, number> = {}
  let mark = started
  const lap = (name: string) => {
    const now = performance.now()
    phases[name] = (now - mark) / 1000
    mark = now
  }
  lap('read+scan+encode row groups')
  const files = writer.finish(crypto.randomUUID())
  lap('finish')
  await uploadDataFiles(table, files)
  lap('PUT')
  await appendFiles(
    catalog,
    table,
    files.map((f) => f.dataFile),
  )
  lap('append')
  await pool.end()
  return { rows: writer.rows, fileBytes: files.reduce((n, f) => n + f.bytes.length, 0), phases }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b
  const out = new Uint8Array(a.length + b.length)
  out.set(a)
  out.set(b, a.length)
  return out
}

// ---- the child process around writeOurs ----------------------------------------------------------

async function child(env: WriteEnv): Promise<void> {
  // The scan threads start (load their code) before the clock does, as the roller service's are
  // already running when a roll comes; the Python side's imports are not timed either.
  const threads = Number(process.env.LHBOX_ROLLER_SCAN_THREADS ?? availableParallelism())
  const pool = threads > 0 ? new ScanPool(threads) : null
  await pool?.warm()
  const started = performance.now()
  const out = await writeOurs(env, pool)
  const seconds = (performance.now() - started) / 1000
  await pool?.close()
  process.stdout.write(stringifyLossless({ ...out, seconds }) + '\n')
}

// ---- the orchestrator ----------------------------------------------------------------------------

/** The input file; answers the exact sum of the ids. */
async function generate(path: string, rows: number): Promise<bigint> {
  const out = createWriteStream(path)
  const base = Date.UTC(2026, 2, 1) * 1000
  const write = (s: string) => (out.write(s) ? Promise.resolve() : new Promise<void>((r) => out.once('drain', () => r())))
  let chunk = ''
  let sum = 0n
  for (let i = 0; i < rows; i++) {
    const micros = base + i * 86_400_001 // one row per ~86.4 s, distinct microseconds
    const ts = new Date(Math.floor(micros / 1000)).toISOString().slice(0, 19) + '.' + String(micros % 1_000_000).padStart(6, '0') + 'Z'
    const id = i % 2 === 0 ? 9223372036854775807n - BigInt(i) : BigInt(i)
    sum += id
    chunk += `{"id": ${id}, "name": "device-${(i * 7919) % 100_003}-${i % 13 === 0 ? 'ünïcode' : 'ascii'}", "ts": "${ts}"}\n`
    if (chunk.length > 1 << 20) {
      await write(chunk)
      chunk = ''
    }
  }
  await write(chunk)
  await new Promise<void>((r) => out.end(() => r()))
  return sum
}

async function main(): Promise<void> {
  const b = startBench('bench:write', 60 * 60_000)
  await runBench(b, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lhbox-bench-write-'))
    b.cleanup.add(() => rmSync(dir, { recursive: true, force: true }))
    const python = await ensureVenv()
    const postgres = await startPostgres(dir, await freePort())
    b.cleanup.add(() => postgres.stop())
    await migrateTo(postgres.url)
    const s3 = await startS3rver(dir, await freePort(), 'bench')
    b.cleanup.add(() => s3.child.stop())

    const ndjson = join(dir, 'rows.ndjson')
    const t = performance.now()
    const idSum = await generate(ndjson, ROWS)
    b.log(`generated ${fmt(ROWS)} rows in ${((performance.now() - t) / 1000).toFixed(1)} s`)
    const expected: Expected = { rows: ROWS, sums: { id: idSum.toString() } }

    const pool = new pg.Pool({ connectionString: postgres.url, max: 2 })
    b.cleanup.add(() => pool.end())
    const { endpoint, region, accessKeyId, secretAccessKey } = s3.config
    const catalog = new SqlCatalog({
      name: CATALOG,
      sql: pool,
      warehouseLocation: `s3://${s3.config.bucket}/warehouse`,
      io: new S3FileIO({ endpoint, region, accessKeyId, secretAccessKey }),
    })
    const fields = [
      { id: 1, name: 'id', type: 'long', required: true },
      { id: 2, name: 'name', type: 'string', required: false },
      { id: 3, name: 'ts', type: 'timestamptz', required: true },
    ]
    const catalogArgs = sqlCatalogArgs({ databaseUrl: postgres.url, catalogName: CATALOG, s3: s3.config })
    const envOf = (table: string): WriteEnv => ({ databaseUrl: postgres.url, catalogName: CATALOG, s3: s3.config, ndjson, table })
    const tables = (run: number) => ({ ours: `bench.ours_r${run}`, pyiceberg: `bench.pyiceberg_r${run}` })

    const results = await sideBySide(b, {
      catalogArgs,
      prepare: async (run) => {
        for (const t of Object.values(tables(run))) await catalog.createTable(['bench'], { name: t.split('.')[1], schema: { fields }, formatVersion: 2 })
        return tables(run)
      },
      ours: {
        name: 'ours (Node)',
        run: async (t) => {
          const m = await measured(process.execPath, ['--import', 'tsx', SELF, '--child', JSON.stringify(envOf(t.ours))], {
            timeoutMs: CHILD_TIMEOUT_MS,
            what: 'ours (Node child)',
          })
          const out = lastJson(m.stdout, 'ours (Node child)')
          if (num(out.rows) !== ROWS) throw new Error(`ours wrote ${out.rows} rows, expected ${ROWS}`)
          const extra: Record<string, number> = { 'file MiB': num(out.fileBytes ?? NaN) / 2 ** 20 }
          for (const [k, v] of Object.entries((out.phases ?? {}) as Record<string, unknown>)) extra[`${k} s`] = num(v)
          return { workSeconds: num(out.seconds), wallSeconds: m.wallSeconds, maxRssKib: m.maxRssKib, extra }
        },
        check: (t) => ({ side: 'ours', table: t.ours, expected }),
      },
      baseline: {
        name: 'pyiceberg (pyarrow)',
        run: async (t) => {
          const m = await measured(python, [join(BENCH_DIR, 'pyiceberg_write.py'), ...catalogArgs, t.pyiceberg, ndjson], {
            timeoutMs: CHILD_TIMEOUT_MS,
            what: 'pyiceberg_write.py',
            env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
          })
          const out = lastJson(m.stdout, 'pyiceberg_write.py')
          if (num(out.rows) !== ROWS) throw new Error(`pyiceberg wrote ${out.rows} rows, expected ${ROWS}`)
          return {
            workSeconds: num(out.seconds),
            wallSeconds: m.wallSeconds,
            maxRssKib: m.maxRssKib,
            extra: { 'file MiB': num(out.file_bytes) / 2 ** 20, 'catalog (untimed) s': num(out.connect_seconds) },
          }
        },
        check: (t) => ({ side: 'pyiceberg', table: t.pyiceberg, expected }),
      },
    })
    printSummary(b, {
      title: [`bench:write — ${fmt(ROWS)} rows {long, string, timestamptz}, one NDJSON file → one committed append (SQL catalog, s3rver, loopback)`],
      rows: ROWS,
      names: { ours: 'ours (Node)', baseline: 'pyiceberg (pyarrow)' },
      results,
    })
  })
}

// Run as a script only (the new writer's tests may import writeOurs from here).
if (process.argv[1] && resolve(process.argv[1]) === SELF) {
  const childAt = process.argv.indexOf('--child')
  if (childAt >= 0) await child(JSON.parse(process.argv[childAt + 1]) as WriteEnv)
  else await main()
}
