// Lossless JSON for everything that carries ids or producer numbers.
// JSON.parse turns 9223372036854775807 (a long, a snapshot id) into 9223372036854775808 and
// 0.1000000000000000055511151231257827 (a decimal(38, 34)) into 0.1; lossless-json keeps every
// number as its original digits (LosslessNumber) so the caller decides how to read it.

import { isLosslessNumber, LosslessNumber, parse, stringify } from 'lossless-json'

export { isLosslessNumber, LosslessNumber }

/**
 * Parses JSON text keeping every number as a LosslessNumber (its exact source digits).
 * Throws SyntaxError on malformed JSON, and on a duplicate key with differing values:
 * which of two values a producer meant is unknowable, so that row is unreadable rather than guessed.
 */
export function parseLossless(text: string): unknown {
  return parse(text)
}

/**
 * Writes JSON with LosslessNumber and bigint as their exact digits.
 * Non-finite numbers throw: JSON has no NaN or Infinity, and writing `null` would lose the value silently.
 */
export function stringifyLossless(value: unknown, indent?: number | string): string {
  const text = stringify(value, rejectNonFinite, indent)
  if (text === undefined) throw new TypeError('value has no JSON representation')
  return text
}

function rejectNonFinite(_key: string, value: unknown): unknown {
  if (typeof value === 'number' && !Number.isFinite(value)) {
    throw new TypeError(`cannot write ${value} as JSON`)
  }
  return value
}

/** The JSON number a value holds, as its exact text: LosslessNumber, number or bigint; undefined otherwise. */
export function numberText(value: unknown): string | undefined {
  if (isLosslessNumber(value)) return value.value
  if (typeof value === 'bigint') return value.toString()
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  return undefined
}
