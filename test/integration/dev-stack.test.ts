// `npm run dev` as a person runs it: ready with a URL and a key, healthz 200, the key works,
// SIGTERM leaves no process behind, and a restart keeps the data and the key.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createConnection, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

const dir = mkdtempSync(join(tmpdir(), 'lhbox-devstack-'))
let basePort = 0

/** Whether a loopback port can be bound now. */
const bindable = (port: number) =>
  new Promise<boolean>((resolve) => {
    const srv = createServer()
    srv.once('error', () => resolve(false))
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)))
  })

/**
 * Seven free ports in a row, below the kernel's ephemeral range: no client socket and no other
 * test's free port (the OS picks those from that range) can take one while the stack starts.
 */
async function freeRunBelowEphemeral(): Promise<number> {
  const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number)
  const top = Math.min(low, 32768) - 7
  for (let tries = 0; tries < 200; tries++) {
    const base = 10000 + Math.floor(Math.random() * (top - 10000))
    let free = true
    for (let offset = 0; offset <= 6 && free; offset++) free = await bindable(base + offset)
    if (free) return base
  }
  throw new Error('no run of 7 free loopback ports below the ephemeral range')
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
      if (/LHBOX_API_KEY=/.test(out)) resolve(out)
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
  const deadline = Date.now() + 20_000
  let open: number[] = []
  let left: string[] = []
  do {
    await new Promise((r) => setTimeout(r, 250))
    open = []
    for (let offset = 0; offset <= 6; offset++) if (await listening(basePort + offset)) open.push(basePort + offset)
    left = execFileSync('ps', ['-eo', 'args'])
      .toString()
      .split('\n')
      .filter((l) => l.includes(dir))
  } while ((open.length > 0 || left.length > 0) && Date.now() < deadline)
  expect(open).toEqual([])
  expect(left).toEqual([])
}

afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('npm run dev', () => {
  it('starts, serves, stops cleanly and restarts with the same data and key', async () => {
    basePort = await freeRunBelowEphemeral()
    const first = startDev()
    const out = await first.ready
    const env = readEnv()
    expect(out).toContain(`LHBOX_URL=${env.LHBOX_URL}`)
    expect(out).toContain(`LHBOX_API_KEY=${env.LHBOX_API_KEY}`)
    expect(Object.keys(env).sort()).toEqual([
      'DATABASE_URL',
      'LHBOX_API_KEY',
      'LHBOX_BOOTSTRAP_SECRET',
      'LHBOX_URL',
      'LHBOX_WAREHOUSE',
      'S3_ACCESS_KEY_ID',
      'S3_BUCKET',
      'S3_ENDPOINT',
      'S3_REGION',
      'S3_SECRET_ACCESS_KEY',
    ])
    expect((await fetch(`${env.LHBOX_URL}/healthz`)).status).toBe(200)
    const list = await fetch(`${env.LHBOX_URL}/v1/warehouses`, { headers: { authorization: `Bearer ${env.LHBOX_API_KEY}` } })
    expect(((await list.json()) as { warehouses: { name: string }[] }).warehouses.map((w) => w.name)).toEqual(['default'])

    await stopAndCheckNothingLeft(first.proc)

    const second = startDev()
    await second.ready
    const again = readEnv()
    expect(again.LHBOX_API_KEY).toBe(env.LHBOX_API_KEY)
    const relist = await fetch(`${again.LHBOX_URL}/v1/warehouses`, { headers: { authorization: `Bearer ${again.LHBOX_API_KEY}` } })
    expect(relist.status).toBe(200)
    expect(((await relist.json()) as { warehouses: { name: string }[] }).warehouses.map((w) => w.name)).toEqual(['default'])
    await stopAndCheckNothingLeft(second.proc)
  }, 180_000)
})
