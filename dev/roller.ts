// The roller service as the stack runs it: `roller/main.ts run`, a child with its log in the state folder.
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startChild, type Child } from './process.ts'

const root = fileURLToPath(new URL('..', import.meta.url))

export function rollerCommand(args: string[]): { cmd: string; args: string[] } {
  return { cmd: process.execPath, args: ['--import', 'tsx', join(root, 'roller', 'main.ts'), ...args] }
}

export function startRoller(stateDir: string, env: Record<string, string>): Child {
  const { cmd, args } = rollerCommand(['run'])
  return startChild('roller', cmd, args, join(stateDir, 'roller.log'), { cwd: root, env: { ...process.env, ...env } })
}
