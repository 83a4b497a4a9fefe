// lhbox sink rotate-key / retire-previous-key: the request each sends, what is printed and saved, and
// the usage errors raised before any API call; fetch is stubbed, no server.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { main } from '../../../cli/main.ts'

const KEY = `al_send_0123456789ab_${'B'.repeat(43)}`
const ROTATED = {
  sink_id: 'snk_0a',
  name: 'events_in',
  ingest_url: 'https://x.test/v1/sinks/snk_0a',
  send_key: KEY,
  previous_retires_at: '2026-12-04T10:00:00.000000Z',
}

describe('lhbox sink rotate-key and retire-previous-key', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lhbox-cli-keys-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  let calls: Array<{ method: string; url: string; body?: unknown }>
  let answer: { status: number; body: unknown }
  beforeEach(() => {
    calls = []
    answer = { status: 201, body: ROTATED }
    vi.stubGlobal(
      'fetch',
      vi.fn(async (url: string, init: RequestInit) => {
        calls.push({ method: String(init.method), url, ...(init.body ? { body: JSON.parse(String(init.body)) } : {}) })
        return new Response(JSON.stringify(answer.body), { status: answer.status })
      }),
    )
  })
  afterEach(() => vi.unstubAllGlobals())

  async function run(argv: string[]) {
    const out: string[] = []
    const err: string[] = []
    const code = await main(
      ['sink', ...argv, '--url', 'https://x.test', '--api-key', 'k'],
      (s) => out.push(s),
      (s) => err.push(s),
    )
    return { code, out: out.join('\n'), err: err.join('\n') }
  }

  it('refuses before any call: no --save or --show-key, both, a bad --retire-previous-after, an existing file', async () => {
    const existing = join(dir, 'existing.json')
    writeFileSync(existing, 'another sink’s key')
    for (const argv of [
      ['rotate-key', 'events_in'],
      ['rotate-key', 'events_in', '--show-key', '--save', join(dir, 'x.json')],
      ['rotate-key', 'events_in', '--show-key', '--retire-previous-after', '1h'],
      ['rotate-key', 'events_in', '--save', existing],
      ['rotate-key'],
      ['retire-previous-key'],
    ]) {
      const res = await run(argv)
      expect(res.code, argv.join(' ')).not.toBe(0)
    }
    expect(calls).toEqual([])
    expect(readFileSync(existing, 'utf8')).toBe('another sink’s key')
  })

  it('--save writes the key file (0600) and prints no key; --retire-previous-after is sent as seconds', async () => {
    const file = join(dir, 'new.json')
    const res = await run(['rotate-key', 'events_in', '--save', file, '--retire-previous-after', '0'])
    expect(res.code, res.err).toBe(0)
    expect(calls).toEqual([{ method: 'POST', url: 'https://x.test/v1/sinks/events_in/send-keys', body: { retire_previous_after_seconds: 0 } }])
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      sink_id: 'snk_0a',
      name: 'events_in',
      send_key: KEY,
      ingest_url: 'https://x.test/v1/sinks/snk_0a',
    })
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(res.out).not.toContain(KEY)
    expect(res.out).toContain('works until 2026-12-04T10:00:00.000000Z')
  })

  it('--show-key prints the key once; a refusal removes the file --save made', async () => {
    const shown = await run(['rotate-key', 'events_in', '--show-key'])
    expect(shown.out).toContain(`send key   ${KEY}`)
    expect(calls[0].body).toEqual({})
    answer = { status: 404, body: { error: { code: 'sink_not_found', message: 'no sink nope in this project' } } }
    const file = join(dir, 'refused.json')
    const refused = await run(['rotate-key', 'nope', '--save', file])
    expect(refused.code).not.toBe(0)
    expect(existsSync(file)).toBe(false)
  })

  it('retire-previous-key DELETEs the previous key', async () => {
    answer = { status: 200, body: { sink_id: 'snk_0a', previous_retired_at: '2026-12-03T10:00:00.000000Z' } }
    const res = await run(['retire-previous-key', 'events_in'])
    expect(res.code, res.err).toBe(0)
    expect(calls).toEqual([{ method: 'DELETE', url: 'https://x.test/v1/sinks/events_in/send-keys/previous' }])
    expect(res.out).toContain('only the current key works')
  })
})
