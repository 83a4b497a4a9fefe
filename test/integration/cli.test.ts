// `lhbox` as a person runs it (the bin entry, a child process), configured from the environment.
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { uid } from '../support/sinks.ts'
import { stack } from '../support/stack.ts'

const run = promisify(execFile)

async function lhbox(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['bin/lhbox.js', ...args], {
      env: { ...process.env, LHBOX_URL: stack().apiUrl, LHBOX_API_KEY: stack().adminKey, ...env },
    })
    return { code: 0, stdout, stderr }
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

describe('lhbox CLI', () => {
  it('lists warehouses with LHBOX_URL and LHBOX_API_KEY', async () => {
    const res = await lhbox(['warehouse', 'list'])
    expect(res.code).toBe(0)
    expect(res.stdout).toMatch(/^NAME\s+CATALOG\s+BUCKET/)
    expect(res.stdout).toMatch(/\ndefault\s+sql\s+lhbox-test\s/)
  })

  it('lets --url and --api-key override the environment', async () => {
    const res = await lhbox(['warehouse', 'list', '--json', '--url', stack().apiUrl, '--api-key', stack().adminKey], {
      LHBOX_URL: 'http://127.0.0.1:1',
      LHBOX_API_KEY: 'nope',
    })
    expect(res.code).toBe(0)
    expect(JSON.parse(res.stdout).map((w: { name: string }) => w.name)).toContain('default')
  })

  it('creates a warehouse', async () => {
    const name = `cli-made-${uid()}` // the file runs on both edges against one stack
    const res = await lhbox(['warehouse', 'create', name, '--bucket', 'cli-bucket'])
    expect(res.code).toBe(0)
    expect(res.stdout).toMatch(new RegExp(String.raw`^created warehouse ${name} \(wh_[0-9a-f]{16}\)`))
  })

  it('prints the error code and message and exits non-zero', async () => {
    const bad = await lhbox(['warehouse', 'list'], { LHBOX_API_KEY: 'al_key_000000000000_' + 'a'.repeat(43) })
    expect(bad.code).toBe(1)
    expect(bad.stderr).toMatch(/^error: unauthorized: /)
    const unreachable = await lhbox(['warehouse', 'list'], { LHBOX_URL: 'http://127.0.0.1:1' })
    expect(unreachable.code).toBe(1)
    expect(unreachable.stderr).toMatch(/^error: unreachable: /)
    const unknown = await lhbox(['frobnicate'])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toMatch(/^error: usage: unknown command frobnicate/)
  })
})
