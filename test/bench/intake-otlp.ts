// bench:intake's OTLP side: one export of `rows` log records in protobuf, serialized by the
// OpenTelemetry JS SDK's own ProtobufLogsSerializer (what @opentelemetry/exporter-logs-otlp-proto
// sends), built once before any timing. Each request is that export with the first record's
// time_unix_nano (a fixed64: the same length whatever its value) set to a value of its own, so each
// body is distinct and goes without Idempotency-Key, as an exporter sends it: its batch id is the
// route's otlp:<SHA-256 of the body>. The copy, the 8 bytes and the digest are the load generator's
// only work per request.
import { createHash } from 'node:crypto'
import { context, TraceFlags, trace } from '@opentelemetry/api'
import { SeverityNumber } from '@opentelemetry/api-logs'
import { ProtobufLogsSerializer } from '@opentelemetry/otlp-transformer'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { InMemoryLogRecordExporter, LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs'
import { OTLP_LOGS_COLUMNS } from '../../edge/otlp/preset.ts'

/** The otlp_logs preset's columns (nanosecond times: the table is format-version 3). */
export const OTLP_COLUMNS = Object.entries(OTLP_LOGS_COLUMNS).map(([name, type]) => ({ name, type }))

const SECONDS = 1_780_000_000
const NANOS = 123_456_789
const FIRST_TIME = BigInt(SECONDS) * 1_000_000_000n + BigInt(NANOS)

export interface OtlpExport {
  /** The export's size in bytes (every request's). */
  bytes: number
  /** The n-th request's body and the batch id the route gives it. */
  request(n: number): { body: Buffer; batchId: string }
}

/** `rows` records of about the benchmark rows' size: a short string body, two attributes, a span's ids. */
export async function otlpExport(rows: number): Promise<OtlpExport> {
  const memory = new InMemoryLogRecordExporter()
  const provider = new LoggerProvider({
    resource: resourceFromAttributes({ 'service.name': 'bench-intake', 'host.name': 'bench-1' }),
    processors: [new SimpleLogRecordProcessor({ exporter: memory })],
  })
  const logger = provider.getLogger('bench', '1.0.0')
  for (let i = 0; i < rows; i++) {
    const id = 1000 + i
    const ids = { traceId: id.toString(16).padStart(32, '0'), spanId: (id + 1).toString(16).padStart(16, '0'), traceFlags: TraceFlags.SAMPLED }
    logger.emit({
      timestamp: [SECONDS + i, NANOS],
      observedTimestamp: [SECONDS + i, NANOS + 1000],
      severityNumber: SeverityNumber.INFO,
      severityText: 'INFO',
      body: `sensor-${String(id % 10_000).padStart(4, '0')} / building ${id % 17}: reading taken`,
      attributes: { 'sensor.id': id, amount: `${Math.floor(id * 7.31) % 1_000_000}.${String(id % 100).padStart(2, '0')}` },
      context: trace.setSpanContext(context.active(), ids),
    })
  }
  await provider.forceFlush()
  const template = Buffer.from(ProtobufLogsSerializer.serializeRequest(memory.getFinishedLogRecords())!)
  // The first record's time_unix_nano: field 1, wire type fixed64 (tag 0x09), then 8 bytes little-endian.
  const needle = Buffer.alloc(9)
  needle[0] = 0x09
  needle.writeBigUInt64LE(FIRST_TIME, 1)
  const at = template.indexOf(needle)
  if (at < 0 || template.indexOf(needle, at + 1) >= 0) throw new Error('otlp export: the first record’s time_unix_nano is not where it was expected')
  return {
    bytes: template.length,
    request(n) {
      const body = Buffer.from(template)
      body.writeBigUInt64LE(FIRST_TIME + BigInt(n) * 1000n, at + 1)
      return { body, batchId: `otlp:${createHash('sha256').update(body).digest('hex')}` }
    },
  }
}
