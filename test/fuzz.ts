// npm run fuzz -- [--runs N] [--seed S] — the intake's property tests (test/unit/edge/*.fuzz.test.ts),
// run longer than the bounded run `npm test` makes (300 per property). Stops by itself: N is a count.
import { spawnSync } from 'node:child_process'
import { parseArgs } from 'node:util'

const { values } = parseArgs({ options: { runs: { type: 'string', default: '20000' }, seed: { type: 'string' } } })
if (!/^[1-9]\d*$/.test(values.runs)) throw new Error('usage: npm run fuzz -- [--runs N] [--seed S]')
const env = { ...process.env, FUZZ_RUNS: values.runs, ...(values.seed ? { FUZZ_SEED: values.seed } : {}) }
const run = spawnSync('npx', ['vitest', 'run', '--project', 'unit', 'test/unit/edge/split.fuzz.test.ts', '--testTimeout', '0'], { stdio: 'inherit', env })
process.exit(run.status ?? 1)
