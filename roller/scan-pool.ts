// Reading and scanning batches on every core: worker threads that GET a batch from the store, run the
// ingest scanner (iceberg/ingest) on its bytes and hand the column buffers back without copying them
// (transferred). The main thread keeps the Parquet encoding and the commit; on 2 cores a roll then
// reads and scans two batches at once while it encodes (measured in the README's Performance section).
// The GET is on the worker too: signing, receiving 150 KB bodies and handing them over cost the main
// thread more than the scan itself did (bench:roll's profile).
import { existsSync, readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { buildSync } from 'esbuild'
import type { EgressPolicy } from '../contract/egress-policy.ts'
import { BatchUnreadable, type ScannedBatch, type ScanOptions } from '../iceberg/ingest/scan.ts'
import { S3Error, type S3Config, type S3Head } from '../iceberg/io/s3.ts'
import { stringifyLossless } from '../iceberg/spec/json.ts'
import type { Schema, Value } from '../iceberg/spec/types.ts'

/** A batch read from the store and scanned; its `stamp` constant is the batch's arrival time. */
export interface ReadBatch {
  head: S3Head
  scanned: ScannedBatch
  /** asked for: the thread's CPU (ns) for this batch's GET and scan (roller/stage-cpu.ts) */
  cpu?: ThreadCpu
}

/** A scan thread's CPU in ns since its previous reply: its GET share and its scan. */
interface ThreadCpu {
  get: number
  scan: number
}

/** What a thread is started with: the entries of the policy its GETs connect under. */
export interface ScanThreadData {
  egress?: readonly string[]
}

/** What a worker answers for one job. */
export type ScanReply =
  | { id: number; ok: ScannedBatch; head: S3Head | null; cpu?: ThreadCpu }
  | { id: number; missing: true }
  | { id: number; unreadable: { message: string; lines: number | null } }
  | { id: number; s3: { status: number; code: string; message: string } }
  | { id: number; error: string }

/** A job's outcome: null when the object to read does not exist. */
type Outcome = { scanned: ScannedBatch; head: S3Head | null; cpu?: ThreadCpu } | null

interface Job {
  resolve: (out: Outcome) => void
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

  /** `egress`: where the threads' GETs may connect (the roller's policy, contract/egress-connect.ts); unchecked without. */
  constructor(
    readonly size = Math.max(1, availableParallelism()),
    private readonly egress?: EgressPolicy,
  ) {}

  /** Scans one batch on a worker; the body's memory moves to the worker (the caller must not reuse it). */
  async scan(schema: Schema, opts: ScanOptions, body: Uint8Array, constants: Record<string, Value>): Promise<ScannedBatch> {
    // Only a whole ArrayBuffer can move; a view into a larger one is copied first.
    const own = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? body : body.slice()
    const out = await this.post({ schema: stringifyLossless(schema), opts, body: own, constants }, [own.buffer as ArrayBuffer])
    return out!.scanned
  }

  /**
   * GETs `key` and scans it on a worker, the constant `stamp` set to the batch's arrival
   * (x-amz-meta-received, else Last-Modified). Null when the object does not exist. `cpu`: the
   * answer says the thread's CPU for it.
   */
  async read(s3: S3Config, key: string, schema: Schema, opts: ScanOptions, stamp: string, cpu = false): Promise<ReadBatch | null> {
    const out = await this.post({ schema: stringifyLossless(schema), opts, read: { s3, key, stamp }, ...(cpu ? { cpu } : {}) }, [])
    return out && { head: out.head!, scanned: out.scanned, ...(out.cpu ? { cpu: out.cpu } : {}) }
  }

  private post(job: Record<string, unknown>, transfer: ArrayBuffer[]): Promise<Outcome> {
    if (this.closed) return Promise.reject(new Error('the scan pool is closed'))
    const w = this.pick()
    const id = ++this.ids
    return new Promise<Outcome>((resolve, reject) => {
      w.jobs.set(id, { resolve, reject })
      w.worker.ref()
      w.worker.postMessage({ id, ...job }, transfer)
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
    // A small young generation: a thread's garbage is mostly batch bodies, freed sooner by more
    // frequent scavenges (bench:roll: peak RSS 244 MiB against 289 MiB at V8's default, same speed).
    const workerData: ScanThreadData = { egress: this.egress?.entries }
    const worker = new Worker(workerScript(), { eval: true, workerData, resourceLimits: { maxYoungGenerationSizeMb: 4 } })
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
      if ('ok' in reply) job.resolve({ head: reply.head, scanned: reply.ok, cpu: reply.cpu })
      else if ('missing' in reply) job.resolve(null)
      else if ('unreadable' in reply) job.reject(new BatchUnreadable(reply.unreadable.message, reply.unreadable.lines))
      else if ('s3' in reply) job.reject(new S3Error(reply.s3.status, reply.s3.code, reply.s3.message))
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

let script: string | null = null

/**
 * The worker's code as one script: prebuilt beside a bundled roller, else bundled once per process
 * from scan-worker.ts by esbuild (which tsx runs on). A thread then starts without a TypeScript loader
 * of its own. Measured on 2 threads: ready in 0.2 s and 45 MiB, against 0.8 s, 1 CPU-second and
 * 91 MiB with tsx registered in each.
 */
function workerScript(): string {
  if (script) return script
  // A bundled roller (dev/roller.ts buildRollerBundle) has it beside itself.
  const prebuilt = fileURLToPath(new URL('./scan-worker.cjs', import.meta.url))
  script = existsSync(prebuilt)
    ? readFileSync(prebuilt, 'utf8')
    : buildSync({
        entryPoints: [fileURLToPath(new URL('./scan-worker.ts', import.meta.url))],
        bundle: true,
        format: 'cjs',
        platform: 'node',
        target: 'node20',
        write: false,
        logLevel: 'error',
      }).outputFiles[0].text
  return script
}
