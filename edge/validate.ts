// Request bodies and queries are checked with valibot schemas (the same ones feed /openapi.json).
import * as v from 'valibot'
import type { Context } from 'hono'
import { isLosslessNumber } from 'lossless-json'
import { ApiError } from './errors.ts'
import { parseExact } from './exact-json.ts'

/**
 * Text that may reach Postgres (a name looked up, a value stored): anything but U+0000, which Postgres
 * refuses in text and jsonb alike. Checked here, it is a 400 like any other malformed input, not a 500.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is the character refused here (Postgres cannot hold it)
export const text = () => v.pipe(v.string(), v.regex(/^[^\u0000]*$/, 'text may not contain U+0000 (NUL)'))

// A LosslessNumber (an exact body's number) is an object to JS, never to JSON.
const isJsonObject = (x: unknown) => typeof x === 'object' && x !== null && !Array.isArray(x) && !isLosslessNumber(x)

/**
 * valibot's object and record schemas take an array too (`[]` has no bad member): a schema that must
 * be a JSON object, never an array. jsonBody checks every body so; nested ones that can be empty (a
 * record, an object of optional members) are wrapped where they are declared.
 */
export const jsonObject = <S extends v.GenericSchema>(schema: S) => v.pipe(v.custom<v.InferInput<S>>(isJsonObject, 'give a JSON object, not an array'), schema)

export const record = <K extends Parameters<typeof v.record>[0], V extends Parameters<typeof v.record>[1]>(key: K, value: V) => jsonObject(v.record(key, value))

export function invalid(issues: v.BaseIssue<unknown>[]): ApiError {
  const first = issues[0]
  const path = first?.path?.map((p) => String(p.key)).join('.')
  const message = path ? `${path}: ${first.message}` : (first?.message ?? 'invalid request')
  return new ApiError(400, 'invalid_request', message, {
    issues: issues.map((i) => ({ path: i.path?.map((p) => String(p.key)).join('.') ?? '', message: i.message })),
  })
}

/** `exact`: numbers a double cannot hold stay exact (LosslessNumber, edge/exact-json.ts) for a schema that keeps them. */
export async function jsonBody<S extends v.GenericSchema>(c: Context, schema: S, opts: { exact?: boolean } = {}): Promise<v.InferOutput<S>> {
  const type = c.req.header('content-type') ?? ''
  if (!type.toLowerCase().startsWith('application/json')) {
    throw new ApiError(415, 'unsupported_media_type', 'send the body as Content-Type: application/json')
  }
  let body: unknown
  try {
    body = opts.exact ? parseExact(await c.req.text()) : await c.req.json()
  } catch {
    throw new ApiError(400, 'malformed_json', 'the body is not valid JSON')
  }
  // A body meant as an object must be one (see jsonObject).
  if (!isJsonObject(body) && OBJECT_SCHEMAS.has(schema.type)) throw new ApiError(400, 'invalid_request', 'the body must be a JSON object')
  const result = v.safeParse(schema, body)
  if (!result.success) throw invalid(result.issues)
  return result.output
}

const OBJECT_SCHEMAS = new Set(['object', 'strict_object', 'loose_object', 'object_with_rest'])

export function query<S extends v.GenericSchema>(c: Context, schema: S): v.InferOutput<S> {
  const result = v.safeParse(schema, c.req.query())
  if (!result.success) throw invalid(result.issues)
  return result.output
}
