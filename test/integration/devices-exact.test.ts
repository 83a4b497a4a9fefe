// Device settings keep their numbers exactly (issue 31, item 8): a mapping's `const` long above 2^53
// and a decimal(38, 10) with every digit, set by POST /v1/sinks and kept through a PATCH of another
// device field, are answered digit for digit (create, GET, PATCH) and land in the table exactly —
// a device row sent through, rolled, and read back with PyIceberg.
//
// The bodies are written as JSON text: a JS number cannot hold these values, so neither can the test's
// own JSON.stringify. The sink is leased to this file's roller id, so the stack's roller never rolls it.
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deviceCall, ledgerBatches } from '../support/devices.ts'
import { runPython, sqlCatalogArgs, toExact } from '../support/python.ts'
import { holdSink, tickInProcess } from '../support/roller.ts'
import { rollerSetup, SETUP_TIMEOUT } from '../support/roller-check.ts'
import { createTable, poll, uid } from '../support/sinks.ts'
import { call, expectError, stack } from '../support/stack.ts'

const HOLDER = `devices-exact-${uid()}`
const admin = () => stack().adminKey
const LONG = '9007199254740993' // 2^53 + 1: JSON.parse reads 9007199254740992
const DECIMAL = '1234567890123456789012345678.1234567891' // decimal(38, 10), every digit significant
const MAPPING = `{"columns": {"big": {"const": ${LONG}}, "amount": {"const": ${DECIMAL}}, "dev": {"device": true}}}`

let db: pg.Client
let whId: string
beforeAll(async () => ({ db, whId } = await rollerSetup()), SETUP_TIMEOUT)
afterAll(() => db?.end())

const rawJson = (path: string, method: string, text: string) =>
  call(path, { method, key: admin(), body: text, headers: { 'content-type': 'application/json' } })

/** The mapping's constants as the answer's text holds them (never through JSON.parse). */
function constants(text: string): { big?: string; amount?: string } {
  return {
    big: /"big":\{"const":(-?[0-9.eE+-]+)\}/.exec(text)?.[1],
    amount: /"amount":\{"const":(-?[0-9.eE+-]+)\}/.exec(text)?.[1],
  }
}

describe('a mapping const beyond a double, kept exactly', () => {
  let sink: { id: string; sendKey: string; table: string }
  let created: string

  beforeAll(async () => {
    const table = await createTable(admin(), {
      columns: [
        { name: 'big', type: 'long' },
        { name: 'amount', type: 'decimal(38, 10)' },
        { name: 'dev', type: 'string' },
      ],
    })
    const res = await rawJson(
      '/v1/sinks',
      'POST',
      `{"warehouse": ${JSON.stringify(stack().warehouse)}, "name": "s_${uid()}", "table": ${JSON.stringify(table)}, "mapping": ${MAPPING}}`,
    )
    expect(res.status, res.text).toBe(201)
    created = res.text
    sink = { id: res.body.id, sendKey: res.body.send_key, table }
    await holdSink(sink.id, HOLDER)
  })

  it('the create answer holds the constants digit for digit', () => {
    expect(constants(created)).toEqual({ big: LONG, amount: DECIMAL })
  })

  it('GET /v1/sinks/{id} answers the constants digit for digit', async () => {
    const res = await call(`/v1/sinks/${sink.id}`, { key: admin() })
    expect(res.status, res.text).toBe(200)
    expect(constants(res.text)).toEqual({ big: LONG, amount: DECIMAL })
  })

  it('a PATCH of device_strip alone keeps the stored mapping exact', async () => {
    const res = await rawJson(`/v1/sinks/${sink.id}`, 'PATCH', '{"device_strip": ["/secret"]}')
    expect(res.status, res.text).toBe(200)
    expect(constants(res.text)).toEqual({ big: LONG, amount: DECIMAL })
    const again = await call(`/v1/sinks/${sink.id}`, { key: admin() })
    expect(constants(again.text)).toEqual({ big: LONG, amount: DECIMAL })
  })

  it('a device_require number a double cannot hold is 400 invalid_request, not rounded (compare with a string)', async () => {
    const res = await rawJson(`/v1/sinks/${sink.id}`, 'PATCH', `{"device_require": {"/n": ${LONG}}}`)
    expectError(res, 400, 'invalid_request')
    expect(constants((await call(`/v1/sinks/${sink.id}`, { key: admin() })).text)).toEqual({ big: LONG, amount: DECIMAL })
  })

  it('a device row lands in the table with the exact long and decimal (PyIceberg)', async () => {
    const sent = await deviceCall(sink.id, 'meter-1', { body: '{"secret": "s"}', contentType: 'application/json', auth: { query: sink.sendKey } })
    expect(sent.status, sent.text).toBe(202)
    await poll(async () => (await ledgerBatches(db, sink.id)).every((b) => b.state === 'pending'), 15_000, 'the batch stored')
    const t = await tickInProcess({ sink: sink.id, rollerId: HOLDER })
    expect({ code: t.code, signal: t.signal }, t.stdout + t.stderr).toEqual({ code: 0, signal: null })
    await poll(async () => (await ledgerBatches(db, sink.id)).every((b) => b.state === 'committed'), 15_000, 'the batch committed')
    const catalog = sqlCatalogArgs({ databaseUrl: stack().databaseUrl, catalogName: whId, s3: stack().s3 })
    const { rows } = toExact(await runPython('pyiceberg_scan.py', [...catalog, sink.table, '--no-files']))
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ big: BigInt(LONG), amount: DECIMAL, dev: 'meter-1' })
  })
})
