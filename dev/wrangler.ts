// `wrangler dev` (real workerd) with every binding passed as --var, offline.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startChild, waitFor, type Child } from './process.ts'

export const WRANGLER_OFFLINE = {
  WRANGLER_SEND_METRICS: 'false',
  CLOUDFLARE_CF_FETCH_ENABLED: 'false',
  WRANGLER_HIDE_BANNER: 'true',
  WRANGLER_SEND_ERROR_REPORTS: 'false',
}

const root = fileURLToPath(new URL('..', import.meta.url))

/** Bindings a test adds to wrangler.toml's. */
export interface ExtraBindings {
  /** A Hyperdrive binding, HYPERDRIVE, whose local connection string is this URL (wrangler dev connects to it directly; Hyperdrive's query cache does not run locally). */
  hyperdrive?: string
  /** The project ceiling's Rate Limiting binding, LHBOX_PROJECT_RATE_LIMIT (miniflare keeps its counts in memory, in fixed windows). */
  ratelimit?: { limit: number; period: 10 | 60 }
}

/** wrangler.toml with the extra bindings added, written in the state directory. */
function withBindings(stateDir: string, extra: ExtraBindings): string {
  let toml = readFileSync(join(root, 'wrangler.toml'), 'utf8').replace(/^main = "(.*)"$/m, (_, main) => `main = ${JSON.stringify(join(root, main))}`)
  if (extra.hyperdrive)
    toml += `\n[[hyperdrive]]\nbinding = "HYPERDRIVE"\nid = "00000000000000000000000000000000"\nlocalConnectionString = ${JSON.stringify(extra.hyperdrive)}\n`
  if (extra.ratelimit)
    toml += `\n[[ratelimits]]\nname = "LHBOX_PROJECT_RATE_LIMIT"\nnamespace_id = "1001"\nsimple = { limit = ${extra.ratelimit.limit}, period = ${extra.ratelimit.period} }\n`
  const path = join(stateDir, 'wrangler.extra.toml')
  writeFileSync(path, toml)
  return path
}

export async function startWrangler(
  stateDir: string,
  port: number,
  inspectorPort: number,
  vars: Record<string, string>,
  opts: ExtraBindings = {},
): Promise<Child> {
  mkdirSync(stateDir, { recursive: true })
  const require = createRequire(import.meta.url)
  const bin = join(dirname(require.resolve('wrangler/package.json')), 'bin', 'wrangler.js')
  const args = [
    bin,
    'dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--inspector-port',
    String(inspectorPort),
    '--persist-to',
    join(stateDir, 'wrangler'),
    '--show-interactive-dev-session=false',
    '--log-level',
    process.env.LHBOX_WRANGLER_LOG_LEVEL ?? 'warn', // debug: wrangler's reloads and proxy errors, for a look
    '--test-scheduled',
    ...(opts.hyperdrive || opts.ratelimit ? ['--config', withBindings(stateDir, opts)] : []),
  ]
  for (const [k, v] of Object.entries(vars)) args.push('--var', `${k}:${v}`)
  const child = startChild('wrangler', process.execPath, args, join(stateDir, 'wrangler.log'), {
    cwd: root,
    env: { ...process.env, ...WRANGLER_OFFLINE, CI: 'true', NO_COLOR: '1' },
  })
  await waitFor('wrangler dev', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).status > 0, 90_000, child)
  return child
}
