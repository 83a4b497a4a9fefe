// Scanning batches on every core: worker threads that run the ingest scanner (iceberg/ingest) on a
// batch's bytes and hand the column buffers back without copying them (transferred). The main thread
// keeps the store's I/O and the Parquet encoding; on 2 cores a roll then scans two batches at once
// while it encodes (measured in the README's Performance section).
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import { BatchUnreadable, type ScannedBatch, type ScanOptions } from '../iceberg/ingest/scan.ts'
import { stringifyLossless } from '../iceberg/json.ts'
import type { Schema, Value } from '../iceberg/types.ts'

/** What a worker answers for one job. */
export type ScanReply =
  | { id: number; ok: ScannedBatch }
  | { id: number; unreadable: { message: string; lines: number | null } }
  | { id: number; error: string }

interface Job {
  resolve: (out: ScannedBatch) => void
  reject: (err: Error) => void
}

interface PoolWorker {
  worker: Worker
  jobs: Map<number, Job>
  /** resolves once the worker has loaded the scanner */
  ready: Promise<void>
}

export class ScanPool {
  private readonly workers: PoolWorker[] = []
  private next = 0
  private ids = 0
  private closed = false

  constructor(readonly size = Math.max(1, availableParallelism())) {}

  /** Scans one batch on a worker; the body's memory moves to the worker (the caller must not reuse it). */
  scan(schema: Schema, opts: ScanOptions, body: Uint8Array, constants: Record<string, Value>): Promise<ScannedBatch> {
    if (this.closed) return Promise.reject(new Error('the scan pool is closed'))
    const w = this.pick()
    const id = ++this.ids
    // Only a whole ArrayBuffer can move; a view into a larger one is copied first.
    const own = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? body : body.slice()
    return new Promise<ScannedBatch>((resolve, reject) => {
      w.jobs.set(id, { resolve, reject })
      w.worker.ref()
      w.worker.postMessage({ id, schema: stringifyLossless(schema), opts, body: own, constants }, [own.buffer as ArrayBuffer])
    })
  }

  /** Starts every worker now and waits until each has loaded its code, so no scan waits for start-up. */
  async warm(): Promise<void> {
    while (this.workers.length < this.size) this.start()
    await Promise.all(this.workers.map((w) => w.ready))
  }

  async close(): Promise<void> {
    this.closed = true
    await Promise.all(this.workers.map((w) => w.worker.terminate()))
    this.workers.length = 0
  }

  /** The least busy worker, started on first use. */
  private pick(): PoolWorker {
    if (this.workers.length < this.size) return this.start()
    let best = this.workers[this.next++ % this.workers.length]
    for (const w of this.workers) if (w.jobs.size < best.jobs.size) best = w
    return best
  }

  private start(): PoolWorker {
    // The worker is TypeScript like the rest: it inherits this process's loader (tsx) through execArgv.
    const worker = new Worker(new URL('./scan-worker.mjs', import.meta.url))
    let loaded = () => {}
    const ready = new Promise<void>((resolve) => (loaded = resolve))
    const w: PoolWorker = { worker, jobs: new Map(), ready }
    worker.unref()
    worker.on('message', (reply: ScanReply | 'ready') => {
      if (reply === 'ready') return loaded()
      const job = w.jobs.get(reply.id)
      if (!job) return
      w.jobs.delete(reply.id)
      if (w.jobs.size === 0) worker.unref() // an idle pool never keeps the process alive
      if ('ok' in reply) job.resolve(reply.ok)
      else if ('unreadable' in reply) job.reject(new BatchUnreadable(reply.unreadable.message, reply.unreadable.lines))
      else job.reject(new Error(`scan worker: ${reply.error}`))
    })
    const fail = (err: Error) => {
      loaded()
      for (const job of w.jobs.values()) job.reject(err)
      w.jobs.clear()
      this.workers.splice(this.workers.indexOf(w), 1)
    }
    worker.on('error', fail)
    worker.on('exit', (code) => code !== 0 && !this.closed && fail(new Error(`scan worker exited with ${code}`)))
    this.workers.push(w)
    return w
  }
}

/** The buffers of a scanned batch, each once: moved, not copied, back to the main thread. */
export function transferables(out: ScannedBatch): ArrayBuffer[] {
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
