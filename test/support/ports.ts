// Ports for the servers a test starts itself (a second Worker, a REST catalog, the roller's /metrics),
// and an address nothing listens on.
//
// dev/ports.ts's freePort() asks the kernel for port 0: that port comes from the ephemeral range, the
// one the kernel also gives every outgoing connection. Between freePort() and the server's own bind
// (seconds for wrangler or a JVM) any connection of the run may take it, and two calls may answer the
// same port. The ports here are below the ephemeral range (no connection is ever given one), checked
// bindable one by one, and never handed out twice by one test file.
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { freePort } from '../../dev/ports.ts'
import { laneOf } from '../lanes.ts'

/**
 * host:port where nothing listens: port 1 is privileged (no server of the tests binds it, an unprivileged
 * process cannot) and never the local port of a connection (so no self-connect): a connect is refused at once.
 */
export const DEAD_HOST_PORT = '127.0.0.1:1'

const handedOut = new Set<number>()

/** Whether a loopback port can be bound now (checked by binding it). */
export const bindable = (port: number): Promise<boolean> =>
  new Promise<boolean>((resolve) => {
    const srv = createServer()
    srv.once('error', () => resolve(false))
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)))
  })

function ephemeralLow(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])
  } catch {
    return 32768 // Linux's default when /proc is not there
  }
}

// One search at a time, so that concurrent callers (Promise.all) never pick the same port.
let queue: Promise<unknown> = Promise.resolve()
const serially = <T>(fn: () => Promise<T>): Promise<T> => {
  const next = queue.then(fn, fn)
  queue = next.catch(() => undefined)
  return next
}

/**
 * `length` consecutive loopback ports, each bindable now, below the ephemeral range (and above 10000),
 * none handed out before by this file; answers the first. For the dev stack (LHBOX_DEV_PORT and up).
 */
export function freePortRun(length: number): Promise<number> {
  return serially(() => searchRun(length))
}

/**
 * The part of [10000, the ephemeral range) this process searches: the lower half for lane 1, the upper
 * for lane 2 (test/lanes.ts), so that the two lanes' servers never pick one port; all of it otherwise.
 */
function searchRange(length: number): { low: number; top: number } {
  const low = 10_000
  const top = Math.min(ephemeralLow(), 32_768) - length
  const lane = laneOf()
  if (lane === undefined) return { low, top }
  const mid = Math.floor((low + top) / 2)
  return lane === 1 ? { low, top: mid - length } : { low: mid, top }
}

async function searchRun(length: number): Promise<number> {
  const { low, top } = searchRange(length)
  if (top <= low) throw new Error(`no room below the ephemeral range (it starts at ${ephemeralLow()}) for ${length} ports`)
  for (let tries = 0; tries < 500; tries++) {
    const base = low + Math.floor(Math.random() * (top - low))
    let free = true
    for (let offset = 0; offset < length && free; offset++) free = !handedOut.has(base + offset) && (await bindable(base + offset))
    if (free) {
      for (let offset = 0; offset < length; offset++) handedOut.add(base + offset)
      return base
    }
  }
  throw new Error(`no run of ${length} free loopback ports below the ephemeral range`)
}

/** `n` distinct free loopback ports for servers a test starts (see above); freePort()'s where there is no room below the range. */
export function freePorts(n: number): Promise<number[]> {
  return serially(async () => {
    const ports: number[] = []
    const roomBelow = Math.min(ephemeralLow(), 32_768) > 11_000
    while (ports.length < n) {
      const port = roomBelow ? await searchRun(1) : await freePort()
      if (!roomBelow && handedOut.has(port)) continue
      handedOut.add(port)
      ports.push(port)
    }
    return ports
  })
}
