// `lhbox` as a person runs it: a child process, configured from the environment (the integration
// stack, its admin key unless given), stdin from `input`. It runs cli/main.ts bundled once per test
// process by esbuild rather than bin/lhbox.js, which loads the same code through tsx's loader: that
// costs about 0.5 CPU-seconds a run, and the suite runs the CLI about a hundred times. bin/lhbox.js
// itself is run by cli.test.ts and mcp.test.ts.
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { buildSync } from 'esbuild'
import { stack } from './stack.ts'

let bundle: string | undefined

/** cli/main.ts and its imports in one script, packages left to node_modules (the script lies below it), named by its hash. */
function cliBundle(): string {
  if (!bundle) {
    const root = resolve(import.meta.dirname, '../..')
    const built = buildSync({
      stdin: { contents: "import { main } from './cli/main.ts'\nprocess.exitCode = await main(process.argv.slice(2))\n", resolveDir: root, loader: 'ts' },
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      write: false,
      outfile: 'cli.mjs',
      logLevel: 'warning',
    }).outputFiles[0].contents
    const dir = join(root, 'node_modules', '.cache', 'lhbox-cli')
    const file = join(dir, `cli-${createHash('sha256').update(built).digest('hex').slice(0, 16)}.mjs`)
    if (!existsSync(file)) {
      mkdirSync(dir, { recursive: true })
      // Written aside and renamed: another test process may be reading the same name.
      const aside = `${file}.${process.pid}`
      writeFileSync(aside, built)
      renameSync(aside, file)
    }
    bundle = file
  }
  return bundle
}

export interface Run {
  code: number
  stdout: string
  stderr: string
}

export function lhbox(
  args: string[],
  opts: { env?: Record<string, string | undefined>; input?: string; onStderr?: (soFar: string) => void } = {},
): Promise<Run> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    LHBOX_URL: stack().apiUrl,
    LHBOX_API_KEY: stack().adminKey,
    LHBOX_SEND_KEY: undefined,
    ...opts.env,
  }
  for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k]
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliBundle(), ...args], { env: env as NodeJS.ProcessEnv })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => {
      stderr += d
      opts.onStderr?.(stderr)
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }))
    child.stdin.end(opts.input ?? '')
  })
}
