// A SQL run's nested values as JSON text (roller/feeds/sql-json.ts), from a real in-process DuckDB:
// each leaf as a top-level column of its type is stored, and what the table's converter takes.
import { DuckDBInstance, DuckDBTypeId } from '@duckdb/node-api'
import { describe, expect, it } from 'vitest'
import { isNested, nestedJson } from '../../../roller/feeds/sql-json.ts'
import { parseLossless } from '../../../iceberg/spec/json.ts'
import type { IcebergType } from '../../../iceberg/spec/types.ts'
import { valueConverter } from '../../../iceberg/spec/values.ts'

async function nested(sql: string): Promise<string[]> {
  const db = await DuckDBInstance.create(':memory:')
  const c = await db.connect()
  try {
    const r = await c.runAndReadAll(sql)
    const types = r.columnTypes()
    return r.getColumns().map((col, i) => {
      expect(isNested(DuckDBTypeId, types[i]), types[i].toString()).toBe(true)
      return nestedJson(DuckDBTypeId, types[i], col[0])
    })
  } finally {
    c.closeSync()
    db.closeSync()
  }
}

describe('nestedJson', () => {
  it('writes integers as exact digits, timestamps as RFC 3339, decimals and dates as text, inside structs, lists and maps', async () => {
    const [s, l, m, ll] = await nested(`SELECT
      {'a': 9007199254740993::BIGINT, 't': TIMESTAMPTZ '2026-01-02 03:04:05.123456+00', 'ts': TIMESTAMP '2026-01-02 03:04:05',
       'd': 12.30::DECIMAL(18,2), 'dt': DATE '2026-01-02', 'f': 1.5::DOUBLE, 'inf': 'inf'::DOUBLE, 'b': true, 's': 'x"y', 'n': NULL::INT} AS s,
      [1::BIGINT, 9223372036854775807] AS l, MAP {'k': (-9223372036854775807 - 1)::BIGINT} AS m, [[1, 2], [], NULL] AS ll`)
    expect(s).toBe(
      '{"a":9007199254740993,"t":"2026-01-02T03:04:05.123456Z","ts":"2026-01-02T03:04:05.000000","d":"12.30","dt":"2026-01-02","f":1.5,"inf":"Infinity","b":true,"s":"x\\"y","n":null}',
    )
    expect(l).toBe('[1,9223372036854775807]')
    expect(m).toBe('[{"key":"k","value":-9223372036854775808}]')
    expect(ll).toBe('[[1,2],[],null]')
    // What the table's columns take: the struct as a struct<a long, t timestamptz, …> (DuckDB's own JSON was refused).
    let id = 1
    const f = (name: string, type: IcebergType) => ({ id: id++, name, required: false, type })
    const struct: IcebergType = {
      type: 'struct',
      fields: [
        f('a', 'long'),
        f('t', 'timestamptz'),
        f('ts', 'timestamp'),
        f('d', 'decimal(18, 2)'),
        f('dt', 'date'),
        f('f', 'double'),
        f('inf', 'double'),
        f('b', 'boolean'),
        f('s', 'string'),
        f('n', 'int'),
      ],
    }
    const row = valueConverter(struct, 2)(parseLossless(s)) as Record<string, unknown> | undefined
    expect(row).toBeDefined()
    expect(row).toMatchObject({ a: 9007199254740993n, t: 1767323045123456n, b: true, s: 'x"y', n: null })
    const longs = valueConverter({ type: 'list', 'element-id': id++, element: 'long', 'element-required': false }, 2)(parseLossless(l))
    expect(longs).toEqual([1n, 9223372036854775807n])
  })
})
