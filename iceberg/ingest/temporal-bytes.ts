// RFC 3339 dates and date-times read straight from a line's bytes, accepting exactly what
// temporal.ts's parseDate and parseTimestamp accept (the scanner's differential test holds them to
// it) and refusing the rest, which the scanner then hands to those parsers for the reason.

import { daysFromCivil } from '../spec/temporal.ts'

/** Seconds since the epoch (UTC) and the nanoseconds of a date-time. */
export interface Instant {
  seconds: number
  nanos: number
}

/** Days since the epoch of `YYYY-MM-DD` at buf[s, s + 10), as parseDate reads it; undefined otherwise. */
export function dateAt(buf: Uint8Array, s: number): number | undefined {
  if (buf[s + 4] !== 0x2d || buf[s + 7] !== 0x2d) return undefined
  const y = digits(buf, s, 4)
  const m = digits(buf, s + 5, 2)
  const d = digits(buf, s + 8, 2)
  if (y < 0 || m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m)) return undefined
  return daysFromCivil(y, m, d)
}

/**
 * The date-time in buf[s, e) into `out`, the way parseTimestamp reads it (`zoned`: timestamptz, an
 * offset required; otherwise none allowed). False for anything it would refuse.
 */
export function timestampAt(buf: Uint8Array, s: number, e: number, zoned: boolean, out: Instant): boolean {
  if (e - s < 19) return false
  const sep = buf[s + 10]
  if (buf[s + 4] !== 0x2d || buf[s + 7] !== 0x2d || (sep !== 0x54 && sep !== 0x74 && sep !== 0x20)) return false
  if (buf[s + 13] !== 0x3a || buf[s + 16] !== 0x3a) return false
  const y = digits(buf, s, 4)
  const mo = digits(buf, s + 5, 2)
  const d = digits(buf, s + 8, 2)
  const h = digits(buf, s + 11, 2)
  const mi = digits(buf, s + 14, 2)
  const sec = digits(buf, s + 17, 2)
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59) return false
  let i = s + 19
  let nanos = 0
  if (buf[i] === 0x2e) {
    i++
    const f = i
    while (i < e && buf[i] >= 0x30 && buf[i] <= 0x39) i++
    if (i === f) return false
    for (let k = f; k < i; k++) {
      if (k - f < 9) nanos = nanos * 10 + (buf[k] - 0x30)
      else if (buf[k] !== 0x30) return false // finer than nanoseconds
    }
    for (let k = i - f; k < 9; k++) nanos *= 10
  }
  let offset = 0
  if (i === e) {
    if (zoned) return false
  } else if (buf[i] === 0x5a || buf[i] === 0x7a) {
    if (!zoned || i + 1 !== e) return false
  } else if (buf[i] === 0x2b || buf[i] === 0x2d) {
    if (!zoned || e - i !== 6 || buf[i + 3] !== 0x3a) return false
    const oh = digits(buf, i + 1, 2)
    const om = digits(buf, i + 4, 2)
    if (oh < 0 || oh > 23 || om < 0 || om > 59) return false
    offset = (buf[i] === 0x2d ? -1 : 1) * (oh * 3600 + om * 60)
  } else return false
  out.seconds = daysFromCivil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + sec - offset
  out.nanos = nanos
  return true
}

function digits(buf: Uint8Array, at: number, n: number): number {
  let v = 0
  for (let k = at; k < at + n; k++) {
    const b = buf[k] - 0x30
    if (b < 0 || b > 9) return -1
    v = v * 10 + b
  }
  return v
}

function daysInMonth(y: number, m: number): number {
  if (m === 2) return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31
}
