// Shared by the device-route integration tests: the vendors' fixtures (test/fixtures/devices), a raw
// device request (no header a device would not send), the ledger's batches with exact received
// times, and the WKB point a geometry column holds.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type pg from 'pg'
import { stack, type Answer } from './stack.ts'

export interface DeviceFixture {
  /** `<preset>/<file>`. */
  name: string
  method: 'GET' | 'POST'
  content_type: string | null
  query: string
  body: string | null
  device_id: string
  rows: Array<Record<string, any>>
  ignored: boolean
}

const FIXTURES = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'devices')

/** The fixtures of one preset, by file name. */
export function deviceFixtures(preset: string): DeviceFixture[] {
  return readdirSync(join(FIXTURES, preset))
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => ({ ...JSON.parse(readFileSync(join(FIXTURES, preset, f), 'utf8')), name: `${preset}/${f}` }))
}

export type DeviceAuth = { query: string } | { basic: string; user?: string } | { bearer: string } | null

export interface DeviceRequest {
  method?: 'GET' | 'POST' | 'HEAD'
  /** The query without `?` and without the key. */
  query?: string
  body?: string | Uint8Array | null
  /** Null or absent: no Content-Type header at all. */
  contentType?: string | null
  auth: DeviceAuth
  headers?: Record<string, string>
}

/**
 * A device's request to /v1/sinks/{sink}/devices/{device}, through fetch: only the headers given
 * (a body goes as bytes, so fetch adds no Content-Type of its own), no Idempotency-Key unless given.
 */
export async function deviceCall(sinkId: string, deviceId: string, r: DeviceRequest): Promise<Answer> {
  const params = [r.query ?? '']
  if (r.auth && 'query' in r.auth) params.push(`key=${encodeURIComponent(r.auth.query)}`)
  const search = params.filter(Boolean).join('&')
  const headers: Record<string, string> = { ...r.headers }
  if (r.contentType) headers['content-type'] = r.contentType
  if (r.auth && 'basic' in r.auth) headers.authorization = `Basic ${Buffer.from(`${r.auth.user ?? 'device'}:${r.auth.basic}`).toString('base64')}`
  if (r.auth && 'bearer' in r.auth) headers.authorization = `Bearer ${r.auth.bearer}`
  const body = r.body === null || r.body === undefined ? undefined : typeof r.body === 'string' ? new TextEncoder().encode(r.body) : r.body
  const res = await fetch(`${stack().apiUrl}/v1/sinks/${sinkId}/devices/${deviceId}${search ? `?${search}` : ''}`, {
    method: r.method ?? 'POST',
    headers,
    body,
  })
  const text = await res.text()
  let parsed: any = null
  try {
    parsed = text ? JSON.parse(text) : null
  } catch {
    parsed = null
  }
  return { status: res.status, headers: res.headers, body: parsed, text }
}

/** A fixture as its device sends it, with the given key placement. */
export const sendFixture = (sinkId: string, f: DeviceFixture, auth: DeviceAuth, deviceId = f.device_id): Promise<Answer> =>
  deviceCall(sinkId, deviceId, { method: f.method, query: f.query, body: f.body, contentType: f.content_type, auth })

export interface LedgerBatch {
  batch_id: string
  state: string
  rows: number
  rejected: number
  /** As the edge answers it and stamps x-amz-meta-received: microseconds, Z. */
  received_at: string
}

/** The sink's ledger rows, oldest first, received_at to the microsecond. */
export async function ledgerBatches(db: pg.Client, sinkId: string): Promise<LedgerBatch[]> {
  const { rows } = await db.query(
    `select batch_id, state, rows, rejected, to_char(received_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as received_at
     from batches where sink_id = $1 order by received_at, batch_id`,
    [sinkId],
  )
  return rows
}

/** A WKB point (hex, as the interop scripts print geometry) → [lon, lat]; throws on anything else. */
export function wkbPoint(hex: string): [number, number] {
  const b = Buffer.from(hex, 'hex')
  if (b.length !== 21 || b[0] !== 1 || b.readUInt32LE(1) !== 1) throw new Error(`not a little-endian 2D WKB point: ${hex}`)
  return [b.readDoubleLE(5), b.readDoubleLE(13)]
}

/** The WKB (hex) of a 2D point, little-endian. */
export function wkbPointHex(lon: number, lat: number): string {
  const b = Buffer.alloc(21)
  b.writeUInt8(1, 0)
  b.writeUInt32LE(1, 1)
  b.writeDoubleLE(lon, 5)
  b.writeDoubleLE(lat, 13)
  return b.toString('hex')
}

/** An RFC 3339 UTC instant (…Z) as the interop scripts print a timestamptz (6 digits) or timestamptz_ns (9). */
export function readerTz(text: string, digits: 6 | 9 = 6): string {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(text)
  if (!m) throw new Error(`not a UTC RFC 3339 instant: ${text}`)
  return `${m[1]}.${(m[2] ?? '').padEnd(digits, '0')}+00:00`
}
