// `npm test`'s runner: two vitest processes at once, each a lane (test/lanes.ts) with a stack of its
// own; lane 1 also runs the unit tests. Most of an integration file's time is spent waiting (for a
// roller child, a JVM, a Python fork, a poll), so two lanes on a 2-core machine take about the time
// of the longer one. Their output is shown as it comes, each line marked with its lane; the closing
// line CI reads ("N passed, N failed, N skipped") is the two lanes' sum, printed last.
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { buildRollerBundle, ROLLER_BUNDLE_ENV } from '../dev/roller.ts'
import { ensureVersitygw } from '../dev/s3.ts'
import { ensureVenv } from './support/python.ts'

interface Counts {
  passed: number
  failed: number
  skipped: number
}

const vitest = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs')
// A filter that matches no file of a lane is no failure of that lane.
const args = ['--passWithNoTests', ...process.argv.slice(2)]
const dir = mkdtempSync(join(tmpdir(), 'lhbox-lanes-'))

// What both lanes' setups would otherwise build at once into the same places: built here, once.
process.env[ROLLER_BUNDLE_ENV] = await buildRollerBundle()
await Promise.all([ensureVersitygw(), ensureVenv()])

function lane(n: 1 | 2, vitestArgs: string[]): Promise<Counts> {
  const countsFile = join(dir, `lane-${n}.json`)
  const child = spawn(process.execPath, [vitest, 'run', ...vitestArgs], {
    env: { ...process.env, LHBOX_TEST_LANE: String(n), LHBOX_TEST_COUNTS: countsFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  for (const stream of [child.stdout, child.stderr]) {
    let rest = ''
    stream.setEncoding('utf8')
    stream.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n')
      rest = lines.pop() ?? ''
      for (const line of lines) process.stdout.write(`[${n}] ${line}\n`)
    })
    stream.on('end', () => rest && process.stdout.write(`[${n}] ${rest}\n`))
  }
  return new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      // A lane that ended without its counts (it crashed, or was killed) or with an error code counts one failure.
      const counts: Counts = existsSync(countsFile) ? JSON.parse(readFileSync(countsFile, 'utf8')) : { passed: 0, failed: 0, skipped: 0 }
      if ((code !== 0 || signal) && counts.failed === 0) counts.failed = 1
      process.stdout.write(`[${n}] lane ${n} ended (${signal ?? `code ${code}`}): ${counts.passed} ok, ${counts.failed} not, ${counts.skipped} skipped\n`)
      resolve(counts)
    })
  })
}

const children: ReturnType<typeof spawn>[] = []
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => children.forEach((c) => c.kill(sig)))

const lanes = await Promise.all([lane(1, args), lane(2, ['--project', 'integration', ...args])])
rmSync(dir, { recursive: true, force: true })
const sum = (k: keyof Counts) => lanes.reduce((n, c) => n + c[k], 0)
process.stdout.write(`\n${sum('passed')} passed, ${sum('failed')} failed, ${sum('skipped')} skipped\n`)
process.exit(sum('failed') > 0 ? 1 : 0)
