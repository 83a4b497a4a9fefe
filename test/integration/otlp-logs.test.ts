// OpenTelemetry logs into a sink (issue 30, part 2): the OpenTelemetry JS SDK's own exporters
// (@opentelemetry/exporter-logs-otlp-http, JSON; -proto, protobuf with gzip) pointed at
// POST /v1/sinks/{id}/otlp/v1/logs with the send key as Bearer; an export the exporter retries
// itself (a fault proxy answers the first attempt 503 after the edge stored it) is stored once; a
// hand-written OTLP/JSON export keeps 64-bit values whole; the table is rolled by this file's roller
// and read back with PyIceberg. Also the OTLP answers: partialSuccess, Status bodies, 401/409/415/400.
//
// Each sink is leased to this file's roller id right after it is made, so the stack's roller service
// never rolls it between the sends and the forced tick.
import { context, trace, TraceFlags } from '@opentelemetry/api'
import { SeverityNumber } from '@opentelemetry/api-logs'
import { OTLPLogExporter as JsonExporter } from '@opentelemetry/exporter-logs-otlp-http'
import { OTLPLogExporter as ProtoExporter } from '@opentelemetry/exporter-logs-otlp-proto'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { InMemoryLogRecordExporter, LoggerProvider, type ReadableLogRecord, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs'
import { gzipSync } from 'node:zlib'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { OTLP_LOGS_COLUMNS } from '../../edge/otlp/preset.ts'
import { readerTz } from '../support/devices.ts'
import { FaultProxy } from '../support/fault-proxy.ts'
import { runPython, sqlCatalogArgs, toExact } from '../support/python.ts'
import { holdSink, tickInProcess } from '../support/roller.ts'
import { rollerSetup, SETUP_TIMEOUT } from '../support/roller-check.ts'
import { createTable, ledger, newSink, poll, postSink, uid, type Sink } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

const HOLDER = `otlp-logs-${uid()}`
const TRACE_ID = '5b8efff798038103d269b633813fc60c'
const SPAN_ID = 'eee19b7ec3c1b174'
let db: pg.Client
let whId: string
beforeAll(async () => ({ db, whId } = await rollerSetup()), SETUP_TIMEOUT)
afterAll(() => db?.end())

const columns = (types: Record<string, string> = OTLP_LOGS_COLUMNS) => Object.entries(types).map(([name, type]) => ({ name, type }))
const logsUrl = (sink: Sink, base = stack().apiUrl) => `${base}/v1/sinks/${sink.id}/otlp/v1/logs`

/** Log records as the SDK makes them: a resource, a scope, the emitted fields, a span's context. */
async function sdkRecords(emit: (logger: ReturnType<LoggerProvider['getLogger']>) => void): Promise<ReadableLogRecord[]> {
  const memory = new InMemoryLogRecordExporter()
  const provider = new LoggerProvider({
    resource: resourceFromAttributes({ 'service.name': 'checkout', 'deployment.environment': 'test' }),
    processors: [new SimpleLogRecordProcessor({ exporter: memory })],
  })
  emit(provider.getLogger('otlp-test', '1.2.3'))
  // The processor exports in a microtask: flushed, the memory holds every record.
  await provider.forceFlush()
  return memory.getFinishedLogRecords()
}

const inSpan = trace.setSpanContext(context.active(), { traceId: TRACE_ID, spanId: SPAN_ID, traceFlags: TraceFlags.SAMPLED })

/** Three records: a string body in a span, a map body, no body; nanosecond times. */
const records = (tag: string) =>
  sdkRecords((logger) => {
    logger.emit({
      timestamp: [1764763200, 123456789],
      observedTimestamp: [1764763201, 5],
      severityNumber: SeverityNumber.INFO,
      severityText: 'INFO',
      body: `order placed ${tag}`,
      attributes: { 'order.id': 42, tag, ok: true },
      context: inSpan,
    })
    logger.emit({
      timestamp: [1764763202, 999],
      severityNumber: SeverityNumber.ERROR2,
      severityText: 'ERROR',
      body: { reason: 'card declined', codes: [51, 'x'], ratio: 0.5 },
      attributes: { tag },
    })
    logger.emit({ timestamp: [1764763203, 0], severityNumber: SeverityNumber.WARN, attributes: { tag } })
  })

/** The exporter's export through its real HTTP path: 0 success, 1 failed (with the error). */
const exportWith = (exporter: JsonExporter | ProtoExporter, logs: ReadableLogRecord[]) =>
  new Promise<{ code: number; error?: Error }>((resolve) => exporter.export(logs, resolve))

const jsonExporter = (sink: Sink, base?: string) => new JsonExporter({ url: logsUrl(sink, base), headers: { Authorization: `Bearer ${sink.sendKey}` } })
const protoExporter = (sink: Sink, base?: string) =>
  new ProtoExporter({ url: logsUrl(sink, base), headers: { Authorization: `Bearer ${sink.sendKey}` }, compression: 'gzip' as never })

/** The row a record must become, as the interop scan prints it (times in `digits`). */
function expectedRow(r: ReadableLogRecord, digits: 6 | 9): Record<string, unknown> {
  const ns = (t: [number, number]) => {
    const d = new Date(t[0] * 1000).toISOString().slice(0, 19)
    return `${d}.${String(t[1]).padStart(9, '0').slice(0, digits)}+00:00`
  }
  const span = r.spanContext
  const json = (v: unknown) => JSON.parse(JSON.stringify(v))
  return {
    time: ns(r.hrTime),
    observed_time: ns(r.hrTimeObserved),
    severity_number: BigInt(r.severityNumber ?? 0),
    severity_text: r.severityText ?? null,
    body: r.body === undefined ? null : typeof r.body === 'string' ? r.body : json(r.body),
    attributes: json(r.attributes),
    resource: json(r.resource.attributes),
    scope: { name: 'otlp-test', version: '1.2.3', attributes: {} },
    service_name: 'checkout',
    trace_id: span?.traceId ?? null,
    span_id: span?.spanId ?? null,
  }
}

/** A scanned row with its JSON text columns parsed (the body only when the record's body was no string). */
const parsedRow = (row: Record<string, any>, bodyIsJson: boolean) => ({
  ...row,
  body: bodyIsJson && row.body !== null ? JSON.parse(row.body) : row.body,
  attributes: JSON.parse(row.attributes),
  resource: JSON.parse(row.resource),
  scope: JSON.parse(row.scope),
})

async function rolledRows(sink: Sink): Promise<Array<Record<string, any>>> {
  const t = await tickInProcess({ sink: sink.id, rollerId: HOLDER })
  expect({ code: t.code, signal: t.signal }, t.stdout + t.stderr).toEqual({ code: 0, signal: null })
  await poll(async () => (await ledger(db, sink.id)).every((b) => b.state === 'committed'), 15_000, 'every batch committed')
  const select = Object.keys(OTLP_LOGS_COLUMNS).flatMap((c) => ['--select', c])
  const args = [...sqlCatalogArgs({ databaseUrl: stack().databaseUrl, catalogName: whId, s3: stack().s3 }), sink.table, '--order-by', 'time', '--no-files']
  return toExact(await runPython('pyiceberg_scan.py', [...args, ...select])).rows
}

describe('OTLP logs from the SDK’s exporters, into a format-version 3 table with nanosecond times', () => {
  let sink: Sink
  const sent: ReadableLogRecord[] = []
  beforeAll(async () => {
    sink = await newSink(stack().adminKey, { tableSpec: { format_version: 3, columns: columns() } })
    await holdSink(sink.id, HOLDER)
  })

  it('takes an export from the JSON exporter and one from the protobuf exporter (gzip), one batch each', async () => {
    const viaJson = await records('json')
    const viaProto = await records('proto')
    expect(await exportWith(jsonExporter(sink), viaJson)).toEqual({ code: 0 })
    expect(await exportWith(protoExporter(sink), viaProto)).toEqual({ code: 0 })
    sent.push(...viaJson, ...viaProto)
    const batches = await ledger(db, sink.id)
    expect(batches.map((b) => [b.batch_id, b.rows]).sort()).toEqual([
      [expect.stringMatching(/^otlp:[0-9a-f]{64}$/), 3],
      [expect.stringMatching(/^otlp:[0-9a-f]{64}$/), 3],
    ])
  })

  it('stores an export the exporter retried once: the first attempt stored, answered 503 by a proxy', async () => {
    const proxy = await new FaultProxy(stack().apiUrl).start()
    try {
      const rule = proxy.rule({ method: 'POST', path: /\/otlp\/v1\/logs$/, action: { status: 503, headers: { 'Retry-After': '1' }, forward: true }, times: 1 })
      const before = (await ledger(db, sink.id)).length
      const retried = await records('retried')
      expect(await exportWith(protoExporter(sink, proxy.url), retried)).toEqual({ code: 0 })
      expect(rule.matched).toBe(1)
      expect(proxy.requests.filter((r) => r.method === 'POST')).toHaveLength(2)
      expect(await ledger(db, sink.id)).toHaveLength(before + 1)
      sent.push(...retried)
    } finally {
      await proxy.stop()
    }
  })

  it('rolls, and PyIceberg reads one row per record, times to the nanosecond', async () => {
    const rows = await rolledRows(sink)
    const expected = sent.map((r) => ({ r, row: expectedRow(r, 9) }))
    const tagOf = (attrs: string) => JSON.parse(attrs).tag
    const key = (x: { time: unknown; tag: unknown }) => `${x.time}|${x.tag}`
    const got = rows.map((row) => ({ key: key({ time: row.time, tag: tagOf(row.attributes) }), row }))
    expect(got.map((g) => g.key).sort()).toEqual(expected.map((e) => key({ time: e.row.time, tag: e.r.attributes.tag })).sort())
    for (const e of expected) {
      const row = got.find((g) => g.key === key({ time: e.row.time, tag: e.r.attributes.tag }))!.row
      expect(parsedRow(row, typeof e.r.body === 'object')).toEqual(e.row)
    }
  })
})

describe('OTLP/JSON by hand: 64-bit values, microsecond columns, partial success', () => {
  let sink: Sink
  beforeAll(async () => {
    const types = { ...OTLP_LOGS_COLUMNS, time: 'timestamptz', observed_time: 'timestamptz', severity_number: 'long' }
    sink = await newSink(stack().adminKey, { tableSpec: { format_version: 2, columns: columns(types) } })
    await holdSink(sink.id, HOLDER)
  })
  const exportBody = {
    resourceLogs: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'billing' } }] },
        scopeLogs: [
          {
            scope: { name: 'by-hand' },
            logRecords: [
              {
                timeUnixNano: '1764763200123456789',
                observedTimeUnixNano: '@OBSERVED@',
                severityNumber: 'SEVERITY_NUMBER_DEBUG3',
                body: { intValue: '9007199254740993' },
                attributes: [
                  { key: 'big', value: { intValue: '@BIG@' } },
                  { key: 'raw', value: { bytesValue: 'AAEC' } },
                  { key: 'nan', value: { doubleValue: 'NaN' } },
                ],
                traceId: TRACE_ID.toUpperCase(),
              },
              { timeUnixNano: '1764763201000000000', body: { stringValue: 'a bad span id' }, spanId: 'abcd' },
              // An unpaired surrogate (JSON.stringify writes it as \ud800): no UTF-8 can hold it.
              { timeUnixNano: '1764763202000000000', severityText: '\uD800', body: { stringValue: 'a lone surrogate' } },
            ],
          },
        ],
      },
    ],
  }
  // Numbers past 2^53 as JSON numbers, written into the text as no JS number could hold them.
  const raw = JSON.stringify(exportBody).replace('"@OBSERVED@"', '1764763200999999999').replace('"@BIG@"', '9007199254740993')

  it('answers 200 with partialSuccess for the records that cannot map, and the same on a retry (stored once)', async () => {
    const post = () => call(`/v1/sinks/${sink.id}/otlp/v1/logs`, { key: sink.sendKey, headers: { 'content-type': 'application/json' }, body: raw })
    for (const res of [await post(), await post()]) {
      expect([res.status, res.headers.get('content-type')]).toEqual([200, expect.stringMatching(/^application\/json/)])
      expect(res.body).toEqual({ partialSuccess: { rejectedLogRecords: 2, errorMessage: expect.any(String) } })
    }
    expect((await ledger(db, sink.id)).map((b) => [b.rows, b.rejected])).toEqual([[1, 2]])
  })

  it('rolls, and PyIceberg reads the integers whole, the times in microseconds', async () => {
    const rows = await rolledRows(sink)
    expect(rows).toEqual([
      {
        time: readerTz('2025-12-03T12:00:00.123456Z'),
        observed_time: readerTz('2025-12-03T12:00:00.999999Z'),
        severity_number: 7n,
        severity_text: null,
        body: '9007199254740993',
        attributes: '{"big":9007199254740993,"raw":"AAEC","nan":"NaN"}',
        resource: '{"service.name":"billing"}',
        scope: '{"name":"by-hand","version":"","attributes":{}}',
        service_name: 'billing',
        trace_id: TRACE_ID,
        span_id: null,
      },
    ])
  })

  it('keeps the two refused records in the sink’s rejects, as the roller refused them (GET /v1/sinks/{id}/rejects)', async () => {
    const res = await call(`/v1/sinks/${sink.id}/rejects`, { key: stack().adminKey })
    expect(res.status).toBe(200)
    const batchId = (await ledger(db, sink.id))[0].batch_id
    expect(res.body.rejects.map((r: any) => [r.batch_id, r.index, r.reason, r.field, r.expected, r.got])).toEqual([
      // The span id's two bytes, written as an array: the length that was wrong.
      [batchId, 1, 'type_mismatch', 'span_id', 'string', 'array of 2'],
      [batchId, 2, 'type_mismatch', 'severity_text', 'string', expect.stringContaining('unpaired UTF-16 surrogate')],
    ])
    expect(res.body.rejects[0].row).toMatchObject({ time: '2025-12-03T12:00:01.000000Z', body: 'a bad span id', span_id: [171, 205], service_name: 'billing' })
    expect(res.body.rejects[1].row).toMatchObject({ severity_text: '\uD800', body: 'a lone surrogate' })
  })
})

describe('OTLP failures, as OTLP clients expect them', () => {
  let sink: Sink
  let wrongTable: Sink
  beforeAll(async () => {
    sink = await newSink(stack().adminKey, { tableSpec: { format_version: 3, columns: columns() } })
    wrongTable = await newSink(stack().adminKey)
    await holdSink(sink.id, HOLDER)
    await holdSink(wrongTable.id, HOLDER)
  })
  const post = (s: Sink, body: BodyInit, headers: Record<string, string>, key = s.sendKey) => call(`/v1/sinks/${s.id}/otlp/v1/logs`, { key, headers, body })
  const one = JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: 'x' } }] }] }] })

  it('409 otlp_table_mismatch with the create line for a table without the columns; the exporter fails', async () => {
    const res = await post(wrongTable, one, { 'content-type': 'application/json' })
    expect(res.status).toBe(409)
    expect(res.body).toMatchObject({ code: 9, error: { code: 'otlp_table_mismatch', preset: 'otlp_logs' } })
    expect(res.body.error.command).toContain('--column time:timestamptz_ns --column observed_time:timestamptz_ns --column severity_number:int')
    expect(res.body.message).toContain(res.body.error.command)
    const result = await exportWith(protoExporter(wrongTable), await records('wrong'))
    expect(result.code).toBe(1)
  })

  it('a sink asking for otlp_logs as a device mapping is told where the preset belongs (400 with the create line)', async () => {
    const table = await createTable(stack().adminKey, { format_version: 3, columns: columns() })
    const res = await postSink(stack().adminKey, { name: `s_${uid()}`, table, mapping: { preset: 'otlp_logs' } })
    expect([res.status, res.body.error.code]).toEqual([400, 'mapping_invalid'])
    expect(res.body.error.command).toContain('--column time:timestamptz_ns')
  })

  it('401 for a wrong key (a Status, in the request’s encoding), 403 for an API key', async () => {
    const res = await post(sink, one, { 'content-type': 'application/json' }, `${sink.sendKey.slice(0, -2)}xx`)
    expect(res.status).toBe(401)
    expect(res.body).toMatchObject({ code: 16, message: expect.any(String), error: { code: 'unauthorized' } })
    const proto = await post(
      sink,
      new Uint8Array([0x0a, 0x00]),
      { 'content-type': 'application/x-protobuf' },
      'al_send_000000000000_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
    )
    expect([proto.status, proto.headers.get('content-type')]).toEqual([401, 'application/x-protobuf'])
    expect((await post(sink, one, { 'content-type': 'application/json' }, stack().adminKey)).status).toBe(403)
  })

  it('400 for a body that is not OTLP, 415 for another Content-Type', async () => {
    const bad = await post(sink, '{"resourceLogs": [', { 'content-type': 'application/json' })
    expect(bad.status).toBe(400)
    expect(bad.body).toMatchObject({ code: 3, error: { code: 'malformed_json' } })
    const wrongShape = await post(sink, '{"resourceLogs": {}}', { 'content-type': 'application/json' })
    expect([wrongShape.status, wrongShape.body.error.code]).toEqual([400, 'invalid_otlp'])
    const proto = await post(sink, new Uint8Array([0x0a, 0x05, 0x01]), { 'content-type': 'application/x-protobuf' })
    expect([proto.status, proto.headers.get('content-type')]).toEqual([400, 'application/x-protobuf'])
    const text = await post(sink, one, { 'content-type': 'text/plain' })
    expect([text.status, text.body.error.code]).toEqual([415, 'unsupported_media_type'])
    expect(await ledger(db, sink.id)).toEqual([])
  })

  it('413 for an export over 16 MiB after gzip, as a Status in protobuf', async () => {
    const zeros = gzipSync(new Uint8Array(17 * 1024 * 1024))
    const res = await post(sink, zeros, { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' })
    expect([res.status, res.headers.get('content-type')]).toEqual([413, 'application/x-protobuf'])
  })

  it('an empty export is 200 and stores nothing', async () => {
    const res = await post(sink, '{}', { 'content-type': 'application/json' })
    expect([res.status, res.body]).toEqual([200, {}])
    expect(await ledger(db, sink.id)).toEqual([])
  })
})
