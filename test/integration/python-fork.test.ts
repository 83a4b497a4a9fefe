// The fork server the integration run starts for the interop scripts (test/interop/fork_server.py):
// a script run in a fork answers as the same script in a new interpreter does (argv, env, stdin,
// sys.path, exit code, stderr), each run starts from the freshly imported parent (no state passes
// from one run to the next), runs overlap, and a run past its timeout is killed.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, expect, it } from 'vitest'
import { FORK_SOCKET_ENV } from '../support/python-fork.ts'
import { ensureVenv, INTEROP_DIR, PythonError, runPython, toExact } from '../support/python.ts'

const dir = mkdtempSync(join(tmpdir(), 'lhbox-fork-'))
const script = (name: string, text: string) => {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

// Prints what it was given, and bumps a counter kept on a module the server imported before forking.
const probe = script(
  'probe.py',
  `import json, os, sys
import interop_common
interop_common.probe_runs = getattr(interop_common, "probe_runs", 0) + 1
print(json.dumps({"argv": sys.argv[1:], "env": os.environ.get("LHBOX_PROBE"), "stdin": sys.stdin.read(),
                  "path0": sys.path[0], "runs": interop_common.probe_runs, "name": __name__}))
`,
)

/** runPython without the server: a new interpreter, as outside the integration run. */
async function spawned<T>(fn: () => Promise<T>): Promise<T> {
  const socket = process.env[FORK_SOCKET_ENV]
  delete process.env[FORK_SOCKET_ENV]
  try {
    return await fn()
  } finally {
    process.env[FORK_SOCKET_ENV] = socket
  }
}

beforeAll(async () => {
  await ensureVenv()
}, 15 * 60_000)

it('the run has a fork server, and runPython uses it', () => {
  expect(process.env[FORK_SOCKET_ENV]).toMatch(/python\.sock$/)
})

it('a forked run answers as a new interpreter does; no state passes from one run to the next', async () => {
  const run = async () => toExact(await runPython(probe, ['a', 'b c'], { LHBOX_PROBE: 'p', PYTHONPATH: INTEROP_DIR }, { input: 'rows\n' }))
  const expected = { argv: ['a', 'b c'], env: 'p', stdin: 'rows\n', path0: dir, runs: 1n, name: '__main__' }
  const [first, second] = await Promise.all([run(), run()])
  expect(first).toEqual(expected)
  expect(second).toEqual(expected)
  expect(await run()).toEqual(expected)
  expect(await spawned(run)).toEqual(expected)
})

it('an exit code, a traceback and a bare sys.exit come back as from a new interpreter', async () => {
  const raises = script('raises.py', 'import sys\nsys.stderr.write("about to fail\\n")\nraise ValueError("no such table")\n')
  const exits = script('exits.py', 'import sys\nprint("partial")\nsys.exit(3)\n')
  for (const via of [(f: () => Promise<unknown>) => f(), spawned]) {
    const err: any = await via(() => runPython(raises, [])).catch((e) => e)
    expect(err).toBeInstanceOf(PythonError)
    expect({ code: err.code, stderr: err.stderr }).toEqual({ code: 1, stderr: expect.stringMatching(/about to fail\n[\s\S]*ValueError: no such table/) })
    const exit: any = await via(() => runPython(exits, [])).catch((e) => e)
    expect({ code: exit.code, stdout: exit.stdout }).toEqual({ code: 3, stdout: 'partial\n' })
  }
})

it('a run past its timeout is killed (code null), and the server goes on serving', async () => {
  const sleeps = script('sleeps.py', 'import time\ntime.sleep(120)\n')
  const err: any = await runPython(sleeps, [], undefined, { timeoutMs: 1000 }).catch((e) => e)
  expect(err).toBeInstanceOf(PythonError)
  expect(err.code).toBeNull()
  expect(toExact(await runPython(probe, [], { PYTHONPATH: INTEROP_DIR }))).toMatchObject({ runs: 1n })
})
