// Bodies in and out of the REST catalog, lossless both ways: a body may carry 63-bit snapshot ids,
// and an answer carries whole table metadata, so neither goes through JSON.parse or JSON.stringify.
import type { Context } from 'hono'
import * as v from 'valibot'
import { parseLossless, stringifyLossless } from '../../iceberg/spec/json.ts'
import { badRequest } from './errors.ts'

/** The body checked against `schema`; 400 BadRequestException for anything else, naming the first problem. */
export async function readBody<S extends v.GenericSchema>(c: Context, schema: S): Promise<v.InferOutput<S>> {
  let body: unknown
  try {
    body = parseLossless(await c.req.text())
  } catch {
    throw badRequest('the body is not valid JSON')
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('the body must be a JSON object')
  const result = v.safeParse(schema, body)
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
