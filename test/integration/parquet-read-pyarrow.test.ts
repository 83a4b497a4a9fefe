// readDataFile (iceberg/parquet/read-rows.ts) on files other writers made: a data file PyIceberg 0.12 wrote
// for a table (SqlCatalog on sqlite, local warehouse: no stack needed), read against the table's own
// schema JSON; and files pyarrow wrote directly with PARQUET:field_id metadata, in the encodings
// Java/pyarrow use and hyparquet-writer does not (dictionary pages, data page v1 and v2, delta,
// byte-stream-split, gzip/snappy/zstd/uncompressed, nanosecond and UTC-adjusted timestamps).
//
// Noted, not ours: PyIceberg 0.12 writes a null list of structs as an empty list (like its null map
// of structs, see interop-types.test.ts); pyarrow reads that file back the same way.
import { readFileSync, rmSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readDataFile } from '../../iceberg/parquet/read-rows.ts'
import type { Row, Schema, Value } from '../../iceberg/spec/types.ts'
import { pythonInTempDir } from '../support/python.ts'

const SCRIPT = String.raw`
import sys, os, uuid, datetime, decimal, json
import pyarrow as pa, pyarrow.parquet as pq
out = sys.argv[1]
D = decimal.Decimal
utc = datetime.timezone.utc
result = {}

# ---- PyIceberg: a table append ----
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import *
cat = SqlCatalog('t', uri=f'sqlite:///{out}/cat.db', warehouse=f'file://{out}/wh')
cat.create_namespace('ns')
schema = Schema(
  NestedField(1, 'b', BooleanType(), required=False),
  NestedField(2, 'i', IntegerType(), required=True),
  NestedField(3, 'l', LongType(), required=False),
  NestedField(4, 'f', FloatType(), required=False),
  NestedField(5, 'd', DoubleType(), required=False),
  NestedField(6, 'dec38', DecimalType(38, 10), required=False),
  NestedField(7, 'dec9', DecimalType(9, 2), required=False),
  NestedField(8, 'dec18', DecimalType(18, 4), required=False),
  NestedField(9, 'dt', DateType(), required=False),
  NestedField(10, 't', TimeType(), required=False),
  NestedField(11, 'ts', TimestampType(), required=False),
  NestedField(12, 'tstz', TimestamptzType(), required=False),
  NestedField(13, 's', StringType(), required=False),
  NestedField(14, 'u', UUIDType(), required=False),
  NestedField(15, 'fx', FixedType(4), required=False),
  NestedField(16, 'bin', BinaryType(), required=False),
  NestedField(17, 'st', StructType(NestedField(21, 'a', IntegerType(), required=True), NestedField(22, 'z', StringType(), required=False)), required=False),
  NestedField(18, 'tags', ListType(23, LongType(), element_required=False), required=False),
  NestedField(19, 'attrs', MapType(24, StringType(), 25, DoubleType(), value_required=False), required=False),
  NestedField(20, 'points', ListType(26, StructType(NestedField(27, 'x', IntegerType(), required=True)), element_required=True), required=False),
)
tbl = cat.create_table('ns.t', schema=schema)
rows = [
  dict(b=True, i=1, l=2**63-1, f=1.5, d=float('nan'), dec38=D('9999999999999999999999999999.9999999999'), dec9=D('12.30'), dec18=D('-0.0005'),
       dt=datetime.date(2022, 1, 8), t=datetime.time(1, 0, 0), ts=datetime.datetime(2023, 11, 14, 22, 13, 20),
       tstz=datetime.datetime(2023, 11, 14, 22, 13, 20, 123456, tzinfo=utc), s='abc', u=uuid.UUID('f79c3e09-677c-4bbd-a479-3f349cb785e7'),
       fx=b'\x01\x02\x03\x04', bin=b'\x00\xff', st=dict(a=7, z='x'), tags=[1, None, 3], attrs=[('k1', 1.25), ('k2', None)], points=[dict(x=1), dict(x=2)]),
  dict(b=False, i=-2**31, l=-2**63, f=-0.0, d=2.5, dec38=D('-9999999999999999999999999999.9999999999'), dec9=D('-999999.99'), dec18=D('99999999999999.9999'),
       dt=datetime.date(1969, 12, 31), t=datetime.time(0, 0), ts=datetime.datetime(1969, 12, 31, 23, 59, 59, 999999),
       tstz=datetime.datetime(1970, 1, 1, tzinfo=utc), s='\ufeffü😀', u=uuid.UUID(int=0), fx=b'\x00\x00\x00\x00', bin=b'', st=None, tags=[], attrs=[], points=None),
  dict(b=None, i=2**31-1, l=None, f=None, d=float('-inf'), dec38=None, dec9=None, dec18=None, dt=None, t=None, ts=None, tstz=None, s=None, u=None,
       fx=None, bin=None, st=dict(a=0, z=None), tags=None, attrs=None, points=[]),
]
tbl.append(pa.Table.from_pylist(rows, schema=tbl.schema().as_arrow()))
files = [t.file.file_path for t in tbl.scan().plan_files()]
result['pyiceberg'] = {'file': files[0].removeprefix('file://'), 'schema': json.loads(tbl.schema().model_dump_json())}

# ---- pyarrow directly, field ids in field metadata ----
def fid(name, type, id, nullable=True):
  return pa.field(name, type, nullable=nullable, metadata={b'PARQUET:field_id': str(id).encode()})
aschema = pa.schema([
  fid('id', pa.int64(), 1, False),
  fid('s', pa.string(), 2),
  fid('ts_ns', pa.timestamp('ns'), 3),
  fid('tstz_ns', pa.timestamp('ns', tz='UTC'), 4),
  fid('tstz', pa.timestamp('us', tz='UTC'), 5),
  fid('dbl', pa.float64(), 6),
  fid('flt', pa.float32(), 7),
  fid('dec', pa.decimal128(38, 10), 8),
  fid('bin', pa.binary(), 9),
  fid('u', pa.binary(16), 10),
  fid('lst', pa.list_(fid('element', pa.string(), 12)), 11),
  fid('m', pa.map_(fid('key', pa.int32(), 14, False), fid('value', pa.list_(fid('element', pa.int64(), 17)), 15)), 13),
  fid('st', pa.struct([fid('a', pa.int64(), 19), fid('b', pa.struct([fid('c', pa.string(), 21)]), 20)]), 18),
  fid('extra', pa.string(), 99),
])
N = 2000
data = []
for i in range(N):
  data.append(dict(
    id=i - 2**62,
    s=None if i % 5 == 0 else ['alpha', 'beta', 'gamma', ''][i % 4],
    ts_ns=None if i % 7 == 0 else (i * 1000000007 - 2**62),
    tstz_ns=(2**63 - 1 - i) if i % 2 else (-2**63 + i),
    tstz=i * 1000001,
    dbl=[float('nan'), -0.0, float('inf'), 1 / (i + 1)][i % 4] if i % 9 else None,
    flt=[-0.0, 0.5, float('-inf'), float(i)][i % 4],
    dec=None if i % 3 == 0 else D(f'{(i * 10**27 + i) * (1 if i % 2 else -1)}E-10'),  # from text: exact
    bin=bytes([i % 256, (i >> 8) % 256]) if i % 4 else None,
    u=bytes(range(i % 200, i % 200 + 16)),
    lst=None if i % 6 == 0 else [None if j % 3 == 1 else f'{i}/{j}' for j in range(i % 5)],
    m=None if i % 10 == 0 else [(j, None if j == 1 else [i, None, -i]) for j in range(i % 3)],
    st=None if i % 8 == 0 else dict(a=None if i % 2 else i, b=None if i % 3 == 0 else dict(c=None if i % 4 == 0 else str(i))),
    extra='ignored',
  ))
table = pa.Table.from_pylist(data, schema=aschema)
variants = {
  'v1-dict-snappy': dict(compression='snappy', use_dictionary=True, data_page_version='1.0'),
  'v2-dict-zstd': dict(compression='zstd', use_dictionary=True, data_page_version='2.0'),
  'v2-gzip-plain': dict(compression='gzip', use_dictionary=False, data_page_version='2.0'),
  'v1-none-delta': dict(compression='none', use_dictionary=False, data_page_version='1.0',
                        column_encoding={'id': 'DELTA_BINARY_PACKED', 's': 'DELTA_BYTE_ARRAY', 'bin': 'DELTA_LENGTH_BYTE_ARRAY',
                                         'dbl': 'BYTE_STREAM_SPLIT', 'flt': 'BYTE_STREAM_SPLIT', 'ts_ns': 'DELTA_BINARY_PACKED'}),
}
result['pyarrow'] = {}
for name, kw in variants.items():
  path = f'{out}/{name}.parquet'
  pq.write_table(table, path, row_group_size=700, data_page_size=1024, write_statistics=False, **kw)
  result['pyarrow'][name] = path
print(json.dumps(result))
`

const MAX = 2n ** 63n - 1n
const MIN = -(2n ** 63n)
const DEC38 = 10n ** 38n - 1n

let dir: string
let out: { pyiceberg: { file: string; schema: Schema }; pyarrow: Record<string, string> }

beforeAll(async () => {
  ;({ dir, out } = await pythonInTempDir<typeof out>(SCRIPT, 'lhbox-parquet-read-'))
}, 15 * 60_000) // the pinned venv may be built first, as in the other Python tests

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
})

describe('readDataFile on files PyIceberg and pyarrow wrote', () => {
  it('reads a PyIceberg data file exactly, against the table schema', async () => {
    const rows = await readDataFile(new Uint8Array(readFileSync(out.pyiceberg.file)), out.pyiceberg.schema)
    const expected: Row[] = [
      {
        b: true,
        i: 1,
        l: MAX,
        f: 1.5,
        d: NaN,
        dec38: DEC38,
        dec9: 1230n,
        dec18: -5n,
        dt: 19000,
        t: 3_600_000_000n,
        ts: 1_700_000_000_000_000n,
        tstz: 1_700_000_000_123_456n,
        s: 'abc',
        u: Uint8Array.from([0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd, 0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7, 0x85, 0xe7]),
        fx: Uint8Array.of(1, 2, 3, 4),
        bin: Uint8Array.of(0, 255),
        st: { a: 7, z: 'x' },
        tags: [1n, null, 3n],
        attrs: [
          ['k1', 1.25],
          ['k2', null],
        ],
        points: [{ x: 1 }, { x: 2 }],
      },
      {
        b: false,
        i: -2147483648,
        l: MIN,
        f: -0,
        d: 2.5,
        dec38: -DEC38,
        dec9: -99999999n,
        dec18: 999999999999999999n,
        dt: -1,
        t: 0n,
        ts: -1n,
        tstz: 0n,
        s: '\uFEFFü😀',
        u: new Uint8Array(16),
        fx: new Uint8Array(4),
        bin: new Uint8Array(0),
        st: null,
        tags: [],
        attrs: [],
        points: [], // PyIceberg wrote the null list of structs as empty
      },
      {
        b: null,
        i: 2147483647,
        l: null,
        f: null,
        d: -Infinity,
        dec38: null,
        dec9: null,
        dec18: null,
        dt: null,
        t: null,
        ts: null,
        tstz: null,
        s: null,
        u: null,
        fx: null,
        bin: null,
        st: { a: 0, z: null },
        tags: null,
        attrs: null,
        points: [],
      },
    ]
    expect(rows).toEqual(expected)
    expect(Object.is(rows[1].f, -0)).toBe(true)
  })

  const schema: Schema = {
    type: 'struct',
    'schema-id': 0,
    fields: [
      { id: 1, name: 'id', required: true, type: 'long' },
      { id: 2, name: 's', required: false, type: 'string' },
      { id: 3, name: 'ts_ns', required: false, type: 'timestamp_ns' },
      { id: 4, name: 'tstz_ns', required: false, type: 'timestamptz_ns' },
      { id: 5, name: 'tstz', required: false, type: 'timestamptz' },
      { id: 6, name: 'dbl', required: false, type: 'double' },
      { id: 7, name: 'flt', required: false, type: 'float' },
      { id: 8, name: 'dec', required: false, type: 'decimal(38, 10)' },
      { id: 9, name: 'bin', required: false, type: 'binary' },
      { id: 10, name: 'u', required: false, type: 'fixed[16]' },
      { id: 11, name: 'lst', required: false, type: { type: 'list', 'element-id': 12, element: 'string', 'element-required': false } },
      {
        id: 13,
        name: 'm',
        required: false,
        type: {
          type: 'map',
          'key-id': 14,
          key: 'int',
          'value-id': 15,
          'value-required': false,
          value: { type: 'list', 'element-id': 17, element: 'long', 'element-required': false },
        },
      },
      {
        id: 18,
        name: 'st',
        required: false,
        type: {
          type: 'struct',
          fields: [
            { id: 19, name: 'a', required: false, type: 'long' },
            { id: 20, name: 'b', required: false, type: { type: 'struct', fields: [{ id: 21, name: 'c', required: false, type: 'string' }] } },
          ],
        },
      },
      { id: 30, name: 'added', required: false, type: 'int' },
    ],
  }

  // The rows of the script's loop, built the same way here.
  const expected: Row[] = Array.from({ length: 2000 }, (_, i) => {
    const I = BigInt(i)
    const unscaled = I * 10n ** 27n + I
    return {
      id: I - 2n ** 62n,
      s: i % 5 === 0 ? null : ['alpha', 'beta', 'gamma', ''][i % 4],
      ts_ns: i % 7 === 0 ? null : I * 1000000007n - 2n ** 62n,
      tstz_ns: i % 2 ? MAX - I : MIN + I,
      tstz: I * 1000001n,
      dbl: i % 9 ? [NaN, -0, Infinity, 1 / (i + 1)][i % 4] : null,
      flt: [-0, 0.5, -Infinity, i][i % 4],
      dec: i % 3 === 0 ? null : i % 2 ? unscaled : -unscaled,
      bin: i % 4 ? Uint8Array.of(i % 256, (i >> 8) % 256) : null,
      u: Uint8Array.from({ length: 16 }, (_, k) => (i % 200) + k),
      lst: i % 6 === 0 ? null : Array.from({ length: i % 5 }, (_, j) => (j % 3 === 1 ? null : `${i}/${j}`)),
      m: i % 10 === 0 ? null : Array.from({ length: i % 3 }, (_, j) => [j, j === 1 ? null : [I, null, -I]] as [number, Value]),
      st: i % 8 === 0 ? null : { a: i % 2 ? null : I, b: i % 3 === 0 ? null : { c: i % 4 === 0 ? null : String(i) } },
      added: null,
    }
  })
  for (const name of ['v1-dict-snappy', 'v2-dict-zstd', 'v2-gzip-plain', 'v1-none-delta']) {
    it(`reads a pyarrow file (${name}) by field id, exactly`, async () => {
      const rows = await readDataFile(new Uint8Array(readFileSync(out.pyarrow[name])), schema)
      expect(rows).toEqual(expected)
    })
  }

  it('reads a column subset of a pyarrow file', async () => {
    const rows = await readDataFile(new Uint8Array(readFileSync(out.pyarrow['v2-dict-zstd'])), schema, { columns: ['m', 'id'] })
    expect(rows).toEqual(expected.map((r) => ({ id: r.id, m: r.m })))
  })
})
