// `lhbox` as a person runs it: the bin entry as a child process, configured from the environment
// (the integration stack, its admin key unless given), stdin from `input`.
import { spawn } from 'node:child_process'
import { stack } from './stack.ts'

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
    const child = spawn(process.execPath, ['bin/lhbox.js', ...args], { env: env as NodeJS.ProcessEnv })
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
