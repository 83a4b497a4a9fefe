// npm run bench:write — our writer against PyIceberg, side by side, on the same 1,000,000 rows.
//
// Starts its own Postgres (+ migrations, so iceberg_tables exists) and s3rver on loopback ports in a
// temp folder, generates one NDJSON file of {id: long, name: string, ts: timestamptz} rows, then runs
// each writer in its own process, one after the other, each appending all the rows to its own
// unpartitioned v2 table in the SQL catalog:
//   ours:      NDJSON lines → parseLossless → toRow → writeDataFile(zstd) → PUT → fastAppend (committed)
//   pyiceberg: NDJSON → pyarrow.json.read_json (explicit schema) → table.append (zstd, its default)
// Each child times itself from its first read of the NDJSON to the committed snapshot and reports
// its peak RSS (process.resourceUsage().maxRSS / resource.getrusage ru_maxrss). Prints rows/s of
// each, the ratio, and peak RSS; then stops the services and removes the folder.
//
//   BENCH_ROWS=200000 npm run bench:write     (fewer rows for a quick look)
import { spawn } from 'node:child_process'
import { createReadStream, createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { migrateTo } from '../../db/migrate.ts'
import { freePort } from '../../dev/ports.ts'
import { startPostgres } from '../../dev/postgres.ts'
import { startS3rver } from '../../dev/s3.ts'
import { SqlCatalog } from '../../iceberg/catalog/sql.ts'
import { fastAppend } from '../../iceberg/commit.ts'
import { S3FileIO } from '../../iceberg/io/file-io.ts'
import type { S3Config } from '../../iceberg/io/s3.ts'
import { parseLossless } from '../../iceberg/json.ts'
import { currentSchema } from '../../iceberg/metadata.ts'
import { writeDataFile } from '../../iceberg/parquet.ts'
import type { Row } from '../../iceberg/types.ts'
import { toRow } from '../../iceberg/values.ts'
import { loadZstd } from '../../iceberg/zstd.ts'
import { ensureVenv, INTEROP_DIR } from '../support/python.ts'

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000)
const CHILD_TIMEOUT_MS = 15 * 60_000
const CATALOG = 'bench'
const SELF = fileURLToPath(import.meta.url)

interface Env {
  databaseUrl: string
  s3: S3Config
  ndjson: string
  table: string // namespace.table
}

interface Result {
  writer: string
  rows: number
  seconds: number
  maxRssMiB: number
  fileBytes?: number
  /** seconds per step (ours only) */
  phases?: Record<string, number>
}

// ---- the two writers (child processes) ----

async function ours(env: Env): Promise<Result> {
  const pool = new pg.Pool({ connectionString: env.databaseUrl, max: 2 })
  const { endpoint, region, accessKeyId, secretAccessKey } = env.s3
  const catalog = new SqlCatalog({ name: CATALOG, sql: pool, warehouseLocation: `s3://${env.s3.bucket}/warehouse`, io: new S3FileIO({ endpoint, region, accessKeyId, secretAccessKey }) })
  const [ns, name] = env.table.split('.')
  const compression = await loadZstd()
  const started = performance.now()
  const table = await catalog.loadTable({ namespace: [ns], name })
  const schema = currentSchema(table.metadata)
  const rows: Row[] = []
  const lines = createInterface({ input: createReadStream(env.ndjson), crlfDelay: Infinity })
  for await (const line of lines) {
    if (!line) continue
    const r = toRow(schema, parseLossless(line))
    if (!r.ok) throw new Error(`row ${rows.length + 1} refused: ${JSON.stringify(r.rejects)}`)
    rows.push(r.row)
  }
  const phases: Record<string, number> = {}
  let mark = started
  const lap = (name: string) => {
    const now = performance.now()
    phases[name] = (now - mark) / 1000
    mark = now
  }
  lap('read+parseLossless+toRow')
  const { bytes, metrics: m } = writeDataFile(schema, rows, { compression })
  lap('writeDataFile')
  const filePath = `${table.metadata.location}/data/${crypto.randomUUID()}.parquet`
  await table.io.write(filePath, bytes)
  lap('PUT')
  await fastAppend(catalog, table, [{
    filePath, fileFormat: 'PARQUET', partition: {}, recordCount: m.recordCount, fileSizeInBytes: m.fileSizeInBytes,
    columnSizes: m.columnSizes, valueCounts: m.valueCounts, nullValueCounts: m.nullValueCounts, nanValueCounts: m.nanValueCounts,
    lowerBounds: m.lowerBounds, upperBounds: m.upperBounds, splitOffsets: m.splitOffsets,
  }])
  lap('fastAppend')
  const seconds = (performance.now() - started) / 1000
  await pool.end()
  return { writer: 'ours (Node)', rows: rows.length, seconds, maxRssMiB: process.resourceUsage().maxRSS / 1024, fileBytes: bytes.length, phases }
}

const PYICEBERG_WRITER = String.raw`
import argparse, resource, sys, time
from interop_common import add_connection_args, emit, load_catalog
import pyarrow as pa, pyarrow.json as pj

p = argparse.ArgumentParser()
add_connection_args(p)
p.add_argument("table")
p.add_argument("ndjson")
a = p.parse_args()
catalog = load_catalog(a)
started = time.perf_counter()
table = catalog.load_table(a.table)
schema = pa.schema([("id", pa.int64(), False), ("name", pa.large_string()), ("ts", pa.timestamp("us", tz="UTC"), False)])
data = pj.read_json(a.ndjson, parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="error"))
data = data.cast(schema)  # read_json leaves every field nullable; the table has required ones
table.append(data)
seconds = time.perf_counter() - started
files = list(table.refresh().scan().plan_files())
emit({"writer": "pyiceberg (pyarrow)", "rows": data.num_rows, "seconds": seconds,
      "maxRssMiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
      "fileBytes": sum(f.file.file_size_in_bytes for f in files)})
`

// ---- the orchestrator ----

function runChild(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<Result> {
  return new Promise((res, rej) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
    const out: Buffer[] = []
    const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_TIMEOUT_MS)
    child.stdout.on('data', (b: Buffer) => out.push(b))
    child.on('error', rej)
    child.on('close', (code) => {
      clearTimeout(timer)
      const text = Buffer.concat(out).toString().trim()
      if (code !== 0) return rej(new Error(`${cmd} ${args[0]} exited with ${code}: ${text}`))
      try {
        res(JSON.parse(text.split('\n').at(-1)!))
      } catch {
        rej(new Error(`${cmd} printed no result: ${text}`))
      }
    })
  })
}

async function generate(path: string, rows: number): Promise<void> {
  const out = createWriteStream(path)
  const base = Date.UTC(2026, 2, 1) * 1000
  const write = (s: string) => (out.write(s) ? Promise.resolve() : new Promise<void>((r) => out.once('drain', () => r())))
  let chunk = ''
  for (let i = 0; i < rows; i++) {
    const micros = base + i * 86_400_001 // one row per ~86.4 s, distinct microseconds
    const ts = new Date(Math.floor(micros / 1000)).toISOString().slice(0, 19) + '.' + String(micros % 1_000_000).padStart(6, '0') + 'Z'
    const id = i % 2 === 0 ? 9223372036854775807n - BigInt(i) : BigInt(i)
    chunk += `{"id": ${id}, "name": "device-${(i * 7919) % 100_003}-${i % 13 === 0 ? 'ünïcode' : 'ascii'}", "ts": "${ts}"}\n`
    if (chunk.length > 1 << 20) {
      await write(chunk)
      chunk = ''
    }
  }
  await write(chunk)
  await new Promise<void>((r) => out.end(() => r()))
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'lhbox-bench-'))
  const stops: Array<() => Promise<void>> = []
  try {
    const python = await ensureVenv()
    const postgres = await startPostgres(dir, await freePort())
    stops.push(() => postgres.stop())
    await migrateTo(postgres.url)
    const s3 = await startS3rver(dir, await freePort(), 'bench')
    stops.push(() => s3.child.stop())

    const ndjson = join(dir, 'rows.ndjson')
    let t = performance.now()
    await generate(ndjson, ROWS)
    console.error(`generated ${ROWS.toLocaleString('en')} rows in ${((performance.now() - t) / 1000).toFixed(1)} s`)

    const pool = new pg.Pool({ connectionString: postgres.url, max: 2 })
    const { endpoint, region, accessKeyId, secretAccessKey } = s3.config
    const catalog = new SqlCatalog({ name: CATALOG, sql: pool, warehouseLocation: `s3://${s3.config.bucket}/warehouse`, io: new S3FileIO({ endpoint, region, accessKeyId, secretAccessKey }) })
    const fields = [{ id: 1, name: 'id', type: 'long', required: true }, { id: 2, name: 'name', type: 'string', required: false }, { id: 3, name: 'ts', type: 'timestamptz', required: true }]
    for (const name of ['ours', 'pyiceberg']) await catalog.createTable(['bench'], { name, schema: { fields }, formatVersion: 2 })

    const results: Result[] = []
    const oursEnv: Env = { databaseUrl: postgres.url, s3: s3.config, ndjson, table: 'bench.ours' }
    t = performance.now()
    results.push({ ...(await runChild(process.execPath, ['--import', 'tsx', SELF, '--child', JSON.stringify(oursEnv)], {})) })
    const oursWall = (performance.now() - t) / 1000

    const script = join(dir, 'pyiceberg_writer.py')
    writeFileSync(script, PYICEBERG_WRITER)
    const s3args = ['--s3-endpoint', endpoint, '--s3-access-key-id', accessKeyId, '--s3-secret-access-key', secretAccessKey, '--s3-region', region]
    t = performance.now()
    results.push(await runChild(python, [script, '--sql-uri', postgres.url, '--catalog-name', CATALOG, ...s3args, 'bench.pyiceberg', ndjson], { PYTHONPATH: INTEROP_DIR }))
    const pyWall = (performance.now() - t) / 1000

    // both tables hold every row
    for (const name of ['ours', 'pyiceberg']) {
      const loaded = await catalog.loadTable({ namespace: ['bench'], name })
      const total = loaded.metadata.snapshots.at(-1)?.summary['total-records']
      if (total !== String(ROWS)) throw new Error(`bench.${name}: total-records ${total}, expected ${ROWS}`)
    }
    await pool.end()

    const [a, b] = results
    const rate = (r: Result) => r.rows / r.seconds
    const line = (r: Result, wall: number) =>
      `${r.writer.padEnd(22)} ${Math.round(rate(r)).toLocaleString('en').padStart(10)} rows/s  ${r.seconds.toFixed(2).padStart(7)} s  (process ${wall.toFixed(2)} s)  peak RSS ${Math.round(r.maxRssMiB).toLocaleString('en').padStart(6)} MiB  file ${((r.fileBytes ?? 0) / 2 ** 20).toFixed(1)} MiB`
    console.log(`bench:write — ${ROWS.toLocaleString('en')} rows {long, string, timestamptz}, NDJSON → committed append (SQL catalog, s3rver, loopback)`)
    console.log(line(a, oursWall))
    console.log(line(b, pyWall))
    console.log(`ours by step: ${Object.entries(a.phases ?? {}).map(([k, v]) => `${k} ${v.toFixed(2)} s`).join(', ')}`)
    console.log(`ratio ours/pyiceberg: ${(rate(a) / rate(b)).toFixed(2)}x rows/s; peak RSS ${(a.maxRssMiB / b.maxRssMiB).toFixed(2)}x`)
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined)
    rmSync(dir, { recursive: true, force: true })
  }
}

const childAt = process.argv.indexOf('--child')
if (childAt >= 0) {
  const result = await ours(JSON.parse(process.argv[childAt + 1]) as Env)
  process.stdout.write(JSON.stringify(result) + '\n')
} else {
  await main()
}
