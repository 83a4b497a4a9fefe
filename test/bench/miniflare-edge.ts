// The Worker in workerd without wrangler dev's proxy: wrangler builds it as `wrangler deploy` would
// (--dry-run, offline), and Miniflare (wrangler's own runtime layer, the same workerd) serves that
// bundle on a loopback port. wrangler dev puts a second workerd in front of it (its ProxyWorker,
// which a reload can swap): one more HTTP hop on loopback, about 3 ms a request on these machines,
// that Cloudflare's network does not have. A bench that compares a request's latency with a server's
// on the same box uses this; everything else uses wrangler dev.
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { Miniflare } from 'miniflare'
import { WRANGLER_OFFLINE } from '../../dev/wrangler.ts'

const root = fileURLToPath(new URL('../..', import.meta.url))

export interface MiniflareEdge {
  url: string
  stop(): Promise<void>
}

/** wrangler.toml's compatibility date and flags (the bundle runs under the same). */
function compatibility(): { compatibilityDate: string; compatibilityFlags: string[] } {
  const toml = readFileSync(join(root, 'wrangler.toml'), 'utf8')
  const date = /^compatibility_date = "([^"]+)"$/m.exec(toml)?.[1]
  const flags = /^compatibility_flags = \[(.*)\]$/m.exec(toml)?.[1]
  if (!date || flags === undefined) throw new Error('wrangler.toml: no compatibility_date or compatibility_flags')
  return { compatibilityDate: date, compatibilityFlags: [...flags.matchAll(/"([^"]+)"/g)].map((m) => m[1]) }
}

/** Builds the Worker with wrangler and serves it with Miniflare on `port`, with `vars` as its bindings (dev/stack.ts edgeVars). */
export async function startMiniflareEdge(port: number, vars: Record<string, string>): Promise<MiniflareEdge> {
  const out = mkdtempSync(join(tmpdir(), 'lhbox-worker-bundle-'))
  const wrangler = join(dirname(createRequire(import.meta.url).resolve('wrangler/package.json')), 'bin', 'wrangler.js')
  await promisify(execFile)(process.execPath, [wrangler, 'deploy', '--dry-run', '--outdir', out], {
    cwd: root,
    env: { ...process.env, ...WRANGLER_OFFLINE, CI: 'true', NO_COLOR: '1' },
    maxBuffer: 1 << 24,
  })
  const mf = new Miniflare({
    modules: true,
    scriptPath: join(out, 'index.js'),
    modulesRoot: out, // module names relative to the bundle's folder (not to the cwd, which would need ..)
    ...compatibility(),
    bindings: { S3_REGION: 'auto', ...vars },
    host: '127.0.0.1',
    port,
  })
  const url = await mf.ready
  return { url: url.origin, stop: () => mf.dispose() }
}
