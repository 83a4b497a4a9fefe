// ColumnFileWriter's files read by independent Parquet readers, directly (no catalog, no stack):
// pyarrow (pq.read_table) and DuckDB (read_parquet) read a file of several row groups, many pages per
// chunk, definition levels in every run shape, delta-packed and PLAIN integer pages, zstd, every flat
// type plus nested and geometry columns, and print it in interop_common.py's encoding; both must
// equal the rows we wrote. interop-types.test.ts covers the same writer through PyIceberg and
// DuckDB's iceberg_scan on tables (tiny files); this file covers the page machinery at size.
//
// Values stay within what the readers can print (timestamps within years 1..9999; interop_common
// formats them through Python datetimes). Noted, not ours: DuckDB 1.5.5 booleans come out as 1/0
// (arrow.bool8, see interop-types.test.ts), normalized below.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parquetMetadata } from 'hyparquet'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { formatDecimal } from '../../iceberg/spec/decimal.ts'
import { ColumnFileWriter } from '../../iceberg/parquet/write.ts'
import { isPrimitive, parsePrimitive, type IcebergType, type NestedField, type Row, type Schema, type Value } from '../../iceberg/spec/types.ts'
import { loadZstd } from '../../iceberg/parquet/zstd.ts'
import { ensureVenv, INTEROP_DIR, runPython, toExact } from '../support/python.ts'
import { rowsToBatch } from '../unit/iceberg/column-batch.ts'

const SCRIPT = String.raw`
import json, sys
import duckdb, pyarrow.parquet as pq
from interop_common import emit, encode_table, schema_field_types
path, schema = sys.argv[1], json.loads(sys.argv[2])
types = schema_field_types(schema)
f = pq.ParquetFile(path)
ids = {f.schema_arrow.field(i).name: int(f.schema_arrow.field(i).metadata[b'PARQUET:field_id']) for i in range(len(f.schema_arrow))}
arrow_rows = encode_table(pq.read_table(path), types)
con = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})
con.execute("SET TimeZone = 'UTC'")
con.execute("SET arrow_lossless_conversion = true")
duck = con.execute("SELECT * FROM read_parquet(?)", [path]).fetch_arrow_table()
emit({"row_groups": f.metadata.num_row_groups, "created_by": f.metadata.created_by, "field_ids": ids,
      "pyarrow": arrow_rows, "duckdb": encode_table(duck, types)})
`

let n = 1
const f = (name: string, type: IcebergType, required = false): NestedField => ({ id: n++, name, type, required })
const fields: NestedField[] = [
  f('id', 'long', true),
  f('b', 'boolean'),
  f('i', 'int', true),
  f('l', 'long'),
  f('fl', 'float'),
  f('d', 'double'),
  f('dec9', 'decimal(9, 2)'),
  f('dec18', 'decimal(18, 4)'),
  f('dec38', 'decimal(38, 10)'),
  f('dt', 'date'),
  f('tm', 'time'),
  f('ts', 'timestamp'),
  f('tstz', 'timestamptz', true),
  f('tsns', 'timestamp_ns'),
  f('s', 'string'),
  f('u', 'uuid'),
  f('fx', 'fixed[3]'),
  f('bin', 'binary'),
  f('geo', 'geometry'),
  f('st', { type: 'struct', fields: [f('a', 'int'), f('z', 'string')] }),
  f('tags', { type: 'list', 'element-id': n++, element: 'long', 'element-required': false }),
  f('attrs', { type: 'map', 'key-id': n++, key: 'string', 'value-id': n++, value: 'double', 'value-required': false }),
]
const schema: Schema = { type: 'struct', 'schema-id': 0, fields }

let seed = 11
const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) | 0) >>> 8) / 16777216
const MAX = 9223372036854775807n
const WORDS = ['', 'ü', '😀 emoji', 'x'.repeat(70), 'héllo ✓ 𝄞 longer than sixteen', 'plain']
const T0 = 1_772_323_200_000_000n // 2026-03-01, µs

function row(i: number): Row {
  const nul = (rate: number) => rnd() < rate
  const run = Math.floor(i / 50) % 3 === 0 // long runs of nulls
  const wkb = new Uint8Array(21)
  new DataView(wkb.buffer).setUint8(0, 1)
  new DataView(wkb.buffer).setUint32(1, 1, true)
  new DataView(wkb.buffer).setFloat64(5, i / 7, true)
  return {
    id: BigInt(i),
    b: nul(0.3) ? null : rnd() < 0.5,
    i: (rnd() * 4294967296) | 0,
    l: run ? null : i === 1 ? MAX : i === 2 ? -MAX - 1n : BigInt(Math.floor(rnd() * 1e15)) - 500_000_000_000_000n,
    fl: nul(0.2) ? null : ([NaN, Infinity, -Infinity, -0][i] ?? Math.fround((rnd() - 0.5) * 1e4)),
    d: nul(0.2) ? null : ([NaN, -0, Number.MAX_VALUE, -Infinity][i] ?? (rnd() - 0.5) * 1e9),
    dec9: nul(0.5) ? null : BigInt(Math.floor((rnd() - 0.5) * 1e9)),
    dec18: run ? null : BigInt(Math.floor(rnd() * 1e15)) * 1000n - 7n,
    dec38: nul(0.1) ? null : i === 3 ? 10n ** 38n - 1n : i === 4 ? 1n - 10n ** 38n : BigInt(i) * 10n ** 25n + BigInt(Math.floor(rnd() * 1e9)),
    dt: nul(0.1) ? null : 18000 + (i % 3000),
    tm: nul(0.1) ? null : BigInt(Math.floor(rnd() * 86_400_000_000)),
    ts: nul(0.05) ? null : T0 + BigInt(i) * 1_000_000n + BigInt(Math.floor(rnd() * 1000)),
    tstz: T0 + BigInt(i) * 86_400_001n,
    tsns: run ? null : T0 * 1000n + BigInt(i) * 7n,
    s: nul(0.2) ? null : `${WORDS[i % WORDS.length]}-${Math.floor(rnd() * 1000)}`,
    u: nul(0.2) ? null : Uint8Array.from({ length: 16 }, () => Math.floor(rnd() * 256)),
    fx: nul(0.2) ? null : Uint8Array.of(i & 255, 0, 255 - (i & 255)),
    bin: nul(0.2) ? null : Uint8Array.from({ length: i % 40 }, () => Math.floor(rnd() * 256)),
    geo: nul(0.5) ? null : wkb,
    st: i % 7 === 0 ? null : { a: i % 3 ? i : null, z: i % 5 ? `z${i}` : null },
    tags: i % 4 === 0 ? null : i % 4 === 1 ? [] : [BigInt(i), null],
    attrs:
      i % 6 === 0
        ? null
        : [
            ['k', i / 2],
            [`k${i}`, null],
          ],
  }
}
const rows = Array.from({ length: 5000 }, (_, i) => row(i))

// ---- the expected output, in interop_common.py's encoding ----

const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64')
const pad = (v: bigint, n: number) => v.toString().padStart(n, '0')

function timestamp(v: bigint, perSecond: bigint, digits: number, zone: boolean): string {
  const s = v / perSecond - (v % perSecond < 0n ? 1n : 0n)
  const frac = v - s * perSecond
  return new Date(Number(s) * 1000).toISOString().slice(0, 19) + '.' + pad(frac, digits) + (zone ? '+00:00' : '')
}

function expected(type: IcebergType, v: Value): unknown {
  if (v === null) return null
  if (!isPrimitive(type)) {
    if (type.type === 'struct') return Object.fromEntries(type.fields.map((x) => [x.name, expected(x.type, (v as Row)[x.name])]))
    if (type.type === 'list') return (v as Value[]).map((e) => expected(type.element, e))
    return (v as Array<[Value, Value]>).map(([k, x]) => [expected(type.key, k), expected(type.value, x)])
  }
  const p = parsePrimitive(type)
  switch (p.kind) {
    case 'int':
    case 'long':
      return BigInt(v as number | bigint)
    case 'float':
    case 'double': {
      const x = v as number
      return Number.isNaN(x) ? 'NaN' : x === Infinity ? 'Infinity' : x === -Infinity ? '-Infinity' : x
    }
    case 'decimal':
      return formatDecimal(v as bigint, p.scale)
    case 'date':
      return new Date((v as number) * 86_400_000).toISOString().slice(0, 10)
    case 'time':
      return timestamp(v as bigint, 1_000_000n, 6, false).slice(11)
    case 'timestamp':
    case 'timestamptz':
      return timestamp(v as bigint, 1_000_000n, 6, p.kind === 'timestamptz')
    case 'timestamp_ns':
    case 'timestamptz_ns':
      return timestamp(v as bigint, 1_000_000_000n, 9, p.kind === 'timestamptz_ns')
    case 'uuid': {
      const h = Buffer.from(v as Uint8Array).toString('hex')
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
    }
    case 'fixed':
    case 'binary':
      return b64(v as Uint8Array)
    case 'geometry':
      return Buffer.from(v as Uint8Array).toString('hex')
    default:
      return v // boolean, string
  }
}
const expectedRows = rows.map((r) => Object.fromEntries(fields.map((x) => [x.name, expected(x.type, r[x.name])])))

// ---- write and read ----

let dir: string
beforeAll(async () => {
  await ensureVenv()
  dir = mkdtempSync(join(tmpdir(), 'lhbox-columns-'))
}, 15 * 60_000)
afterAll(() => dir && rmSync(dir, { recursive: true, force: true }))

describe('ColumnFileWriter files, read by pyarrow and DuckDB read_parquet', async () => {
  const zstd = await loadZstd()

  it.each([
    ['delta', true],
    ['plain', false],
  ] as const)(
    '%s integers: every row and value exactly',
    async (_, delta) => {
      const w = new ColumnFileWriter(schema, { compression: zstd, pageSize: 4096, delta })
      w.writeRowGroup([rowsToBatch(schema, rows.slice(0, 700)), rowsToBatch(schema, rows.slice(700, 2000))])
      w.writeRowGroup([rowsToBatch(schema, rows.slice(2000, 2001))])
      w.writeRowGroup([rowsToBatch(schema, rows.slice(2001))])
      const path = join(dir, `${delta ? 'delta' : 'plain'}.parquet`)
      const { bytes } = w.finish()
      writeFileSync(path, bytes)
      // what the readers are given: many v1 pages per chunk, delta pages where asked
      const chunks = parquetMetadata(bytes.slice().buffer as ArrayBuffer).row_groups[2].columns
      const chunk = (name: string) => chunks.find((c) => c.meta_data!.path_in_schema[0] === name)!
      expect(chunk('s').meta_data!.encoding_stats).toEqual([{ page_type: 'DATA_PAGE', encoding: 'PLAIN', count: expect.any(Number) }])
      expect(chunk('s').meta_data!.encoding_stats![0].count).toBeGreaterThan(5)
      expect(chunk('tstz').meta_data!.encodings).toEqual([delta ? 'DELTA_BINARY_PACKED' : 'PLAIN'])
      expect(chunk('ts').meta_data!.encodings).toEqual(['RLE', delta ? 'DELTA_BINARY_PACKED' : 'PLAIN'])
      writeFileSync(join(dir, 'read.py'), SCRIPT)
      const out = toExact(await runPython(join(dir, 'read.py'), [path, JSON.stringify(schema)], { PYTHONPATH: INTEROP_DIR }, { timeoutMs: 300_000 }))
      expect(out.row_groups).toBe(3n)
      expect(out.created_by).toBe('lhbox version 0.1.0')
      expect(out.field_ids).toEqual(Object.fromEntries(fields.map((x) => [x.name, BigInt(x.id)])))
      expect(out.pyarrow).toEqual(expectedRows)
      const duckBooleans = out.duckdb.map((r: any) => ({ ...r, b: r.b === 1n ? true : r.b === 0n ? false : r.b }))
      expect(duckBooleans).toEqual(expectedRows)
    },
    600_000,
  )
})
