// `npm run dev` as a person runs it: ready with a URL and a key, healthz 200, the key works,
// SIGTERM leaves no process behind, and a restart keeps the data and the key.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createConnection } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { stackPorts } from '../../dev/ports.ts'
import { bindable, freePortRun } from '../support/ports.ts'

const dir = mkdtempSync(join(tmpdir(), 'lhbox-devstack-'))
let basePort = 0
/** The stack started and not yet stopped: afterAll stops it when an assertion failed in between. */
let running: ChildProcess | undefined

/** How many ports the stack takes from LHBOX_DEV_PORT up (postgres, pgbouncer, bridge, s3, api, inspector, roller). */
const PORTS = Object.keys(await stackPorts(1)).length

/** Whether each port of the stack's run at `base` can be bound now. */
async function runBindable(base: number): Promise<boolean> {
  for (let offset = 0; offset < PORTS; offset++) if (!(await bindable(base + offset))) return false
  return true
}

/** A start that failed because another process took one of the ports between our check and the bind. */
function portTaken(output: string): boolean {
  const files = [...readdirSync(dir).filter((f) => f.endsWith('.log')), join('pg', 'server.log')].map((f) => join(dir, f))
  const logs = files.filter((f) => existsSync(f)).map((f) => readFileSync(f, 'utf8'))
  return [output, ...logs].some((text) => /EADDRINUSE|address already in use/i.test(text))
}

/**
 * `npm run dev` on a run of free ports (checked one by one, below the ephemeral range): `reuse` (the
 * last run's ports, as a person restarting it would have) when they are all free again, else a new
 * run. A start that loses a port to another process in the moment between the check and the bind
 * tries again on another run (its state folder is the same: the data and the key do not depend on
 * the ports).
 */
async function startDevOnFreePorts(reuse?: number): Promise<{ proc: ChildProcess; out: string }> {
  for (let attempt = 1; ; attempt++) {
    basePort = reuse !== undefined && attempt === 1 && (await runBindable(reuse)) ? reuse : await freePortRun(PORTS)
    const dev = startDev()
    try {
      const out = await dev.ready
      running = dev.proc
      return { proc: dev.proc, out }
    } catch (err) {
      try {
        process.kill(-dev.proc.pid!, 'SIGTERM') // whatever of that start is left
      } catch {
        /* gone already */
      }
      if (attempt >= 3 || !portTaken((err as Error).message)) throw err
    }
  }
}

function startDev(): { proc: ChildProcess; ready: Promise<string> } {
  // Its own process group, signalled as a terminal's Ctrl-C or a supervisor's stop signals it.
  const proc = spawn('npm', ['run', 'dev'], {
    env: { ...process.env, LHBOX_DEV_DIR: dir, LHBOX_DEV_PORT: String(basePort) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  let out = ''
  const ready = new Promise<string>((resolve, reject) => {
    proc.stdout!.on('data', (chunk) => {
      out += chunk
      // The console's address is the last thing printed before the stack is ready.
      if (/console: \S+\/console/.test(out)) resolve(out)
    })
    proc.stderr!.on('data', (chunk) => (out += chunk))
    proc.once('exit', (code) => reject(new Error(`npm run dev exited ${code}:\n${out}`)))
  })
  return { proc, ready }
}

function readEnv(): Record<string, string> {
  const env: Record<string, string> = {}
  for (const m of readFileSync(join(dir, 'dev.env'), 'utf8').matchAll(/^export ([A-Z0-9_]+)='(.*)'$/gm)) env[m[1]] = m[2]
  return env
}

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = createConnection({ port, host: '127.0.0.1' })
    s.once('connect', () => {
      s.destroy()
      resolve(true)
    })
    s.once('error', () => resolve(false))
  })

// npm may exit before its child has stopped the stack: wait (bounded) until every port is closed
// and no process of this state folder is left.
async function stopAndCheckNothingLeft(proc: ChildProcess): Promise<void> {
  const exited = new Promise((r) => proc.once('exit', r))
  process.kill(-proc.pid!, 'SIGTERM')
  await exited
  running = undefined
  const deadline = Date.now() + 20_000
  let open: number[] = []
  let left: string[] = []
  do {
    await new Promise((r) => setTimeout(r, 250))
    open = []
    for (let offset = 0; offset < PORTS; offset++) if (await listening(basePort + offset)) open.push(basePort + offset)
    left = execFileSync('ps', ['-eo', 'args'])
      .toString()
      .split('\n')
      .filter((l) => l.includes(dir))
  } while ((open.length > 0 || left.length > 0) && Date.now() < deadline)
  expect(open).toEqual([])
  expect(left).toEqual([])
}

afterAll(async () => {
  if (running && running.exitCode === null && running.signalCode === null) {
    const exited = new Promise((r) => running!.once('exit', r))
    process.kill(-running.pid!, 'SIGTERM')
    await exited
  }
  rmSync(dir, { recursive: true, force: true })
}, 30_000)

describe('npm run dev', () => {
  it('starts, serves, stops cleanly and restarts with the same data and key', async () => {
    const first = await startDevOnFreePorts()
    const out = first.out
    const env = readEnv()
    expect(out).toContain(`LHBOX_URL=${env.LHBOX_URL}`)
    expect(out).toContain(`LHBOX_API_KEY=${env.LHBOX_API_KEY}`)
    expect(Object.keys(env).sort()).toEqual([
      'DATABASE_URL',
      'LHBOX_API_KEY',
      'LHBOX_BOOTSTRAP_SECRET',
      'LHBOX_SECRETS_KEY',
      'LHBOX_URL',
      'LHBOX_WAREHOUSE',
      'S3_ACCESS_KEY_ID',
      'S3_BUCKET',
      'S3_ENDPOINT',
      'S3_REGION',
      'S3_SECRET_ACCESS_KEY',
    ])
    expect((await fetch(`${env.LHBOX_URL}/healthz`)).status).toBe(200)
    // The console it prints opens, and the printed key signs in to it (the overview view).
    expect(out).toContain(`console: ${env.LHBOX_URL}/console`)
    expect((await fetch(`${env.LHBOX_URL}/console`)).headers.get('content-type')).toMatch(/^text\/html/)
    const overview = await fetch(`${env.LHBOX_URL}/console/f/overview`, { headers: { authorization: `Bearer ${env.LHBOX_API_KEY}` } })
    expect(overview.status).toBe(200)
    expect(await overview.text()).toContain('<td data-label="Warehouse">default</td>')
    const list = await fetch(`${env.LHBOX_URL}/v1/warehouses`, { headers: { authorization: `Bearer ${env.LHBOX_API_KEY}` } })
    expect(((await list.json()) as { warehouses: { name: string }[] }).warehouses.map((w) => w.name)).toEqual(['default'])

    await stopAndCheckNothingLeft(first.proc)

    const second = await startDevOnFreePorts(basePort)
    const again = readEnv()
    expect(again.LHBOX_API_KEY).toBe(env.LHBOX_API_KEY)
    const relist = await fetch(`${again.LHBOX_URL}/v1/warehouses`, { headers: { authorization: `Bearer ${again.LHBOX_API_KEY}` } })
    expect(relist.status).toBe(200)
    expect(((await relist.json()) as { warehouses: { name: string }[] }).warehouses.map((w) => w.name)).toEqual(['default'])
    await stopAndCheckNothingLeft(second.proc)
  }, 180_000)
})
