// npm run roller -- run | tick [--force] [--sink ID] | maintain [--sink ID] | measure [--warehouse ID]
import { parseArgs } from 'node:util'
import { setGlobalDispatcher } from 'undici'
import { egressAgent } from '../contract/egress-connect.ts'
import { nodeTransport, useS3Agent } from '../iceberg/io/s3-node.ts'
import { useS3Transport } from '../iceberg/io/s3-transport.ts'
import { loadConfig } from './config.ts'
import { errorText, jsonLogger } from './log.ts'
import { createRoller } from './loop.ts'
import { RollerMetrics, serveMetrics } from './metrics.ts'
import { sqlCheckHandler } from './feeds/sql-check.ts'

/**
 * Crash points for the exactly-once tests: LHBOX_ROLLER_KILL_AT=<checkpoint>[:<n>] kills this
 * process with SIGKILL at the n-th time (default the first) it passes that step boundary: a roll's
 * (roller/roll.ts), a dedupe's (dedupe.ts: dedupe-files, dedupe-commit) or a sweep's (maintain.ts:
 * compact-commit, manifest-rewrite, expire, cleanup), in `tick`, `maintain` and `run` alike.
 */
function checkpointFromEnv(env: NodeJS.ProcessEnv): (name: string) => void {
  const [point, nth] = (env.LHBOX_ROLLER_KILL_AT ?? '').split(':')
  let seen = 0
  return (name) => {
    if (name === point && ++seen >= Number(nth || 1)) process.kill(process.pid, 'SIGKILL')
  }
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { force: { type: 'boolean' }, sink: { type: 'string' }, warehouse: { type: 'string' } },
  })
  const command = positionals[0]
  if (command !== 'run' && command !== 'tick' && command !== 'maintain' && command !== 'measure') {
    console.error('usage: npm run roller -- run | tick [--force] [--sink ID] | maintain [--sink ID] | measure [--warehouse ID]')
    return 2
  }
  const config = loadConfig()
  // Every request of this process (S3, REST catalogs, the edge) connects only where the policy allows.
  const agent = egressAgent(config.egress)
  setGlobalDispatcher(agent)
  useS3Agent(agent)
  useS3Transport(nodeTransport)
  const log = jsonLogger({ roller: config.rollerId })
  const metrics = new RollerMetrics()
  const roller = createRoller(config, log, metrics, checkpointFromEnv(process.env))

  if (command === 'tick') {
    const result = await roller.tick({ force: values.force, sink: values.sink })
    log.info('tick done', result)
    await roller.close()
    return result.failed > 0 ? 1 : 0
  }

  if (command === 'maintain') {
    const result = await roller.maintain({ sink: values.sink })
    log.info('maintenance done', result)
    await roller.close()
    return result.failed > 0 ? 1 : 0
  }

  if (command === 'measure') {
    const result = await roller.measure({ warehouse: values.warehouse })
    log.info('measure done', result)
    await roller.close()
    return result.failed > 0 ? 1 : 0
  }

  const server = config.metricsPort ? serveMetrics(metrics, config.metricsPort, sqlCheckHandler(config.bootstrapSecret)) : null
  let stopping = false
  let wake: () => void = () => undefined
  // SIGTERM: no new roll (or sweep of another table) starts, the current one finishes (every step is safe
  // to stop after anyway), and the sinks this tick leased but has not rolled are given back.
  const stopped = new AbortController()
  const stop = (signal: string) => {
    if (stopping) process.exit(0)
    stopping = true
    stopped.abort()
    log.info('stopping after the current roll', { signal })
    wake()
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
  log.info('roller running', { tick_seconds: config.tickSeconds, api: config.apiUrl })
  // The first sweep a minute after start (not at once: a restart loop should not sweep every time),
  // then every maintenance.everyHours.
  let nextMaintenance = Date.now() + Math.min(60_000, config.maintenance.everyHours * 3600_000)
  // The storage meter and the sweep run beside the ticks, one round of them at a time: a sweep of
  // thousands of tables takes long, and the due sinks must not wait for it (each table's sweep holds
  // its sink's lease and the large turn, so no roll of that table and no large roll overlaps it).
  const chores = async () => {
    await roller.measure({ signal: stopped.signal }).catch((err) => log.error('measure failed', { error: errorText(err) }))
    if (!stopping && Date.now() >= nextMaintenance) {
      nextMaintenance = Date.now() + config.maintenance.everyHours * 3600_000
      await roller.maintain({ signal: stopped.signal }).catch((err) => log.error('maintenance failed', { error: errorText(err) }))
    }
  }
  let choresRunning: Promise<void> | null = null
  while (!stopping) {
    choresRunning ??= chores().finally(() => {
      choresRunning = null
    })
    try {
      // A tick goes on leasing as slots free up for a minute at most, then ends: its gauges are set
      // from a fresh view, and the next tick starts.
      await roller.tick({ signal: stopped.signal, leaseForMs: Math.max(60_000, config.tickSeconds * 6000) })
    } catch (err) {
      log.error('tick failed', { error: errorText(err) })
    }
    // The wait holds the process (no unref): between ticks a roller may have nothing else open, and
    // node would end it in the middle of `run`, without a word (exit 13).
    await new Promise<void>((resolve) => {
      wake = resolve
      setTimeout(resolve, config.tickSeconds * 1000)
    })
  }
  // A sweep under way stops at its next table (the signal); the table it is on finishes and is released.
  await choresRunning
  server?.close()
  await roller.close()
  return 0
}

process.exitCode = await main(process.argv.slice(2))
