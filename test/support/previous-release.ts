// The previous release (test/upgrade/previous-release.txt) built once into ~/.cache/lhbox/upgrade/<commit>/:
// its sources by `git archive` (src/), its roller and Node edge bundled by esbuild as dev/roller.ts
// bundles today's (roller.mjs beside scan-worker.cjs, edge.mjs), and its migrations for the test to apply.
// Its packages: today's node_modules when its package-lock.json is today's (a link, made again each run,
// so the cache follows the clone), else its own `npm ci` in src/. Later runs reuse the build.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const root = fileURLToPath(new URL('../..', import.meta.url))
const cacheRoot = () => join(process.env.LHBOX_CACHE ?? join(homedir(), '.cache', 'lhbox'), 'upgrade')

export interface PreviousRelease {
  commit: string
  /** node <roller> run | tick …: its roller/main.ts. */
  roller: string
  /** node <edge>: its edge/node-main.ts. */
  edge: string
  /** Its db/migrations, for drizzle's migrator. */
  migrations: string
  /** Whether it runs on today's packages (the same package-lock.json) or its own. */
  packages: 'shared' | 'own'
}

/** The pinned commit: the first line of previous-release.txt that is not a comment. */
function previousReleaseCommit(): string {
  const text = readFileSync(join(root, 'test', 'upgrade', 'previous-release.txt'), 'utf8')
  const line = text.split('\n').find((l) => l.trim() && !l.startsWith('#'))
  if (!line || !/^[0-9a-f]{40}$/.test(line.trim())) throw new Error('test/upgrade/previous-release.txt: no full commit hash')
  return line.trim()
}

const git = (args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })

/** Makes sure the commit is in this clone: a shallow clone fetches it from origin, else a clear error. */
function haveCommit(commit: string): void {
  const present = () => {
    try {
      git(['cat-file', '-e', `${commit}^{commit}`])
      return true
    } catch {
      return false
    }
  }
  if (present()) return
  try {
    git(['fetch', '--quiet', '--no-tags', '--depth=1', 'origin', commit])
  } catch (err) {
    const shallow = git(['rev-parse', '--is-shallow-repository']).trim() === 'true'
    throw new Error(
      `the previous release ${commit} is not in this clone${shallow ? ' (a shallow clone)' : ''} and fetching it from origin failed: ` +
        `clone with full history (git fetch --unshallow) or move test/upgrade/previous-release.txt. ${(err as Error).message}`,
    )
  }
  if (!present()) throw new Error(`the previous release ${commit}: fetched, still not in this clone`)
}

/** The bundles, built now unless a finished build is in the cache. */
export async function previousRelease(): Promise<PreviousRelease> {
  const commit = previousReleaseCommit()
  const dir = join(cacheRoot(), commit)
  const done = join(dir, 'built.json')
  // A build on shared packages holds only while today's lock file is still its own: built again if not.
  if (!existsSync(done) || (builtWith(done) === 'shared' && !sameLock(join(dir, 'src')))) await buildInto(commit, dir)
  const packages = builtWith(done)
  if (packages === 'shared') linkModules(dir, join(root, 'node_modules'))
  return { commit, roller: join(dir, 'roller.mjs'), edge: join(dir, 'edge.mjs'), migrations: join(dir, 'src', 'db', 'migrations'), packages }
}

const builtWith = (done: string) => (JSON.parse(readFileSync(done, 'utf8')) as { packages: 'shared' | 'own' }).packages

/** Whether the sources in `src` have today's package-lock.json (then their bundles run on today's packages). */
const sameLock = (src: string) => readFileSync(join(src, 'package-lock.json'), 'utf8') === readFileSync(join(root, 'package-lock.json'), 'utf8')

/** dir/node_modules → `target`: where the bundles' external packages (DuckDB, the zstd wasm) resolve from. */
function linkModules(dir: string, target: string): void {
  const link = join(dir, 'node_modules')
  rmSync(link, { force: true, recursive: false })
  symlinkSync(target, link, 'dir')
}

async function buildInto(commit: string, dir: string): Promise<void> {
  haveCommit(commit)
  // Built beside, then renamed into place: a run cut off half way leaves no half build to reuse.
  const tmp = `${dir}.tmp-${process.pid}`
  rmSync(tmp, { recursive: true, force: true })
  mkdirSync(join(tmp, 'src'), { recursive: true })
  try {
    execFileSync('bash', ['-o', 'pipefail', '-c', `git archive ${commit} | tar -x -C ${JSON.stringify(join(tmp, 'src'))}`], { cwd: root, stdio: 'pipe' })
    const same = sameLock(join(tmp, 'src'))
    if (same) linkModules(tmp, join(root, 'node_modules'))
    else {
      execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: join(tmp, 'src'), stdio: 'pipe' })
      linkModules(tmp, join(tmp, 'src', 'node_modules'))
    }
    await bundle(join(tmp, 'src'), tmp)
    writeFileSync(join(tmp, 'built.json'), `${JSON.stringify({ commit, packages: same ? 'shared' : 'own', built_at: new Date().toISOString() })}\n`)
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(cacheRoot(), { recursive: true })
    renameSync(tmp, dir)
    // An own node_modules moved with the folder; the link to it is made again from its new place.
    if (!same) linkModules(dir, join(dir, 'src', 'node_modules'))
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
}

/** The same bundles as dev/roller.ts makes of today's roller, plus the Node edge. */
async function bundle(src: string, out: string): Promise<void> {
  const common = { bundle: true, platform: 'node', target: 'node20', logLevel: 'error', absWorkingDir: src } as const
  // The CommonJS packages inside (pg, prom-client) require Node's modules.
  const banner = { js: "import { createRequire as bundleRequire } from 'node:module'; const require = bundleRequire(import.meta.url);" }
  await Promise.all([
    build({
      ...common,
      entryPoints: [join(src, 'roller', 'main.ts')],
      format: 'esm',
      // DuckDB is a native addon and the zstd wasm reads its file beside its module: both from node_modules.
      external: ['@bokuweb/zstd-wasm', 'esbuild', '@duckdb/node-api'],
      banner,
      outfile: join(out, 'roller.mjs'),
    }),
    // scan-pool.ts looks for scan-worker.cjs beside the module it was bundled into.
    build({ ...common, entryPoints: [join(src, 'roller', 'scan-worker.ts')], format: 'cjs', outfile: join(out, 'scan-worker.cjs') }),
    build({ ...common, entryPoints: [join(src, 'edge', 'node-main.ts')], format: 'esm', banner, outfile: join(out, 'edge.mjs') }),
  ])
}
