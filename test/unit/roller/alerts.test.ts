// The sink_lag alert rule, checked and unit-tested by Prometheus's own promtool (Debian's prometheus
// package; .ci/run installs it): roller/alerts.test.yml holds the series and the expected alerts.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)

async function promtool(...args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run('promtool', args, { cwd: new URL('../../../roller/', import.meta.url).pathname })
    return stdout + stderr
  } catch (err) {
    const e = err as { code?: string; stdout?: string; stderr?: string }
    if (e.code === 'ENOENT') throw new Error('promtool is missing: install Debian’s prometheus package (bash .ci/run does)')
    throw new Error(`promtool ${args.join(' ')} failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`)
  }
}

describe('roller/alerts.yml', () => {
  it('is a valid rule file', async () => {
    expect(await promtool('check', 'rules', 'alerts.yml')).toMatch(/SUCCESS: 1 rules found/)
  })

  it('fires sink_lag at 3 x roll_seconds after a minute, once per sink across rollers, and resolves when drained', async () => {
    expect(await promtool('test', 'rules', 'alerts.test.yml')).toMatch(/SUCCESS/)
  })
})
