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

parentPort!.postMessage('ready')
