// readColumns (iceberg/parquet/read-columns.ts) on files other writers made, against readDataFile
// (parquet/read-rows.ts): pyarrow with PARQUET:field_id metadata in the encodings pyarrow/Java write and
// we do not (dictionary pages falling back to PLAIN mid-chunk, data pages v1 and v2, delta, delta
// byte arrays, byte-stream-split, INT96, millisecond times, decimals as FIXED_LEN_BYTE_ARRAY and as
// integers, int → long and float → double promotion, 64-bit delta widths that wrap), and a PyIceberg
// table append (SqlCatalog on sqlite, local warehouse: no stack needed). Then dropRows and KeySet on
// them, as a keyed roll uses them.
import { readFileSync, rmSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildersFor, finishBatch } from '../../iceberg/parquet/builders.ts'
import { readDataFile } from '../../iceberg/parquet/read-rows.ts'
import { dropRows } from '../../iceberg/parquet/drop-rows.ts'
import { KeySet } from '../../iceberg/parquet/key-set.ts'
import { readColumns } from '../../iceberg/parquet/read-columns.ts'
import type { Row, Schema } from '../../iceberg/spec/types.ts'
import { keyOf } from '../../roller/upsert.ts'
import { pythonInTempDir } from '../support/python.ts'
import { columnsToRows } from '../unit/iceberg/column-rows.ts'

const SCRIPT = String.raw`
import sys, os, datetime, decimal, json
import pyarrow as pa, pyarrow.parquet as pq
out = sys.argv[1]
D = decimal.Decimal
utc = datetime.timezone.utc
result = {}

def fid(name, type, id, nullable=True):
  return pa.field(name, type, nullable=nullable, metadata={b'PARQUET:field_id': str(id).encode()})
aschema = pa.schema([
  fid('id', pa.int64(), 1, False),
  fid('i32', pa.int32(), 2),
  fid('f32', pa.float32(), 3),
  fid('dbl', pa.float64(), 4),
  fid('b', pa.bool_(), 5),
  fid('s', pa.string(), 6),
  fid('bin', pa.binary(), 7),
  fid('dec9', pa.decimal128(9, 2), 8),
  fid('dec18', pa.decimal128(18, 4), 9),
  fid('dec38', pa.decimal128(38, 10), 10),
  fid('dt', pa.date32(), 11),
  fid('t', pa.time64('us'), 12),
  fid('tms', pa.time32('ms'), 13),
  fid('ts', pa.timestamp('us'), 14),
  fid('tsms', pa.timestamp('ms', tz='UTC'), 15),
  fid('tsns', pa.timestamp('ns'), 16),
  fid('u', pa.binary(16), 17),
  fid('wide', pa.int64(), 18),
  fid('lst', pa.list_(fid('element', pa.string(), 20)), 19),
])
N = 3000
words = ['alpha', 'beta', '', '\ufeffbom', 'ü😀']
rows = []
for i in range(N):
  rows.append(dict(
    id=i * 7 - 2**40, i32=None if i % 6 == 0 else (i * 2654435761) % 2**32 - 2**31,
    f32=[float('nan'), -0.0, float('inf'), i / 3][i % 4], dbl=None if i % 9 == 0 else [-0.0, float('-inf'), i * 1.5][i % 3],
    b=None if i % 5 == 0 else i % 3 == 0, s=None if 40 <= i % 97 < 60 else f'{words[i % 5]}{i % 300}',
    bin=None if i % 4 == 0 else bytes([i % 256]) * (i % 9),
    dec9=None if i % 3 == 0 else D(f'{(i * 7919) % 10**7 * (1 if i % 2 else -1)}E-2'),
    dec18=D(f'{(i * 10**13 + i) * (1 if i % 2 else -1)}E-4'),
    dec38=None if i % 7 == 0 else D(f'{(i * 10**33 + i) * (1 if i % 2 else -1)}E-10'),
    dt=datetime.date(1970, 1, 1) + datetime.timedelta(days=i - 1500),
    t=None if i % 8 == 0 else datetime.time(i % 24, i % 60, i % 60, i * 37 % 10**6),
    tms=datetime.time(i % 24, i % 60, 0, (i % 1000) * 1000),
    ts=datetime.datetime(2024, 1, 1) + datetime.timedelta(microseconds=i * 1000003),
    tsms=None if i % 10 == 0 else datetime.datetime(1969, 12, 31, tzinfo=utc) + datetime.timedelta(milliseconds=i * 999),
    tsns=(i * 1000000007 - 2**62) if i % 11 else None,
    u=bytes((i + k) % 256 for k in range(16)),
    wide=(2**63 - 1 - i) if i % 2 else (-2**63 + i),
    lst=None if i % 6 == 0 else [None if j % 3 == 1 else f'{i}/{j}' for j in range(i % 4)],
  ))
table = pa.Table.from_pylist(rows, schema=aschema)
ints = ['id', 'i32', 'wide', 'ts', 'tsns', 'dt', 't']
variants = {
  'v1-dict-fallback-snappy': dict(compression='snappy', use_dictionary=True, data_page_version='1.0', dictionary_pagesize_limit=2048),
  'v2-dict-zstd': dict(compression='zstd', use_dictionary=True, data_page_version='2.0'),
  'v2-plain-gzip': dict(compression='gzip', use_dictionary=False, data_page_version='2.0'),
  'v1-delta-none': dict(compression='none', use_dictionary=False, data_page_version='1.0',
                        column_encoding={**{c: 'DELTA_BINARY_PACKED' for c in ints}, 's': 'DELTA_BYTE_ARRAY', 'bin': 'DELTA_LENGTH_BYTE_ARRAY',
                                         'dbl': 'BYTE_STREAM_SPLIT', 'f32': 'BYTE_STREAM_SPLIT'}),
  'v2-delta-zstd': dict(compression='zstd', use_dictionary=False, data_page_version='2.0',
                        column_encoding={**{c: 'DELTA_BINARY_PACKED' for c in ints}, 's': 'DELTA_LENGTH_BYTE_ARRAY', 'bin': 'DELTA_BYTE_ARRAY'}),
  'v2-int96-decint': dict(compression='snappy', use_dictionary=True, data_page_version='2.0', use_deprecated_int96_timestamps=True, store_decimal_as_integer=True),
}
result['pyarrow'] = {}
for name, kw in variants.items():
  path = f'{out}/{name}.parquet'
  pq.write_table(table, path, row_group_size=1100, data_page_size=2048, **kw)
  result['pyarrow'][name] = path

# ---- PyIceberg: a table append, as the bench's tables are made ----
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import *
cat = SqlCatalog('t', uri=f'sqlite:///{out}/cat.db', warehouse=f'file://{out}/wh')
cat.create_namespace('ns')
ischema = Schema(
  NestedField(1, 'id', LongType(), required=True),
  NestedField(2, 'name', StringType(), required=False),
  NestedField(3, 'ts', TimestamptzType(), required=False),
  NestedField(4, 'amount', DecimalType(18, 2), required=False),
  NestedField(5, 'big', DecimalType(30, 3), required=False),
  NestedField(6, 'ok', BooleanType(), required=False),
  NestedField(7, 'tags', ListType(8, LongType(), element_required=False), required=False),
)
tbl = cat.create_table('ns.t', schema=ischema)
base = datetime.datetime(2026, 5, 1, tzinfo=utc)
data = [dict(id=i, name=None if i % 13 == 0 else f'sensor-{i % 1000:04d} / building {i % 17}', ts=base + datetime.timedelta(seconds=i),
             amount=D(f'{i * 731 % 10**8}.{i % 100:02d}'), big=None if i % 3 else D(f'-{i}123456789012345678901.5{i % 10}0'),
             ok=None if i % 4 == 0 else i % 2 == 0, tags=None if i % 5 == 0 else [i, None]) for i in range(20000)]
tbl.append(pa.Table.from_pylist(data, schema=tbl.schema().as_arrow()))
files = [t.file.file_path for t in tbl.scan().plan_files()]
result['pyiceberg'] = {'file': files[0].removeprefix('file://'), 'schema': json.loads(tbl.schema().model_dump_json())}
print(json.dumps(result))
`

const arrowSchema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'i32', required: false, type: 'long' }, // int → long
    { id: 3, name: 'f32', required: false, type: 'double' }, // float → double
    { id: 4, name: 'dbl', required: false, type: 'double' },
    { id: 5, name: 'b', required: false, type: 'boolean' },
    { id: 6, name: 's', required: false, type: 'string' },
    { id: 7, name: 'bin', required: false, type: 'binary' },
    { id: 8, name: 'dec9', required: false, type: 'decimal(9, 2)' },
    { id: 9, name: 'dec18', required: false, type: 'decimal(18, 4)' },
    { id: 10, name: 'dec38', required: false, type: 'decimal(38, 10)' },
    { id: 11, name: 'dt', required: false, type: 'date' },
    { id: 12, name: 't', required: false, type: 'time' },
    { id: 13, name: 'tms', required: false, type: 'time' },
    { id: 14, name: 'ts', required: false, type: 'timestamp' },
    { id: 15, name: 'tsms', required: false, type: 'timestamptz' },
    { id: 16, name: 'tsns', required: false, type: 'timestamp_ns' },
    { id: 17, name: 'u', required: false, type: 'uuid' },
    { id: 18, name: 'wide', required: false, type: 'long' },
    { id: 19, name: 'lst', required: false, type: { type: 'list', 'element-id': 20, element: 'string', 'element-required': false } },
    { id: 30, name: 'added', required: false, type: 'int' },
  ],
}

let dir: string
let out: { pyiceberg: { file: string; schema: Schema }; pyarrow: Record<string, string> }

beforeAll(async () => {
  ;({ dir, out } = await pythonInTempDir<typeof out>(SCRIPT, 'lhbox-read-columns-'))
}, 15 * 60_000) // the pinned venv may be built first, as in the other Python tests

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
})

/** readColumns gives readDataFile's rows; dropRows and KeySet (key `key`) agree with the rows. */
async function check(bytes: Uint8Array, schema: Schema, key: string[]): Promise<Row[]> {
  const rows = await readDataFile(bytes, schema)
  const batches = await readColumns(bytes, schema)
  expect(batches.flatMap((b) => columnsToRows(schema, b))).toEqual(rows)

  const fields = key.map((k) => schema.fields.find((f) => f.name === k)!)
  const chosen = rows.filter((r, i) => i % 4 === 1 && key.every((k) => r[k] !== null))
  const builders = buildersFor(fields, chosen.length)
  for (const r of chosen) fields.forEach((f, i) => builders[i].appendValue(r[f.name]))
  const set = new KeySet(
    fields.map((f) => f.id),
    finishBatch(fields, builders, chosen.length),
  )
  const wanted = new Set(chosen.map((r) => keyOf(r, key)))
  const drop = new Uint8Array(rows.length)
  let from = 0
  for (const b of await readColumns(bytes, schema, { columns: key })) {
    set.mark(b, drop, from)
    from += b.rows
  }
  expect([...drop]).toEqual(rows.map((r) => (key.every((k) => r[k] !== null) && wanted.has(keyOf(r, key)) ? 1 : 0)))

  from = 0
  const kept: Row[] = []
  for (const b of batches) {
    kept.push(...columnsToRows(schema, dropRows(b, drop, from)))
    from += b.rows
  }
  expect(kept).toEqual(rows.filter((_r, i) => !drop[i]))
  return rows
}

describe('readColumns on files pyarrow and PyIceberg wrote', () => {
  for (const name of ['v1-dict-fallback-snappy', 'v2-dict-zstd', 'v2-plain-gzip', 'v1-delta-none', 'v2-delta-zstd', 'v2-int96-decint']) {
    it(`pyarrow ${name}: the same rows as readDataFile; keys probed and rows dropped alike`, async () => {
      const rows = await check(new Uint8Array(readFileSync(out.pyarrow[name])), arrowSchema, name.includes('delta') ? ['wide'] : ['s', 'dec18'])
      expect(rows).toHaveLength(3000)
      expect(rows[1].wide).toBe(2n ** 63n - 2n)
      expect(rows[3].s).toBe('\uFEFFbom3')
    })
  }

  it('a PyIceberg data file, against the table schema, keyed by id', async () => {
    const rows = await check(new Uint8Array(readFileSync(out.pyiceberg.file)), out.pyiceberg.schema, ['id'])
    expect(rows).toHaveLength(20000)
    expect(rows[1]).toMatchObject({ id: 1n, amount: 73101n, ok: false, tags: [1n, null] })
  })
})
