// The client and the start of test/interop/fork_server.py: interop scripts run in forks of one Python
// that imported PyIceberg, PyArrow and DuckDB once, instead of a new interpreter per call (each paid
// about 2 CPU-seconds of imports, and the integration run makes hundreds of calls).
import { spawn, type ChildProcess } from 'node:child_process'
import { createConnection } from 'node:net'

/** The environment variable that names the server's socket; runPython uses the server when it is set. */
export const FORK_SOCKET_ENV = 'LHBOX_PY_FORK_SOCKET'

export interface ScriptRun {
  code: number | null
  stdout: string
  stderr: string
}

/** Starts fork_server.py (`server`) with `python` (the venv's) on `socketPath`; resolves once it listens. */
export async function startForkServer(python: string, server: string, socketPath: string): Promise<{ stop: () => Promise<void> }> {
  const child: ChildProcess = spawn(python, [server, socketPath], {
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d
      if (stderr.includes('ready\n')) resolve()
    })
    child.on('exit', (code) => reject(new Error(`fork_server.py exited with ${code} before it was ready:\n${stderr}`)))
    child.on('error', reject)
  })
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  }
}

/**
 * One script run by the server: `env` holds only the overrides (the server has the run's environment).
 * On a timeout the fork is killed and the run ends with code null, as a killed child would.
 */
export function runForked(
  socketPath: string,
  req: { script: string; args: string[]; env: Record<string, string>; input: string },
  timeoutMs: number,
): Promise<ScriptRun> {
  return new Promise((resolve, reject) => {
    const conn = createConnection(socketPath)
    let buf = ''
    let pid: number | undefined
    let answer: ScriptRun | undefined
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      if (pid) process.kill(pid, 'SIGKILL')
      conn.destroy()
    }, timeoutMs)
    conn.setEncoding('utf8')
    conn.on('connect', () => conn.write(`${JSON.stringify(req)}\n`))
    conn.on('data', (d: string) => {
      buf += d
      let nl: number
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = JSON.parse(buf.slice(0, nl))
        buf = buf.slice(nl + 1)
        if (pid === undefined) pid = line.pid
        else answer = line
      }
    })
    conn.on('error', (err) => {
      clearTimeout(timer)
      if (!timedOut) reject(err)
    })
    conn.on('close', () => {
      clearTimeout(timer)
      if (answer) resolve(answer)
      else resolve({ code: null, stdout: '', stderr: timedOut ? `killed after ${timeoutMs} ms` : 'the fork ended without an answer' })
    })
  })
}
