// The keyed benches' input (bench:upsert, and bench:roll --schema keyed): a starting table of common.ts
// rowJson rows, ids 0..N-1, seeded alike into each side's table by pyiceberg_upsert.py seed (untimed),
// and the changed version of a row. Kept in one place so both benches start from the same table.
import { createWriteStream } from 'node:fs'
import { join } from 'node:path'
import { prng } from '../support/prng.ts'
import { rowJson } from './common.ts'
import { BENCH_DIR, centsText, measured, rowFigures, type Measured } from './harness.ts'

/** The __ingest_ts the seeded rows carry. */
const SEED_INGEST_TS = '2026-05-01T00:00:00Z'

/** `count` distinct ids in [0, rows), uniformly at random, in random order (a partial Fisher–Yates; seeded: the same ids every run). */
export function changedIds(rows: number, count: number): Int32Array {
  const ids = new Int32Array(rows)
  for (let i = 0; i < rows; i++) ids[i] = i
  const rnd = prng(20260501)
  for (let i = 0; i < count; i++) {
    const j = i + Math.floor(rnd() * (rows - i))
    const t = ids[i]
    ids[i] = ids[j]
    ids[j] = t
  }
  return ids.slice(0, count)
}

/** The changed version of row `id`: another name, another amount (never the old one). */
export function changedRow(id: number): string {
  const old = rowJson(id)
  const { cents } = rowFigures(old)
  const next = (cents * 7n + 12_345n) % 100_000_000n
  const amount = centsText(next === cents ? next + 1n : next)
  return old.replace('"name":"', '"name":"changed ').replace(/"amount":-?\d+\.\d{2}\}$/, `"amount":${amount}}`)
}

/** Writes rows 0..rows-1 as NDJSON to `file`; answers their sum(id) and sum(amount) in cents. */
export async function writeBaseRows(file: string, rows: number): Promise<{ ids: bigint; cents: bigint }> {
  const out = createWriteStream(file)
  const write = (s: string) => (out.write(s) ? Promise.resolve() : new Promise<void>((r) => out.once('drain', () => r())))
  let ids = 0n
  let cents = 0n
  let chunk = ''
  for (let id = 0; id < rows; id++) {
    const line = rowJson(id)
    const f = rowFigures(line)
    ids += f.id
    cents += f.cents
    chunk += line + '\n'
    if (chunk.length > 1 << 20) {
      await write(chunk)
      chunk = ''
    }
  }
  await write(chunk)
  await new Promise<void>((r) => out.end(() => r()))
  return { ids, cents }
}

/**
 * Seeds tables (created with common.ts COLUMNS) alike: what a sink's first roll adds (__ingest_ts, the
 * retention properties), then the rows of `baseFile` in one PyIceberg append (pyiceberg_upsert.py seed).
 */
export function seedTables(python: string, catalogArgs: string[], tables: string[], baseFile: string): Promise<Measured> {
  return measured(
    python,
    [
      join(BENCH_DIR, 'pyiceberg_upsert.py'),
      'seed',
      ...catalogArgs,
      ...tables.flatMap((t) => ['--table', t]),
      '--ndjson',
      baseFile,
      '--ingest-ts',
      SEED_INGEST_TS,
    ],
    { env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1' }, timeoutMs: 15 * 60_000, what: 'pyiceberg_upsert.py seed' },
  )
}
