// Dates, times and timestamps as producers send them (RFC 3339 text) and as Iceberg stores them
// (days since 1970-01-01, microseconds since midnight, micro/nanoseconds since the epoch in UTC).
// Parsing never rounds: a fraction finer than the column's unit is refused unless its extra digits are zeros.
// Calendar arithmetic is proleptic Gregorian in integers (Howard Hinnant's days_from_civil), so it
// does not depend on the runtime's Date (which has no microseconds and parses leniently).

export type Parsed<T> = { ok: true; value: T } | { ok: false; why: string }

export type TimestampType = 'timestamp' | 'timestamptz' | 'timestamp_ns' | 'timestamptz_ns'

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const TIME = /^(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?$/
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))?$/

const MICROS_PER_SECOND = 1_000_000n
const NANOS_PER_SECOND = 1_000_000_000n
const SECONDS_PER_DAY = 86_400

/** Days since 1970-01-01 of a proleptic Gregorian date (no validation). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146_097 + doe - 719_468
}

/** The [year, month, day] of a count of days since 1970-01-01. */
export function civilFromDays(days: number): [number, number, number] {
  const z = days + 719_468
  const era = Math.floor(z / 146_097)
  const doe = z - era * 146_097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1
  const month = mp < 10 ? mp + 3 : mp - 9
  return [yoe + era * 400 + (month <= 2 ? 1 : 0), month, day]
}

function isLeapYear(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0
}

function daysInMonth(y: number, m: number): number {
  if (m === 2) return isLeapYear(y) ? 29 : 28
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31
}

/** Days since the epoch, or why the three fields are not a real date (years 0000–9999). */
function calendarDays(ys: string, ms: string, ds: string): Parsed<number> {
  const y = Number(ys)
  const m = Number(ms)
  const d = Number(ds)
  if (m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m)) return { ok: false, why: 'not a calendar date' }
  return { ok: true, value: daysFromCivil(y, m, d) }
}

/** Seconds since midnight, or why not: hours 00–23, minutes and seconds 00–59 (no leap second 60). */
function clockSeconds(hs: string, ms: string, ss: string): Parsed<number> {
  const h = Number(hs)
  const m = Number(ms)
  const s = Number(ss)
  if (h > 23 || m > 59) return { ok: false, why: 'not a time of day' }
  // Iceberg (like Java's Instant) has no leap seconds; moving 23:59:60 to the next second would be a guess.
  if (s > 59) return { ok: false, why: s === 60 ? 'leap second 60 is not representable' : 'not a time of day' }
  return { ok: true, value: h * 3600 + m * 60 + s }
}

/**
 * The fraction of a second in `digits` places (6 for micros, 9 for nanos). More digits are accepted
 * only when the extra ones are zeros: "…00.1234560" is exact, "…00.1234567" would have to be rounded.
 */
function fraction(text: string | undefined, digits: number): Parsed<bigint> {
  if (text === undefined) return { ok: true, value: 0n }
  if (text.length > digits) {
    if (!/^0*$/.test(text.slice(digits))) {
      const unit = digits === 6 ? 'microseconds' : 'nanoseconds'
      return { ok: false, why: `${text.length} fractional digits; ${unit} at most` }
    }
    return { ok: true, value: BigInt(text.slice(0, digits)) }
  }
  return { ok: true, value: BigInt(text.padEnd(digits, '0')) }
}

/** `YYYY-MM-DD` → days since 1970-01-01. */
export function parseDate(text: string): Parsed<number> {
  const m = DATE.exec(text)
  if (!m) return { ok: false, why: 'not YYYY-MM-DD' }
  return calendarDays(m[1], m[2], m[3])
}

/** `HH:MM:SS[.ffffff]` → microseconds since midnight. */
export function parseTime(text: string): Parsed<bigint> {
  const m = TIME.exec(text)
  if (!m) return { ok: false, why: 'not HH:MM:SS[.ffffff]' }
  const secs = clockSeconds(m[1], m[2], m[3])
  if (!secs.ok) return secs
  const frac = fraction(m[4], 6)
  if (!frac.ok) return frac
  return { ok: true, value: BigInt(secs.value) * MICROS_PER_SECOND + frac.value }
}

/**
 * An RFC 3339 date-time → micro- (timestamp, timestamptz) or nanoseconds (the _ns types) since the epoch.
 * timestamptz requires an offset (`Z` or `±HH:MM`) and is converted to UTC; timestamp is a wall-clock
 * value and must have no offset, since no offset could be applied to it without inventing a zone.
 * `T`, `t` or a space separates date and time, as RFC 3339 allows.
 */
export function parseTimestamp(text: string, type: TimestampType): Parsed<bigint> {
  const m = TIMESTAMP.exec(text)
  if (!m) return { ok: false, why: 'not an RFC 3339 date-time' }
  const withZone = type === 'timestamptz' || type === 'timestamptz_ns'
  const hasOffset = m[8] !== undefined || m[9] !== undefined
  if (withZone && !hasOffset) return { ok: false, why: 'no UTC offset; Z or ±HH:MM required' }
  if (!withZone && hasOffset) return { ok: false, why: 'has a UTC offset; a timestamp without time zone takes none' }
  const days = calendarDays(m[1], m[2], m[3])
  if (!days.ok) return days
  const secs = clockSeconds(m[4], m[5], m[6])
  if (!secs.ok) return secs
  let offsetSeconds = 0
  if (m[9] !== undefined) {
    const oh = Number(m[10])
    const om = Number(m[11])
    if (oh > 23 || om > 59) return { ok: false, why: 'not a UTC offset' }
    offsetSeconds = (m[9] === '-' ? -1 : 1) * (oh * 3600 + om * 60)
  }
  const nanos = type === 'timestamp_ns' || type === 'timestamptz_ns'
  const frac = fraction(m[7], nanos ? 9 : 6)
  if (!frac.ok) return frac
  const seconds = BigInt(days.value * SECONDS_PER_DAY + secs.value - offsetSeconds)
  const value = seconds * (nanos ? NANOS_PER_SECOND : MICROS_PER_SECOND) + frac.value
  // Nanoseconds since 1970 in 64 bits reach from 1677 to 2262 only (microseconds cover every year 0000–9999).
  if (value !== BigInt.asIntN(64, value)) return { ok: false, why: 'out of range: nanoseconds since 1970 must fit 64 bits (years 1677 to 2262)' }
  return { ok: true, value }
}

// ---- the inverse: what Iceberg stores → RFC 3339 text ----

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0')
}

/** Four-digit years as RFC 3339 has them; others in ISO 8601's expanded form (±YYYYYY). */
function formatYear(y: number): string {
  if (y >= 0 && y <= 9999) return pad(y, 4)
  return (y < 0 ? '-' : '+') + pad(Math.abs(y), 6)
}

/** Days since 1970-01-01 → `YYYY-MM-DD`. */
export function formatDate(days: number): string {
  const [y, m, d] = civilFromDays(days)
  return `${formatYear(y)}-${pad(m, 2)}-${pad(d, 2)}`
}

function splitUnits(value: bigint, perSecond: bigint): [number, bigint] {
  let secs = value / perSecond
  let rem = value % perSecond
  if (rem < 0n) {
    secs -= 1n
    rem += perSecond
  }
  return [Number(secs), rem]
}

function formatClock(secondOfDay: number, frac: bigint, digits: number): string {
  const h = Math.floor(secondOfDay / 3600)
  const m = Math.floor((secondOfDay % 3600) / 60)
  const s = secondOfDay % 60
  return `${pad(h, 2)}:${pad(m, 2)}:${pad(s, 2)}.${frac.toString().padStart(digits, '0')}`
}

/** Microseconds since midnight → `HH:MM:SS.ffffff`. */
export function formatTime(micros: bigint): string {
  const [secs, frac] = splitUnits(micros, MICROS_PER_SECOND)
  return formatClock(secs, frac, 6)
}

function formatEpoch(value: bigint, perSecond: bigint, digits: number, zone: string): string {
  const [secs, frac] = splitUnits(value, perSecond)
  const days = Math.floor(secs / SECONDS_PER_DAY)
  return `${formatDate(days)}T${formatClock(secs - days * SECONDS_PER_DAY, frac, digits)}${zone}`
}

/** timestamp (micros) → `YYYY-MM-DDTHH:MM:SS.ffffff`. */
export function formatTimestampMicros(micros: bigint): string {
  return formatEpoch(micros, MICROS_PER_SECOND, 6, '')
}

/** timestamptz (micros, UTC) → `YYYY-MM-DDTHH:MM:SS.ffffffZ`. */
export function formatTimestamptzMicros(micros: bigint): string {
  return formatEpoch(micros, MICROS_PER_SECOND, 6, 'Z')
}

/** timestamp_ns → `YYYY-MM-DDTHH:MM:SS.fffffffff`. */
export function formatTimestampNanos(nanos: bigint): string {
  return formatEpoch(nanos, NANOS_PER_SECOND, 9, '')
}

/** timestamptz_ns (UTC) → `YYYY-MM-DDTHH:MM:SS.fffffffffZ`. */
export function formatTimestamptzNanos(nanos: bigint): string {
  return formatEpoch(nanos, NANOS_PER_SECOND, 9, 'Z')
}
