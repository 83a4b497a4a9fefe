import { describe, expect, it } from 'vitest'
import {
  civilFromDays,
  daysFromCivil,
  formatDate,
  formatTime,
  formatTimestampMicros,
  formatTimestampNanos,
  formatTimestamptzMicros,
  formatTimestamptzNanos,
  parseDate,
  parseTime,
  parseTimestamp,
} from '../../../iceberg/spec/temporal.ts'

/** Days since the epoch by the runtime's own calendar, an independent oracle (setUTCFullYear avoids Date.UTC's 0–99 → 19xx rule). */
function oracleDays(y: number, m: number, d: number): number {
  const date = new Date(0)
  date.setUTCFullYear(y, m - 1, d)
  return Math.round(date.getTime() / 86_400_000)
}

const ok = <T>(value: T) => ({ ok: true, value })

describe('calendar arithmetic', () => {
  it('agrees with Date on every 97th day from 0000-01-01 to 9999-12-31, both ways', () => {
    const wrong: unknown[] = []
    let checked = 0
    for (let days = oracleDays(0, 1, 1); days <= oracleDays(9999, 12, 31); days += 97) {
      const date = new Date(days * 86_400_000)
      const civil: [number, number, number] = [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()]
      const back = civilFromDays(days)
      if (back.join('-') !== civil.join('-') || daysFromCivil(...civil) !== days) wrong.push({ days, civil, back })
      checked++
    }
    expect(checked).toBeGreaterThan(37_000)
    expect(wrong).toEqual([])
  })
})

describe('parseDate', () => {
  it('gives days since 1970-01-01', () => {
    expect(parseDate('1970-01-01')).toEqual(ok(0))
    expect(parseDate('1969-12-31')).toEqual(ok(-1))
    expect(parseDate('2024-02-29')).toEqual(ok(19_782))
    expect(parseDate('0000-01-01')).toEqual(ok(-719_528))
    expect(parseDate('9999-12-31')).toEqual(ok(2_932_896))
  })

  it('accepts leap days only in leap years', () => {
    expect(parseDate('2000-02-29').ok).toBe(true) // divisible by 400
    expect(parseDate('1900-02-29')).toEqual({ ok: false, why: 'not a calendar date' }) // by 100, not 400
    expect(parseDate('2023-02-29')).toEqual({ ok: false, why: 'not a calendar date' })
    expect(parseDate('0000-02-29').ok).toBe(true) // year 0 is a leap year in the proleptic calendar
  })

  it('refuses impossible and malformed dates', () => {
    for (const bad of ['2024-04-31', '2024-13-01', '2024-00-10', '2024-01-00', '2024-01-32']) {
      expect(parseDate(bad)).toEqual({ ok: false, why: 'not a calendar date' })
    }
    for (const bad of ['2024-1-01', '24-01-01', '2024/01/01', '2024-01-01T00:00:00', ' 2024-01-01', '+2024-01-01', '']) {
      expect(parseDate(bad)).toEqual({ ok: false, why: 'not YYYY-MM-DD' })
    }
  })
})

describe('parseTime', () => {
  it('gives microseconds since midnight', () => {
    expect(parseTime('00:00:00')).toEqual(ok(0n))
    expect(parseTime('23:59:59.999999')).toEqual(ok(86_399_999_999n))
    expect(parseTime('12:00:00.5')).toEqual(ok(43_200_500_000n))
    expect(parseTime('01:02:03.000004')).toEqual(ok(3_723_000_004n))
  })

  it('accepts extra fractional digits only when they are zeros', () => {
    expect(parseTime('23:59:59.999999000')).toEqual(ok(86_399_999_999n))
    expect(parseTime('23:59:59.9999991')).toEqual({ ok: false, why: '7 fractional digits; microseconds at most' })
  })

  it('refuses times that are not on the clock', () => {
    expect(parseTime('24:00:00').ok).toBe(false)
    expect(parseTime('23:60:00').ok).toBe(false)
    expect(parseTime('23:59:60')).toEqual({ ok: false, why: 'leap second 60 is not representable' })
    for (const bad of ['1:00:00', '12:00', '12:00:00.', '12:00:00Z', '12:00:00+01:00']) {
      expect(parseTime(bad)).toEqual({ ok: false, why: 'not HH:MM:SS[.ffffff]' })
    }
  })
})

describe('parseTimestamp', () => {
  const leapDayLast = BigInt(oracleDays(2024, 2, 29) * 86_400 + 86_399) * 1_000_000n + 999_999n

  it('timestamp: a wall-clock time with no offset', () => {
    expect(parseTimestamp('2024-02-29T23:59:59.999999', 'timestamp')).toEqual(ok(leapDayLast))
    expect(parseTimestamp('1970-01-01T00:00:00', 'timestamp')).toEqual(ok(0n))
    expect(parseTimestamp('1969-12-31T23:59:59.999999', 'timestamp')).toEqual(ok(-1n))
    expect(parseTimestamp('2024-02-29 23:59:59.999999', 'timestamp')).toEqual(ok(leapDayLast))
    expect(parseTimestamp('2024-02-29t23:59:59.999999', 'timestamp')).toEqual(ok(leapDayLast))
  })

  it('timestamp: an offset is refused, not applied or dropped', () => {
    const why = 'has a UTC offset; a timestamp without time zone takes none'
    expect(parseTimestamp('2024-02-29T23:59:59Z', 'timestamp')).toEqual({ ok: false, why })
    expect(parseTimestamp('2024-02-29T23:59:59+00:00', 'timestamp')).toEqual({ ok: false, why })
  })

  it('timestamptz: requires an offset and converts to UTC', () => {
    expect(parseTimestamp('2024-02-29T23:59:59.999999Z', 'timestamptz')).toEqual(ok(leapDayLast))
    expect(parseTimestamp('2024-02-29T23:59:59.999999z', 'timestamptz')).toEqual(ok(leapDayLast))
    expect(parseTimestamp('2024-03-01T00:59:59.999999+01:00', 'timestamptz')).toEqual(ok(leapDayLast))
    expect(parseTimestamp('2024-02-29T18:29:59.999999-05:30', 'timestamptz')).toEqual(ok(leapDayLast))
    expect(parseTimestamp('2024-02-29T23:59:59.999999-00:00', 'timestamptz')).toEqual(ok(leapDayLast))
    expect(parseTimestamp('2024-02-29T23:59:59.999999', 'timestamptz')).toEqual({ ok: false, why: 'no UTC offset; Z or ±HH:MM required' })
  })

  it('matches Date for whole milliseconds', () => {
    const text = '2031-07-04T05:06:07.890+02:00'
    expect(parseTimestamp(text, 'timestamptz')).toEqual(ok(BigInt(Date.parse(text)) * 1000n))
  })

  it('micro types: more than 6 non-zero fractional digits are refused, never rounded', () => {
    expect(parseTimestamp('2024-01-01T00:00:00.1234567Z', 'timestamptz')).toEqual({ ok: false, why: '7 fractional digits; microseconds at most' })
    expect(parseTimestamp('2024-01-01T00:00:00.123456000Z', 'timestamptz').ok).toBe(true)
    expect(parseTimestamp('1970-01-01T00:00:00.1Z', 'timestamptz')).toEqual(ok(100_000n))
  })

  it('nano types: up to 9 fractional digits', () => {
    expect(parseTimestamp('1970-01-01T00:00:00.123456789Z', 'timestamptz_ns')).toEqual(ok(123_456_789n))
    expect(parseTimestamp('1970-01-01T00:00:01.000000001', 'timestamp_ns')).toEqual(ok(1_000_000_001n))
    expect(parseTimestamp('1970-01-01T00:00:00.1234567891Z', 'timestamptz_ns')).toEqual({ ok: false, why: '10 fractional digits; nanoseconds at most' })
    expect(parseTimestamp('1970-01-01T00:00:00Z', 'timestamp_ns').ok).toBe(false)
    // 64 bits of nanoseconds: 1677-09-21T00:12:43.145224192 to 2262-04-11T23:47:16.854775807
    expect(parseTimestamp('2262-04-11T23:47:16.854775807Z', 'timestamptz_ns')).toEqual(ok(9223372036854775807n))
    expect(parseTimestamp('1677-09-21T00:12:43.145224192', 'timestamp_ns')).toEqual(ok(-9223372036854775808n))
    expect(parseTimestamp('2262-04-11T23:47:16.854775808Z', 'timestamptz_ns').ok).toBe(false)
    expect(parseTimestamp('0000-01-01T00:00:00Z', 'timestamptz_ns')).toEqual({
      ok: false,
      why: 'out of range: nanoseconds since 1970 must fit 64 bits (years 1677 to 2262)',
    })
    expect(parseTimestamp('0000-01-01T00:00:00Z', 'timestamptz')).toEqual(ok(-62167219200000000n))
  })

  it('refuses impossible dates, clocks and offsets, and other shapes', () => {
    expect(parseTimestamp('2023-02-29T00:00:00Z', 'timestamptz')).toEqual({ ok: false, why: 'not a calendar date' })
    expect(parseTimestamp('2024-01-01T24:00:00Z', 'timestamptz')).toEqual({ ok: false, why: 'not a time of day' })
    expect(parseTimestamp('2024-01-01T00:00:00+24:00', 'timestamptz')).toEqual({ ok: false, why: 'not a UTC offset' })
    for (const bad of ['2024-01-01', '2024-01-01T00:00Z', '2024-01-01T00:00:00+0100', '2024-01-01T00:00:00 Z', '1704067200']) {
      expect(parseTimestamp(bad, 'timestamptz')).toEqual({ ok: false, why: 'not an RFC 3339 date-time' })
    }
  })
})

describe('formatters', () => {
  it('formatTimestamptzMicros writes RFC 3339 with 6 digits and Z', () => {
    expect(formatTimestamptzMicros(0n)).toBe('1970-01-01T00:00:00.000000Z')
    expect(formatTimestamptzMicros(-1n)).toBe('1969-12-31T23:59:59.999999Z')
    expect(formatTimestamptzMicros(1_709_251_199_999_999n)).toBe('2024-02-29T23:59:59.999999Z')
  })

  it('the other formatters', () => {
    expect(formatTimestampMicros(1_709_251_199_999_999n)).toBe('2024-02-29T23:59:59.999999')
    expect(formatTimestamptzNanos(-1n)).toBe('1969-12-31T23:59:59.999999999Z')
    expect(formatTimestampNanos(123_456_789n)).toBe('1970-01-01T00:00:00.123456789')
    expect(formatTime(86_399_999_999n)).toBe('23:59:59.999999')
    expect(formatTime(0n)).toBe('00:00:00.000000')
    expect(formatDate(-719_528)).toBe('0000-01-01')
    expect(formatDate(2_932_896)).toBe('9999-12-31')
    expect(formatDate(2_932_897)).toBe('+010000-01-01')
    expect(formatDate(-719_529)).toBe('-000001-12-31')
  })

  it('parse(format(x)) is x', () => {
    for (const micros of [0n, -1n, 1n, 253_402_300_799_999_999n, -62_167_219_200_000_000n, 951_782_400_123_456n]) {
      expect(parseTimestamp(formatTimestamptzMicros(micros), 'timestamptz')).toEqual(ok(micros))
      expect(parseTimestamp(formatTimestampMicros(micros), 'timestamp')).toEqual(ok(micros))
    }
    for (const nanos of [0n, -1n, 951_782_400_123_456_789n]) {
      expect(parseTimestamp(formatTimestamptzNanos(nanos), 'timestamptz_ns')).toEqual(ok(nanos))
    }
    for (const days of [-719_528, -1, 0, 19_782, 2_932_896]) expect(parseDate(formatDate(days))).toEqual(ok(days))
    for (const micros of [0n, 1n, 86_399_999_999n]) expect(parseTime(formatTime(micros))).toEqual(ok(micros))
  })
})
