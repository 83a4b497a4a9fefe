// Request bodies and queries are checked with valibot schemas (the same ones feed /openapi.json).
import * as v from 'valibot'
import type { Context } from 'hono'
import { ApiError } from './errors.ts'

/**
 * Text that may reach Postgres (a name looked up, a value stored): anything but U+0000, which Postgres
 * refuses in text and jsonb alike. Checked here, it is a 400 like any other malformed input, not a 500.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is the character refused here (Postgres cannot hold it)
export const text = () => v.pipe(v.string(), v.regex(/^[^\u0000]*$/, 'text may not contain U+0000 (NUL)'))

function invalid(issues: v.BaseIssue<unknown>[]): ApiError {
  const first = issues[0]
  const path = first?.path?.map((p) => String(p.key)).join('.')
  const message = path ? `${path}: ${first.message}` : (first?.message ?? 'invalid request')
  return new ApiError(400, 'invalid_request', message, {
    issues: issues.map((i) => ({ path: i.path?.map((p) => String(p.key)).join('.') ?? '', message: i.message })),
  })
}

export async function jsonBody<S extends v.GenericSchema>(c: Context, schema: S): Promise<v.InferOutput<S>> {
  const type = c.req.header('content-type') ?? ''
  if (!type.toLowerCase().startsWith('application/json')) {
    throw new ApiError(415, 'unsupported_media_type', 'send the body as Content-Type: application/json')
  }
  let body: unknown
  try {
    body = await c.req.json()
  } catch {
    throw new ApiError(400, 'malformed_json', 'the body is not valid JSON')
  }
  const result = v.safeParse(schema, body)
  if (!result.success) throw invalid(result.issues)
  return result.output
}

export function query<S extends v.GenericSchema>(c: Context, schema: S): v.InferOutput<S> {
  const result = v.safeParse(schema, c.req.query())
  if (!result.success) throw invalid(result.issues)
  return result.output
}
