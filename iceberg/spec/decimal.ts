// Exact decimal text → Iceberg's unscaled integers. Producers send decimals as JSON numbers or
// strings; both arrive here as their source digits (never through a double), and nothing is rounded:
// a value that does not fit decimal(P, S) exactly is refused with the reason.

export type Parsed<T> = { ok: true; value: T } | { ok: false; why: string }

// Plain decimal notation with an optional exponent. Strings may also use a leading '+', '.5' or '5.'.
const DECIMAL_TEXT = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/

/** A number split into sign, significant digits (no leading or trailing zeros) and a power of ten. */
interface Exact {
  negative: boolean
  /** '' for zero; otherwise starts and ends with a non-zero digit. */
  digits: string
  /** value = digits × 10^exponent */
  exponent: number
}

function splitExact(text: string): Exact | undefined {
  const m = DECIMAL_TEXT.exec(text)
  if (!m) return undefined
  const intPart = m[2]
  const fracPart = m[3] ?? ''
  if (intPart === '' && fracPart === '') return undefined
  // An absurd exponent stays a (rounded) double; it only ever decides "too many digits".
  let exponent = (m[4] === undefined ? 0 : Number(m[4])) - fracPart.length
  let digits = (intPart + fracPart).replace(/^0+/, '')
  const trimmed = digits.replace(/0+$/, '')
  exponent += digits.length - trimmed.length
  digits = trimmed
  return { negative: m[1] === '-' && digits !== '', digits, exponent: digits === '' ? 0 : exponent }
}

/**
 * Decimal text (e.g. "12.30", "-1.5e2", "1E-3") → the unscaled value for decimal(precision, scale):
 * "12.3" in decimal(9, 2) → 1230n. Fewer fractional digits than the scale are padded; more are refused
 * unless they are zeros ("1.230" fits scale 2), as are more digits than the precision.
 */
export function parseDecimal(text: string, precision: number, scale: number): Parsed<bigint> {
  const e = splitExact(text)
  if (!e) return { ok: false, why: 'not a decimal number' }
  if (e.digits === '') return { ok: true, value: 0n }
  const fractionDigits = Math.max(0, -e.exponent)
  if (fractionDigits > scale) return { ok: false, why: `${fractionDigits} fractional digits for scale ${scale}` }
  // digits + exponent + scale ≤ precision, checked before any string of that length is built
  const totalDigits = e.digits.length + e.exponent + scale
  if (totalDigits > precision) return { ok: false, why: `${totalDigits} digits for precision ${precision}` }
  // fractionDigits ≤ scale makes the shift non-negative, and totalDigits ≤ precision ≤ 38 bounds it
  const value = BigInt(e.digits + '0'.repeat(e.exponent + scale))
  return { ok: true, value: e.negative ? -value : value }
}

/**
 * Decimal text → an exact integer, accepted only when its value is integral ("7", "7.0", "7e2");
 * "7.5" is refused rather than truncated. `maxDigits` bounds the work on absurd exponents.
 */
export function parseExactInteger(text: string, maxDigits = 40): Parsed<bigint> {
  const e = splitExact(text)
  if (!e) return { ok: false, why: 'not a number' }
  if (e.digits === '') return { ok: true, value: 0n }
  if (e.exponent < 0) return { ok: false, why: 'not an integer' }
  if (e.digits.length + e.exponent > maxDigits) return { ok: false, why: 'out of range' }
  const value = BigInt(e.digits + '0'.repeat(e.exponent))
  return { ok: true, value: e.negative ? -value : value }
}

/** The unscaled value at `scale` as plain decimal text: (1230n, 2) → "12.30". */
export function formatDecimal(unscaled: bigint, scale: number): string {
  const negative = unscaled < 0n
  const digits = (negative ? -unscaled : unscaled).toString()
  if (scale === 0) return (negative ? '-' : '') + digits
  const padded = digits.padStart(scale + 1, '0')
  const text = `${padded.slice(0, -scale)}.${padded.slice(-scale)}`
  return (negative ? '-' : '') + text
}

/** Bytes of the smallest fixed that holds every unscaled value of decimal(precision, _) (Appendix A). */
export function decimalRequiredBytes(precision: number): number {
  const max = 10n ** BigInt(precision) - 1n
  let bytes = 1
  while ((1n << BigInt(8 * bytes - 1)) - 1n < max) bytes++
  return bytes
}
