// The OTLP logs room's decoders and row mapping, against the bytes the OpenTelemetry JS SDK's own
// serializers (@opentelemetry/otlp-transformer, what the exporters send) write for the same records.
import { context, TraceFlags, trace } from '@opentelemetry/api'
import { SeverityNumber } from '@opentelemetry/api-logs'
import { JsonLogsSerializer, ProtobufLogsSerializer } from '@opentelemetry/otlp-transformer'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs'
import { describe, expect, it } from 'vitest'
import { decodeJson } from '../../../edge/otlp/decode-json.ts'
import { decodeProto } from '../../../edge/otlp/decode-proto.ts'
import { rowsOf } from '../../../edge/otlp/row.ts'
import { message } from '../../../edge/otlp/wire.ts'
import { OTLP_LOGS_COLUMNS } from '../../../edge/otlp/preset.ts'
import { parseLine } from '../../../iceberg/ingest/scan.ts'
import { toRow } from '../../../iceberg/spec/values.ts'

async function sdkRecords() {
  const memory = new InMemoryLogRecordExporter()
  const provider = new LoggerProvider({
    resource: resourceFromAttributes({ 'service.name': 'svc', n: 3 }),
    processors: [new SimpleLogRecordProcessor({ exporter: memory })],
  })
  const logger = provider.getLogger('scope', '0.1')
  const ctx = trace.setSpanContext(context.active(), { traceId: 'ab'.repeat(16), spanId: 'cd'.repeat(8), traceFlags: TraceFlags.SAMPLED })
  logger.emit({
    timestamp: [1764763200, 123456789],
    observedTimestamp: [1764763200, 5],
    severityNumber: SeverityNumber.WARN,
    severityText: 'W',
    body: 'text',
    context: ctx,
  })
  logger.emit({
    timestamp: [1764763201, 0],
    observedTimestamp: [1764763201, 0],
    body: { a: [1, 2.5, 'x', true, null], b: { c: 'd' }, raw: new Uint8Array([0, 1, 2]) },
    attributes: { k: 'v', i: -7, d: 0.25 },
  })
  await provider.forceFlush()
  return memory.getFinishedLogRecords()
}

const lines = (ndjson: Uint8Array) => new TextDecoder().decode(ndjson).trim().split('\n')

describe('decoding OTLP logs', () => {
  it('reads the same records from the SDK’s protobuf and JSON', async () => {
    const records = await sdkRecords()
    const fromProto = decodeProto(ProtobufLogsSerializer.serializeRequest(records)!)
    const fromJson = decodeJson(JsonLogsSerializer.serializeRequest(records)!)
    expect(fromProto).toEqual(fromJson)
    expect(fromProto).toHaveLength(2)
    expect(fromProto[0]).toMatchObject({ timeUnixNano: 1764763200123456789n, observedTimeUnixNano: 1764763200000000005n, severityNumber: 13 })
  })

  it('maps records to rows: nanoseconds or microseconds, JSON text, hex ids', async () => {
    const records = decodeProto(ProtobufLogsSerializer.serializeRequest(await sdkRecords())!)
    const ns = rowsOf(records, { timeNs: true, observedNs: true })
    expect([ns.rows, ns.rejected]).toEqual([2, 0])
    const [first, second] = lines(ns.ndjson).map((l) => JSON.parse(l))
    expect(first).toEqual({
      time: '2025-12-03T12:00:00.123456789Z',
      observed_time: '2025-12-03T12:00:00.000000005Z',
      severity_number: 13,
      severity_text: 'W',
      body: 'text',
      attributes: '{}',
      resource: '{"service.name":"svc","n":3}',
      scope: '{"name":"scope","version":"0.1","attributes":{}}',
      service_name: 'svc',
      trace_id: 'ab'.repeat(16),
      span_id: 'cd'.repeat(8),
    })
    expect(JSON.parse(second.body)).toEqual({ a: [1, 2.5, 'x', true, null], b: { c: 'd' }, raw: 'AAEC' })
    expect(second.attributes).toBe('{"k":"v","i":-7,"d":0.25}')
    const us = rowsOf(records, { timeNs: false, observedNs: false })
    expect(JSON.parse(lines(us.ndjson)[0])).toMatchObject({ time: '2025-12-03T12:00:00.123456Z', observed_time: '2025-12-03T12:00:00.000000Z' })
  })

  it('keeps 64-bit integers whole in JSON; counts a record with a bad id as rejected', () => {
    const body = new TextEncoder().encode(
      '{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":18446744073709551615,"body":{"intValue":-9223372036854775808}},{"traceId":"abc0"}]}]}]}',
    )
    const records = decodeJson(body)
    expect(records.map((r) => [r.timeUnixNano, r.body])).toEqual([
      [18446744073709551615n, { int: -9223372036854775808n }],
      [0n, null],
    ])
    // Past 2262 for nanoseconds: rejected; as microseconds it fits.
    expect(rowsOf(records, { timeNs: true, observedNs: true })).toMatchObject({ rows: 0, rejected: 2 })
    const us = rowsOf(records, { timeNs: false, observedNs: false })
    expect([us.rows, us.rejected]).toEqual([1, 1])
    expect(JSON.parse(lines(us.ndjson)[0]).body).toBe('-9223372036854775808')
  })

  it('refuses what is not OTLP with 400', () => {
    const codeOf = (f: () => unknown) => {
      try {
        f()
      } catch (err) {
        return [(err as { status: number }).status, (err as { code: string }).code]
      }
      return null
    }
    expect(codeOf(() => decodeProto(new Uint8Array([0x0a, 0x05, 0x01])))).toEqual([400, 'invalid_otlp'])
    expect(codeOf(() => decodeProto(new Uint8Array([0x0b])))).toEqual([400, 'invalid_otlp'])
    expect(codeOf(() => decodeJson(new TextEncoder().encode('[1]')))).toEqual([400, 'invalid_otlp'])
    expect(codeOf(() => decodeJson(new TextEncoder().encode('{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":1.5}]}]}]}')))).toEqual([
      400,
      'invalid_otlp',
    ])
    expect(codeOf(() => decodeJson(new TextEncoder().encode('{')))).toEqual([400, 'malformed_json'])
  })
})

describe('nesting', () => {
  it('refuses AnyValues nested deeper than 64 levels with 400, in protobuf and JSON', () => {
    let json = '{"stringValue":"x"}'
    for (let i = 0; i < 70; i++) json = `{"arrayValue":{"values":[${json}]}}`
    const body = new TextEncoder().encode(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":${json}}]}]}]}`)
    expect(() => decodeJson(body)).toThrow(/nested deeper than 64/)
    // The same in protobuf: AnyValue.array_value (5) → ArrayValue.values (1) → AnyValue, 70 times.
    const len = (n: number) => (n < 128 ? [n] : [(n & 0x7f) | 0x80, n >> 7])
    let value = [0x0a, 0x01, 0x78] // string_value "x"
    for (let i = 0; i < 70; i++) {
      const values = [0x0a, ...len(value.length), ...value]
      value = [0x2a, ...len(values.length), ...values]
    }
    const record = [0x2a, ...len(value.length), ...value] // LogRecord.body (5)
    const scopeLogs = [0x12, ...len(record.length), ...record] // ScopeLogs.log_records (2)
    const resourceLogs = [0x12, ...len(scopeLogs.length), ...scopeLogs] // ResourceLogs.scope_logs (2)
    const request = Uint8Array.from([0x0a, ...len(resourceLogs.length), ...resourceLogs])
    expect(() => decodeProto(request)).toThrow(/nested deeper than 64/)
  })
})

describe('the fast paths read and write what the general ones do', () => {
  // One record as protobuf: severity_text 3, body 5 (string_value 1), attributes 6 (key 1, value 2),
  // trace_id 9, span_id 10; the ScopeLogs under a resource whose service.name is `service`.
  const record = (text: Uint8Array | string, attributes: Array<[string, string]>) =>
    message([
      [3, text],
      [5, message([[1, text]])],
      ...attributes.map(([k, v]): [number, Uint8Array] => [
        6,
        message([
          [1, k],
          [2, message([[1, v]])],
        ]),
      ]),
      [9, Uint8Array.from({ length: 16 }, (_, i) => i * 17)],
      [10, Uint8Array.from({ length: 8 }, (_, i) => 255 - i)],
    ])
  const request = (records: Uint8Array[], service: string) => {
    const resource = message([
      [
        1,
        message([
          [1, 'service.name'],
          [2, message([[1, service]])],
        ]),
      ],
    ])
    const scopeLogs = message([[1, message([[1, 'scope']])], ...records.map((r): [number, Uint8Array] => [2, r])])
    return message([
      [
        1,
        message([
          [1, resource],
          [2, scopeLogs],
        ]),
      ],
    ])
  }

  it('strings: ASCII, UTF-8, long, and bytes that are not UTF-8', () => {
    const long = `${'x'.repeat(300)}é`
    const texts = ['', 'INFO', 'é 😀 日本', long, 'a'.repeat(256), '\uFEFFbom']
    const records = decodeProto(
      request(
        texts.map((t) => record(t, [])),
        'svc',
      ),
    )
    expect(records.map((r) => r.severityText)).toEqual(texts)
    // message() leaves an empty string out, so the empty one has no body at all.
    expect(records.map((r) => r.body)).toEqual(texts.map((t) => (t === '' ? null : { string: t })))
    expect(() => decodeProto(request([record(Uint8Array.from([0x41, 0xff]), [])], 'svc'))).toThrow(/not UTF-8/)
    expect(() => decodeProto(request([record(Uint8Array.from([0xed, 0xa0, 0x80]), [])], 'svc'))).toThrow(/not UTF-8/)
  })

  it('rows: hex ids, a repeated attribute key (the last value, the first place), the resource shared', () => {
    const records = decodeProto(
      request(
        [
          record('W', [
            ['a', '1'],
            ['b', '2'],
            ['a', '3'],
          ]),
          record('E', [['"q"', 'v']]),
        ],
        'svc',
      ),
    )
    expect(records[0].resource).toBe(records[1].resource)
    const rows = lines(rowsOf(records, { timeNs: true, observedNs: false }).ndjson)
    const expected = (r: (typeof records)[number], attributes: string) => ({
      time: null,
      observed_time: null,
      severity_number: 0,
      severity_text: r.severityText,
      body: r.severityText,
      attributes,
      resource: '{"service.name":"svc"}',
      scope: '{"name":"scope","version":"","attributes":{}}',
      service_name: 'svc',
      trace_id: '00112233445566778899aabbccddeeff',
      span_id: 'fffefdfcfbfaf9f8',
    })
    // The line is exactly JSON.stringify's of the row, key order included.
    expect(rows).toEqual([JSON.stringify(expected(records[0], '{"a":"3","b":"2"}')), JSON.stringify(expected(records[1], '{"\\"q\\"":"v"}'))])
  })

  it('a lone surrogate in service.name (OTLP/JSON) rejects every record of that resource', () => {
    const body = new TextEncoder().encode(
      JSON.stringify({
        resourceLogs: [
          { resource: { attributes: [{ key: 'service.name', value: { stringValue: '\uD800' } }] }, scopeLogs: [{ logRecords: [{}, {}] }] },
          { resource: { attributes: [{ key: 'service.name', value: { stringValue: 'ok' } }] }, scopeLogs: [{ logRecords: [{}] }] },
        ],
      }),
    )
    const rows = rowsOf(decodeJson(body), { timeNs: true, observedNs: true })
    expect([rows.rows, rows.rejected]).toEqual([1, 2])
    // Every record is a line, the refused ones too (the roller refuses them into the rejects file).
    expect(lines(rows.ndjson).map((l) => JSON.parse(l).service_name)).toEqual(['\uD800', '\uD800', 'ok'])
    expect(rows.rowBytes).toBe(new TextEncoder().encode(lines(rows.ndjson)[2]).length + 1)
  })
})

describe('records that cannot be rows: stored as lines the roller refuses (the rejects file)', () => {
  // The preset's table as the roller checks a line against it (format version 3: nanosecond times).
  const schema = {
    type: 'struct' as const,
    fields: Object.entries(OTLP_LOGS_COLUMNS).map(([name, type], i) => ({ id: i + 1, name, required: false, type })),
  }
  const verdict = (line: string) => {
    const r = toRow(schema, parseLine(line), { formatVersion: 3 })
    return r.ok ? 'ok' : r.rejects.map((x) => [x.reason, x.field, x.got])
  }

  it('a time past 2262, an id of the wrong length, an unpaired surrogate: each refused on its column', () => {
    const body = new TextEncoder().encode(
      JSON.stringify({
        resourceLogs: [
          {
            scopeLogs: [
              {
                logRecords: [
                  { timeUnixNano: '18446744073709551615', body: { stringValue: 'far future' } },
                  { timeUnixNano: '1764763200000000000', traceId: 'abcd' },
                  { timeUnixNano: '1764763200000000000', body: { stringValue: 'x\uDC00' } },
                  { timeUnixNano: '1764763200000000001' },
                ],
              },
            ],
          },
        ],
      }),
    )
    const rows = rowsOf(decodeJson(body), { timeNs: true, observedNs: true })
    expect([rows.rows, rows.rejected]).toEqual([1, 3])
    const all = lines(rows.ndjson)
    expect(all.map(verdict)).toEqual([
      [['type_mismatch', 'time', expect.stringContaining('2554-07-21T23:34:33.709551615Z')]],
      [['type_mismatch', 'trace_id', 'array of 2']],
      [['type_mismatch', 'body', expect.stringContaining('unpaired')]],
      'ok',
    ])
    expect(rows.rowBytes).toBe(new TextEncoder().encode(all[3]).length + 1)
  })
})
