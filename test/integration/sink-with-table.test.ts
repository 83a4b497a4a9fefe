// POST /v1/sinks with `columns` (issue 30, part 5): the table and its sink in one request — the table
// created when it does not exist, with its partition and format version; a table that exists is 409
// table_exists; nothing is left half-made when any check fails. And `lhbox sink create --column`.
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { lhbox } from '../support/cli.ts'
import { ensureVenv } from '../support/python.ts'
import { tickInProcess } from '../support/roller.ts'
import { scan, warehouseId } from '../support/roller-check.ts'
import { createTable, postSink, send, uid } from '../support/sinks.ts'
import { call, expectError, newApiKey, stack } from '../support/stack.ts'

const COLUMNS = [
  { name: 'x', type: 'long', required: true },
  { name: 'ts', type: 'timestamptz', doc: 'When it was measured' },
  { name: 'temp', type: 'double' },
]

beforeAll(() => ensureVenv(), 15 * 60_000)

const tableOf = (table: string) => call(`/v1/tables/${stack().warehouse}.${table}`, { key: stack().adminKey })
const sinkNamed = (name: string) => call(`/v1/sinks/${name}`, { key: stack().adminKey })

describe('POST /v1/sinks with columns', () => {
  it('creates the table (partition, format version, docs) and the sink; rows sent roll into it', async () => {
    const table = `made.t_${uid()}`
    const name = `s_${uid()}`
    const res = await postSink(stack().adminKey, { name, table, columns: COLUMNS, partition: ['day(ts)'], format_version: 3 })
    expect(res.status, res.text).toBe(201)
    expect(res.body).toMatchObject({ name, table, send_key: expect.stringMatching(/^al_send_/) })
    // The sink's docs hint names what the request left undescribed.
    expect(res.body.docs_hint).toBeDefined()
    const t = await tableOf(table)
    expect(t.status, t.text).toBe(200)
    expect(t.body).toMatchObject({ format_version: 3, partition_spec: [{ transform: 'day', source: 'ts' }] })
    expect(t.body.schema.fields.map((f: any) => [f.name, f.type, f.required, f.doc ?? null])).toEqual([
      ['x', 'long', true, null],
      ['ts', 'timestamptz', false, 'When it was measured'],
      ['temp', 'double', false, null],
    ])
    const sent = await send({ id: res.body.id, sendKey: res.body.send_key }, '[{"x": 9007199254740993, "ts": "2026-12-03T10:00:00Z", "temp": 1.5}]')
    expect(sent.status, sent.text).toBe(202)
    expect((await tickInProcess({ sink: res.body.id })).code).toBe(0)
    const rows = (await scan({ sql: await warehouseId(stack().warehouse) }, table)).rows
    expect(rows.map((r) => String(r.x))).toEqual(['9007199254740993'])
  })

  it('refuses columns for a table that exists (409 table_exists): no sink is made', async () => {
    const table = await createTable(stack().adminKey, { columns: COLUMNS })
    const name = `s_${uid()}`
    expectError(await postSink(stack().adminKey, { name, table, columns: COLUMNS }), 409, 'table_exists')
    expect((await sinkNamed(name)).status).toBe(404)
  })

  it('leaves nothing made when a check fails: a bad type, a bad partition, a sink check, a name taken', async () => {
    const taken = `s_${uid()}`
    expect((await postSink(stack().adminKey, { name: taken, table: await createTable(stack().adminKey, { columns: COLUMNS }) })).status).toBe(201)
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ columns: [{ name: 'x', type: 'longish' }] }, 400, 'invalid_schema'],
      [{ columns: COLUMNS, partition: ['day(nope)'] }, 400, 'invalid_partition'],
      // Checked on the table as it would be made: a key on a double column is refused before anything is written.
      [{ columns: COLUMNS, key: ['temp'] }, 409, 'key_type_unsupported'],
      [{ columns: COLUMNS, name: taken }, 409, 'sink_name_taken'],
      [{ columns: [] }, 400, 'invalid_request'],
      [{ partition: ['day(ts)'] }, 400, 'invalid_request'],
    ]
    for (const [extra, status, code] of cases) {
      const table = `made.t_${uid()}`
      const name = `s_${uid()}`
      const res = await postSink(stack().adminKey, { name, table, ...extra })
      expect({ status: res.status, code: res.body?.error?.code }, `${JSON.stringify(extra)}: ${res.text}`).toEqual({ status, code })
      expect((await tableOf(table)).status, `${JSON.stringify(extra)}: the table`).toBe(404)
      if (extra.name === undefined) expect((await sinkNamed(name)).status).toBe(404)
    }
  })

  it('needs a write key: read 403, send 403, another project’s warehouse 404', async () => {
    const body = { name: `s_${uid()}`, table: `made.t_${uid()}`, columns: COLUMNS }
    expectError(await postSink(await newApiKey('read'), body), 403, 'forbidden')
    expect((await tableOf(body.table)).status).toBe(404)
  })
})

describe('lhbox sink create --column', () => {
  it('creates the table and the sink, and saves the send key', async () => {
    const table = `made.t_${uid()}`
    const name = `s_${uid()}`
    const save = join(mkdtempSync(join(tmpdir(), 'lhbox-sink-table-')), 'key.json')
    const run = await lhbox([
      'sink',
      'create',
      stack().warehouse,
      '--table',
      table,
      '--name',
      name,
      '--column',
      'x:long:required',
      '--column',
      'ts:timestamptz',
      '--partition',
      'hour(ts)',
      '--format-version',
      '3',
      '--save',
      save,
    ])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain(`created sink ${name}`)
    expect(JSON.parse(readFileSync(save, 'utf8'))).toMatchObject({ name, send_key: expect.stringMatching(/^al_send_/) })
    expect((await tableOf(table)).body.partition_spec).toEqual([expect.objectContaining({ transform: 'hour', source: 'ts' })])
    const again = await lhbox(['sink', 'create', stack().warehouse, '--table', table, '--name', `s_${uid()}`, '--column', 'x:long', '--show-key'])
    expect(again.code).not.toBe(0)
    expect(again.stderr).toContain('table_exists')
  })
})
