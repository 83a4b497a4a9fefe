// lhbox sink device-url: what it prints (stdout and the stderr note), which send key it takes, and the
// usage errors raised before any API call; fetch is stubbed, no server.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { deviceLink, KEY_IN_URL_NOTE, showDeviceLink } from '../../../cli/commands/sink-devices.ts'
import { main } from '../../../cli/main.ts'

const KEY = `al_send_0123456789ab_${'A'.repeat(43)}`
const TEMPLATE = 'https://x.test/v1/sinks/snk_0a/devices/{device_id}'
const VIEW = { id: 'snk_0a', name: 'phones', state: 'active', mapping: { preset: 'owntracks' }, device_url: TEMPLATE }

describe('deviceLink / showDeviceLink', () => {
  it('puts the key in ?key= without --basic', () => {
    const link = deviceLink(TEMPLATE, 'phone-1', KEY, false)
    expect(link).toEqual({ url: `https://x.test/v1/sinks/snk_0a/devices/phone-1?key=${KEY}` })
    expect(showDeviceLink(link)).toBe(link.url)
  })

  it('with --basic: the URL without the key, then user and password lines', () => {
    const link = deviceLink(TEMPLATE, 'phone.1_a', KEY, true)
    expect(showDeviceLink(link)).toBe(`https://x.test/v1/sinks/snk_0a/devices/phone.1_a\nuser: phone.1_a\npassword: ${KEY}`)
  })

  it('adds to a query the template already has; refuses a template with no {device_id}', () => {
    expect(deviceLink(`${TEMPLATE}?v=1`, 'd', KEY, false).url).toBe(`https://x.test/v1/sinks/snk_0a/devices/d?v=1&key=${KEY}`)
    expect(() => deviceLink('https://x.test/v1/sinks/snk_0a', 'd', KEY, false)).toThrow(/holds no \{device_id\}/)
  })
})

describe('lhbox sink device-url', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lhbox-cli-device-url-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  let calls: string[]
  let view: Record<string, unknown>
  beforeEach(() => {
    calls = []
    view = VIEW
    vi.stubEnv('LHBOX_SEND_KEY', undefined)
    vi.stubGlobal(
      'fetch',
      vi.fn(async (url: string, init: RequestInit) => {
        calls.push(`${init.method} ${url}`)
        return new Response(JSON.stringify(view), { status: 200 })
      }),
    )
  })
  afterEach(() => {
    vi.unstubAllGlobals()
    vi.unstubAllEnvs()
  })

  async function run(argv: string[]) {
    const out: string[] = []
    const err: string[] = []
    const code = await main(
      ['sink', 'device-url', ...argv, '--url', 'https://x.test', '--api-key', 'k'],
      (s) => out.push(s),
      (s) => err.push(s),
    )
    return { code, out: out.join('\n'), err: err.join('\n') }
  }

  it('GETs the sink and prints the ?key= URL, with the access-log note on stderr', async () => {
    const res = await run(['phones', '--device', 'phone-1', '--send-key', KEY])
    expect(calls).toEqual(['GET https://x.test/v1/sinks/phones'])
    expect(res).toEqual({ code: 0, out: `https://x.test/v1/sinks/snk_0a/devices/phone-1?key=${KEY}`, err: KEY_IN_URL_NOTE })
    expect(res.err).toMatch(/access logs.*--basic/)
  })

  it('--basic prints the URL, user and password, and no note', async () => {
    vi.stubEnv('LHBOX_SEND_KEY', KEY)
    const res = await run(['phones', '--device', 'phone-1', '--basic'])
    expect(res).toEqual({ code: 0, out: `https://x.test/v1/sinks/snk_0a/devices/phone-1\nuser: phone-1\npassword: ${KEY}`, err: '' })
  })

  it('takes the key from --send-key-file, which must be for that sink', async () => {
    const file = join(dir, 'key.json')
    writeFileSync(file, JSON.stringify({ sink_id: 'snk_0a', name: 'phones', send_key: KEY, ingest_url: 'https://x.test/v1/sinks/snk_0a' }))
    const res = await run(['phones', '--device', 'd', '--basic', '--send-key-file', file, '--json'])
    expect(JSON.parse(res.out)).toEqual({ url: 'https://x.test/v1/sinks/snk_0a/devices/d', user: 'd', password: KEY })
    const other = join(dir, 'other.json')
    writeFileSync(other, JSON.stringify({ sink_id: 'snk_0b', name: 'cars', send_key: KEY, ingest_url: 'https://x.test/v1/sinks/snk_0b' }))
    const wrong = await run(['phones', '--device', 'd', '--send-key-file', other])
    expect(wrong.code).toBe(1)
    expect(wrong.err).toBe('error: usage: the --send-key-file is for sink cars (snk_0b), not phones (snk_0a)')
  })

  it('refuses a bad or missing device id and a missing or wrong key, before any API call', async () => {
    for (const [argv, message] of [
      [['phones', '--send-key', KEY], /^error: usage: give the device's id: --device ID/],
      [['phones', '--device', 'a/b', '--send-key', KEY], /^error: usage: --device a\/b: 1–64 characters of A-Z a-z 0-9 \. _ -$/],
      [['phones', '--device', 'x'.repeat(65), '--send-key', KEY], /1–64 characters/],
      [['phones', '--device', 'd'], /^error: usage: no send key: give --send-key-file FILE, --send-key KEY or set LHBOX_SEND_KEY\nlhbox sink device-url/],
      [['phones', '--device', 'd', '--send-key', `al_key_0123456789ab_${'A'.repeat(43)}`], /that is not a send key/],
      [['--device', 'd', '--send-key', KEY], /^error: usage: lhbox sink device-url <sink> --device ID/],
    ] as const) {
      const res = await run([...argv])
      expect(res.code).toBe(1)
      expect(res.err).toMatch(message)
    }
    expect(calls).toEqual([])
  })

  it('says so when the server answers no device_url, or the sink has no mapping yet', async () => {
    view = { id: 'snk_0a', name: 'phones', state: 'active' }
    const old = await run(['phones', '--device', 'd', '--send-key', KEY])
    expect(old.code).toBe(1)
    expect(old.err).toMatch(/^error: no_device_route: /)
    view = { ...VIEW, mapping: null }
    const unmapped = await run(['phones', '--device', 'd', '--send-key', KEY, '--basic'])
    expect(unmapped.code).toBe(0)
    expect(unmapped.err).toBe('note: sink phones has no mapping yet (lhbox sink update phones --preset NAME | --mapping-file FILE)')
  })
})
