// The roller as the tests run it: `roller/main.ts tick` in a child process against the test stack,
// optionally killed (SIGKILL) at a step boundary.
import { spawn } from 'node:child_process'
import { rollerCommand } from '../../dev/roller.ts'
import { stack } from './stack.ts'

export interface TickResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  /** The JSON log lines. */
  logs: Array<Record<string, unknown>>
}

export function rollerEnv(extra: Record<string, string> = {}): Record<string, string> {
  const s = stack()
  return {
    LHBOX_URL: s.apiUrl,
    LHBOX_BOOTSTRAP_SECRET: s.bootstrapSecret,
    DATABASE_URL: s.databaseUrl,
    S3_ACCESS_KEY_ID: s.s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: s.s3.secretAccessKey,
    LHBOX_ROLLER_BACKOFF_MIN_MS: '20',
    LHBOX_ROLLER_BACKOFF_MAX_MS: '100',
    ...extra,
  }
}

export function rollerTick(
  opts: { sink?: string; force?: boolean; killAt?: string; rollerId?: string; env?: Record<string, string> } = {},
): Promise<TickResult> {
  const args = ['tick']
  if (opts.force ?? true) args.push('--force')
  if (opts.sink) args.push('--sink', opts.sink)
  const { cmd, args: full } = rollerCommand(args)
  const env: Record<string, string> = { ...(process.env as Record<string, string>), ...rollerEnv(opts.env) }
  env.LHBOX_ROLLER_ID = opts.rollerId ?? `test-${Math.random().toString(36).slice(2, 8)}`
  if (opts.killAt) env.LHBOX_ROLLER_KILL_AT = opts.killAt
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, full, { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000)
    child.on('error', reject)
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      const logs = stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
      resolve({ code, signal, stdout, stderr, logs })
    })
  })
}
