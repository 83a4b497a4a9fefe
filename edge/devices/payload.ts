// What a device sent, whatever it sent it as: a JSON object, a JSON array of objects, a form body, or
// nothing but query parameters (Traccar's OsmAnd, GPSLogger's custom URL). Content-Type is a hint
// only: many device apps send none, or a wrong one.
import { ApiError } from '../errors.ts'
import { parseJson, type JsonNode } from './json-span.ts'

export interface Payload {
  /** The JSON text the docs' spans point into: the body, or the form/query parameters as a JSON object. */
  bytes: Uint8Array
  /** One per row the device sent: the object, or each element of the array (non-objects included); none for an empty request. */
  docs: JsonNode[]
  /** From a form or query: every value is a string, and a mapping types it by its column. */
  fromParameters: boolean
}

const FORM = 'application/x-www-form-urlencoded'

const invalid = () =>
  new ApiError(400, 'invalid_payload', 'send a JSON object, a JSON array of objects, a form body, or query parameters', {
    accepted: ['application/json', FORM, 'query parameters'],
  })

/** The first byte that is not whitespace (or a BOM): how a body without a usable Content-Type is told apart. */
function firstByte(body: Uint8Array): number | undefined {
  let i = body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0
  while (i < body.length && (body[i] === 0x20 || body[i] === 0x09 || body[i] === 0x0a || body[i] === 0x0d)) i++
  return body[i]
}

/** Parameters as one flat JSON object of strings (the last of a repeated name wins, as on most servers). */
function parameterObject(params: URLSearchParams): Uint8Array {
  const obj: Record<string, string> = {}
  for (const [k, val] of params) obj[k] = val
  return new TextEncoder().encode(JSON.stringify(obj))
}

/**
 * The payload of one request. `query` is the request's query without `key`. A body wins over the
 * query; a form body is merged over the query (its fields win). 400 invalid_payload for a JSON
 * value that is no object and no array of them, or a body that is neither JSON nor a form.
 */
export function readPayload(body: Uint8Array, contentType: string | undefined, query: URLSearchParams): Payload {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase()
  const first = firstByte(body)
  const json = first !== undefined && type !== FORM && (type.endsWith('json') || first === 0x7b || first === 0x5b)
  if (json) {
    const root = parseJson(body)
    if (root.kind === 'object') return { bytes: body, docs: [root], fromParameters: false }
    if (root.kind === 'array') return { bytes: body, docs: root.items, fromParameters: false }
    throw invalid()
  }
  const params = new URLSearchParams(query)
  if (first !== undefined) {
    if (type !== '' && type !== FORM && !type.startsWith('text/')) throw invalid()
    const text = new TextDecoder().decode(body)
    for (const [k, val] of new URLSearchParams(text)) params.set(k, val)
  }
  // Nothing at all (OwnTracks may POST an empty body): nothing to store, and not an error to retry.
  if ([...params.keys()].length === 0) return { bytes: body, docs: [], fromParameters: true }
  const bytes = parameterObject(params)
  return { bytes, docs: [parseJson(bytes)], fromParameters: true }
}
