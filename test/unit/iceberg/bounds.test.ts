import { describe, expect, it } from 'vitest'
import {
  compareValues,
  decimalBytes,
  lowerBoundBytes,
  toSingleValueBytes,
  truncateLowerBound,
  truncateUpperBound,
  upperBoundBytes,
} from '../../../iceberg/spec/bounds.ts'
import { parsePrimitive } from '../../../iceberg/spec/types.ts'

const hex = (b: Uint8Array | undefined) => (b === undefined ? undefined : Array.from(b, (x) => x.toString(16).padStart(2, '0')).join(' '))
const t = parsePrimitive

describe('single-value serialization (Appendix D)', () => {
  it('writes ints, longs and temporals little-endian', () => {
    expect(hex(toSingleValueBytes(t('long'), 1n))).toBe('01 00 00 00 00 00 00 00')
    expect(hex(toSingleValueBytes(t('long'), -1n))).toBe('ff ff ff ff ff ff ff ff')
    expect(hex(toSingleValueBytes(t('long'), 9223372036854775807n))).toBe('ff ff ff ff ff ff ff 7f')
    expect(hex(toSingleValueBytes(t('long'), -9223372036854775808n))).toBe('00 00 00 00 00 00 00 80')
    expect(hex(toSingleValueBytes(t('int'), 1))).toBe('01 00 00 00')
    expect(hex(toSingleValueBytes(t('int'), -2147483648))).toBe('00 00 00 80')
    expect(hex(toSingleValueBytes(t('date'), 19000))).toBe('38 4a 00 00')
    expect(hex(toSingleValueBytes(t('time'), 3_600_000_000n))).toBe('00 a4 93 d6 00 00 00 00')
    expect(hex(toSingleValueBytes(t('timestamptz'), 1_700_000_000_000_000n))).toBe('00 40 1e 18 24 0a 06 00')
    expect(hex(toSingleValueBytes(t('timestamp_ns'), 1n))).toBe('01 00 00 00 00 00 00 00')
  })

  it('writes booleans, floats and doubles', () => {
    expect(hex(toSingleValueBytes(t('boolean'), true))).toBe('01')
    expect(hex(toSingleValueBytes(t('boolean'), false))).toBe('00')
    expect(hex(toSingleValueBytes(t('float'), 1))).toBe('00 00 80 3f')
    expect(hex(toSingleValueBytes(t('float'), -0))).toBe('00 00 00 80')
    expect(hex(toSingleValueBytes(t('double'), 1))).toBe('00 00 00 00 00 00 f0 3f')
    expect(hex(toSingleValueBytes(t('double'), -Infinity))).toBe('00 00 00 00 00 00 f0 ff')
  })

  it("writes decimals as minimal big-endian two's complement", () => {
    expect(hex(decimalBytes(0n))).toBe('00')
    expect(hex(decimalBytes(1n))).toBe('01')
    expect(hex(decimalBytes(127n))).toBe('7f')
    expect(hex(decimalBytes(128n))).toBe('00 80')
    expect(hex(decimalBytes(-1n))).toBe('ff')
    expect(hex(decimalBytes(-128n))).toBe('80')
    expect(hex(decimalBytes(-129n))).toBe('ff 7f')
    expect(hex(decimalBytes(1230n))).toBe('04 ce')
    // decimal(38,10) at its maximum: 38 nines unscaled
    expect(hex(toSingleValueBytes(t('decimal(38, 10)'), 10n ** 38n - 1n))).toBe('4b 3b 4c a8 5a 86 c4 7a 09 8a 22 3f ff ff ff ff')
    expect(hex(toSingleValueBytes(t('decimal(38, 10)'), -(10n ** 38n - 1n)))).toBe('b4 c4 b3 57 a5 79 3b 85 f6 75 dd c0 00 00 00 01')
  })

  it('writes strings as UTF-8 and bytes as they are', () => {
    expect(hex(toSingleValueBytes(t('string'), 'é€'))).toBe('c3 a9 e2 82 ac')
    const uuid = Uint8Array.from([0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd, 0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7, 0x85, 0xe7])
    expect(toSingleValueBytes(t('uuid'), uuid)).toEqual(uuid)
    expect(hex(toSingleValueBytes(t('fixed[3]'), Uint8Array.of(1, 2, 3)))).toBe('01 02 03')
    expect(hex(toSingleValueBytes(t('binary'), Uint8Array.of(0, 255)))).toBe('00 ff')
  })

  it('refuses types that have no single-value form', () => {
    expect(() => toSingleValueBytes(t('variant'), null)).toThrow(/variant/)
  })
})

describe('truncate(16) bounds', () => {
  const s = t('string')
  const b = t('binary')

  it('keeps values of 16 code points or fewer whole', () => {
    expect(truncateLowerBound(s, 'abcdefghijklmnop')).toBe('abcdefghijklmnop')
    expect(truncateUpperBound(s, 'abcdefghijklmnop')).toBe('abcdefghijklmnop')
  })

  it('cuts the lower bound at 16 code points and increments the upper bound', () => {
    expect(truncateLowerBound(s, 'abcdefghijklmnopqrstuvwxyz')).toBe('abcdefghijklmnop')
    expect(truncateUpperBound(s, 'abcdefghijklmnopqrstuvwxyz')).toBe('abcdefghijklmnoq')
    expect(hex(lowerBoundBytes(s, 'abcdefghijklmnopqrstuvwxyz'))).toBe(hex(new TextEncoder().encode('abcdefghijklmnop')))
    expect(hex(upperBoundBytes(s, 'abcdefghijklmnopqrstuvwxyz'))).toBe(hex(new TextEncoder().encode('abcdefghijklmnoq')))
  })

  it('counts code points, not UTF-16 units or bytes', () => {
    const emoji = '😀'.repeat(20) // 20 code points, 40 UTF-16 units, 80 UTF-8 bytes
    expect(truncateLowerBound(s, emoji)).toBe('😀'.repeat(16))
    expect(truncateUpperBound(s, emoji)).toBe('😀'.repeat(15) + '😁')
  })

  it('skips code points that cannot be incremented, and the surrogate range', () => {
    const top = String.fromCodePoint(0x10ffff)
    expect(truncateUpperBound(s, 'a' + top.repeat(20))).toBe('b')
    expect(truncateUpperBound(s, top.repeat(20))).toBeUndefined()
    expect(upperBoundBytes(s, top.repeat(20))).toBeUndefined()
    expect(truncateUpperBound(s, '\ud7ff'.repeat(17))).toBe('\ud7ff'.repeat(15) + '\ue000')
  })

  it('truncates binary at 16 bytes and drops trailing 0xff when incrementing', () => {
    const bytes = Uint8Array.from({ length: 20 }, (_, i) => i)
    expect(hex(lowerBoundBytes(b, bytes))).toBe(hex(bytes.slice(0, 16)))
    expect(hex(upperBoundBytes(b, bytes))).toBe('00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 10')
    const ff = new Uint8Array(20).fill(0xff)
    ff[0] = 7
    expect(hex(upperBoundBytes(b, ff))).toBe('08')
    expect(upperBoundBytes(b, new Uint8Array(20).fill(0xff))).toBeUndefined()
  })

  it('never truncates other types', () => {
    const fixed = new Uint8Array(32).fill(0xff)
    expect(truncateUpperBound(t('fixed[32]'), fixed)).toBe(fixed)
    expect(truncateLowerBound(t('long'), 5n)).toBe(5n)
  })
})

describe('bound order', () => {
  it('orders strings by code point, bytes unsigned, -0 before +0', () => {
    expect(compareValues('\uffff', '😀')).toBeLessThan(0) // UTF-16 order would say the opposite
    expect(compareValues(Uint8Array.of(0x7f), Uint8Array.of(0x80))).toBeLessThan(0)
    expect(compareValues(Uint8Array.of(1), Uint8Array.of(1, 0))).toBeLessThan(0)
    expect(compareValues(-0, 0)).toBeLessThan(0)
    expect(compareValues(2n, -3n)).toBeGreaterThan(0)
    expect(compareValues(false, true)).toBeLessThan(0)
  })
})
