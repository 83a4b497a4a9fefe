// Send-key rotation (issue 30, part 4): POST /v1/sinks/{id}/send-keys answers a new key once and the
// previous one keeps working until previous_retires_at; DELETE …/send-keys/previous (or a rotation with
// 0 seconds) retires it at once; two keys live at most. Both keys on the send and device routes during
// the overlap, 401 after; the batches of both rolled and read back with PyIceberg; levels and projects;
// bad bodies; the audit log; the console's action; `lhbox sink rotate-key --save`.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { lhbox } from '../support/cli.ts'
import { expectExactlyOnce, scan, rollerSetup, SETUP_TIMEOUT } from '../support/roller-check.ts'
import { tickInProcess } from '../support/roller.ts'
import { expect401, feedSinksDeletedAfter, newProject, newSink, SEND_KEY_FORMAT, send, uid, type Sink } from '../support/sinks.ts'
import { call, expectError, newApiKey, stack, type Answer } from '../support/stack.ts'

const rotate = (sink: { id: string }, body?: unknown, key = stack().adminKey): Promise<Answer> =>
  call(`/v1/sinks/${sink.id}/send-keys`, { method: 'POST', key, ...(body === undefined ? {} : { json: body }) })
const retire = (sink: { id: string }, key = stack().adminKey): Promise<Answer> => call(`/v1/sinks/${sink.id}/send-keys/previous`, { method: 'DELETE', key })
const view = async (sink: { id: string }) => (await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })).body
/** A send with this key; `x` the row's value. */
const sendWith = (sink: Sink, key: string, x: number, batchId = `b-${uid()}`) => send({ id: sink.id, sendKey: key }, [{ x }], { batchId })
const device = (sink: Sink, key: string, x: number) =>
  call(`/v1/sinks/${sink.id}/devices/dev1?key=${key}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ x }) })
const secondsFromNow = (t: string) => (Date.parse(t) - Date.now()) / 1000

let db: pg.Client
let whId: string
beforeAll(async () => ({ db, whId } = await rollerSetup()), SETUP_TIMEOUT)
afterAll(() => db?.end())

/** The sink's audit events but its rolls. */
const auditOf = async (sinkId: string) =>
  (await db.query(`select action from audit_events where subject = $1 and action <> 'sink.roll' order by id`, [sinkId])).rows.map((r) => r.action)

describe('a rotation with an overlap', () => {
  let sink: Sink
  let first: string
  let second: Answer
  beforeAll(async () => {
    sink = await newSink(stack().adminKey)
    first = sink.sendKey
    expect((await sendWith(sink, first, 1)).status).toBe(202)
    second = await rotate(sink, {})
  })

  it('answers 201 with a new key and when the previous one retires (a day by default)', async () => {
    expect(second.status, second.text).toBe(201)
    expect(second.body).toEqual({
      sink_id: sink.id,
      name: sink.name,
      ingest_url: `${stack().apiUrl}/v1/sinks/${sink.id}`,
      send_key: expect.stringMatching(SEND_KEY_FORMAT),
      previous_retires_at: expect.any(String),
    })
    expect(second.body.send_key).not.toBe(first)
    // The database's clock and this machine's: the same machine.
    expect(Math.abs(secondsFromNow(second.body.previous_retires_at) - 86_400)).toBeLessThan(120)
    expect((await view(sink)).previous_send_key_retires_at).toBe(second.body.previous_retires_at)
  })

  it('takes both keys on the send and device routes during the overlap; a batch retried with the other key is a duplicate', async () => {
    expect((await sendWith(sink, first, 2)).status).toBe(202)
    expect((await sendWith(sink, second.body.send_key, 3, 'overlap')).status).toBe(202)
    const retried = await sendWith(sink, first, 3, 'overlap')
    expect(retried.status).toBe(200)
    expect(retried.body.duplicate).toBe(true)
    expect((await device(sink, first, 4)).status).toBe(202)
    expect((await device(sink, second.body.send_key, 5)).status).toBe(202)
  })

  it('DELETE …/send-keys/previous retires the previous key at once: 401 on both routes; the new key goes on', async () => {
    const res = await retire(sink)
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual({ sink_id: sink.id, previous_retired_at: expect.any(String) })
    expect401(await sendWith(sink, first, 6))
    expect((await device(sink, first, 6)).status).toBe(401)
    expect((await sendWith(sink, second.body.send_key, 7)).status).toBe(202)
    expect((await view(sink)).previous_send_key_retires_at).toBeNull()
    expectError(await retire(sink), 409, 'no_previous_key')
  })

  it('rolls the batches of both keys: PyIceberg reads them back', async () => {
    const t = await tickInProcess({ sink: sink.id })
    expect(t.code, t.stdout + t.stderr).toBe(0)
    expectExactlyOnce(await scan({ sql: whId }, sink.table), [1, 2, 3, 4, 5, 7])
  })

  it('audits sink.key_rotate and sink.key_retire', async () => {
    expect(await auditOf(sink.id)).toEqual(['sink.create', 'sink.key_rotate', 'sink.key_retire'])
  })
})

describe('retirement and the two-key limit', () => {
  it('retire_previous_after_seconds 0 retires the replaced key now', async () => {
    const sink = await newSink(stack().adminKey)
    const res = await rotate(sink, { retire_previous_after_seconds: 0 })
    expect(res.status).toBe(201)
    expect(secondsFromNow(res.body.previous_retires_at)).toBeLessThan(5)
    expect401(await sendWith(sink, sink.sendKey, 1))
    expect((await sendWith(sink, res.body.send_key, 2)).status).toBe(202)
    expect((await view(sink)).previous_send_key_retires_at).toBeNull()
    expectError(await retire(sink), 409, 'no_previous_key')
    expect(await auditOf(sink.id)).toEqual(['sink.create', 'sink.key_rotate', 'sink.key_retire'])
  })

  it('a rotation during an overlap retires the older previous key: two keys live at most', async () => {
    const sink = await newSink(stack().adminKey)
    const k2 = (await rotate(sink, { retire_previous_after_seconds: 600 })).body
    expect(Math.abs(secondsFromNow(k2.previous_retires_at) - 600)).toBeLessThan(120)
    const k3 = (await rotate(sink, { retire_previous_after_seconds: 604_800 })).body
    expect(Math.abs(secondsFromNow(k3.previous_retires_at) - 604_800)).toBeLessThan(120)
    expect401(await sendWith(sink, sink.sendKey, 1))
    expect((await sendWith(sink, k2.send_key, 2)).status).toBe(202)
    expect((await sendWith(sink, k3.send_key, 3)).status).toBe(202)
    expect(await auditOf(sink.id)).toEqual(['sink.create', 'sink.key_rotate', 'sink.key_rotate', 'sink.key_retire'])
  })

  it('a deleted sink has no keys to rotate (404), and its keys stay refused', async () => {
    const sink = await newSink(stack().adminKey)
    const k2 = (await rotate(sink)).body
    expect((await call(`/v1/sinks/${sink.id}`, { method: 'DELETE', key: stack().adminKey })).status).toBe(202)
    expectError(await rotate(sink), 404, 'sink_not_found')
    expectError(await retire(sink), 404, 'sink_not_found')
    expect401(await sendWith(sink, k2.send_key, 1))
    expect401(await sendWith(sink, sink.sendKey, 1))
  })
})

describe('who may rotate, and what', () => {
  let sink: Sink
  beforeAll(async () => {
    sink = await newSink(stack().adminKey)
  })

  it('a write key may; a read key is 403; another project’s key 404; a send key 403 send_only', async () => {
    const read = await newApiKey('read')
    expectError(await rotate(sink, {}, read), 403, 'forbidden')
    expectError(await retire(sink, read), 403, 'forbidden')
    const other = await newProject()
    expectError(await rotate(sink, {}, other.key), 404, 'sink_not_found')
    expectError(await retire(sink, other.key), 404, 'sink_not_found')
    expectError(await rotate(sink, {}, sink.sendKey), 403, 'send_only')
    expectError(await retire(sink, sink.sendKey), 403, 'send_only')
    expect((await call(`/v1/sinks/${sink.id}/send-keys`, { method: 'POST' })).status).toBe(401)
    // Nothing of that rotated: the first key is the only one.
    expect((await view(sink)).previous_send_key_retires_at).toBeNull()
    const write = await newApiKey('write')
    const byName = await call(`/v1/sinks/${sink.name}/send-keys`, { method: 'POST', key: write })
    expect(byName.status).toBe(201)
    expect((await sendWith(sink, byName.body.send_key, 1)).status).toBe(202)
  })

  const feedSink = feedSinksDeletedAfter(afterAll)
  it('a files sink has no send key to rotate or retire (409 no_send_key)', async () => {
    // A files sink lists under its warehouse's root.
    const root = (await call(`/v1/warehouses/${stack().warehouse}`, { key: stack().adminKey })).body.prefix
    const files = await newSink(stack().adminKey, {
      tableSpec: { columns: [{ name: 'path', type: 'string', required: true }] },
      sink: { files: { prefix: `${root}/nokey-${uid()}/`, every_seconds: 600 } },
    })
    feedSink(files.id)
    expectError(await rotate(files, {}), 409, 'no_send_key')
    expectError(await retire(files), 409, 'no_send_key')
  })

  it('refuses bad bodies with 400 (415 for another type); no body takes the defaults', async () => {
    for (const body of [
      { retire_previous_after_seconds: -1 },
      { retire_previous_after_seconds: 604_801 },
      { retire_previous_after_seconds: 1.5 },
      { retire_previous_after_seconds: '60' },
      { retire_previous_after_seconds: null },
      { other: 1 },
      [],
    ]) {
      expectError(await rotate(sink, body), 400, 'invalid_request')
    }
    const headers = { 'content-type': 'application/json' }
    expectError(await call(`/v1/sinks/${sink.id}/send-keys`, { method: 'POST', key: stack().adminKey, headers, body: '{"retire' }), 400, 'malformed_json')
    const plain = { 'content-type': 'text/plain' }
    expectError(
      await call(`/v1/sinks/${sink.id}/send-keys`, { method: 'POST', key: stack().adminKey, headers: plain, body: 'x' }),
      415,
      'unsupported_media_type',
    )
    const none = await rotate(sink)
    expect(none.status).toBe(201)
    expect(Math.abs(secondsFromNow(none.body.previous_retires_at) - 86_400)).toBeLessThan(120)
  })
})

describe('the console and the CLI', () => {
  it('the sink page offers a write key the rotation (and the retirement during an overlap); a read key neither', async () => {
    const sink = await newSink(stack().adminKey)
    const page = async (key: string) => (await call(`/console/f/sinks/${sink.id}`, { key })).text
    const write = await page(stack().adminKey)
    expect(write).toContain(`data-path="/v1/sinks/${sink.id}/send-keys"`)
    expect(write).not.toContain('/send-keys/previous')
    expect(await page(await newApiKey('read'))).not.toContain('/send-keys')
    expect((await rotate(sink)).status).toBe(201)
    expect(await page(stack().adminKey)).toContain(`data-path="/v1/sinks/${sink.id}/send-keys/previous"`)
  })

  it('lhbox sink rotate-key NAME --save FILE writes the new key file (0600, no key printed); sink send uses it', async () => {
    const sink = await newSink(stack().adminKey)
    const dir = mkdtempSync(join(tmpdir(), 'lhbox-rotate-'))
    try {
      const file = join(dir, 'new-key.json')
      const none = await lhbox(['sink', 'rotate-key', sink.name])
      expect(none.code).not.toBe(0)
      expect(none.stderr).toMatch(/--save FILE.*--show-key/)
      expect((await view(sink)).previous_send_key_retires_at).toBeNull()

      const res = await lhbox(['sink', 'rotate-key', sink.name, '--save', file, '--retire-previous-after', '3600'])
      expect(res.code, res.stderr).toBe(0)
      expect(res.stdout).toContain(`saved to ${file} (mode 0600)`)
      const saved = JSON.parse(readFileSync(file, 'utf8'))
      expect(saved).toEqual({
        sink_id: sink.id,
        name: sink.name,
        send_key: expect.stringMatching(SEND_KEY_FORMAT),
        ingest_url: `${stack().apiUrl}/v1/sinks/${sink.id}`,
      })
      expect(res.stdout).not.toContain(saved.send_key)
      expect(statSync(file).mode & 0o777).toBe(0o600)
      expect(Math.abs(secondsFromNow((await view(sink)).previous_send_key_retires_at) - 3600)).toBeLessThan(120)

      // The saved file is what sink send reads; the old key still works until it is retired.
      const batch = join(dir, 'batch.json')
      writeFileSync(batch, '[{"x":1}]')
      const sent = await lhbox(['sink', 'send', sink.name, batch, '--send-key-file', file])
      expect(sent.code, sent.stderr).toBe(0)
      expect((await sendWith(sink, sink.sendKey, 2)).status).toBe(202)

      const again = await lhbox(['sink', 'rotate-key', sink.name, '--save', file])
      expect(again.code).not.toBe(0)
      expect(again.stderr).toContain('never overwrites')

      const retired = await lhbox(['sink', 'retire-previous-key', sink.name])
      expect(retired.code, retired.stderr).toBe(0)
      expect401(await sendWith(sink, sink.sendKey, 3))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
