// The device route's presets end to end (the device issue, "done when" 1): for each preset a
// format-version 3 table with the preset's columns and a sink with `mapping: {preset}`; every
// fixture of test/fixtures/devices/<preset> is sent as its device sends it (method, Content-Type or
// none, query, body; no Idempotency-Key), the key in the query, then replayed byte for byte with the
// key as HTTP Basic's password: one batch in the ledger, one row in the table. Presets whose device
// column is the path's id also get a second device (Bearer). Ignored fixtures (OwnTracks lwt,
// transition) answer 200 {ignored, reason} and store nothing. Then this file's roller rolls the sink
// and the table is read back with PyIceberg (geometry projected as binary: WKB → lon/lat) and DuckDB.
//
// Each sink is leased to this file's roller id right after it is made, so the stack's roller service
// never rolls it between the sends and the forced tick.
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PRESETS } from '../../edge/devices/presets/index.ts'
import { deviceFixtures, type LedgerBatch, ledgerBatches, readerTz, sendFixture, wkbPoint, wkbPointHex, type DeviceFixture } from '../support/devices.ts'
import { PythonError, runPython, s3Args, sqlCatalogArgs, toExact } from '../support/python.ts'
import { holdSink, tickInProcess } from '../support/roller.ts'
import { rollerSetup, SETUP_TIMEOUT } from '../support/roller-check.ts'
import { bucket, intakeKey, intakeObjects, newSink, poll, uid, type Sink } from '../support/sinks.ts'
import { stack } from '../support/stack.ts'

const HOLDER = `devices-presets-${uid()}`
let db: pg.Client
let whId: string
beforeAll(async () => ({ db, whId } = await rollerSetup()), SETUP_TIMEOUT)
afterAll(() => db?.end())

const catalogArgs = () => sqlCatalogArgs({ databaseUrl: stack().databaseUrl, catalogName: whId, s3: stack().s3 })

/** The value at a JSON pointer of what the fixture sends (its JSON body, or its form/query parameters). */
function sentValue(f: DeviceFixture, pointer: string): string | undefined {
  const isJson = f.body !== null && f.content_type !== 'application/x-www-form-urlencoded' && /^\s*[{[]/.test(f.body)
  let v: any = isJson ? JSON.parse(f.body!) : Object.fromEntries(new URLSearchParams([f.query, f.body ?? ''].filter(Boolean).join('&')))
  for (const token of pointer.split('/').slice(1)) v = v?.[token.replace(/~1/g, '/').replace(/~0/g, '~')]
  return v === undefined || v === null ? undefined : String(v)
}

/** The batch id the route must derive: the preset's natural id, or dev:<device>:<32 hex>. */
function expectedBatchId(name: string, f: DeviceFixture, deviceId: string): string | RegExp {
  const natural = PRESETS[name].naturalId
  if (!natural) return new RegExp(`^dev:${deviceId.replace(/[.]/g, '\\.')}:[0-9a-f]{32}$`)
  return `${name}:${deviceId}:${natural.map((p) => sentValue(f, p)).join(':')}`
}

/** A fixture's row as the interop scripts print it, in the preset's types. */
function readerRow(name: string, row: Record<string, any>, receivedAt: string): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [col, type] of Object.entries(PRESETS[name].columns)) {
    const v = row[col]
    if (v === null || v === undefined) out[col] = null
    else if (type === 'int' || type === 'long') out[col] = BigInt(v)
    else if (type === 'double') out[col] = Number(v)
    else if (type === 'timestamptz') out[col] = readerTz(v, 6)
    else if (type === 'timestamptz_ns') out[col] = readerTz(v, 9)
    else if (type === 'geometry') out[col] = wkbPointHex(v.coordinates[0], v.coordinates[1])
    else out[col] = v
  }
  out.__ingest_ts = readerTz(receivedAt)
  return jsonColumnsParsed(name, out)
}

/** Columns mapped with `as: 'json'` hold JSON text: compared parsed (whitespace and `1.0`/`1` are not fixed). */
function jsonColumnsParsed(name: string, row: Record<string, any>): Record<string, any> {
  const out = { ...row }
  for (const [col, source] of Object.entries(PRESETS[name].mapping.columns)) {
    if (typeof source === 'object' && 'as' in source && source.as === 'json' && typeof out[col] === 'string') out[col] = JSON.parse(out[col])
  }
  return out
}

const byPathId = (name: string) => {
  const source = PRESETS[name].mapping.columns.device
  return typeof source === 'object' && 'device' in source
}

describe.each(Object.keys(PRESETS))('the %s preset, end to end', (name) => {
  const preset = PRESETS[name]
  const fixtures = deviceFixtures(name)
  const stored = fixtures.filter((f) => !f.ignored)
  const geometryCols = Object.entries(preset.columns)
    .filter(([, t]) => t === 'geometry')
    .map(([c]) => c)
  /** What was stored, in the order it was first sent: the fixture, the path's device id, the batch id. */
  const sent: Array<{ f: DeviceFixture; deviceId: string; batchId: string }> = []
  let sink: Sink
  let received: Map<string, string>
  let scan: any

  beforeAll(async () => {
    sink = await newSink(stack().adminKey, {
      tableSpec: { format_version: 3, columns: Object.entries(preset.columns).map(([n, type]) => ({ name: n, type })) },
      sink: { mapping: { preset: name } },
    })
    await holdSink(sink.id, HOLDER)
  })

  it(`stores each fixture once: the key in the query, then the same request over Basic (${stored.length} fixtures)`, async () => {
    expect(stored.length).toBeGreaterThan(0)
    const send = async (f: DeviceFixture, deviceId: string, auth: Parameters<typeof sendFixture>[2]) => {
      const res = await sendFixture(sink.id, f, auth, deviceId)
      if (preset.answer) {
        // The device's own answer, first time and on a replay alike.
        expect([res.status, res.text, res.headers.get('content-type')], f.name).toEqual([200, preset.answer.body, preset.answer.contentType])
      } else expect(res.status, `${f.name}: ${res.text}`).toBe(res.body?.duplicate ? 200 : 202)
      return res
    }
    const extra = byPathId(name) ? [{ f: stored[0], deviceId: `${stored[0].device_id}-2` }] : []
    for (const { f, deviceId, second } of [
      ...stored.map((f) => ({ f, deviceId: f.device_id, second: false })),
      ...extra.map((e) => ({ ...e, second: true })),
    ]) {
      const before = (await ledgerBatches(db, sink.id)).map((b) => b.batch_id)
      const first = await send(f, deviceId, second ? { bearer: sink.sendKey } : { query: sink.sendKey })
      const replay = await send(f, deviceId, { basic: sink.sendKey })
      const added = (await ledgerBatches(db, sink.id)).filter((b) => !before.includes(b.batch_id))
      expect(
        added.map((b) => [b.batch_id, b.rows, b.rejected]),
        f.name,
      ).toEqual([[expect.stringMatching(/./), f.rows.length, 0]])
      const batchId = added[0].batch_id
      const want = expectedBatchId(name, f, deviceId)
      if (typeof want === 'string') expect(batchId, f.name).toBe(want)
      else expect(batchId, f.name).toMatch(want)
      if (!preset.answer) {
        expect(first.status, first.text).toBe(202)
        expect(first.body).toEqual({
          accepted: f.rows.length,
          rejected: 0,
          reasons: [],
          batch_id: batchId,
          bytes: expect.any(Number),
          received_at: added[0].received_at,
          state: 'pending',
        })
        expect([replay.status, replay.body]).toEqual([200, { ...first.body, duplicate: true }])
      }
      sent.push({ f, deviceId, batchId })
    }
    // One object per batch in the intake, stamped with the ledger's clock.
    const ledger = (await poll(async () => {
      const rows = await ledgerBatches(db, sink.id)
      return rows.every((r) => r.state === 'pending') && rows
    })) as LedgerBatch[]
    expect(ledger.map((b) => b.batch_id).sort()).toEqual(sent.map((s) => s.batchId).sort())
    for (const b of ledger) {
      const got = await bucket().get(intakeKey(sink.id, b.batch_id))
      expect(got?.head.metadata, b.batch_id).toMatchObject({ received: b.received_at, rows: String(b.rows), sink: sink.id })
    }
    received = new Map(ledger.map((b) => [b.batch_id, b.received_at]))
  })

  if (fixtures.some((f) => f.ignored))
    it('answers an ignored message 200 {ignored, reason} and stores nothing', async () => {
      const before = [await ledgerBatches(db, sink.id), await intakeObjects(sink.id)]
      for (const f of fixtures.filter((x) => x.ignored)) {
        for (const auth of [{ query: sink.sendKey }, { basic: sink.sendKey }]) {
          const res = await sendFixture(sink.id, f, auth)
          expect([res.status, res.body], f.name).toEqual([200, { ignored: true, reason: expect.stringContaining('/_type') }])
          expect(res.body.reason).toContain(JSON.stringify(JSON.parse(f.body!)._type))
        }
      }
      expect([await ledgerBatches(db, sink.id), await intakeObjects(sink.id)]).toEqual(before)
    })

  it('rolls (this file’s roller, forced) and PyIceberg reads exactly the fixtures’ rows, one per batch', async () => {
    const t = await tickInProcess({ sink: sink.id, rollerId: HOLDER })
    expect({ code: t.code, signal: t.signal }, t.stdout + t.stderr).toEqual({ code: 0, signal: null })
    await poll(async () => (await ledgerBatches(db, sink.id)).every((b) => b.state === 'committed'), 15_000, 'every batch committed')
    const select = [...Object.keys(preset.columns).filter((c) => !geometryCols.includes(c)), '__ingest_ts'].flatMap((c) => ['--select', c])
    scan = toExact(await runPython('pyiceberg_scan.py', [...catalogArgs(), sink.table, '--order-by', '__ingest_ts', '--no-files', ...select]))
    const expected = sent.flatMap(({ f, deviceId, batchId }) =>
      f.rows.map((r) => readerRow(name, byPathId(name) ? { ...r, device: deviceId } : r, received.get(batchId)!)),
    )
    const withoutGeometry = (rows: any[]) => rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !geometryCols.includes(k))))
    expect(scan.format_version).toBe(3n)
    expect(scan.rows.map((r: any) => jsonColumnsParsed(name, r))).toEqual(withoutGeometry(expected))
    const rolls = scan.snapshots.filter((s: any) => s.summary['lakehousebox.sink.id'] === sink.id)
    expect(rolls).toHaveLength(1)
    expect(rolls[0].summary['lakehousebox.sink.batches'].split(',').sort()).toEqual(sent.map((s) => s.batchId).sort())
    expect(rolls[0].summary).toMatchObject({ 'lakehousebox.sink.rows': String(expected.length), 'lakehousebox.sink.rejected_rows': '0' })
    expect(await intakeObjects(sink.id)).toEqual([])

    if (geometryCols.length > 0) {
      // PyIceberg 0.12 refuses a geometry column; projected as binary it reads the WKB.
      const wkb = toExact(await runPython('parquet_stats.py', [...catalogArgs(), sink.table, '--order-by', '__ingest_ts', '--rows-binary-geometry']))
      expect(wkb.rows.map((r: any) => jsonColumnsParsed(name, r))).toEqual(expected)
      // The point, decoded: lon, lat as the device sent them (none where the payload has no position).
      const points = sent.flatMap(({ f }) => f.rows.map((r) => r[geometryCols[0]]?.coordinates ?? null))
      expect(wkb.rows.map((r: any) => (r[geometryCols[0]] === null ? null : wkbPoint(r[geometryCols[0]])))).toEqual(points)
    }
  })

  it('DuckDB iceberg_scan reads the same rows, geometry as WKB (not a table with timestamptz_ns: DuckDB 1.5.5 refuses it)', async () => {
    const expected = sent.flatMap(({ f, deviceId, batchId }) =>
      f.rows.map((r) => readerRow(name, byPathId(name) ? { ...r, device: deviceId } : r, received.get(batchId)!)),
    )
    const args = [...s3Args(stack().s3), '--metadata', scan.metadata_location, '--order-by', '__ingest_ts']
    if (Object.values(preset.columns).includes('timestamptz_ns')) {
      const refused: any = await runPython('duckdb_scan.py', args).catch((e) => e)
      expect(refused).toBeInstanceOf(PythonError)
      expect(refused.stderr).toContain('Unrecognized primitive type: timestamptz_ns')
      return
    }
    const out = toExact(await runPython('duckdb_scan.py', args))
    expect(out.rows.map((r: any) => jsonColumnsParsed(name, r))).toEqual(expected)
  })
})
