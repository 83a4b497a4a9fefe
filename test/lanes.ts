// The integration files run in two lanes at once (test/run.ts), each against a stack of its own: a
// lane's files share its stack and run one at a time, as before; the lanes share nothing but the
// machine. Lane 2 is the roller's and the readers' room (files that roll, sweep, run feeds or read
// tables back with other engines), lane 1 the edge's (its routes, on workerd and on Node, and the
// CLI) and the unit tests. A new file goes where its name puts it. The split was about even in a
// clean-clone run (lane 1 735 s with the unit tests, lane 2 636 s of files). A file that builds a
// cache (Maven's jars, the previous release) may sit in either: those builds write to a temp folder
// and rename it into place; the caches both lanes' setups need, test/run.ts builds first.
import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** Lane 2's files, by their names under test/integration/ (none under on-node/: those are the edge's). */
const LANE_2 =
  /^(roller|rollers|roll-|rolling-upgrade|keyed|maintenance|feeds|ledger|interop|parquet|manifest|delete-files|schema-change|storage-meter|rejects-retention|iceberg-rest|engine-recipes|rest-catalog|sink-with-table|python-fork)/

/** Which lane this vitest process runs (LHBOX_TEST_LANE), or undefined for all of them (one stack). */
export function laneOf(env: NodeJS.ProcessEnv = process.env): 1 | 2 | undefined {
  const v = env.LHBOX_TEST_LANE
  if (v === undefined || v === '') return undefined
  if (v !== '1' && v !== '2') throw new Error(`LHBOX_TEST_LANE is 1 or 2, not ${v}`)
  return Number(v) as 1 | 2
}

/** The integration project's include and exclude globs for a lane (every file when none is chosen). */
export function laneGlobs(lane: 1 | 2 | undefined): { include: string[]; exclude: string[] } {
  const all = 'test/integration/**/*.test.ts'
  const dir = fileURLToPath(new URL('./integration/', import.meta.url))
  const lane2 = readdirSync(dir)
    .filter((f) => f.endsWith('.test.ts') && LANE_2.test(f))
    .map((f) => `test/integration/${f}`)
  if (lane === 2) return { include: lane2, exclude: [] }
  if (lane === 1) return { include: [all], exclude: lane2 }
  return { include: [all], exclude: [] }
}
