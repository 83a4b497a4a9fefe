// The soak's roller services: `count` of them on the same sinks; every 20–60 s one picked at random is
// SIGKILLed and restarted 0.5–3 s later. A roller that ends any other way (not killed, not stopped at
// the end) is a failure of the soak: the 30-minute run once lost its steady roller without a word.
import { rollerCommand } from '../../dev/roller.ts'
import { startChild, type Child } from '../../dev/process.ts'
import type { Stack } from '../../dev/stack.ts'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const between = (lo: number, hi: number) => lo + Math.random() * (hi - lo)

export interface SoakRollers {
  kills: () => number
  /** Ended by themselves, as lines for the report. */
  exits: string[]
  /** Stops the killer; every roller is running when it resolves. */
  stopKilling: () => Promise<void>
  stop: () => Promise<void>
}

export function startRollers(stack: Stack, count: number, log: (line: string) => void): SoakRollers {
  const env = (id: string): Record<string, string> => ({
    ...(process.env as Record<string, string>),
    LHBOX_URL: stack.apiUrl,
    LHBOX_BOOTSTRAP_SECRET: stack.bootstrapSecret,
    DATABASE_URL: stack.databaseUrl,
    S3_ACCESS_KEY_ID: stack.s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: stack.s3.secretAccessKey,
    LHBOX_ROLLER_ID: id,
    LHBOX_ROLLER_TICK_SECONDS: '2',
    // A killed roller's lease runs out soon, so another takes its sinks.
    LHBOX_ROLLER_LEASE_SECONDS: '30',
    LHBOX_ROLLER_SCAN_THREADS: '1',
    LHBOX_MAINTENANCE_HOURS: String(2 / 60),
    LHBOX_ROLLER_BACKOFF_MIN_MS: '100',
    LHBOX_ROLLER_BACKOFF_MAX_MS: '2000',
  })
  let stopping = false
  let killing = true
  let kills = 0
  const exits: string[] = []
  const start = (i: number, n: number): Child => {
    const id = `r${i}`
    const { cmd, args } = rollerCommand(['run'])
    const child = startChild(`roller-${id}`, cmd, args, `${stack.dir}/roller-${id}-${n}.log`, { env: env(id) })
    child.proc.once('exit', (code, signal) => {
      if (stopping || signal === 'SIGKILL') return
      exits.push(`roller ${id} (${n}) ended by itself: ${signal ?? `exit ${code}`} at ${new Date().toISOString()}`)
      log(exits.at(-1)!)
    })
    return child
  }
  const rollers = Array.from({ length: count }, (_, i) => start(i, 0))
  const killer = (async () => {
    while (killing) {
      await sleep(between(20_000, 60_000))
      if (!killing) break
      const i = Math.floor(Math.random() * count)
      rollers[i].proc.kill('SIGKILL')
      kills++
      await sleep(between(500, 3000))
      rollers[i] = start(i, kills)
    }
  })()
  return {
    kills: () => kills,
    exits,
    stopKilling: async () => {
      killing = false
      await killer
      rollers.forEach((r, i) => {
        if (r.proc.exitCode !== null || r.proc.signalCode !== null) rollers[i] = start(i, kills + 1 + i)
      })
    },
    stop: async () => {
      stopping = true
      killing = false
      await Promise.all(rollers.map((r) => r.stop()))
    },
  }
}
