// Checks shared by the roller race and fault tests: a warehouse whose S3 endpoint is a fault proxy,
// the table read back through PyIceberg (never our own reader), the ledger's states.
import type pg from 'pg'
import { expect } from 'vitest'
import { ensureVenv, runPython, s3Args, sqlCatalogArgs, toExact } from './python.ts'
import { call, stack } from './stack.ts'
import { database, uid } from './sinks.ts'

/** A SQL-catalog warehouse of the stack's admin project on another S3 endpoint (a fault proxy); answers its name and id. */
export async function proxiedWarehouse(endpoint: string, extra: Record<string, unknown> = {}): Promise<{ name: string; id: string }> {
  const name = `wh-${uid()}`
  const res = await call('/v1/warehouses', {
    key: stack().adminKey,
    json: { name, catalog: { type: 'sql' }, bucket: stack().s3.bucket, endpoint, region: 'us-east-1', ...extra },
  })
  if (res.status !== 201) throw new Error(`POST /v1/warehouses: ${res.status} ${res.text}`)
  return { name, id: res.body.id }
}

/** The id of a warehouse of the admin project by name. */
export async function warehouseId(name: string): Promise<string> {
  const res = await call('/v1/warehouses', { key: stack().adminKey })
  const w = res.body.warehouses.find((x: { name: string }) => x.name === name)
  if (!w) throw new Error(`no warehouse ${name}`)
  return w.id
}

/**
 * What a roller test file starts from: PyIceberg's venv ready (the first run on a machine builds it),
 * a connection to the ledger, and the shared warehouse's id. Used as
 * `beforeAll(async () => ({ db, whId } = await rollerSetup()), SETUP_TIMEOUT)`, closing `db` after.
 */
export async function rollerSetup(): Promise<{ db: pg.Client; whId: string }> {
  await ensureVenv()
  const db = await database()
  return { db, whId: await warehouseId(stack().warehouse) }
}

/** The venv's first build on a fresh machine takes minutes. */
export const SETUP_TIMEOUT = 15 * 60_000

export interface Scan {
  rows: Array<Record<string, any>>
  snapshots: Array<{ snapshot_id: bigint; parent: bigint | null; operation: string; summary: Record<string, string> }>
  properties: Record<string, string>
}

/** The catalog options of PyIceberg for a table: the SQL catalog (catalog_name = warehouse id) or a REST catalog. */
export type PyCatalog = { sql: string } | { rest: string }

export function pyCatalogArgs(c: PyCatalog): string[] {
  if ('sql' in c) return sqlCatalogArgs({ databaseUrl: stack().databaseUrl, catalogName: c.sql, s3: stack().s3 })
  return ['--rest-uri', c.rest, '--catalog-name', 'rest', ...s3Args(stack().s3)]
}

/** The table as PyIceberg reads it (through the real S3), rows ordered by x. */
export async function scan(catalog: PyCatalog, table: string): Promise<Scan> {
  const out = toExact(await runPython('pyiceberg_scan.py', [...pyCatalogArgs(catalog), table, '--order-by', 'x', '--no-files']))
  return { rows: out.rows ?? [], snapshots: out.snapshots, properties: out.properties }
}

/** The snapshots this sink committed (lakehousebox.sink.id). */
export const sinkSnapshots = (s: Scan, sinkId: string) => s.snapshots.filter((x) => x.summary['lakehousebox.sink.id'] === sinkId)

/** Every x of `expected` present exactly once, nothing else. */
export function expectExactlyOnce(s: Scan, expected: number[]): void {
  expect(s.rows.map((r) => Number(r.x)).sort((a, b) => a - b)).toEqual([...expected].sort((a, b) => a - b))
}

/** PyIceberg appends rows to the table (a tenant's own write). */
export async function pyAppend(catalog: PyCatalog, table: string, rows: unknown[]): Promise<bigint> {
  const out = toExact(await runPython('pyiceberg_append.py', [...pyCatalogArgs(catalog), table], undefined, { input: JSON.stringify(rows) }))
  return out.snapshot_id
}

/** PyIceberg expires every snapshot but the current one (what maintenance does past the retained history). */
export async function pyExpireAllButCurrent(catalog: PyCatalog, table: string): Promise<{ expired: bigint[]; snapshots: bigint[] }> {
  return toExact(await runPython('pyiceberg_expire.py', [...pyCatalogArgs(catalog), table, '--keep-current']))
}

/** batch_id → state in the ledger. */
export async function ledgerStates(db: pg.Client, sinkId: string): Promise<Record<string, string>> {
  const { rows } = await db.query('select batch_id, state from batches where sink_id = $1', [sinkId])
  return Object.fromEntries(rows.map((r) => [r.batch_id, r.state]))
}

/** `n` consecutive x values from `from`, as rows. */
export const rowsOf = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ x: from + i, who: `r${from + i}` }))
