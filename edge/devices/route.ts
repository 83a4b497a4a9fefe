// POST|GET /v1/sinks/{sink_id}/devices/{device_id}: the device route, for senders that cannot set
// headers. The send key as ?key=, as HTTP Basic's password or as Bearer; any body or none; the batch
// id derived when no Idempotency-Key comes. The sink's mapping runs here, and what is stored is the
// mapped NDJSON: one ledger statement and one PUT, as on the send route.
import { Hono, type Context } from 'hono'
import { bearer } from '../auth.ts'
import type { AppEnv } from '../env.ts'
import { ApiError, unavailable } from '../errors.ts'
import { readBody } from '../body.ts'
import { API_KEY, SEND_KEY, sha256Hex, timingSafeEqual } from '../keys.ts'
import { recordBatch, type BatchInput, type LedgerAnswer } from '../ledger.ts'
import { batchAnswer, storeBatch } from '../store-batch.ts'
import { BATCH_ID, deviceBatchId, requestDigest } from './batch-id.ts'
import { readPayload } from './payload.ts'
import { deviceRows, type DeviceRows } from './rows.ts'
import { lastSeen, remember, type DeviceSettings } from './settings.ts'
import { requireSinksOn } from '../sinks-switch.ts'

const DEVICE_ID = /^[A-Za-z0-9._-]{1,64}$/
const SINK_ID = /^snk_[0-9a-f]+$/

const wrongKey = () =>
  new ApiError(401, 'unauthorized', 'give this sink’s send key as ?key=al_send_…, as the password of HTTP Basic auth, or as Authorization: Bearer')

/** The key from Basic (the password; any user name), Bearer, or ?key=, in that order. */
export function sendKey(c: Context): string | null {
  const auth = c.req.header('authorization') ?? ''
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(auth)
  if (basic) {
    try {
      const text = atob(basic[1])
      return text.slice(text.indexOf(':') + 1)
    } catch {
      return null
    }
  }
  return bearer(auth) ?? c.req.query('key') ?? null
}

/** The batch's NDJSON with the intake's clock written where a mapping asked for it. */
function ndjson(rows: DeviceRows, receivedAt: string): Uint8Array {
  const out = new Uint8Array(rows.lines.reduce((n, l) => n + l.length, 0))
  let at = 0
  for (const l of rows.lines) {
    out.set(l, at)
    at += l.length
  }
  const clock = new TextEncoder().encode(receivedAt)
  for (const offset of rows.receivedAt) out.set(clock, offset)
  return out
}

async function device(c: Context<AppEnv>) {
  // Hono serves HEAD with the GET route; a HEAD (a link checker, a prefetch) must not store a row.
  if (c.req.method === 'HEAD')
    throw new ApiError(405, 'method_not_allowed', 'the device route takes GET or POST; HEAD stores nothing', {}, { Allow: 'GET, POST' })
  const sinkId = c.req.param('sinkId') ?? ''
  const deviceId = c.req.param('deviceId') ?? ''
  // The key first: an API key is refused as such whatever else the request holds.
  const key = sendKey(c)
  if (key && API_KEY.test(key)) throw new ApiError(403, 'send_only', 'this route takes a send key only (al_send_…), not an API key')
  if (!key || !SEND_KEY.test(key) || !SINK_ID.test(sinkId)) throw wrongKey()
  if (!DEVICE_ID.test(deviceId)) throw new ApiError(400, 'invalid_device_id', 'a device id is 1–64 characters of A-Z a-z 0-9 . _ -')
  const header = c.req.header('idempotency-key')
  if (header !== undefined && !BATCH_ID.test(header)) {
    throw new ApiError(400, 'invalid_idempotency_key', 'send Idempotency-Key: 1–128 characters of A-Z a-z 0-9 . _ : - (or none: the route derives one)')
  }
  const body = await readBody(c.req.raw.body, { contentEncoding: c.req.header('content-encoding'), allowEmpty: true })
  const query = new URLSearchParams(new URL(c.req.url).search)
  // The key is never stored: not in a row, not in the digest.
  query.delete('key')
  const payload = readPayload(body, c.req.header('content-type'), query)
  const digest = await requestDigest(deviceId, body, query)
  const sendKeySha256 = await sha256Hex(key)

  // Mapped with the settings this isolate last saw; the statement inserts only if they are current.
  // A first request (or one after a PATCH) costs one more statement.
  for (let attempt = 0; attempt < 3; attempt++) {
    const seen = lastSeen(sinkId)
    const settings = seen?.settings ?? null
    const compiled = settings?.compiled ?? null
    const rows = deviceRows(payload, compiled, deviceId)
    const batchId = await deviceBatchId(header, compiled, payload, deviceId, digest)
    const input: BatchInput = {
      sinkId,
      batchId: batchId.id,
      bodySha256: digest,
      bytes: rows.acceptedBytes,
      rows: rows.accepted,
      rejected: rows.reasons.length,
      reasons: rows.reasons,
      sendKeySha256,
    }
    const ledger: LedgerAnswer = await recordBatch(c, input, { version: seen?.version ?? '', authOnly: rows.ignored !== null })
    // An unknown sink, a deleted one and a wrong key answer alike.
    if (!ledger.sink || !timingSafeEqual(sendKeySha256, ledger.sink.sendKeySha256)) throw wrongKey()
    if (ledger.device && ledger.device.version !== seen?.version) {
      remember(sinkId, { version: ledger.device.version, settings: (ledger.device.settings ?? null) as DeviceSettings | null })
      continue
    }
    if (rows.ignored !== null) return c.json({ ignored: true, reason: rows.ignored }, 200)
    const row = ledger.batch
    if (!row) throw wrongKey()
    // Only a key the device chose can be reused for other bytes; a natural id names one message,
    // whatever else the vendor's retry carries, and a derived one is the bytes' own digest.
    if (row.bodySha256 !== digest && batchId.source === 'header') {
      throw new ApiError(409, 'idempotency_key_reused', `batch ${batchId.id} was already sent with a different body; use a new Idempotency-Key`)
    }
    const stored = await storeBatch(c, await c.var.db(), input, { sink: ledger.sink, batch: row }, (receivedAt) => ndjson(rows, receivedAt))
    if (compiled?.answer) return c.body(compiled.answer.body, 200, { 'Content-Type': compiled.answer.contentType })
    const answer = batchAnswer(row, batchId.id)
    return stored ? c.json(answer, 202) : c.json({ ...answer, duplicate: true }, 200)
  }
  // The settings changed under three requests in a row: a PATCH storm; the device retries.
  throw unavailable('database', 'the sink’s device settings kept changing; retry shortly')
}

export const deviceRoutes = new Hono<AppEnv>().on(['GET', 'POST'], '/v1/sinks/:sinkId/devices/:deviceId', requireSinksOn, device)
