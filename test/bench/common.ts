// Shared by the benchmarks (test/bench/*.ts): a private stack in a temporary folder, an admin key, a
// table and a sink, and a hard deadline so a benchmark always stops by itself.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type pg from 'pg'
import { intakeEntry, sinkPrefix } from '../../contract/bucket.ts'
import { bootstrap } from '../../dev/bootstrap.ts'
import { newSecretsKey, startStack, type Stack } from '../../dev/stack.ts'
import { S3Client } from '../../iceberg/io/s3.ts'

export interface BenchStack {
  stack: Stack
  apiKey: string
  warehouse: string
  /** The warehouse's id: the SQL catalog's catalog_name. */
  warehouseId: string
}

export const COLUMNS = [
  { name: 'id', type: 'long', required: true, doc: 'row id' },
  { name: 'name', type: 'string', doc: 'a name' },
  { name: 'ts', type: 'timestamptz', doc: 'event time' },
  { name: 'amount', type: 'decimal(18, 2)', doc: 'an amount' },
]

/** Everything a benchmark started, stopped in reverse order (also on SIGINT/SIGTERM and at the deadline). */
export class Cleanup {
  private readonly steps: Array<() => Promise<unknown> | unknown> = []
  private done: Promise<void> | undefined
  add(step: () => Promise<unknown> | unknown): void {
    this.steps.push(step)
  }
  run(): Promise<void> {
    this.done ??= (async () => {
      for (const s of this.steps.reverse()) {
        try {
          await s()
        } catch {
          /* keep stopping the rest */
        }
      }
    })()
    return this.done
  }
}

/** Exits with an error when the benchmark overruns, after stopping what it started. */
export function deadline(cleanup: Cleanup, ms: number, what: string): void {
  const timer = setTimeout(() => {
    console.error(`${what}: still running after ${ms / 1000} s; stopping everything`)
    void cleanup.run().finally(() => process.exit(2))
  }, ms)
  timer.unref()
  cleanup.add(() => clearTimeout(timer))
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void cleanup.run().finally(() => process.exit(130)))
  }
}

export async function benchStack(name: string, cleanup: Cleanup, log: (line: string) => void): Promise<BenchStack> {
  const dir = mkdtempSync(join(tmpdir(), `lhbox-${name}-`))
  cleanup.add(() => (process.env.LHBOX_BENCH_KEEP ? log(`state kept in ${dir}`) : rmSync(dir, { recursive: true, force: true })))
  const bootstrapSecret = `bench-${crypto.randomUUID()}`
  const t0 = Date.now()
  // versitygw by default: s3rver, a single-threaded mock, serialises deletes and becomes what is measured.
  const store = process.env.BENCH_STORE === 's3rver' ? 's3rver' : 'versitygw'
  const stack = await startStack({ dir, bootstrapSecret, secretsKey: newSecretsKey(), bucket: 'lhbox-bench', store })
  cleanup.add(() => stack.stop())
  const { apiKey, warehouse } = await bootstrap(stack.apiUrl, bootstrapSecret)
  const list = (await api(stack, apiKey, 'GET', '/v1/warehouses')) as { warehouses: Array<{ id: string; name: string }> }
  const warehouseId = list.warehouses.find((w) => w.name === warehouse)!.id
  log(`stack up in ${((Date.now() - t0) / 1000).toFixed(1)} s (${dir}; store ${store})`)
  return { stack, apiKey, warehouse, warehouseId }
}

export async function api(stack: Stack, key: string, method: string, path: string, json?: unknown): Promise<any> {
  const res = await fetch(stack.apiUrl + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
    body: json === undefined ? undefined : JSON.stringify(json),
  })
  const text = await res.text()
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`)
  return text ? JSON.parse(text) : null
}

/**
 * A table (POST /v1/tables) and a sink on it (POST /v1/sinks). `spec` overrides the table's columns
 * (COLUMNS by default; or a whole `schema` for nested types) and format version, e.g. a preset's
 * columns on a v3 table.
 */
export async function tableAndSink(
  b: BenchStack,
  table: string,
  sink: Record<string, unknown> = {},
  spec: { columns?: Array<{ name: string; type: string }>; schema?: { fields: unknown[] }; format_version?: 2 | 3 } = {},
): Promise<{ id: string; sendKey: string; table: string }> {
  // A whole schema (nested types) instead of columns: the route takes one of them.
  const shape = spec.schema ? { schema: spec.schema } : { columns: spec.columns ?? COLUMNS }
  await api(b.stack, b.apiKey, 'POST', '/v1/tables', { warehouse: b.warehouse, table, doc: 'benchmark table', ...spec, ...shape })
  const created = await api(b.stack, b.apiKey, 'POST', '/v1/sinks', { warehouse: b.warehouse, table, name: table.replace(/\W/g, '_'), ...sink })
  return { id: created.id, sendKey: created.send_key, table }
}

/** What a sink holds: its ledger rows (batch id → state) and the batch ids of its objects under _sink/<id>/. */
export async function sinkHolds(b: BenchStack, db: pg.Client, sinkId: string): Promise<{ ledger: Map<string, string>; objects: Set<string> }> {
  const { rows } = await db.query<{ batch_id: string; state: string }>('select batch_id, state from batches where sink_id = $1', [sinkId])
  const objects = new Set<string>()
  for await (const o of new S3Client(b.stack.s3).list(sinkPrefix(sinkId))) {
    const entry = intakeEntry(sinkId, o.key)
    if (entry?.kind === 'batch') objects.add(entry.batchId)
  }
  return { ledger: new Map(rows.map((r) => [r.batch_id, r.state])), objects }
}

/** One row of the benchmark tables' shape, as producer JSON (~100 bytes). */
export function rowJson(id: number, pad = 0): string {
  const ts = new Date(Date.UTC(2026, 4, 1) + id * 1000).toISOString().replace('Z', `${String(id % 1000).padStart(3, '0')}Z`)
  const amount = `${Math.floor(id * 7.31) % 1_000_000}.${String(id % 100).padStart(2, '0')}`
  const name = `sensor-${String(id % 10_000).padStart(4, '0')} / building ${id % 17}${pad > 0 ? ' ' + 'x'.repeat(pad) : ''}`
  return `{"id":${id},"name":${JSON.stringify(name)},"ts":"${ts}","amount":${amount}}`
}

export const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
