// `lhbox sink …`, `lhbox connect`, `lhbox usage` as a person runs them: the bin entry as a child
// process, configured from the environment, against the integration stack.
import { mkdtempSync, readFileSync, statSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { PRESETS } from '../../edge/devices/presets/index.ts'
import { lhbox } from '../support/cli.ts'
import { listSinks, uid } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

/** This run's namespace and sink names' stem: the file runs on both edges against one stack. */
const NS = `clins${uid()}`

const admin = () => stack().adminKey
const SEND_KEY = /al_send_[0-9a-f]{12}_[A-Za-z0-9_-]{43}/

async function sinksOn(table: string, all = false) {
  // Every page: the shared project holds more sinks than one.
  const sinks = await listSinks(admin(), `warehouse=${stack().warehouse}${all ? '&include_deleted=true' : ''}`)
  return (sinks as Array<{ id: string; name: string; table: string; state: string }>).filter((s) => s.table === table)
}

async function getSink(ref: string) {
  const res = await call(`/v1/sinks/${ref}`, { key: admin() })
  expect(res.status).toBe(200)
  return res.body
}

describe('lhbox sink, connect, usage', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lhbox-cli-sinks-'))
  const keyFile = join(dir, 'a-sink.json')
  const batchFile = join(dir, 'batch.json')
  let a: { sink_id: string; name: string; send_key: string; ingest_url: string }
  let b: { id: string; key: string }
  let firstBatchId: string

  beforeAll(async () => {
    for (const t of [`${NS}.t1`, `${NS}.t2`]) {
      const res = await call('/v1/tables', {
        key: admin(),
        json: { warehouse: stack().warehouse, table: t, columns: [{ name: 'x', type: 'long', required: true }] },
      })
      expect(res.status, res.text).toBe(201)
    }
  })

  it('create without --save or --show-key stops before the API: nothing is created', async () => {
    const res = await lhbox(['sink', 'create', stack().warehouse, '--table', `${NS}.t1`, '--name', `${NS}_a`])
    expect(res.code).toBe(1)
    expect(res.stderr).toMatch(/^error: usage: .*--save FILE.*--show-key/)
    expect(res.stdout).toBe('')
    expect(await sinksOn(`${NS}.t1`, true)).toEqual([])
  })

  it('create --save refuses an existing file, before the API, and leaves it alone', async () => {
    const existing = join(dir, 'existing.json')
    writeFileSync(existing, 'precious')
    const res = await lhbox(['sink', 'create', stack().warehouse, '--table', `${NS}.t1`, '--name', `${NS}_a`, '--save', existing])
    expect(res.code).toBe(1)
    expect(res.stderr).toMatch(/^error: file_exists: /)
    expect(readFileSync(existing, 'utf8')).toBe('precious')
    expect(await sinksOn(`${NS}.t1`, true)).toEqual([])
  })

  it('create --save removes its file again when the API refuses', async () => {
    const file = join(dir, 'refused.json')
    const res = await lhbox(['sink', 'create', stack().warehouse, '--table', `${NS}.nope`, '--name', `${NS}_x`, '--save', file])
    expect(res.code).toBe(1)
    expect(res.stderr).toMatch(/^error: table_not_found: /)
    expect(existsSync(file)).toBe(false)
  })

  it('create --save writes {sink_id, name, send_key, ingest_url} with mode 0600 and prints no key', async () => {
    const res = await lhbox(['sink', 'create', stack().warehouse, '--table', `${NS}.t1`, '--name', `${NS}_a`, '--save', keyFile])
    expect(res.code, res.stderr).toBe(0)
    expect(statSync(keyFile).mode & 0o777).toBe(0o600)
    a = JSON.parse(readFileSync(keyFile, 'utf8'))
    expect(Object.keys(a).sort()).toEqual(['ingest_url', 'name', 'send_key', 'sink_id'])
    expect(a.sink_id).toMatch(/^snk_[0-9a-f]+$/)
    expect(a.name).toBe(`${NS}_a`)
    expect(a.send_key).toMatch(SEND_KEY)
    expect(a.ingest_url).toMatch(new RegExp(`/v1/sinks/${a.sink_id}$`))
    expect(res.stdout + res.stderr).not.toMatch(/al_send_/)
    expect(res.stdout).toContain(`created sink ${NS}_a (${a.sink_id}) on ${stack().warehouse}.${NS}.t1`)
    expect(res.stdout).toContain(a.ingest_url)
    expect(res.stdout).toContain(`saved to ${keyFile} (mode 0600)`)
    // The table has no docs: the hint and its command are passed on.
    expect(res.stdout).toContain(`lhbox table document ${stack().warehouse}.${NS}.t1`)
    expect((await sinksOn(`${NS}.t1`)).map((s) => s.id)).toEqual([a.sink_id])
  })

  it('create --show-key prints the key once', async () => {
    const res = await lhbox(['sink', 'create', stack().warehouse, '--table', `${NS}.t2`, '--name', `${NS}_b`, '--show-key', '--roll-seconds', '600'])
    expect(res.code, res.stderr).toBe(0)
    const keys = res.stdout.match(new RegExp(SEND_KEY.source, 'g')) ?? []
    expect(keys).toHaveLength(1)
    const id = /\((snk_[0-9a-f]+)\)/.exec(res.stdout)![1]
    b = { id, key: keys[0]! }
    expect((await getSink(id)).roll.roll_seconds).toBe(600)
  })

  it('send --send-key-file posts the file, prints the generated batch id; --batch-id of it answers duplicate', async () => {
    writeFileSync(batchFile, '[{"x": 1},\n {"x": 2}, 3]')
    const res = await lhbox(['sink', 'send', batchFile, '--send-key-file', keyFile])
    expect(res.code, res.stderr).toBe(0)
    const printed = /batch id (\S+) \(retry with --batch-id \1/.exec(res.stderr)
    expect(printed, res.stderr).not.toBeNull()
    firstBatchId = printed![1]
    expect(res.stdout).toContain(`sent batch ${firstBatchId}: 2 accepted, 1 rejected`)
    expect(res.stdout).toContain('element 2: not_an_object')

    const again = await lhbox(['sink', 'send', `${NS}_a`, batchFile, '--send-key-file', keyFile, '--batch-id', firstBatchId, '--json'])
    expect(again.code, again.stderr).toBe(0)
    expect(again.stderr).toBe('')
    expect(JSON.parse(again.stdout)).toMatchObject({ duplicate: true, batch_id: firstBatchId, accepted: 2, rejected: 1 })
    const human = await lhbox(['sink', 'send', a.sink_id, batchFile, '--send-key-file', keyFile, '--batch-id', firstBatchId])
    expect(human.stdout).toMatch(/^duplicate: batch /)

    // A key file for another sink is refused before anything is sent.
    const wrong = await lhbox(['sink', 'send', `${NS}_b`, batchFile, '--send-key-file', keyFile])
    expect(wrong.code).toBe(1)
    expect(wrong.stderr).toMatch(new RegExp(`^error: usage: the --send-key-file is for sink ${NS}_a`))
  })

  it('send reads stdin with LHBOX_SEND_KEY; a name needs an API key to resolve', async () => {
    const body = '[\n  {"x": 9223372036854775807}\n]\n'
    const res = await lhbox(['sink', 'send', b.id, '-', '--json'], { input: body, env: { LHBOX_SEND_KEY: b.key } })
    expect(res.code, res.stderr).toBe(0)
    expect(JSON.parse(res.stdout)).toMatchObject({ accepted: 1, rejected: 0, state: 'pending', bytes: '{"x": 9223372036854775807}\n'.length })

    const byName = await lhbox(['sink', 'send', `${NS}_b`, '-'], { input: '[{"x": 3}]', env: { LHBOX_SEND_KEY: b.key } })
    expect(byName.code, byName.stderr).toBe(0)
    expect(byName.stdout).toMatch(/: 1 accepted, 0 rejected/)

    const noApiKey = await lhbox(['sink', 'send', `${NS}_b`, '-'], { input: '[{"x": 3}]', env: { LHBOX_SEND_KEY: b.key, LHBOX_API_KEY: undefined } })
    expect(noApiKey.code).toBe(1)
    expect(noApiKey.stderr).toMatch(new RegExp(String.raw`^error: usage: a sink name \(${NS}_b\) can only be resolved with an API key`))

    const noKey = await lhbox(['sink', 'send', b.id, '-'], { input: '[{"x": 3}]' })
    expect(noKey.code).toBe(1)
    expect(noKey.stderr).toMatch(/^error: usage: no send key/)

    const wrongKey = await lhbox(['sink', 'send', b.id, '-'], { input: '[{"x": 3}]', env: { LHBOX_SEND_KEY: a.send_key } })
    expect(wrongKey.code).toBe(1)
    expect(wrongKey.stderr).toMatch(/\nerror: unauthorized: /)
  })

  it('list and get show the pending batch', async () => {
    const listed = await lhbox(['sink', 'list', stack().warehouse])
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).toMatch(/^NAME\s+TABLE\s+STATE\s+KEY\s+WAITING/)
    expect(listed.stdout).toMatch(new RegExp(`\\n${NS}_a\\s+${stack().warehouse}\\.${NS}\\.t1\\s+active\\s+1\\s+\\d+s\\s+${a.sink_id}`))

    const json = await lhbox(['sink', 'list', '--json'])
    const mine = JSON.parse(json.stdout).find((s: { id: string }) => s.id === a.sink_id)
    expect(mine.lag.batches_waiting).toBe(1)

    const got = await lhbox(['sink', 'get', `${NS}_a`, '--json'])
    expect(got.code, got.stderr).toBe(0)
    const view = JSON.parse(got.stdout)
    expect(view).toMatchObject({ id: a.sink_id, state: 'active', table: `${NS}.t1`, key: null, ingest_url: a.ingest_url })
    expect(view.lag.batches_waiting).toBe(1)
    expect(view.received).toMatchObject({ batches: 1, rows: 2 })

    const human = await lhbox(['sink', 'get', a.sink_id])
    expect(human.code, human.stderr).toBe(0)
    expect(human.stdout).toMatch(new RegExp(String.raw`^${NS}_a \(snk_[0-9a-f]+\) {2}active\n`))
    expect(human.stdout).toMatch(/\nlag {8}1 batch \(\d+ B\) waiting, oldest /)
    expect(human.stdout).toContain('received   1 batch, 2 rows')
    expect(human.stdout).toContain('last roll  none yet')
    expect(view.maintenance).toEqual({ last: null, next_at: null })
    expect(human.stdout).toContain('\nsweeps     none yet\n')
    expect(human.stdout).toContain(`rejects    0 rows in 0 batches; s3://`)
    expect(human.stdout).toContain(`/_sink/${a.sink_id}/rejects/*.ndjson`)
    expect(human.stdout).toContain('policy     roll every 300 s or 64 MiB')
  })

  it('update changes the policy and the key', async () => {
    const roll = await lhbox(['sink', 'update', `${NS}_a`, '--roll-seconds', '120'])
    expect(roll.code, roll.stderr).toBe(0)
    expect(roll.stdout).toContain('policy     roll every 120 s')
    expect((await getSink(a.sink_id)).roll.roll_seconds).toBe(120)

    const keyed = await lhbox(['sink', 'update', `${NS}_a`, '--key', 'x', '--inactivity-seconds', '30'])
    expect(keyed.code, keyed.stderr).toBe(0)
    expect(await getSink(a.sink_id)).toMatchObject({ key: ['x'], roll: { roll_seconds: 120, inactivity_seconds: 30 } })

    const unkeyed = await lhbox(['sink', 'update', `${NS}_a`, '--no-key', '--no-inactivity', '--json'])
    expect(unkeyed.code, unkeyed.stderr).toBe(0)
    expect(JSON.parse(unkeyed.stdout)).toMatchObject({ key: null, roll: { inactivity_seconds: null } })

    const nothing = await lhbox(['sink', 'update', `${NS}_a`])
    expect(nothing.code).toBe(1)
    expect(nothing.stderr).toMatch(/^error: usage: nothing to change/)
    const badKey = await lhbox(['sink', 'update', `${NS}_a`, '--key', 'nope'])
    expect(badKey.code).toBe(1)
    expect(badKey.stderr).toMatch(/^error: \S+: /)
  })

  it('usage and connect', async () => {
    const u = await lhbox(['usage'])
    expect(u.code, u.stderr).toBe(0)
    expect(u.stdout).toMatch(/^ingest_bytes \d{4}-\d{2} {2}\(metered, not enforced\)\nmonth to date {2}\d+ bytes/)
    expect(u.stdout).toMatch(new RegExp(`\\n${NS}_a\\s+\\d+\\s+1\\s+2\\s+1\\s+${a.sink_id}`))
    const uj = JSON.parse((await lhbox(['usage', '--json'])).stdout)
    expect(uj.ingest_bytes.enforced).toBe(false)
    expect(uj.ingest_bytes.by_sink.find((s: { sink_id: string }) => s.sink_id === b.id)).toMatchObject({ batches: 2, rows_accepted: 2 })

    const c = await lhbox(['connect'])
    expect(c.code, c.stderr).toBe(0)
    // Other files' warehouses of the same project may sort before it.
    expect(c.stdout).toMatch(new RegExp(`(^|\\n)warehouse ${stack().warehouse}\\n  catalog  sql, catalog name \\S+`))
    expect(c.stdout).toMatch(/\n {2}storage {2}s3:\/\/lhbox-test at http/)
    expect(c.stdout).toMatch(/\ningest_url http\S+\/v1\/sinks\/\{sink_id\}\nsinks {6}Sinks append JSON rows/)
    const cj = JSON.parse((await lhbox(['connect', '--json'])).stdout)
    expect(cj.warehouses.map((w: { name: string }) => w.name)).toContain(stack().warehouse)
    expect(cj.ingest_url).toMatch(/\/v1\/sinks\/\{sink_id\}$/)
  })

  it('dedupe needs a keyed sink; --wait follows the request until the roller reports it', async () => {
    const unkeyed = await lhbox(['sink', 'dedupe', `${NS}_b`])
    expect(unkeyed.code).toBe(1)
    expect(unkeyed.stderr).toMatch(/^error: sink_not_keyed: /)

    expect((await lhbox(['sink', 'update', `${NS}_b`, '--key', 'x'])).code).toBe(0)
    const fast = { LHBOX_DEDUPE_POLL_MS: '100' }
    const timeout = await lhbox(['sink', 'dedupe', `${NS}_b`, '--wait'], { env: { ...fast, LHBOX_DEDUPE_TIMEOUT_MS: '400' } })
    expect(timeout.code).toBe(1)
    expect(timeout.stderr).toMatch(/waiting for the roller/)
    expect(timeout.stderr).toMatch(/\nerror: dedupe_timeout: no dedupe result after [\d.]+ s; the request stays queued/)
    expect((await getSink(b.id)).dedupe.requested_at).not.toBeNull()

    // The fake roller reports only once the CLI has asked and is polling.
    let polling!: () => void
    const asked = new Promise<void>((resolve) => (polling = resolve))
    const waiting = lhbox(['sink', 'dedupe', `${NS}_b`, '--wait'], { env: fast, onStderr: (s) => s.includes('waiting for the roller') && polling() })
    await Promise.race([asked, waiting])
    const report = await call(`/internal/sinks/${b.id}/roll`, {
      key: stack().bootstrapSecret,
      json: { roller: 'cli-test', roll_id: 'dedupe-1', dedupe: { at: new Date().toISOString(), rows_before: 3, rows_after: 2 } },
    })
    expect(report.status, report.text).toBe(200)
    const done = await waiting
    expect(done.code, done.stderr).toBe(0)
    expect(done.stdout).toMatch(new RegExp(`^dedupe of sink ${NS}_b done: `))
    expect(done.stdout).toContain('rows_before=3')
    expect(done.stdout).toContain('rows_after=2')

    // Within the hour after a dedupe, the next one is refused with the API's code.
    const soon = await lhbox(['sink', 'dedupe', `${NS}_b`])
    expect(soon.code).toBe(1)
    expect(soon.stderr).toMatch(/^error: dedupe_too_soon: /)
  })

  it('delete refuses while batches wait; --discard-pending deletes them', async () => {
    const refused = await lhbox(['sink', 'delete', `${NS}_a`])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(new RegExp(`^error: pending_batches: sink ${NS}_a has 1 batch .*--discard-pending`))
    expect((await getSink(a.sink_id)).state).toBe('active')

    const res = await lhbox(['sink', 'delete', `${NS}_a`, '--discard-pending', '--json'])
    expect(res.code, res.stderr).toBe(0)
    expect(JSON.parse(res.stdout)).toEqual({ id: a.sink_id, state: 'deleted', pending_batches_discarded: 1 })
    expect(await sinksOn(`${NS}.t1`)).toEqual([])
    const all = await lhbox(['sink', 'list', stack().warehouse, '--all', '--json'])
    expect(JSON.parse(all.stdout).find((s: { id: string }) => s.id === a.sink_id).state).toBe('deleted')

    // Its key stops working at once.
    const sent = await lhbox(['sink', 'send', batchFile, '--send-key-file', keyFile])
    expect(sent.code).toBe(1)
    expect(sent.stderr).toMatch(/\nerror: unauthorized: /)

    const human = await lhbox(['sink', 'delete', `${NS}_b`, '--discard-pending'])
    expect(human.code, human.stderr).toBe(0)
    expect(human.stdout).toMatch(new RegExp(String.raw`^deleted sink ${NS}_b \(snk_[0-9a-f]+\): 2 pending batches discarded; its send key no longer works`))
  })

  it('a device sink: create --preset, update --device-require/--device-strip, get shows them, device-url prints what a device app needs', async () => {
    const columns = Object.entries(PRESETS.owntracks.columns).map(([name, type]) => ({ name, type }))
    const made = await call('/v1/tables', { key: admin(), json: { warehouse: stack().warehouse, table: `${NS}.phones`, format_version: 3, columns } })
    expect(made.status, made.text).toBe(201)
    const file = join(dir, 'phones.json')
    const created = await lhbox([
      'sink',
      'create',
      stack().warehouse,
      '--table',
      `${NS}.phones`,
      '--name',
      `${NS}_phones`,
      '--preset',
      'owntracks',
      '--save',
      file,
    ])
    expect(created.code, created.stderr).toBe(0)
    const saved = JSON.parse(readFileSync(file, 'utf8'))
    expect((await getSink(saved.sink_id)).mapping).toEqual({ preset: 'owntracks' })

    const updated = await lhbox(['sink', 'update', `${NS}_phones`, '--device-require', '/_type=location', '--device-strip', '/_http'])
    expect(updated.code, updated.stderr).toBe(0)
    const view = await getSink(saved.sink_id)
    expect([view.device_require, view.device_strip]).toEqual([{ '/_type': 'location' }, ['/_http']])
    const shown = await lhbox(['sink', 'get', `${NS}_phones`])
    expect(shown.stdout).toMatch(/mapping\s+preset owntracks/)

    const refused = await lhbox(['sink', 'update', `${NS}_phones`, '--mapping-file', join(dir, 'nope.json')])
    expect(refused.code).toBe(1)
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ columns: { nope: '/x' } }))
    const invalid = await lhbox(['sink', 'update', `${NS}_phones`, '--mapping-file', join(dir, 'bad.json')])
    expect(invalid.code).toBe(1)
    expect(invalid.stderr).toMatch(/mapping_invalid: .*nope/)

    const basic = await lhbox(['sink', 'device-url', `${NS}_phones`, '--device', 'alice', '--basic', '--send-key-file', file, '--json'])
    expect(basic.code, basic.stderr).toBe(0)
    const { url, user, password } = JSON.parse(basic.stdout)
    expect([url, user, password]).toEqual([`${stack().apiUrl}/v1/sinks/${saved.sink_id}/devices/alice`, 'alice', saved.send_key])
    // What the OwnTracks app then does: Basic auth, no Content-Type, no Idempotency-Key.
    const res = await fetch(url, {
      method: 'POST',
      headers: { Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` },
      body: '{"_type":"location","lat":52.5,"lon":13.4,"tst":1700000000,"tid":"al"}',
    })
    expect([res.status, await res.text()]).toEqual([200, '[]'])
    const inUrl = await lhbox(['sink', 'device-url', `${NS}_phones`, '--device', 'alice', '--send-key-file', file])
    expect(inUrl.stdout.trim()).toBe(`${url}?key=${saved.send_key}`)
    expect(inUrl.stderr).toMatch(/access logs/)
    expect((await getSink(saved.sink_id)).lag.batches_waiting).toBe(1)
    expect((await lhbox(['sink', 'delete', `${NS}_phones`, '--discard-pending'])).code).toBe(0)
  })
})
