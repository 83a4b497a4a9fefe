import { describe, expect, it } from 'vitest'
import { isLosslessNumber, LosslessNumber, numberText, parseLossless, stringifyLossless } from '../../../iceberg/spec/json.ts'

describe('parseLossless', () => {
  it('keeps the exact digits of numbers JSON.parse would round', () => {
    const v = parseLossless('{"long": 9223372036854775807, "dec": 0.1000000000000000055511151231257827, "safe": 9007199254740993}') as Record<string, unknown>
    expect(isLosslessNumber(v.long)).toBe(true)
    expect((v.long as LosslessNumber).value).toBe('9223372036854775807')
    expect((v.dec as LosslessNumber).value).toBe('0.1000000000000000055511151231257827')
    expect((v.safe as LosslessNumber).value).toBe('9007199254740993')
    // the failure this module exists to avoid
    expect(String(JSON.parse('9007199254740993'))).toBe('9007199254740992')
  })

  it('keeps a number as written (exponent, trailing zeros, minus zero)', () => {
    const v = parseLossless('[1.50, 1.5e2, -0, 1E400]') as LosslessNumber[]
    expect(v.map((n) => n.value)).toEqual(['1.50', '1.5e2', '-0', '1E400'])
  })

  it('parses strings, booleans, null and nesting like JSON.parse', () => {
    expect(parseLossless('{"a": [true, false, null, "x\\u00e9\\n"], "b": {}}')).toEqual({ a: [true, false, null, 'xé\n'], b: {} })
  })

  it('keeps __proto__ as an ordinary key', () => {
    const v = parseLossless('{"__proto__": {"polluted": true}}') as Record<string, unknown>
    expect(Object.keys(v)).toEqual(['__proto__'])
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it('throws SyntaxError on malformed JSON and on a duplicate key with differing values', () => {
    expect(() => parseLossless('{"a": 1,}')).toThrow(SyntaxError)
    expect(() => parseLossless('[NaN]')).toThrow(SyntaxError)
    expect(() => parseLossless('{"a": 1, "a": 2}')).toThrow(/Duplicate key 'a'/)
  })
})

describe('stringifyLossless', () => {
  it('writes LosslessNumber and bigint with their exact digits', () => {
    expect(stringifyLossless({ id: 9223372036854775807n, n: new LosslessNumber('0.1000000000000000055511151231257827'), neg: -9223372036854775808n })).toBe(
      '{"id":9223372036854775807,"n":0.1000000000000000055511151231257827,"neg":-9223372036854775808}',
    )
  })

  it('round-trips a metadata-like document byte for byte', () => {
    const text =
      '{"format-version":2,"current-snapshot-id":8744736658442914487,"snapshots":[{"snapshot-id":8744736658442914487,"timestamp-ms":1515100955770}],"x":1.0}'
    expect(stringifyLossless(parseLossless(text))).toBe(text)
  })

  it('indents when asked', () => {
    expect(stringifyLossless({ a: [1n] }, 2)).toBe('{\n  "a": [\n    1\n  ]\n}')
  })

  it('refuses non-finite numbers rather than writing null', () => {
    expect(() => stringifyLossless({ a: NaN })).toThrow(/NaN/)
    expect(() => stringifyLossless([Infinity])).toThrow(/Infinity/)
  })

  it('throws when the value has no JSON form', () => {
    expect(() => stringifyLossless(undefined)).toThrow(TypeError)
  })
})

describe('numberText', () => {
  it('gives the exact text of LosslessNumber, bigint and finite numbers only', () => {
    expect(numberText(new LosslessNumber('1.50'))).toBe('1.50')
    expect(numberText(12n)).toBe('12')
    expect(numberText(0.5)).toBe('0.5')
    expect(numberText(NaN)).toBeUndefined()
    expect(numberText('1')).toBeUndefined()
    expect(numberText(null)).toBeUndefined()
  })
})
