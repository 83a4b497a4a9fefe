// One scan-pool thread (scan-pool.ts, which bundles this file and what it imports into one script):
// scanners compiled per schema and kept for the next batch; a store client per bucket, kept likewise.
import { parentPort, workerData } from 'node:worker_threads'
import { BatchUnreadable, Scanner, type ScannedBatch, type ScanOptions } from '../iceberg/ingest/scan.ts'
import { S3Client, S3Error, type S3Config } from '../iceberg/io/s3.ts'
import { egressAgent } from '../contract/egress-connect.ts'
import { EgressPolicy, WAREHOUSES } from '../contract/egress-policy.ts'
import { nodeTransport, useS3Agent } from '../iceberg/io/s3-node.ts'
import { useS3Transport } from '../iceberg/io/s3-transport.ts'
import { parseSchema } from '../iceberg/spec/metadata.ts'
import type { Value } from '../iceberg/spec/types.ts'
import { receivedMicros, storedRows } from './intake.ts'
import type { ScanReply, ScanThreadData } from './scan-pool.ts'
import { threadCpuNs } from './stage-cpu.ts'

interface ScanJob {
  id: number
  /** the table schema as lossless JSON (its write-defaults keep their exact digits) */
  schema: string
  opts: ScanOptions
  /** bytes to scan… */
  body?: Uint8Array
  constants?: Record<string, Value>
  /** …or an object to read first, its arrival time the constant `stamp` */
  read?: { s3: S3Config; key: string; stamp: string }
  /** LHBOX_ROLL_STAGE_CPU: the reply says this thread's CPU (roller/stage-cpu.ts) */
  cpu?: boolean
}

// A thread's GETs connect where the roller's own may (the pool passes the roller's policy).
const { egress } = (workerData ?? {}) as ScanThreadData
if (egress) useS3Agent(egressAgent(new EgressPolicy(egress, WAREHOUSES)))
useS3Transport(nodeTransport)

const KEPT = 8
const scanners = new Map<string, Scanner>()
const clients = new Map<string, S3Client>()

function scannerFor(job: ScanJob): Scanner {
  const key = `${job.opts.formatVersion}|${(job.opts.constants ?? []).join(',')}|${job.schema}`
  let s = scanners.get(key)
  if (!s) {
    if (scanners.size >= KEPT) scanners.delete(scanners.keys().next().value!)
    scanners.set(key, (s = new Scanner(parseSchema(job.schema), job.opts)))
  }
  return s
}

function clientFor(config: S3Config): S3Client {
  const key = JSON.stringify(config)
  let c = clients.get(key)
  if (!c) {
    if (clients.size >= KEPT) clients.delete(clients.keys().next().value!)
    clients.set(key, (c = new S3Client(config)))
  }
  return c
}

// Stage CPU: a scan is synchronous, so its own time is exact; the rest of this thread's time between
// two replies (GETs, signing, messages; jobs interleave while they await their GETs) goes to `get`.
let cpuAt: number | null = null
let scanNs = 0

function scanned<T>(cpu: boolean | undefined, scan: () => T): T {
  if (!cpu) return scan()
  const t0 = threadCpuNs() ?? 0
  try {
    return scan()
  } finally {
    scanNs += (threadCpuNs() ?? 0) - t0
  }
}

/** This thread's CPU since the last reply that said it, split into GET and scan. */
function cpuSince(): { get: number; scan: number } {
  const now = threadCpuNs() ?? 0
  const total = cpuAt === null ? scanNs : now - cpuAt
  const out = { get: Math.max(0, total - scanNs), scan: scanNs }
  cpuAt = now
  scanNs = 0
  return out
}

async function run(job: ScanJob): Promise<ScanReply> {
  if (job.cpu && cpuAt === null) cpuAt = threadCpuNs()
  if (!job.read) {
    const ok = scanned(job.cpu, () => scannerFor(job).scan(job.body!, job.constants ?? {}))
    return { id: job.id, ok, head: null, ...(job.cpu ? { cpu: cpuSince() } : {}) }
  }
  const got = await clientFor(job.read.s3).get(job.read.key)
  if (!got) return { id: job.id, missing: true }
  try {
    const ok = scanned(job.cpu, () => scannerFor(job).scan(got.body, { [job.read!.stamp]: receivedMicros(got.head) }))
    return { id: job.id, ok, head: got.head, ...(job.cpu ? { cpu: cpuSince() } : {}) }
  } catch (err) {
    // A batch that is not text has no lines to count: the edge's count of its elements stands in.
    if (err instanceof BatchUnreadable) throw new BatchUnreadable(err.message, err.lines ?? storedRows(got.head))
    throw err
  }
}

/** The buffers of a scanned batch, each once: moved, not copied, back to the main thread. */
function transferables(out: ScannedBatch): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>()
  for (const col of out.columns.columns.values()) {
    if (col.kind !== 'flat') continue
    if (col.present) buffers.add(col.present.buffer as ArrayBuffer)
    const d = col.data
    if (d.physical === 'BYTE_ARRAY') {
      buffers.add(d.offsets.buffer as ArrayBuffer)
      buffers.add(d.bytes.buffer as ArrayBuffer)
    } else if (d.physical === 'FIXED_LEN_BYTE_ARRAY') buffers.add(d.bytes.buffer as ArrayBuffer)
    else buffers.add(d.values.buffer as ArrayBuffer)
  }
  return [...buffers]
}

parentPort!.on('message', async (job: ScanJob) => {
  let reply: ScanReply
  try {
    reply = await run(job)
    if ('ok' in reply) {
      parentPort!.postMessage(reply, transferables(reply.ok))
      return
    }
  } catch (err) {
    reply =
      err instanceof BatchUnreadable
        ? { id: job.id, unreadable: { message: err.message, lines: err.lines } }
        : err instanceof S3Error
          ? { id: job.id, s3: { status: err.status, code: err.code, message: err.message } }
          : { id: job.id, error: (err as Error).stack ?? String(err) }
  }
  parentPort!.postMessage(reply)
})

// A worker's first batches would run before the JIT has compiled the scanner: a short scan of every
// common column kind at start-up does that while the roller leases its sinks.
function warmUp(): void {
  const kinds = ['boolean', 'int', 'long', 'double', 'decimal(18, 2)', 'date', 'timestamptz', 'string']
  const fields = kinds.map((type, i) => ({ id: i + 1, name: `c${i}`, required: false, type }))
  const scanner = new Scanner({ type: 'struct', 'schema-id': 0, fields }, { formatVersion: 2 })
  const values = (i: number) => [
    i % 2 === 0,
    i,
    9_000_000_000_000_000 + i,
    i / 7,
    `${i}.25`,
    `"2026-11-${10 + (i % 20)}"`,
    `"2026-11-30T12:34:56.${String(i % 1_000_000).padStart(6, '0')}Z"`,
    `"name-${i}"`,
  ]
  const lines = Array.from(
    { length: 5_000 },
    (_, i) =>
      `{${values(i)
        .map((v, k) => `"c${k}": ${v}`)
        .join(', ')}}`,
  )
  scanner.scan(new TextEncoder().encode(lines.join('\n')))
}

warmUp()
parentPort!.postMessage('ready')
