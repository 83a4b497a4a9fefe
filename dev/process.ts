// Child processes of the stack: started with their logs in the state folder, stopped together.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process'
import { closeSync, openSync } from 'node:fs'
import { userInfo } from 'node:os'
import { execFileSync } from 'node:child_process'

export interface Child {
  name: string
  proc: ChildProcess
  stop(): Promise<void>
}

/** Postgres and pgbouncer refuse to run as root; when we are root they run as the `postgres` user. */
export function serviceUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim())
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim())
    return { uid, gid }
  } catch {
    throw new Error(`running as ${userInfo().username}: Postgres needs a non-root user; create a 'postgres' user (apt-get install postgresql does)`)
  }
}

export function startChild(name: string, cmd: string, args: string[], logFile: string, opts: SpawnOptions = {}): Child {
  // The log is the child's own stdout and stderr, not a pipe through us: wrangler's workerd inherits
  // them and may write after wrangler exits, which a piped stream we had ended would throw on.
  const log = openSync(logFile, 'a')
  let proc: ChildProcess
  try {
    proc = spawn(cmd, args, { stdio: ['ignore', log, log], ...opts })
  } finally {
    closeSync(log)
  }
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
  return {
    name,
    proc,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return
      proc.kill('SIGTERM')
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5000)
      await exited
      clearTimeout(timer)
    },
  }
}

export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 30_000, child?: Child): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child && (child.proc.exitCode !== null || child.proc.signalCode !== null)) {
      throw new Error(`${what}: ${child.name} exited (code ${child.proc.exitCode}); see its log in the state folder`)
    }
    if (await check().catch(() => false)) return
    await new Promise((r) => setTimeout(r, 100))
  }
  // A child that never became ready is stopped: nobody else holds it, and it would outlive the run.
  await child?.stop()
  throw new Error(`${what}: not ready after ${timeoutMs} ms`)
}
