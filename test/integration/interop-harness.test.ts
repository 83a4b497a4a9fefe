// The interop harness on its own, without our writer: PyIceberg creates a table in the SqlCatalog on
// the stack's Postgres and appends rows holding int64 extremes and decimal(38,10) values to the
// stack's S3; pyiceberg_scan.py and duckdb_scan.py read them back and both print exactly what went in.
import { beforeAll, describe, expect, it } from 'vitest'
import { S3Client, type S3Config } from '../../iceberg/io/s3.ts'
import { stringifyLossless } from '../../iceberg/spec/json.ts'
import { ensureVenv, PythonError, runPython, s3Args, sqlCatalogArgs, toExact, venvDir } from '../support/python.ts'
import { stack } from '../support/stack.ts'
import { execFile } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'

const execFileP = promisify(execFile)
const pythonSupport = new URL('../support/python.ts', import.meta.url).href

const CATALOG = 'interop-harness' // not the stack's warehouse: the product never lists this catalog

const schema = {
  type: 'struct',
  fields: [
    { id: 1, name: 'id', type: 'long', required: true },
    { id: 2, name: 'amount', type: 'decimal(38,10)', required: false },
    { id: 3, name: 'ts', type: 'timestamptz', required: false },
    { id: 4, name: 'name', type: 'string', required: false },
    { id: 5, name: 'u', type: 'uuid', required: false },
    { id: 6, name: 'day', type: 'date', required: false },
    { id: 7, name: 'bin', type: 'binary', required: false },
    { id: 8, name: 'd', type: 'double', required: false },
    { id: 9, name: 'i', type: 'int', required: false },
    {
      id: 10,
      name: 'nested',
      required: false,
      type: {
        type: 'struct',
        fields: [
          { id: 11, name: 'tags', required: false, type: { type: 'list', 'element-id': 12, element: 'string', 'element-required': false } },
          {
            id: 13,
            name: 'counts',
            required: false,
            type: { type: 'map', 'key-id': 14, key: 'string', 'value-id': 15, value: 'long', 'value-required': false },
          },
        ],
      },
    },
  ],
}
const partitionSpec = { fields: [{ 'source-id': 3, 'field-id': 1000, name: 'ts_day', transform: 'day' }] }

const MAX = 9223372036854775807n
const MIN = -9223372036854775808n

// What we append (bigints written as exact JSON integers) ...
const input = [
  {
    id: MAX,
    amount: '9999999999999999999999999999.9999999999',
    ts: '2026-09-21T14:34:56.123456+02:00',
    name: 'héllo "world"',
    u: 'F79C3E09-677C-4D79-9F6E-8E7E1F4C9D0A',
    day: '2026-09-21',
    bin: 'AAEC/w==',
    d: 0.1,
    i: 2147483647,
    nested: {
      tags: ['a', null, 'c'],
      counts: [
        ['x', MAX],
        ['y', MIN],
      ],
    },
  },
  {
    id: MIN,
    amount: '-9999999999999999999999999999.9999999999',
    ts: '1969-12-31T23:59:59.999999Z',
    d: 'NaN',
    i: -2147483648,
    nested: { tags: [], counts: [] },
  },
  { id: 0n, amount: '0.0000000001', d: '-Infinity' },
]

// ... and what both readers must print (interop_common.py's encoding, numbers made exact by toExact).
const expected = [
  {
    id: MIN,
    amount: '-9999999999999999999999999999.9999999999',
    ts: '1969-12-31T23:59:59.999999+00:00',
    name: null,
    u: null,
    day: null,
    bin: null,
    d: 'NaN',
    i: -2147483648,
    nested: { tags: [], counts: [] },
  },
  { id: 0n, amount: '0.0000000001', ts: null, name: null, u: null, day: null, bin: null, d: '-Infinity', i: null, nested: null },
  {
    id: MAX,
    amount: '9999999999999999999999999999.9999999999',
    ts: '2026-09-21T12:34:56.123456+00:00',
    name: 'héllo "world"',
    u: 'f79c3e09-677c-4d79-9f6e-8e7e1f4c9d0a',
    day: '2026-09-21',
    bin: 'AAEC/w==',
    d: 0.1,
    i: 2147483647n,
    nested: {
      tags: ['a', null, 'c'],
      counts: [
        ['x', MAX],
        ['y', MIN],
      ],
    },
  },
].map((r) => ({ ...r, i: r.i === null ? null : BigInt(r.i) }))

beforeAll(async () => {
  await ensureVenv()
}, 15 * 60_000)

it('ensureVenv is stamped with the requirement list; while the stamp matches, a new process only reads it (no pip)', async () => {
  const python = await ensureVenv()
  expect(existsSync(python)).toBe(true)
  const stamp = join(venvDir(), '.lhbox-requirements.sha256')
  const requirements = join(venvDir(), 'lhbox-requirements.txt')
  expect(existsSync(stamp)).toBe(true)
  // An install writes the requirement file before pip and the stamp after it: unchanged, no install ran.
  const mtimes = () => [stamp, requirements].map((f) => (existsSync(f) ? statSync(f, { bigint: true }).mtimeNs : null))
  const before = mtimes()
  expect(ensureVenv()).toBe(ensureVenv()) // one check per process
  // A new process (as another test file's worker): the same python, and nothing rewritten.
  const { stdout } = await execFileP(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', `const { ensureVenv } = await import(${JSON.stringify(pythonSupport)}); console.log(await ensureVenv())`],
    { env: process.env },
  )
  expect(stdout.trim()).toBe(python)
  expect(mtimes()).toEqual(before)
})

it('runPython throws with the script stderr on a non-zero exit', async () => {
  const err: any = await runPython('pyiceberg_scan.py', ['--sql-uri', 'postgres://nobody:x@127.0.0.1:1/none', 'ns.t']).catch((e) => e)
  expect(err).toBeInstanceOf(PythonError)
  expect(err.message).toMatch(/exited with 1/)
  expect(err.stderr).toMatch(/OperationalError|connection/i)
})

// The stack's store is versitygw too (setup.ts): the second gateway adds a bucket of its own, with other credentials.
const servers: Array<[string, () => S3Config]> = [
  ['the stack’s versitygw', () => stack().s3],
  ['a second versitygw', () => stack().gateway],
]

describe.each(servers)('interop harness on %s', (server, s3config) => {
  const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`
  const table = `harness_${run}.t`
  const catalogArgs = () =>
    sqlCatalogArgs({
      databaseUrl: stack().databaseUrl,
      catalogName: CATALOG,
      s3: s3config(),
      warehouse: `s3://${s3config().bucket}/interop-harness/${server}-${run}`,
    })

  let created: any
  let appended: any

  it('PyIceberg creates a day(ts)-partitioned table in the SqlCatalog and appends rows', async () => {
    created = toExact(
      await runPython('pyiceberg_append.py', [
        ...catalogArgs(),
        table,
        '--create-schema',
        JSON.stringify(schema),
        '--partition-spec',
        JSON.stringify(partitionSpec),
      ]),
    )
    expect(created).toMatchObject({ created: true, appended: 0n, snapshot_id: null, format_version: 2n })
    appended = toExact(await runPython('pyiceberg_append.py', [...catalogArgs(), table], undefined, { input: stringifyLossless(input) }))
    expect(appended).toMatchObject({ created: false, appended: 3n })
    expect(typeof appended.snapshot_id).toBe('bigint')
    expect(appended.metadata_location).toMatch(new RegExp(`^s3://${s3config().bucket}/interop-harness/.*\\.metadata\\.json$`))
  })

  it('pyiceberg_scan.py gives every value exactly, the snapshot and the files with their metrics', async () => {
    const out = toExact(await runPython('pyiceberg_scan.py', [...catalogArgs(), table, '--order-by', 'id']))
    expect(out.format_version).toBe(2n)
    expect(out.metadata_location).toBe(appended.metadata_location)
    expect(out.row_count).toBe(3n)
    expect(out.rows).toEqual(expected)
    expect(out.snapshots).toHaveLength(1)
    expect(out.snapshots[0]).toMatchObject({ snapshot_id: appended.snapshot_id, parent: null, operation: 'append' })
    expect(out.snapshots[0].summary).toMatchObject({ 'added-records': '3', 'total-records': '3' })
    // day(ts): 2026-09-21, 1969-12-31 and null -> three files
    expect(out.files.map((f: any) => f.partition.ts_day).sort()).toEqual(['1969-12-31', '2026-09-21', null].sort())
    const big = out.files.find((f: any) => f.partition.ts_day === '2026-09-21')
    expect(big.record_count).toBe(1n)
    expect(big.readable_bounds.id).toEqual({ lower_bound: MAX, upper_bound: MAX })
    expect(big.readable_bounds.amount).toEqual({ lower_bound: expected[2].amount, upper_bound: expected[2].amount })
    expect(big.lower_bounds).toContainEqual([1n, Buffer.from('ffffffffffffff7f', 'hex').toString('base64')])
    expect(big.value_counts).toContainEqual([1n, 1n])
    expect(out.manifests).toHaveLength(1)
    expect(out.manifests[0]).toMatchObject({ added_files_count: 3n, added_rows_count: 3n, added_snapshot_id: appended.snapshot_id })

    const filtered = toExact(await runPython('pyiceberg_scan.py', [...catalogArgs(), table, '--order-by', 'id', '--row-filter', 'id > 0', '--no-files']))
    expect(filtered.rows).toEqual([expected[2]])
  })

  it('duckdb_scan.py (iceberg_scan, extensions loaded offline) gives the same values', async () => {
    const out = toExact(await runPython('duckdb_scan.py', [...s3Args(s3config()), '--metadata', appended.metadata_location, '--order-by', 'id']))
    expect(out.row_count).toBe(3n)
    expect(out.rows).toEqual(expected)
    expect(out.snapshots.map((s: any) => s.snapshot_id)).toEqual([appended.snapshot_id])
    const where = toExact(
      await runPython('duckdb_scan.py', [
        ...s3Args(s3config()),
        '--metadata',
        appended.metadata_location,
        '--where',
        "ts >= TIMESTAMPTZ '2026-01-01 00:00:00+00'",
      ]),
    )
    expect(where.rows).toEqual([expected[2]])
  })

  it('duckdb_scan.py --read-json reads NDJSON objects from S3', async () => {
    const s3 = new S3Client(s3config())
    const prefix = `interop-harness/${server}-${run}/rejects/`
    await s3.put(`${prefix}a.ndjson`, '{"reason":"type_mismatch","field":"id","line":1}\n{"reason":"missing_required","field":"a.b","line":2}\n')
    await s3.put(`${prefix}b.ndjson`, '{"reason":"not_an_object","line":3}\n')
    const out = toExact(
      await runPython('duckdb_scan.py', [...s3Args(s3config()), '--read-json', `s3://${s3config().bucket}/${prefix}*.ndjson`, '--order-by', 'line']),
    )
    expect(out.rows).toEqual([
      { reason: 'type_mismatch', field: 'id', line: 1n },
      { reason: 'missing_required', field: 'a.b', line: 2n },
      { reason: 'not_an_object', field: null, line: 3n },
    ])
  })
})
