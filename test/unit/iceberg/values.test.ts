import { describe, expect, it } from 'vitest'
import { formatDecimal, parseDecimal, parseExactInteger } from '../../../iceberg/spec/decimal.ts'
import { parseLossless } from '../../../iceberg/spec/json.ts'
import type { IcebergType, NestedField, StructType } from '../../../iceberg/spec/types.ts'
import { toRow, type Reject, type ToRowOptions } from '../../../iceberg/spec/values.ts'

let nextId = 1
function field(name: string, type: IcebergType, required = false, extra: Partial<NestedField> = {}): NestedField {
  return { id: nextId++, name, required, type, ...extra }
}
function struct(...fields: NestedField[]): StructType {
  return { type: 'struct', fields }
}
function list(element: IcebergType, elementRequired = false): IcebergType {
  return { type: 'list', 'element-id': nextId++, element, 'element-required': elementRequired }
}
function map(key: IcebergType, value: IcebergType, valueRequired = false): IcebergType {
  return { type: 'map', 'key-id': nextId++, key, 'value-id': nextId++, value, 'value-required': valueRequired }
}

/** The converted value of `json` in an optional column `v` of `type`; throws with the rejects if refused. */
function value(type: IcebergType, json: string, opts?: ToRowOptions): unknown {
  const r = toRow(struct(field('v', type)), parseLossless(`{"v": ${json}}`), opts)
  if (!r.ok) throw new Error(`refused: ${JSON.stringify(r.rejects)}`)
  return r.row.v
}

/** The rejects of `{"v": json}` in an optional column `v` of `type`. */
function rejects(type: IcebergType, json: string, opts?: ToRowOptions): Reject[] {
  const r = toRow(struct(field('v', type)), parseLossless(`{"v": ${json}}`), opts)
  if (r.ok) throw new Error(`accepted as ${String(r.row.v)}`)
  return r.rejects
}

function mismatch(type: string, got: string, field = 'v'): Reject[] {
  return [{ reason: 'type_mismatch', field, expected: type, got }]
}

const v3 = { formatVersion: 3 } as const

describe('toRow: the row', () => {
  it('converts a row of several types and leaves absent optional fields null', () => {
    const schema = struct(field('x', 'long', true), field('who', 'string'), field('at', 'timestamptz'), field('n', 'int'))
    const r = toRow(schema, parseLossless('{"x": 9223372036854775807, "who": "north", "n": null}'))
    expect(r).toEqual({ ok: true, row: { x: 9223372036854775807n, who: 'north', at: null, n: null } })
  })

  it('not an object → not_an_object', () => {
    const schema = struct(field('x', 'long'))
    expect(toRow(schema, parseLossless('[1]'))).toEqual({ ok: false, rejects: [{ reason: 'not_an_object', got: 'array of 1' }] })
    expect(toRow(schema, parseLossless('"x"'))).toEqual({ ok: false, rejects: [{ reason: 'not_an_object', got: 'string "x"' }] })
    expect(toRow(schema, parseLossless('12'))).toEqual({ ok: false, rejects: [{ reason: 'not_an_object', got: 'number 12' }] })
    expect(toRow(schema, null)).toEqual({ ok: false, rejects: [{ reason: 'not_an_object', got: 'null' }] })
  })

  it('a required field absent or null → missing_required', () => {
    const schema = struct(field('x', 'long', true), field('y', 'string', true))
    expect(toRow(schema, parseLossless('{"y": null}'))).toEqual({
      ok: false,
      rejects: [
        { reason: 'missing_required', field: 'x', expected: 'long' },
        { reason: 'missing_required', field: 'y', expected: 'string' },
      ],
    })
  })

  it('a field the schema lacks → unknown_field, never dropped', () => {
    const schema = struct(field('x', 'long'))
    expect(toRow(schema, parseLossless('{"x": 1, "X": 2, "extra": null}'))).toEqual({
      ok: false,
      rejects: [
        { reason: 'unknown_field', field: 'X' },
        { reason: 'unknown_field', field: 'extra' },
      ],
    })
  })

  it('collects every reject of a row, nested ones with their paths', () => {
    const schema = struct(
      field('id', 'long', true),
      field('a', struct(field('b', 'int', true), field('c', struct(field('d', 'date'))))),
      field('xs', list('long', true)),
      field('m', map('string', 'double', true)),
    )
    const input = parseLossless('{"a": {"c": {"d": "2023-02-29", "e": 1}, "z": true}, "xs": [1, null, "3"], "m": {"k": null, "j": "x"}, "q": 0}')
    expect(toRow(schema, input)).toEqual({
      ok: false,
      rejects: [
        { reason: 'missing_required', field: 'id', expected: 'long' },
        { reason: 'missing_required', field: 'a.b', expected: 'int' },
        { reason: 'type_mismatch', field: 'a.c.d', expected: 'date', got: 'string "2023-02-29" (not a calendar date)' },
        { reason: 'unknown_field', field: 'a.c.e' },
        { reason: 'unknown_field', field: 'a.z' },
        { reason: 'missing_required', field: 'xs[1]', expected: 'long' },
        { reason: 'type_mismatch', field: 'xs[2]', expected: 'long', got: 'string "3"' },
        { reason: 'missing_required', field: 'm["k"]', expected: 'double' },
        { reason: 'type_mismatch', field: 'm["j"]', expected: 'double', got: 'string "x"' },
        { reason: 'unknown_field', field: 'q' },
      ],
    })
  })

  it('shortens long values in got', () => {
    expect(rejects('long', JSON.stringify('x'.repeat(100)))).toEqual(mismatch('long', `string "${'x'.repeat(64)}…"`))
  })
})

describe('boolean and string', () => {
  it('boolean only from true/false', () => {
    expect(value('boolean', 'true')).toBe(true)
    expect(value('boolean', 'false')).toBe(false)
    expect(rejects('boolean', '"true"')).toEqual(mismatch('boolean', 'string "true"'))
    expect(rejects('boolean', '1')).toEqual(mismatch('boolean', 'number 1'))
  })

  it('string only from JSON strings, and only when it is valid Unicode', () => {
    expect(value('string', '"héllo \\ud83d\\ude00"')).toBe('héllo 😀')
    expect(value('string', '""')).toBe('')
    expect(rejects('string', '12')).toEqual(mismatch('string', 'number 12'))
    expect(rejects('string', '{"a": 1}')).toEqual(mismatch('string', 'object'))
    expect(rejects('string', '"a\\ud800b"')[0].got).toMatch(/an unpaired UTF-16 surrogate\)$/)
    expect(rejects('string', '"\\ude00"')[0].reason).toBe('type_mismatch')
  })
})

describe('int and long', () => {
  it('int: exact at its bounds, refused one past them', () => {
    expect(value('int', '2147483647')).toBe(2147483647)
    expect(value('int', '-2147483648')).toBe(-2147483648)
    expect(rejects('int', '2147483648')).toEqual(mismatch('int', 'number 2147483648 (out of range for int)'))
    expect(rejects('int', '-2147483649')).toEqual(mismatch('int', 'number -2147483649 (out of range for int)'))
  })

  it('long: 9223372036854775807 and -9223372036854775808 exact, refused one past them', () => {
    expect(value('long', '9223372036854775807')).toBe(9223372036854775807n)
    expect(value('long', '-9223372036854775808')).toBe(-9223372036854775808n)
    expect(value('long', '9007199254740993')).toBe(9007199254740993n)
    expect(rejects('long', '9223372036854775808')).toEqual(mismatch('long', 'number 9223372036854775808 (out of range for long)'))
    expect(rejects('long', '-9223372036854775809')).toEqual(mismatch('long', 'number -9223372036854775809 (out of range for long)'))
    expect(rejects('long', '1e400')).toEqual(mismatch('long', 'number 1e400 (out of range for long)'))
  })

  it('an integral value written with a fraction or exponent is accepted; a fraction is refused, not truncated', () => {
    expect(value('int', '1.0')).toBe(1)
    expect(value('int', '1.5e1')).toBe(15)
    expect(value('long', '-0')).toBe(0n)
    expect(value('long', '9.223372036854775807e18')).toBe(9223372036854775807n)
    expect(rejects('int', '1.5')).toEqual(mismatch('int', 'number 1.5 (not an integer)'))
    expect(rejects('long', '1e-1')).toEqual(mismatch('long', 'number 1e-1 (not an integer)'))
  })

  it('strings are not numbers', () => {
    expect(rejects('long', '"42"')).toEqual(mismatch('long', 'string "42"'))
    expect(rejects('int', 'true')).toEqual(mismatch('int', 'boolean true'))
  })

  it('parseExactInteger bounds the work on absurd exponents', () => {
    expect(parseExactInteger('1e999999999')).toEqual({ ok: false, why: 'out of range' })
    expect(parseExactInteger('0e999999999')).toEqual({ ok: true, value: 0n })
    expect(parseExactInteger('12e2')).toEqual({ ok: true, value: 1200n })
  })
})

describe('float and double', () => {
  it('from any JSON number; float rounds to float32', () => {
    expect(value('double', '0.1')).toBe(0.1)
    expect(value('float', '0.1')).toBe(Math.fround(0.1))
    expect(value('float', '0.1')).not.toBe(0.1)
    expect(value('double', '7')).toBe(7)
    expect(value('double', '1.7976931348623157e308')).toBe(Number.MAX_VALUE)
    expect(value('float', '3.4028234663852886e38')).toBe(3.4028234663852886e38)
    expect(Object.is(value('double', '-0'), -0)).toBe(true)
  })

  it('beyond the range is refused rather than made infinite', () => {
    expect(rejects('double', '1e309')).toEqual(mismatch('double', 'number 1e309 (out of range for double)'))
    expect(rejects('float', '1e39')).toEqual(mismatch('float', 'number 1e39 (out of range for float)'))
  })

  it('NaN and infinities as the strings "NaN", "Infinity", "-Infinity"; other strings refused', () => {
    expect(value('double', '"NaN"')).toBeNaN()
    expect(value('float', '"Infinity"')).toBe(Infinity)
    expect(value('double', '"-Infinity"')).toBe(-Infinity)
    expect(rejects('double', '"1.5"')).toEqual(mismatch('double', 'string "1.5"'))
    expect(rejects('double', '"nan"')).toEqual(mismatch('double', 'string "nan"'))
  })
})

describe('decimal', () => {
  it('from strings or numbers, to the unscaled value; fewer fractional digits are padded', () => {
    expect(value('decimal(9, 2)', '"12.3"')).toBe(1230n)
    expect(value('decimal(9, 2)', '12.30')).toBe(1230n)
    expect(value('decimal(9, 2)', '"-0.01"')).toBe(-1n)
    expect(value('decimal(9, 2)', '5')).toBe(500n)
    expect(value('decimal(9, 2)', '"1234567.89"')).toBe(123456789n)
    expect(value('decimal(9,2)', '"-1234567.89"')).toBe(-123456789n)
  })

  it('exponents are accepted when exact', () => {
    expect(value('decimal(9, 2)', '1.5e2')).toBe(15000n)
    expect(value('decimal(9, 2)', '"125E-2"')).toBe(125n)
    expect(value('decimal(9, 2)', '1.230')).toBe(123n) // a trailing zero is not a lost digit
    expect(rejects('decimal(9, 2)', '1e-3')).toEqual(mismatch('decimal(9, 2)', 'number 1e-3 (3 fractional digits for scale 2)'))
  })

  it('decimal(38, 10): all 38 digits exact; one more, or an 11th fractional digit, refused', () => {
    const t = 'decimal(38, 10)'
    expect(value(t, '"1234567890123456789012345678.0123456789"')).toBe(12345678901234567890123456780123456789n)
    expect(value(t, '9999999999999999999999999999.9999999999')).toBe(10n ** 38n - 1n)
    expect(value(t, '-9999999999999999999999999999.9999999999')).toBe(-(10n ** 38n - 1n))
    expect(rejects(t, '"99999999999999999999999999999.9999999999"')).toEqual(
      mismatch(t, 'string "99999999999999999999999999999.9999999999" (39 digits for precision 38)'),
    )
    expect(rejects(t, '1.00000000001')).toEqual(mismatch(t, 'number 1.00000000001 (11 fractional digits for scale 10)'))
  })

  it('more digits than the precision is refused, never rounded', () => {
    expect(rejects('decimal(9, 2)', '"12345678.9"')).toEqual(mismatch('decimal(9, 2)', 'string "12345678.9" (10 digits for precision 9)'))
    expect(rejects('decimal(9, 2)', '"1.234"')).toEqual(mismatch('decimal(9, 2)', 'string "1.234" (3 fractional digits for scale 2)'))
    expect(rejects('decimal(5, 0)', '1e999999999')[0].got).toBe('number 1e999999999 (1000000000 digits for precision 5)')
  })

  it('text that is not a decimal, and other kinds, are refused', () => {
    expect(rejects('decimal(9, 2)', '"12,30"')).toEqual(mismatch('decimal(9, 2)', 'string "12,30" (not a decimal number)'))
    for (const bad of ['" 1"', '"NaN"', '"0x10"', '""', '"."', '"1e"']) {
      expect(rejects('decimal(9, 2)', bad)[0].reason).toBe('type_mismatch')
    }
    expect(rejects('decimal(9, 2)', 'true')).toEqual(mismatch('decimal(9, 2)', 'boolean true'))
  })

  it('parseDecimal and formatDecimal directly', () => {
    expect(parseDecimal('0e999999999', 1, 0)).toEqual({ ok: true, value: 0n })
    expect(parseDecimal('-0.000', 3, 2)).toEqual({ ok: true, value: 0n })
    expect(parseDecimal('+.5', 2, 1)).toEqual({ ok: true, value: 5n })
    expect(parseDecimal('5.', 2, 1)).toEqual({ ok: true, value: 50n })
    expect(formatDecimal(1230n, 2)).toBe('12.30')
    expect(formatDecimal(-1n, 2)).toBe('-0.01')
    expect(formatDecimal(7n, 0)).toBe('7')
    expect(formatDecimal(12345678901234567890123456780123456789n, 10)).toBe('1234567890123456789012345678.0123456789')
  })
})

describe('date, time and timestamps', () => {
  it('date: YYYY-MM-DD as days since the epoch, leap days checked', () => {
    expect(value('date', '"2024-02-29"')).toBe(19782)
    expect(value('date', '"1969-12-31"')).toBe(-1)
    expect(rejects('date', '"2023-02-29"')).toEqual(mismatch('date', 'string "2023-02-29" (not a calendar date)'))
    expect(rejects('date', '"2024-02-29T00:00:00Z"')).toEqual(mismatch('date', 'string "2024-02-29T00:00:00Z" (not YYYY-MM-DD)'))
    expect(rejects('date', '19782')).toEqual(mismatch('date', 'number 19782'))
  })

  it('time: microseconds since midnight', () => {
    expect(value('time', '"23:59:59.999999"')).toBe(86_399_999_999n)
    expect(rejects('time', '"23:59:59.9999999"')).toEqual(mismatch('time', 'string "23:59:59.9999999" (7 fractional digits; microseconds at most)'))
  })

  it('timestamptz: needs an offset, stored as UTC micros', () => {
    expect(value('timestamptz', '"2024-03-01T00:59:59.999999+01:00"')).toBe(1_709_251_199_999_999n)
    expect(rejects('timestamptz', '"2024-02-29T23:59:59"')).toEqual(
      mismatch('timestamptz', 'string "2024-02-29T23:59:59" (no UTC offset; Z or ±HH:MM required)'),
    )
    expect(rejects('timestamptz', '1709251199')).toEqual(mismatch('timestamptz', 'number 1709251199'))
  })

  it('timestamp: no offset', () => {
    expect(value('timestamp', '"2024-02-29T23:59:59.999999"')).toBe(1_709_251_199_999_999n)
    expect(rejects('timestamp', '"2024-02-29T23:59:59Z"')[0].got).toBe(
      'string "2024-02-29T23:59:59Z" (has a UTC offset; a timestamp without time zone takes none)',
    )
  })

  it('nanosecond timestamps are v3 types', () => {
    expect(value('timestamptz_ns', '"1970-01-01T00:00:00.123456789Z"', v3)).toBe(123_456_789n)
    expect(value('timestamp_ns', '"1970-01-01T00:00:00.000000001"', v3)).toBe(1n)
    expect(rejects('timestamptz_ns', '"1970-01-01T00:00:00Z"')).toEqual([
      { reason: 'unsupported_type', field: 'v', expected: 'timestamptz_ns', got: 'string "1970-01-01T00:00:00Z"' },
    ])
  })
})

describe('uuid, binary and fixed', () => {
  const uuidBytes = new Uint8Array([0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd, 0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7, 0x85, 0xe7])

  it('uuid: canonical 8-4-4-4-12, either case, → 16 bytes', () => {
    expect(value('uuid', '"f79c3e09-677c-4bbd-a479-3f349cb785e7"')).toEqual(uuidBytes)
    expect(value('uuid', '"F79C3E09-677C-4BBD-A479-3F349CB785E7"')).toEqual(uuidBytes)
  })

  it('uuid: anything else is refused', () => {
    for (const bad of [
      'f79c3e09677c4bbda4793f349cb785e7',
      '{f79c3e09-677c-4bbd-a479-3f349cb785e7}',
      'f79c3e09-677c-4bbd-a479-3f349cb785e',
      'g79c3e09-677c-4bbd-a479-3f349cb785e7',
    ]) {
      expect(rejects('uuid', JSON.stringify(bad))).toEqual(mismatch('uuid', `string ${JSON.stringify(bad)} (not a canonical UUID)`))
    }
    expect(rejects('uuid', '12')).toEqual(mismatch('uuid', 'number 12'))
  })

  it('binary: base64, standard or URL-safe, padding optional', () => {
    const b = new Uint8Array([0, 1, 2, 255])
    expect(value('binary', '"AAEC/w=="')).toEqual(b)
    expect(value('binary', '"AAEC/w"')).toEqual(b)
    expect(value('binary', '"AAEC_w"')).toEqual(b)
    expect(value('binary', '""')).toEqual(new Uint8Array(0))
    expect(value('binary', '"aGk="')).toEqual(new TextEncoder().encode('hi'))
  })

  it('binary: invalid base64 is refused', () => {
    for (const bad of ['A', 'AAEC/w=', 'AA=A', 'A===', '*AB=', 'AA AA', 'AAE==']) {
      expect(rejects('binary', JSON.stringify(bad))).toEqual(mismatch('binary', `string ${JSON.stringify(bad)} (not base64)`))
    }
    expect(rejects('binary', '[0, 1]')).toEqual(mismatch('binary', 'array of 2'))
  })

  it('fixed[L]: must decode to exactly L bytes', () => {
    expect(value('fixed[4]', '"AAEC/w=="')).toEqual(new Uint8Array([0, 1, 2, 255]))
    expect(rejects('fixed[4]', '"AAEC"')).toEqual(mismatch('fixed[4]', 'string "AAEC" (3 bytes, not 4)'))
    expect(rejects('fixed[4]', '"AAECAwQ="')).toEqual(mismatch('fixed[4]', 'string "AAECAwQ=" (5 bytes, not 4)'))
  })
})

describe('geometry, geography, variant, unknown', () => {
  const point = new Uint8Array(new Float64Array([1, 2]).buffer)

  it('geometry on v3: WKT or GeoJSON → little-endian WKB', () => {
    const g = value('geometry', '"POINT (1 2)"', v3) as Uint8Array
    expect(Array.from(g.slice(0, 5))).toEqual([1, 1, 0, 0, 0])
    expect(g.slice(5)).toEqual(point)
    expect(value('geometry(OGC:CRS84)', '{"type": "Point", "coordinates": [1, 2]}', v3)).toEqual(g)
    // EPSG:4326 as Iceberg stores it is longitude/latitude too: the same WKB (create and roll agree).
    expect(value('geometry(EPSG:4326)', '{"type": "Point", "coordinates": [1, 2]}', v3)).toEqual(g)
  })

  it('geometry: a malformed shape is a type_mismatch with the reason', () => {
    expect(rejects('geometry', '"LINESTRING (1 2)"', v3)).toEqual(mismatch('geometry', 'string "LINESTRING (1 2)" (a LineString has 1 point; 2 at least)'))
    expect(rejects('geometry', '12', v3)).toEqual(mismatch('geometry', 'number 12 (not a GeoJSON geometry object or a WKT string)'))
  })

  it('geometry with its own CRS, geography, variant, and v3 types on v2 → unsupported_type', () => {
    const unsupported = (expected: string, got: string) => [{ reason: 'unsupported_type', field: 'v', expected, got }]
    expect(rejects('geometry(EPSG:3857)', '"POINT (1 2)"', v3)).toEqual(unsupported('geometry(EPSG:3857)', 'string "POINT (1 2)"'))
    expect(rejects('geography', '"POINT (1 2)"', v3)).toEqual(unsupported('geography', 'string "POINT (1 2)"'))
    expect(rejects('variant', '{"a": 1}', v3)).toEqual(unsupported('variant', 'object'))
    expect(rejects('geometry', '"POINT (1 2)"')).toEqual(unsupported('geometry', 'string "POINT (1 2)"')) // v2 is the default
    expect(rejects('interval', '1')).toEqual(unsupported('interval', 'number 1')) // not an Iceberg type at all
  })

  it('a null in an optional column of an unsupported type is still a row', () => {
    expect(value('geography', 'null', v3)).toBeNull()
    expect(value('geometry', 'null')).toBeNull()
  })

  it('unknown: only null or absent', () => {
    expect(value('unknown', 'null', v3)).toBeNull()
    expect(toRow(struct(field('u', 'unknown')), {}, v3)).toEqual({ ok: true, row: { u: null } })
    expect(rejects('unknown', '0', v3)).toEqual(mismatch('unknown', 'number 0'))
  })

  it('the compiled schema is per format version', () => {
    const schema = struct(field('g', 'geometry'))
    const input = parseLossless('{"g": "POINT (1 2)"}')
    expect(toRow(schema, input, { formatVersion: 2 }).ok).toBe(false)
    expect(toRow(schema, input, v3).ok).toBe(true)
    expect(toRow(schema, input).ok).toBe(false)
  })
})

describe('struct, list, map', () => {
  it('struct from an object; anything else is a mismatch naming the struct type', () => {
    const t = struct(field('lat', 'double', true), field('lon', 'double', true))
    expect(value(t, '{"lat": 1.5, "lon": -2}')).toEqual({ lat: 1.5, lon: -2 })
    expect(rejects(t, '[1.5, -2]')).toEqual(mismatch('struct<lat: double, lon: double>', 'array of 2'))
  })

  it('list from an array; optional elements may be null; paths are indexed', () => {
    expect(value(list('long'), '[1, null, 9223372036854775807]')).toEqual([1n, null, 9223372036854775807n])
    expect(value(list('long'), '[]')).toEqual([])
    expect(rejects(list('long'), '{"0": 1}')).toEqual(mismatch('list<long>', 'object'))
    expect(rejects(list(struct(field('b', 'int', true))), '[{"b": 1}, {"b": "2"}, {}]')).toEqual([
      { reason: 'type_mismatch', field: 'v[1].b', expected: 'int', got: 'string "2"' },
      { reason: 'missing_required', field: 'v[2].b', expected: 'int' },
    ])
    expect(value(list(list('int')), '[[1], [2, 3]]')).toEqual([[1], [2, 3]])
  })

  it('map with string keys: an object (or an array of entries) → [key, value] pairs', () => {
    const t = map('string', 'long')
    expect(value(t, '{"a": 1, "b": null}')).toEqual([
      ['a', 1n],
      ['b', null],
    ])
    expect(value(t, '[{"key": "a", "value": 1}]')).toEqual([['a', 1n]])
    expect(value(t, '{}')).toEqual([])
  })

  it('map with other keys: an array of {"key", "value"}', () => {
    const t = map('int', 'string')
    expect(value(t, '[{"key": 1, "value": "one"}, {"key": 2}]')).toEqual([
      [1, 'one'],
      [2, null],
    ])
    expect(rejects(t, '{"1": "one"}')).toEqual(mismatch('map<int, string>', 'object (a map without string keys is an array of {"key", "value"})'))
    expect(value(map('date', 'int'), '[{"key": "2024-02-29", "value": 1}]')).toEqual([[19782, 1]])
  })

  it('map entries: keys required and unique, extra members unknown, bad entries named', () => {
    const t = map('int', 'string', true)
    expect(rejects(t, '[{"key": 1, "value": "a"}, {"key": 1.0, "value": "b"}, {"value": "c"}, {"key": 3, "value": null, "extra": 0}, 7]')).toEqual([
      { reason: 'type_mismatch', field: 'v[1].key', expected: 'int', got: 'number 1.0 (a duplicate key)' },
      { reason: 'missing_required', field: 'v[2].key', expected: 'int' },
      { reason: 'unknown_field', field: 'v[3].extra' },
      { reason: 'missing_required', field: 'v[3].value', expected: 'string' },
      { reason: 'type_mismatch', field: 'v[4]', expected: '{"key": int, "value": string}', got: 'number 7' },
    ])
  })

  it('map of structs: value paths carry the key', () => {
    const t = map('string', struct(field('n', 'int')))
    expect(rejects(t, '{"a.b": {"n": "x"}}')).toEqual(mismatch('int', 'string "x"', 'v["a.b"].n'))
  })
})

describe('write-default', () => {
  it('an absent field takes its write-default; an explicit null stays null', () => {
    const schema = struct(
      field('at', 'timestamptz', true, { 'write-default': '2024-01-01T00:00:00.000000+00:00' }),
      field('blob', 'binary', false, { 'write-default': '0102ff' }),
      field('n', 'long', false, { 'write-default': parseLossless('9223372036854775807') }),
    )
    expect(toRow(schema, {})).toEqual({ ok: true, row: { at: 1_704_067_200_000_000n, blob: new Uint8Array([1, 2, 255]), n: 9223372036854775807n } })
    expect(toRow(schema, parseLossless('{"at": null, "n": null}'))).toEqual({
      ok: false,
      rejects: [{ reason: 'missing_required', field: 'at', expected: 'timestamptz' }],
    })
  })

  it('a write-default that does not fit its type is a schema error, thrown', () => {
    expect(() => toRow(struct(field('n', 'int', false, { 'write-default': 'x' })), {})).toThrow(/write-default of field n/)
  })
})
