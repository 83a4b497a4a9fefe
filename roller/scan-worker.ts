// One scan-pool thread (scan-pool.ts): scanners compiled per schema and kept for the next batch.
import { parentPort } from 'node:worker_threads'
import { BatchUnreadable, Scanner, type ScanOptions } from '../iceberg/ingest/scan.ts'
import { parseSchema } from '../iceberg/metadata.ts'
import type { Value } from '../iceberg/types.ts'
import { transferables, type ScanReply } from './scan-pool.ts'

interface ScanJob {
  id: number
  /** the table schema as lossless JSON (its write-defaults keep their exact digits) */
  schema: string
  opts: ScanOptions
  body: Uint8Array
  constants: Record<string, Value>
}

const KEPT = 8
const scanners = new Map<string, Scanner>()

function scannerFor(job: ScanJob): Scanner {
  const key = `${job.opts.formatVersion}|${(job.opts.constants ?? []).join(',')}|${job.schema}`
  let s = scanners.get(key)
  if (!s) {
    if (scanners.size >= KEPT) scanners.delete(scanners.keys().next().value!)
    scanners.set(key, (s = new Scanner(parseSchema(job.schema), job.opts)))
  }
  return s
}

parentPort!.on('message', (job: ScanJob) => {
  let reply: ScanReply
  try {
    const ok = scannerFor(job).scan(job.body, job.constants)
    parentPort!.postMessage({ id: job.id, ok } satisfies ScanReply, transferables(ok))
    return
  } catch (err) {
    reply = err instanceof BatchUnreadable
      ? { id: job.id, unreadable: { message: err.message, lines: err.lines } }
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
  const values = (i: number) => [i % 2 === 0, i, 9_000_000_000_000_000 + i, i / 7, `${i}.25`, `"2026-11-${10 + (i % 20)}"`, `"2026-11-30T12:34:56.${String(i % 1_000_000).padStart(6, '0')}Z"`, `"name-${i}"`]
  const lines = Array.from({ length: 5_000 }, (_, i) => `{${values(i).map((v, k) => `"c${k}": ${v}`).join(', ')}}`)
  scanner.scan(new TextEncoder().encode(lines.join('\n')))
}

warmUp()
parentPort!.postMessage('ready')
