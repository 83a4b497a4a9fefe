// A row as JSON text, losslessly, in the form a producer sends it (the table sample's encoding).
import { describe, expect, it } from 'vitest'
import { rowJson, valueJson } from '../../../iceberg/spec/row-json.ts'
import type { StructType } from '../../../iceberg/spec/types.ts'

const bytes = (...b: number[]) => new Uint8Array(b)

describe('rowJson', () => {
  it('writes every primitive exactly: longs from their digits, decimals as strings, times in RFC 3339', () => {
    expect(valueJson('long', 9007199254740993n)).toBe('9007199254740993')
    expect(valueJson('long', -9223372036854775808n)).toBe('-9223372036854775808')
    expect(valueJson('int', 7)).toBe('7')
    expect(valueJson('boolean', false)).toBe('false')
    expect(valueJson('double', 0.1)).toBe('0.1')
    expect(valueJson('float', Number.NaN)).toBe('"NaN"')
    expect(valueJson('double', Number.NEGATIVE_INFINITY)).toBe('"-Infinity"')
    expect(valueJson('double', Number.POSITIVE_INFINITY)).toBe('"Infinity"')
    expect(valueJson('double', -0)).toBe('-0')
    expect(valueJson('double', 1e300)).toBe('1e+300')
    // A float holds 0.1 as 0.100000001490116…: written as the shortest decimal that reads back to it.
    expect(valueJson('float', Math.fround(0.1))).toBe('0.1')
    expect(valueJson('float', Math.fround(16777217))).toBe('16777216')
    expect(valueJson('float', Math.fround(3.4028234663852886e38))).toBe('3.4028235e+38')
    expect(valueJson('decimal(10, 2)', 12345n)).toBe('"123.45"')
    expect(valueJson('decimal(38, 0)', 99999999999999999999999999999999999999n)).toBe('"99999999999999999999999999999999999999"')
    expect(valueJson('string', 'a "quote" \u2028')).toBe(JSON.stringify('a "quote" \u2028'))
    expect(valueJson('date', 20424)).toBe('"2025-12-02"')
    expect(valueJson('time', 3_723_000_001n)).toBe('"01:02:03.000001"')
    expect(valueJson('timestamp', 1_764_633_600_000_000n)).toBe('"2025-12-02T00:00:00"')
    expect(valueJson('timestamptz', 1_764_633_600_000_500n)).toBe('"2025-12-02T00:00:00.000500+00:00"')
    expect(valueJson('timestamptz_ns', 1_764_633_600_000_000_007n)).toBe('"2025-12-02T00:00:00.000000007+00:00"')
    expect(valueJson('timestamp_ns', -1n)).toBe('"1969-12-31T23:59:59.999999999"')
    expect(valueJson('uuid', bytes(0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0))).toBe(
      '"12345678-9abc-def0-1234-56789abcdef0"',
    )
    expect(valueJson('binary', bytes(0, 255, 16))).toBe('"AP8Q"')
    expect(valueJson('fixed[2]', bytes(1, 2))).toBe('"AQI="')
    expect(valueJson('long', null)).toBe('null')
  })

  it('writes structs as objects in schema order, lists as arrays, maps as objects or [key, value] pairs', () => {
    const struct: StructType = {
      type: 'struct',
      fields: [
        { id: 1, name: 'id', required: true, type: 'long' },
        { id: 2, name: 'tags', required: false, type: { type: 'list', 'element-id': 3, element: 'string', 'element-required': false } },
        { id: 4, name: 'by_name', required: false, type: { type: 'map', 'key-id': 5, key: 'string', 'value-id': 6, value: 'int', 'value-required': false } },
        { id: 7, name: 'by_day', required: false, type: { type: 'map', 'key-id': 8, key: 'date', 'value-id': 9, value: 'long', 'value-required': true } },
        {
          id: 10,
          name: 'at',
          required: false,
          type: { type: 'struct', fields: [{ id: 11, name: 'lat', required: true, type: 'double' }] },
        },
      ],
    }
    const row = {
      tags: ['a', null],
      id: 1234567890123456789n,
      by_name: [['x', 1] as [string, number]],
      by_day: [[0, 2n] as [number, bigint]],
      at: { lat: 1.5 },
    }
    expect(rowJson(struct, row)).toBe('{"id":1234567890123456789,"tags":["a",null],"by_name":{"x":1},"by_day":[["1970-01-01",2]],"at":{"lat":1.5}}')
    expect(rowJson(struct, { id: 1n })).toBe('{"id":1,"tags":null,"by_name":null,"by_day":null,"at":null}')
  })
})
