// The batch id of a device request. Devices cannot send Idempotency-Key, so a retry of the same
// message must find the same id: the preset's natural id (what a vendor repeats on a retry), or a
// digest of exactly what was sent.
import type { Compiled } from './compile.ts'
import { decodeString, pointerTokens, select } from './json-span.ts'
import type { Payload } from './payload.ts'

export const BATCH_ID = /^[A-Za-z0-9._:-]{1,128}$/

/**
 * The digest a derived id is made from, also the ledger's body digest: the device id, the body and
 * the query without `key`, sorted, so parameter order does not make a new batch.
 */
export async function requestDigest(deviceId: string, body: Uint8Array, query: URLSearchParams): Promise<string> {
  const sorted = new URLSearchParams([...query].sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0)))
  const head = new TextEncoder().encode(`${deviceId}\n`)
  const tail = new TextEncoder().encode(`\n${sorted}`)
  const all = new Uint8Array(head.length + body.length + tail.length)
  all.set(head)
  all.set(body, head.length)
  all.set(tail, head.length + body.length)
  return hex(await crypto.subtle.digest('SHA-256', all))
}

const hex = (b: ArrayBuffer) => [...new Uint8Array(b)].map((x) => x.toString(16).padStart(2, '0')).join('')

/** `<preset>:<device>:<values joined by ':'>`, or `…:h<32 hex>` when the values do not fit a batch id. Null without one. */
async function naturalId(compiled: Compiled | null, payload: Payload, deviceId: string): Promise<string | null> {
  if (!compiled?.naturalId || !compiled.preset || payload.docs.length !== 1) return null
  const doc = payload.docs[0]
  const parts: string[] = []
  for (const p of compiled.naturalId) {
    const node = select(doc, pointerTokens(p) ?? [])
    if (node?.kind === 'string') parts.push(decodeString(payload.bytes, node))
    else if (node?.kind === 'number') parts.push(new TextDecoder().decode(payload.bytes.subarray(node.start, node.end)))
    else return null // a message without its id: the digest of its bytes
  }
  const id = `${compiled.preset}:${deviceId}:${parts.join(':')}`
  if (BATCH_ID.test(id)) return id
  const digest = hex(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(JSON.stringify(parts))))
  return `${compiled.preset}:${deviceId}:h${digest.slice(0, 32)}`
}

export type BatchIdSource = 'header' | 'natural' | 'derived'

export async function deviceBatchId(
  header: string | undefined,
  compiled: Compiled | null,
  payload: Payload,
  deviceId: string,
  digest: string,
): Promise<{ id: string; source: BatchIdSource }> {
  if (header !== undefined) return { id: header, source: 'header' }
  const natural = await naturalId(compiled, payload, deviceId)
  return natural ? { id: natural, source: 'natural' } : { id: `dev:${deviceId}:${digest.slice(0, 32)}`, source: 'derived' }
}
