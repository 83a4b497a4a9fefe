// Bodies in and out of the REST catalog, lossless both ways: a body may carry 63-bit snapshot ids,
// and an answer carries whole table metadata, so neither goes through JSON.parse or JSON.stringify.
import type { Context } from 'hono'
import * as v from 'valibot'
import { parseLossless, stringifyLossless } from '../../iceberg/spec/json.ts'
import { badRequest } from './errors.ts'

/** No request of this API nests deeper (a schema's types included); deeper ones would only reach recursion limits. */
const MAX_DEPTH = 100

/** Whether JSON text nests objects and arrays deeper than `max` (strings skipped). */
function tooDeep(text: string, max: number): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i)
    if (inString) {
      if (ch === 92)
        i++ // a backslash: skip the escaped character
      else if (ch === 34) inString = false
    } else if (ch === 34) inString = true
    else if (ch === 123 || ch === 91) {
      if (++depth > max) return true
    } else if (ch === 125 || ch === 93) depth--
  }
  return false
}

/** The body checked against `schema`; 400 BadRequestException for anything else, naming the first problem. */
export async function readBody<S extends v.GenericSchema>(c: Context, schema: S): Promise<v.InferOutput<S>> {
  const text = await c.req.text()
  if (tooDeep(text, MAX_DEPTH)) throw badRequest(`the body nests deeper than ${MAX_DEPTH} levels`)
  let body: unknown
  try {
    body = parseLossless(text)
  } catch {
    throw badRequest('the body is not valid JSON')
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('the body must be a JSON object')
  let result: v.SafeParseResult<S>
  try {
    result = v.safeParse(schema, body)
  } catch {
    // A type nested past the stack's depth: no schema is that deep.
    throw badRequest('the body is nested too deeply')
  }
  if (!result.success) {
    const issue = result.issues[0]
    const path = issue.path?.map((p) => String(p.key)).join('.')
    throw badRequest(path ? `${path}: ${issue.message}` : issue.message)
  }
  return result.output
}

/** A JSON answer written losslessly (bigint and LosslessNumber as their exact digits). */
export function answer(c: Context, value: unknown, status: 200 = 200): Response {
  return c.body(stringifyLossless(value), status, { 'content-type': 'application/json' })
}

/**
 * A JSON object answer whose `metadata` is JSON text already written (a metadata file's, as the
 * catalog holds it): spliced in as is between the fields before and after it, which are written
 * losslessly. No parse or serialization of the metadata on the way out.
 */
export function answerWithMetadata(c: Context, before: object, metadataJson: string, after: object): Response {
  const field = ([key, value]: [string, unknown]) => `${JSON.stringify(key)}:${stringifyLossless(value)}`
  const fields = [...Object.entries(before).map(field), `"metadata":${metadataJson}`, ...Object.entries(after).map(field)]
  return c.body(`{${fields.join(',')}}`, 200, { 'content-type': 'application/json' })
}
