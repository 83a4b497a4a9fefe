// CPU time per stage of a roll (GET, scan, encode, compress, commit), asked for with
// LHBOX_ROLL_STAGE_CPU=1 (bench:roll sets it). Node 20 has no per-thread CPU clock (Node 23's
// process.threadCpuUsage), but Linux keeps each thread's own CPU time in
// /proc/thread-self/schedstat (its first field, ns). The file is opened once per thread (thread-self
// names the thread that opens it) and re-read at offset 0: 4–6 µs a read here (19 at load 13), against
// ~75 µs for a readFileSync; a roll reads it a few times per batch and per page.
import { openSync, readSync } from 'node:fs'

export const STAGES = ['get', 'scan', 'encode', 'compress', 'commit'] as const
export type Stage = (typeof STAGES)[number]

let fd: number | null | undefined
const buf = Buffer.alloc(64)

/** This thread's CPU time in ns; null where Linux's per-thread schedstat is not there. */
export function threadCpuNs(): number | null {
  if (fd === undefined) {
    try {
      fd = openSync('/proc/thread-self/schedstat', 'r')
    } catch {
      fd = null
    }
  }
  if (fd === null) return null
  // The file shows the thread's runtime as of the scheduler's last look at it: up to a tick (4 ms)
  // old while the thread runs, so a short stage's time landed in whichever stage next woke a thread
  // (a postMessage, a socket). getrusage(RUSAGE_SELF), which process.cpuUsage() is, brings the
  // calling thread's runtime up to date first (the kernel's thread_group_cputime): ~1 µs.
  process.cpuUsage()
  const n = readSync(fd, buf, 0, buf.length, 0)
  const space = buf.indexOf(32)
  return Number(buf.toString('latin1', 0, space > 0 && space < n ? space : n))
}

/**
 * One roll's CPU by stage. On the main thread a stage's time is its CPU across the call less what
 * stages measured inside it took (a compress inside an encode, an encode inside the commit of a
 * keyed roll); the scan threads' time comes in by add(). A disabled one only calls through.
 */
export class StageCpu {
  readonly ns: Record<Stage, number> = { get: 0, scan: 0, encode: 0, compress: 0, commit: 0 }
  /** ns this thread's measured stages have taken so far (what an enclosing stage leaves out) */
  private taken = 0
  /** this thread's clock when the roll began */
  private readonly began: number = 0

  constructor(readonly enabled: boolean) {
    const now = enabled ? threadCpuNs() : null
    if (now === null) this.enabled = false
    else this.began = now
  }

  /** A synchronous call's CPU on this thread, to `stage`. */
  run<T>(stage: Stage, fn: () => T): T {
    if (!this.enabled) return fn()
    const t0 = threadCpuNs()!
    const before = this.taken
    try {
      return fn()
    } finally {
      this.charge(stage, threadCpuNs()! - t0 - (this.taken - before))
    }
  }

  /**
   * An asynchronous step's CPU on this thread, to `stage`: everything this thread did meanwhile, so
   * only for a step nothing else of the roll runs beside (the roll's steps follow one another).
   */
  async around<T>(stage: Stage, fn: () => Promise<T>): Promise<T> {
    if (!this.enabled) return fn()
    const t0 = threadCpuNs()!
    const before = this.taken
    try {
      return await fn()
    } finally {
      this.charge(stage, threadCpuNs()! - t0 - (this.taken - before))
    }
  }

  /** CPU another thread spent for this roll (a scan thread's GET and scan). */
  add(stage: Stage, ns: number): void {
    this.ns[stage] += ns
  }

  /**
   * The roll's page codecs with every compressor's calls counted as `compress`: one codec
   * ({ codec, compress }) or a set made by level ({ zstd(level), gzip(level) }); anything else as it is.
   */
  codecs<T>(c: T): T {
    if (!this.enabled || typeof c !== 'object' || c === null) return c
    const o = c as Record<string, unknown>
    if (typeof o.compress === 'function') {
      const compress = o.compress as (input: Uint8Array) => Uint8Array
      return { ...o, compress: (input: Uint8Array) => this.run('compress', () => compress(input)) } as T
    }
    const wrapped = Object.entries(o).map(([k, v]) => [k, typeof v === 'function' ? (...args: unknown[]) => this.codecs(v(...args)) : v])
    return Object.fromEntries(wrapped) as T
  }

  /**
   * ms per stage, for the 'rolled' log line, and `main_rest`: what this (the main) thread spent in
   * the roll outside them (loading the table, listing, reporting, deleting the batches).
   */
  ms(): Record<Stage | 'main_rest', number> {
    const ms = (ns: number) => Math.round(ns / 1e5) / 10
    const rest = this.enabled ? threadCpuNs()! - this.began - this.taken : 0
    return { ...(Object.fromEntries(STAGES.map((s) => [s, ms(this.ns[s])])) as Record<Stage, number>), main_rest: ms(rest) }
  }

  private charge(stage: Stage, ns: number): void {
    this.ns[stage] += ns
    this.taken += ns
  }
}

/** For a roll nobody asked to measure: every call goes straight through. */
export const UNMEASURED = new StageCpu(false)
