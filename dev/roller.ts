// The roller service as the stack runs it: `roller/main.ts run`, a child with its log in the state folder.
// Through tsx by default; from a bundle when LHBOX_ROLLER_BUNDLE names one (the integration tests
// start hundreds of short-lived rollers: a bundle loads in 0.25 s, through tsx's loader it takes 2 CPU-seconds).
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { startChild, type Child } from './process.ts'

const root = fileURLToPath(new URL('..', import.meta.url))

/** The environment variable naming a bundle buildRollerBundle wrote; rollerCommand runs it when set. */
export const ROLLER_BUNDLE_ENV = 'LHBOX_ROLLER_BUNDLE'

export function rollerCommand(args: string[]): { cmd: string; args: string[] } {
  const bundle = process.env[ROLLER_BUNDLE_ENV]
  if (bundle) return { cmd: process.execPath, args: [bundle, ...args] }
  return { cmd: process.execPath, args: ['--import', 'tsx', join(root, 'roller', 'main.ts'), ...args] }
}

/**
 * roller/main.ts as one ES module, packages included, and its scan worker as the script
 * roller/scan-pool.ts looks for beside it (scan-worker.cjs). Two packages stay imports: the zstd wasm
 * (it reads its .wasm file beside its own module) and esbuild (scan-pool's fallback, never called
 * here); they resolve from the repository's node_modules, which is why the bundle is written under
 * it. Measured: 0.25 s to load, against 0.5 s with every package an import. Returns the bundle's path.
 */
export async function buildRollerBundle(): Promise<string> {
  const out = join(root, 'node_modules', '.cache', 'lhbox', 'roller')
  const common = { bundle: true, platform: 'node', target: 'node20', logLevel: 'error' } as const
  await Promise.all([
    build({
      ...common,
      entryPoints: [join(root, 'roller', 'main.ts')],
      format: 'esm',
      // DuckDB is a native addon: it loads its own .node file from node_modules.
      external: ['@bokuweb/zstd-wasm', 'esbuild', '@duckdb/node-api'],
      // The CommonJS packages inside (pg, prom-client) require Node's modules.
      banner: { js: "import { createRequire as bundleRequire } from 'node:module'; const require = bundleRequire(import.meta.url);" },
      outfile: join(out, 'main.mjs'),
    }),
    build({ ...common, entryPoints: [join(root, 'roller', 'scan-worker.ts')], format: 'cjs', outfile: join(out, 'scan-worker.cjs') }),
  ])
  return join(out, 'main.mjs')
}

export function startRoller(stateDir: string, env: Record<string, string>): Child {
  const { cmd, args } = rollerCommand(['run'])
  return startChild('roller', cmd, args, join(stateDir, 'roller.log'), { cwd: root, env: { ...process.env, ...env } })
}
