// lhbox sink create/update's device flags → the request body, without a server: the pure translation
// (createBody, updateBody, deviceFields), and the body `main` actually PATCHes/POSTs, through a stubbed fetch.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { createBody, SINK_FLAGS, updateBody } from '../../../cli/commands/sink.ts'
import { deviceLines } from '../../../cli/commands/sink-devices.ts'
import { main } from '../../../cli/main.ts'

/** The flags as main parses them (SINK_FLAGS' `multiple` included). */
const flags = (argv: string[]) => parseArgs({ args: argv, allowPositionals: true, options: SINK_FLAGS }).values
const update = (argv: string[], files: Record<string, string> = {}) =>
  updateBody(flags(argv), (path) => {
    if (!(path in files)) throw new Error(`ENOENT: no such file, open '${path}'`)
    return files[path]
  })
const usageError = (fn: () => unknown) => {
  try {
    fn()
  } catch (e) {
    expect((e as { code?: string }).code).toBe('usage')
    return (e as Error).message
  }
  throw new Error('no error thrown')
}

describe('sink update: mapping flags', () => {
  it('--preset NAME sends {mapping: {preset}}', () => {
    expect(update(['--preset', 'owntracks'])).toEqual({ mapping: { preset: 'owntracks' } })
  })

  it('--mapping-file FILE sends the file’s mapping object as it is', () => {
    const mapping = { columns: { ts: { pointer: '/tst', as: 'epoch_s' }, who: { device: true } }, point: { column: 'pos', lon: '/lon', lat: '/lat' } }
    expect(update(['--mapping-file', 'm.json'], { 'm.json': JSON.stringify(mapping) })).toEqual({ mapping })
  })

  it('--no-mapping sends mapping: null', () => {
    const body = update(['--no-mapping'])
    expect(body).toEqual({ mapping: null })
    expect(JSON.stringify(body)).toBe('{"mapping":null}')
  })

  it('refuses --preset with --mapping-file or --no-mapping, and --mapping-file with --no-mapping', () => {
    const files = { 'm.json': '{"columns": {}}' }
    expect(usageError(() => update(['--preset', 'ttn', '--mapping-file', 'm.json'], files))).toMatch(/give one of --preset, --mapping-file and --no-mapping/)
    expect(usageError(() => update(['--preset', 'ttn', '--no-mapping']))).toMatch(/one of --preset/)
    expect(usageError(() => update(['--mapping-file', 'm.json', '--no-mapping'], files))).toMatch(/one of --preset/)
  })

  it('refuses an unreadable, non-JSON or mapping-less --mapping-file, and an empty --preset', () => {
    expect(usageError(() => update(['--mapping-file', 'nope.json']))).toMatch(/cannot read --mapping-file nope\.json: ENOENT/)
    expect(usageError(() => update(['--mapping-file', 'm.json'], { 'm.json': '{columns' }))).toMatch(/--mapping-file m\.json is not JSON/)
    for (const text of ['[]', 'null', '"owntracks"', '{"mapping": {"columns": {}}}']) {
      expect(usageError(() => update(['--mapping-file', 'm.json'], { 'm.json': text }))).toMatch(/holds no mapping/)
    }
    expect(usageError(() => update(['--preset', '']))).toMatch(/--preset needs a name/)
  })
})

describe('sink update: --device-require', () => {
  it('takes VALUE as JSON when it parses as a scalar, otherwise as a string', () => {
    const body = update([
      ...['--device-require', '/_type=location'],
      ...['--device-require', '/port=2'],
      ...['--device-require', '/ok=true'],
      ...['--device-require', '/gone=null'],
      ...['--device-require', '/code="5"'],
      ...['--device-require', '/eui=0004A30B001C0530'],
      ...['--device-require', '/empty='],
      ...['--device-require', '/eq=a=b'],
    ])
    expect(body).toEqual({
      device_require: { '/_type': 'location', '/port': 2, '/ok': true, '/gone': null, '/code': '5', '/eui': '0004A30B001C0530', '/empty': '', '/eq': 'a=b' },
    })
  })

  it('POINTER=a,b is one string; the same pointer repeated becomes a list', () => {
    expect(update(['--device-require', '/t=a,b'])).toEqual({ device_require: { '/t': 'a,b' } })
    expect(
      update(['--device-require', '/t=location', '--device-require', '/n=1', '--device-require', '/t=transition', '--device-require', '/t=location']),
    ).toEqual({
      device_require: { '/t': ['location', 'transition'], '/n': 1 },
    })
  })

  it('--no-device-require sends null; with --device-require it is a usage error', () => {
    expect(update(['--no-device-require'])).toEqual({ device_require: null })
    expect(usageError(() => update(['--device-require', '/a=1', '--no-device-require']))).toMatch(/one of --device-require and --no-device-require/)
  })

  it('refuses a missing =, a pointer that is not one, a JSON array or object, an inexact number', () => {
    expect(usageError(() => update(['--device-require', '/a']))).toMatch(/give POINTER=VALUE/)
    expect(usageError(() => update(['--device-require', 'a=1']))).toMatch(/--device-require a: give a JSON pointer/)
    expect(usageError(() => update(['--device-require', '=1']))).toMatch(/give a JSON pointer/)
    expect(usageError(() => update(['--device-require', '/a~2=1']))).toMatch(/give a JSON pointer/)
    expect(usageError(() => update(['--device-require', '/a=[1,2]']))).toMatch(/repeat the flag with the same pointer/)
    expect(usageError(() => update(['--device-require', '/a={"b":1}']))).toMatch(/give one value/)
    expect(usageError(() => update(['--device-require', '/a=12345678901234567890']))).toMatch(/quote it/)
    expect(update(['--device-require', '/a~1b~0c=1.5'])).toEqual({ device_require: { '/a~1b~0c': 1.5 } })
  })
})

describe('sink update: --device-strip, and with the other fields', () => {
  it('--device-strip POINTER (repeatable) sends the list; --no-device-strip null', () => {
    expect(update(['--device-strip', '/tid', '--device-strip', '/topic', '--device-strip', '/tid'])).toEqual({ device_strip: ['/tid', '/topic'] })
    expect(update(['--no-device-strip'])).toEqual({ device_strip: null })
    expect(usageError(() => update(['--device-strip', '/a', '--no-device-strip']))).toMatch(/one of --device-strip and --no-device-strip/)
    expect(usageError(() => update(['--device-strip', 'tid']))).toMatch(/--device-strip tid: give a JSON pointer/)
  })

  it('sits beside key and the roll policy; nothing at all is still "nothing to change"', () => {
    expect(update(['--no-key', '--roll-seconds', '60', '--preset', 'ttn', '--device-strip', '/x', '--no-device-require'])).toEqual({
      key: null,
      roll_seconds: 60,
      mapping: { preset: 'ttn' },
      device_strip: ['/x'],
      device_require: null,
    })
    expect(usageError(() => update([]))).toMatch(/^nothing to change/)
  })
})

describe('sink create: device flags', () => {
  const create = (argv: string[], files: Record<string, string> = {}) =>
    createBody('wh', flags(['--table', 'ns.t', '--name', 's1', ...argv]), (path) => files[path] ?? '')

  it('adds mapping, device_require and device_strip to the POST body', () => {
    const body = create(['--preset', 'owntracks', '--device-require', '/_type=location', '--device-strip', '/tid'])
    expect(JSON.parse(JSON.stringify(body))).toEqual({
      name: 's1',
      table: 'ns.t',
      warehouse: 'wh',
      mapping: { preset: 'owntracks' },
      device_require: { '/_type': 'location' },
      device_strip: ['/tid'],
    })
    expect(create(['--mapping-file', 'm.json'], { 'm.json': '{"columns": {"v": "/v"}}' }).mapping).toEqual({ columns: { v: '/v' } })
  })

  it('refuses the --no-… flags and conflicting mapping flags', () => {
    expect(usageError(() => create(['--no-mapping']))).toMatch(/--no-mapping is for sink update/)
    expect(usageError(() => create(['--no-device-strip']))).toMatch(/--no-device-strip is for sink update/)
    expect(usageError(() => create(['--preset', 'ttn', '--mapping-file', 'm.json']))).toMatch(/give one of --preset/)
  })
})

describe('through main, with fetch stubbed', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lhbox-cli-unit-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  afterEach(() => vi.unstubAllGlobals())

  const VIEW = {
    id: 'snk_0a',
    name: 'phones',
    warehouse: 'wh',
    table: 'ns.t',
    state: 'active',
    disabled_reason: null,
    roll: { roll_seconds: 60, roll_bytes: 1048576, inactivity_seconds: null },
    key: null,
    ingest_url: 'https://x.test/v1/sinks/snk_0a',
    lag: { batches_waiting: 0, bytes_waiting: 0, oldest_waiting_at: null, seconds_behind: 0 },
    received: { batches: 0, rows: 0, bytes: 0, last_at: null },
    last_roll: null,
    rejects: { rows_total: 0, batches_with_rejects: 0, last_at: null, prefix: '_sink/snk_0a/rejects/' },
    dedupe: { requested_at: null, last: null },
    created_at: '2026-01-01T00:00:00Z',
    deleted_at: null,
    mapping: { preset: 'owntracks' },
    device_require: { '/_type': ['location', 'transition'], '/acc': 5 },
    device_strip: ['/tid', '/topic'],
    device_url: 'https://x.test/v1/sinks/snk_0a/devices/{device_id}',
  }

  function stubFetch(answer: (url: string, init: RequestInit) => { status: number; body: unknown }) {
    const calls: Array<{ url: string; method: string; body: unknown }> = []
    vi.stubGlobal(
      'fetch',
      vi.fn(async (url: string, init: RequestInit) => {
        calls.push({ url, method: String(init.method), body: init.body === undefined ? undefined : JSON.parse(String(init.body)) })
        const a = answer(url, init)
        return new Response(JSON.stringify(a.body), { status: a.status, headers: { 'content-type': 'application/json' } })
      }),
    )
    return calls
  }

  async function run(argv: string[]) {
    const out: string[] = []
    const err: string[] = []
    const code = await main(
      [...argv, '--url', 'https://x.test', '--api-key', 'k'],
      (s) => out.push(s),
      (s) => err.push(s),
    )
    return { code, out: out.join('\n'), err: err.join('\n') }
  }

  it('PATCHes the translated body and prints the mapping, require and strip', async () => {
    const file = join(dir, 'mapping.json')
    writeFileSync(file, JSON.stringify({ columns: { a: '/a', b: '/b' }, shape: { column: 'area', geojson: '/g' } }))
    const calls = stubFetch(() => ({ status: 200, body: VIEW }))
    const res = await run([
      'sink',
      'update',
      'phones',
      '--mapping-file',
      file,
      '--device-require',
      '/_type=location',
      '--device-require',
      '/_type=transition',
      '--device-strip',
      '/tid',
    ])
    expect(res).toMatchObject({ code: 0, err: '' })
    expect(calls).toEqual([
      {
        url: 'https://x.test/v1/sinks/phones',
        method: 'PATCH',
        body: {
          mapping: { columns: { a: '/a', b: '/b' }, shape: { column: 'area', geojson: '/g' } },
          device_require: { '/_type': ['location', 'transition'] },
          device_strip: ['/tid'],
        },
      },
    ])
    expect(res.out).toContain('mapping    preset owntracks\n')
    expect(res.out).toContain('devices    https://x.test/v1/sinks/snk_0a/devices/{device_id}  (lhbox sink device-url phones --device ID)\n')
    expect(res.out).toContain('require    /_type one of ["location","transition"]; /acc = 5\n')
    expect(res.out).toContain('strip      /tid, /topic\n')
  })

  it('a conflict is a usage error before any API call', async () => {
    const calls = stubFetch(() => ({ status: 200, body: VIEW }))
    const res = await run(['sink', 'update', 'phones', '--preset', 'ttn', '--no-mapping'])
    expect(res.code).toBe(1)
    expect(res.err).toMatch(/^error: usage: give one of --preset, --mapping-file and --no-mapping/)
    expect(calls).toEqual([])
  })

  it('a 400 mapping_invalid is reported with the file it came from', async () => {
    const file = join(dir, 'bad.json')
    writeFileSync(file, '{"columns": {"nope": "/x"}}')
    stubFetch(() => ({ status: 400, body: { error: { code: 'mapping_invalid', message: 'column nope is not in the table', column: 'nope' } } }))
    const res = await run(['sink', 'update', 'phones', '--mapping-file', file])
    expect(res.code).toBe(1)
    expect(res.err).toBe(`error: mapping_invalid: column nope is not in the table (in --mapping-file ${file})`)
  })

  it('sink get without device fields (or an older server) prints no device lines', async () => {
    const { mapping: _m, device_require: _r, device_strip: _s, device_url: _u, ...old } = VIEW
    stubFetch(() => ({ status: 200, body: { ...old, mapping: null, device_require: null, device_strip: null } }))
    const res = await run(['sink', 'get', 'phones'])
    expect(res.code).toBe(0)
    expect(res.out).not.toMatch(/^(mapping|devices|require|strip) /m)
  })

  it('summarises a custom mapping by its columns, point and shape', () => {
    const lines = deviceLines({ id: 'snk_1', name: 'n', mapping: { columns: { a: '/a' }, point: { column: 'pos', lon: '/lon', lat: '/lat' } } })
    expect(lines).toEqual(['mapping    custom, 1 column; point → pos'])
  })
})
