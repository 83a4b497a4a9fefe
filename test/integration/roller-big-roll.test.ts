// A big roll read independently (issue 10, item 6): enough rows for three row groups in each of two
// day partitions (the table's write.parquet.row-group-limit lowered to 1,000), sent in batches that
// mix both days, good rows among rejected ones, every column kind the scanner reads itself. One tick,
// then PyIceberg and DuckDB read back exactly what was sent, and the files hold the row groups.
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { commitWithRetry } from '../../iceberg/transaction/transact.ts'
import { SqlCatalog } from '../../iceberg/catalog/sql.ts'
import { S3FileIO } from '../../iceberg/io/file-io.ts'
import { ensureVenv, runPython, s3Args, sqlCatalogArgs, toExact } from '../support/python.ts'
import { warehouseId } from '../support/roller-check.ts'
import { rollerTick } from '../support/roller.ts'
import { newSink, send, uid } from '../support/sinks.ts'
import { stack } from '../support/stack.ts'

const big = (_k: string, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v)
const BATCHES = 6
const PER_BATCH = 1000
const ROW_GROUP = 1000

let pool: pg.Pool
let whId: string
beforeAll(async () => {
  await ensureVenv()
  pool = new pg.Pool({ connectionString: stack().databaseUrl, max: 2 })
  whId = await warehouseId(stack().warehouse)
}, 15 * 60_000)
afterAll(() => pool?.end())

/** Row i as the producer sends it, and as the readers print it back; every 97th row does not fit. */
function row(i: number): { text: string; expected: Record<string, unknown> | null } {
  const day = i % 2 === 0 ? '2026-11-29' : '2026-11-30'
  const micros = String((i * 7919) % 1_000_000).padStart(6, '0')
  const ts = `${day}T${String(i % 24).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:07.${micros}Z`
  const who = i % 5 === 0 ? null : i % 7 === 0 ? `ünï "${i}"\n` : `device-${i}`
  const amount = `${i % 2 ? '-' : ''}${Math.floor(i / 3)}.${String(i % 100).padStart(2, '0')}`
  const x = i % 3 === 0 ? 9223372036854775807n - BigInt(i) : BigInt(i)
  const score = i % 11 === 0 ? null : (i * 1.25) / 8
  if (i % 97 === 0) return { text: `{"x": ${x}, "ts": "${ts}", "amount": "not a number"}`, expected: null }
  const text = `{"x": ${x}, "who": ${JSON.stringify(who)}, "ts": "${ts}", "amount": ${amount}, "score": ${score}, "ok": ${i % 4 === 0}}`
  return {
    text,
    expected: { x, who, ts: `${day}T${String(i % 24).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:07.${micros}+00:00`, amount, score, ok: i % 4 === 0 },
  }
}

describe('a roll of 6,000 rows into a day-partitioned v3 table with 1,000-row row groups', () => {
  it('PyIceberg and DuckDB read back exactly the rows sent; each partition file holds three row groups', async () => {
    const sink = await newSink(stack().adminKey, {
      tableSpec: {
        format_version: 3,
        partition: ['day(ts)'],
        columns: [
          { name: 'x', type: 'long', required: true },
          { name: 'who', type: 'string' },
          { name: 'ts', type: 'timestamptz', required: true },
          { name: 'amount', type: 'decimal(18, 2)' },
          { name: 'score', type: 'double' },
          { name: 'ok', type: 'boolean' },
        ],
      },
    })
    const { endpoint, region, accessKeyId, secretAccessKey, bucket } = stack().s3
    const catalog = new SqlCatalog({
      name: whId,
      sql: pool,
      warehouseLocation: `s3://${bucket}`,
      io: new S3FileIO({ endpoint, region, accessKeyId, secretAccessKey }),
    })
    const [ns, name] = sink.table.split('.')
    const table = await catalog.loadTable({ namespace: [ns], name })
    await commitWithRetry(catalog, table, async (b) => ({
      requirements: [{ type: 'assert-table-uuid', uuid: b.metadata['table-uuid'] }],
      updates: [{ action: 'set-properties', updates: { 'write.parquet.row-group-limit': String(ROW_GROUP) } }],
    }))

    const expected: Array<Record<string, unknown>> = []
    let rejected = 0
    for (let b = 0; b < BATCHES; b++) {
      const rows = Array.from({ length: PER_BATCH }, (_, k) => row(b * PER_BATCH + k + 1))
      const res = await send(sink, `[${rows.map((r) => r.text).join(',\n ')}]`, { batchId: `big-${b}-${uid()}` })
      expect(res.status, res.text).toBe(202)
      for (const r of rows) r.expected ? expected.push(r.expected) : rejected++
    }
    const t = await rollerTick({ sink: sink.id })
    expect({ code: t.code, signal: t.signal }, t.stdout + t.stderr).toEqual({ code: 0, signal: null })

    const scan = toExact(
      await runPython(
        'pyiceberg_scan.py',
        [...sqlCatalogArgs({ databaseUrl: stack().databaseUrl, catalogName: whId, s3: stack().s3 }), sink.table, '--order-by', 'x'],
        undefined,
        { timeoutMs: 180_000 },
      ),
    )
    const byX = (a: any, b: any) => (a.x < b.x ? -1 : a.x > b.x ? 1 : 0)
    const want = [...expected].sort(byX)
    expect(scan.rows.length).toBe(BATCHES * PER_BATCH - rejected)
    const got = scan.rows.map(({ __ingest_ts, ...r }: any) => r)
    const first = got.findIndex((r: unknown, i: number) => JSON.stringify(r, big) !== JSON.stringify(want[i], big))
    expect(first >= 0 ? { first, got: got[first] } : null).toEqual(first >= 0 ? { first, got: want[first] } : null) // the first difference, readably
    expect(got).toEqual(want)
    expect(new Set(scan.rows.map((r: any) => r.__ingest_ts)).size).toBe(BATCHES)
    expect(scan.snapshots).toHaveLength(1)
    expect(scan.files.map((f: any) => [f.partition.ts_day, Number(f.record_count), f.split_offsets.length]).sort()).toEqual([
      ['2026-11-29', expected.filter((r) => String(r.ts).startsWith('2026-11-29')).length, 3],
      ['2026-11-30', expected.filter((r) => String(r.ts).startsWith('2026-11-30')).length, 3],
    ])
    const duck = toExact(
      await runPython('duckdb_scan.py', [...s3Args(stack().s3), '--metadata', scan.metadata_location, '--order-by', 'x'], undefined, { timeoutMs: 180_000 }),
    )
    // the harness prints DuckDB's booleans as 1/0 (interop-types.test.ts says why)
    expect(duck.rows.map((r: any) => ({ ...r, ok: r.ok === null ? null : r.ok === 1n }))).toEqual(scan.rows)
  })
})
