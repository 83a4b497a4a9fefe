// The edge's exact JSON (edge/exact-json.ts): what a double holds is a plain number, anything else
// keeps its digits, and the text written back is the text read.
import { isLosslessNumber } from 'lossless-json'
import { describe, expect, it } from 'vitest'
import { parseExact } from '../../../edge/exact-json.ts'
import { stringifyLossless } from '../../../iceberg/spec/json.ts'

describe('parseExact', () => {
  it('reads a number a double holds as a number (integers within 2^53 − 1), any other as its digits', () => {
    const v = parseExact('{"a": 300, "b": 0.5, "c": 9007199254740991, "d": 9007199254740993, "e": 0.1000000000000000055511151231257827, "f": -0}') as Record<
      string,
      unknown
    >
    expect([v.a, v.b, v.c]).toEqual([300, 0.5, 9007199254740991])
    expect(isLosslessNumber(v.d) && v.d.value).toBe('9007199254740993')
    expect(isLosslessNumber(v.e) && v.e.value).toBe('0.1000000000000000055511151231257827')
    expect(Object.is(v.f, -0)).toBe(true)
  })

  it('writes back what it read, nested too', () => {
    const text = '{"columns":{"big":{"const":9007199254740993},"amount":{"const":[1234567890123456789012345678.1234567891,1.5]}}}'
    expect(stringifyLossless(parseExact(text))).toBe(text)
  })

  it('keeps the last of a repeated key, as JSON.parse does; malformed text throws', () => {
    expect(parseExact('{"a": 1, "a": 2}')).toEqual({ a: 2 })
    expect(() => parseExact('{"a": }')).toThrow(SyntaxError)
  })

  it('makes no prototype of a __proto__ key', () => {
    const v = parseExact('{"__proto__": {"polluted": true}}') as Record<string, unknown>
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype)
  })
})
