// JSON whose numbers must keep their digits — a device mapping's constants: a long beyond 2^53, a
// decimal's every digit (DESIGN.md "Lossless JSON"). Read without JSON.parse: a number a double holds
// exactly is a plain number (the schemas and the require check take it as before), any other a
// LosslessNumber; written back digit for digit. Postgres's jsonb keeps numeric exactly, so the column
// is written by the schema's exact type and read as text (`device::text`): pg and neon would JSON.parse it.
import type { Context } from 'hono'
import { isSafeNumber, LosslessNumber, parse } from 'lossless-json'
import { stringifyLossless } from '../iceberg/spec/json.ts'

const exactNumber = (digits: string): number | LosslessNumber => (isSafeNumber(digits) ? Number(digits) : new LosslessNumber(digits))

/**
 * Parses JSON text, numbers exact (above). A repeated key keeps its last value, as JSON.parse does.
 * Throws SyntaxError on malformed JSON.
 */
export function parseExact(text: string): unknown {
  return parse(text, null, { parseNumber: exactNumber, onDuplicateKey: ({ newValue }) => newValue })
}

/** A JSON answer written losslessly (a LosslessNumber as its digits), as c.json answers otherwise. */
export function exactAnswer<S extends 200 | 201 | 202>(c: Context, value: unknown, status: S) {
  return c.body(stringifyLossless(value), status, { 'content-type': 'application/json' })
}
