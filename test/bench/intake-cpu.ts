// bench:intake's CPU account: the CPU time (/proc/<pid>/stat, utime + stime) of each process of the
// bench's own stack, by part, over each run, so a side's figure can be put beside what every part
// spent while it ran: the edge serving it (workerd and wrangler's Node), the other edges (idle, or
// still finishing a previous side's work), Postgres (backends, autovacuum, the background writers),
// pgbouncer, the S3 server and this process (autocannon, the WebSocket bridge, the delaying proxies).
// Only this stack's processes: this process's descendants and the Postgres cluster in its folder
// (pg_ctl detaches it), so other work on the box is left out. Linux only; elsewhere it reports nothing.
import { readdirSync, readFileSync } from 'node:fs'
import type pg from 'pg'

const TICK_MS = 10 // USER_HZ is 100 on Linux

interface Proc {
  pid: number
  ppid: number
  ticks: number
  /** CPU of children this process has reaped (the postmaster's exited backends and workers). */
  reaped: number
  cmd: string
}

function procs(): Map<number, Proc> {
  const out = new Map<number, Proc>()
  let pids: string[] = []
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d))
  } catch {
    return out
  }
  for (const d of pids) {
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8')
      // The command name is in parentheses and may hold spaces: fields count from after it.
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8').replaceAll('\0', ' ')
      out.set(Number(d), { pid: Number(d), ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]), reaped: Number(f[13]) + Number(f[14]), cmd })
    } catch {
      /* gone meanwhile */
    }
  }
  return out
}

/** CPU ms by part at one instant, and Postgres's own counters. */
export interface CpuSample {
  at: number
  ms: Map<string, number>
  perPid: Map<number, number>
  pg: { autovacuums: number; autoanalyzes: number; checkpoints: number; deadTuples: number }
}

export class CpuWatch {
  /** `edges`: wrangler dev's --port of each edge → its name in the account. */
  constructor(
    private readonly stackDir: string,
    private readonly edges: Map<number, string>,
    private readonly db: pg.Client,
  ) {}

  private part(p: Proc, all: Map<number, Proc>): string {
    if (p.pid === process.pid) return 'bench process'
    if (p.cmd.startsWith('postgres: ')) {
      if (p.cmd.includes('autovacuum')) return 'pg autovacuum'
      if (/checkpointer|background writer|walwriter/.test(p.cmd)) return 'pg writers'
      if (/postgres: \S+ \S+ 127\.0\.0\.1/.test(p.cmd)) return 'pg backends'
      return 'pg other'
    }
    if (p.cmd.includes(' -D ') && p.cmd.includes(this.stackDir)) return 'pg postmaster'
    if (p.cmd.includes('pgbouncer')) return 'pgbouncer'
    if (p.cmd.includes('versitygw') || p.cmd.includes('s3rver')) return 's3'
    // An edge: its wrangler dev process (the --port) or anything under it.
    for (let q: Proc | undefined = p; q; q = all.get(q.ppid)) {
      const port = /\bdev\b.* --port (\d+)/.exec(q.cmd)?.[1]
      if (port && this.edges.has(Number(port))) {
        const kind = p.cmd.includes('workerd') ? 'workerd' : p.cmd.includes('esbuild') ? 'esbuild' : 'wrangler'
        return `${this.edges.get(Number(port))} ${kind}`
      }
    }
    return 'other'
  }

  async sample(): Promise<CpuSample> {
    const all = procs()
    const mine = new Set<number>()
    for (const p of all.values()) {
      // This process's descendants, and the cluster in the stack's folder with its children.
      for (let q: Proc | undefined = p; q; q = all.get(q.ppid)) {
        if (q.pid === process.pid || (q.cmd.includes(' -D ') && q.cmd.includes(this.stackDir) && /postgres/.test(q.cmd))) {
          mine.add(p.pid)
          break
        }
        if (q.ppid <= 1) break
      }
    }
    const ms = new Map<string, number>()
    const perPid = new Map<number, number>()
    for (const pid of mine) {
      const p = all.get(pid)!
      const part = this.part(p, all)
      const own = p.ticks * TICK_MS
      perPid.set(pid, own)
      ms.set(`${part}\t${pid}`, own)
      if (part === 'pg postmaster') ms.set(`pg exited\t${pid}`, p.reaped * TICK_MS)
    }
    const { rows } = await this.db.query<{ av: string; aa: string; cp: string; dead: string }>(
      `select (select coalesce(sum(autovacuum_count), 0) from pg_stat_user_tables) as av,
              (select coalesce(sum(autoanalyze_count), 0) from pg_stat_user_tables) as aa,
              (select checkpoints_timed + checkpoints_req from pg_stat_bgwriter) as cp,
              (select coalesce(sum(n_dead_tup), 0) from pg_stat_user_tables) as dead`,
    )
    const r = rows[0]
    return {
      at: performance.now(),
      ms,
      perPid,
      pg: { autovacuums: Number(r.av), autoanalyzes: Number(r.aa), checkpoints: Number(r.cp), deadTuples: Number(r.dead) },
    }
  }
}

/** CPU ms by part between two samples (a process born between them counts from zero). */
function spent(a: CpuSample, b: CpuSample): Map<string, number> {
  const out = new Map<string, number>()
  for (const [key, ms] of b.ms) {
    const part = key.slice(0, key.indexOf('\t'))
    const before = a.ms.get(key) ?? 0
    out.set(part, (out.get(part) ?? 0) + Math.max(0, ms - before))
  }
  return out
}

/** One line: each part's CPU ms over the span (largest first), the span's length and Postgres's counters. */
export function spentText(a: CpuSample, b: CpuSample): string {
  const parts = [...spent(a, b)].filter(([, ms]) => ms > 0).sort((x, y) => y[1] - x[1])
  const pgd = `autovacuum +${b.pg.autovacuums - a.pg.autovacuums}, autoanalyze +${b.pg.autoanalyzes - a.pg.autoanalyzes}, checkpoints +${b.pg.checkpoints - a.pg.checkpoints}, dead tuples ${b.pg.deadTuples}`
  return `${((b.at - a.at) / 1000).toFixed(1)} s: ${parts.map(([p, ms]) => `${p} ${ms}`).join(', ')} (CPU ms); ${pgd}`
}

/** CPU ms an edge's esbuild spent between two samples, the most of any edge: a rebuild of the Worker (its watch alone is ~10 ms a second). */
export function rebuildMs(a: CpuSample, b: CpuSample): number {
  return Math.max(0, ...[...spent(a, b)].filter(([part]) => part.endsWith(' esbuild')).map(([, ms]) => ms))
}

/**
 * Waits until the stack's processes are idle: under `quietMs` of CPU, all parts together, in each of
 * two 250 ms windows in a row (at most `maxMs`); answers the seconds waited. So no run starts while
 * the one before is still being finished anywhere (a request cut off at its end, a rebuild, Postgres).
 */
export async function settle(watch: CpuWatch, quietMs = 25, maxMs = 15_000): Promise<number> {
  const t0 = performance.now()
  let prev = await watch.sample()
  let quiet = 0
  while (quiet < 2 && performance.now() - t0 < maxMs) {
    await new Promise((r) => setTimeout(r, 250))
    const next = await watch.sample()
    const total = [...spent(prev, next)].filter(([part]) => part !== 'bench process').reduce((a, [, ms]) => a + ms, 0)
    quiet = total < quietMs ? quiet + 1 : 0
    prev = next
  }
  return (performance.now() - t0) / 1000
}
