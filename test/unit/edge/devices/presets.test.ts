// Each preset against its vendor's documented payloads (test/fixtures/devices): the payload read as
// the route reads it, the preset compiled against a table with the preset's columns, and every
// mapped row both equal to the fixture's and accepted by the roller's own value rules.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse as losslessParse } from 'lossless-json'
import { describe, expect, it } from 'vitest'
import { compileDevice } from '../../../../edge/devices/compile.ts'
import { readPayload } from '../../../../edge/devices/payload.ts'
import { PRESETS } from '../../../../edge/devices/presets/index.ts'
import { deviceRows } from '../../../../edge/devices/rows.ts'
import { tableFor } from './table.ts'
import { toRow } from '../../../../iceberg/spec/values.ts'

const DIR = join(import.meta.dirname, '../../../fixtures/devices')

interface Fixture {
  source: string
  method: string
  content_type: string | null
  query: string
  body: string | null
  device_id: string
  rows: Record<string, unknown>[]
  ignored: boolean
}

/** A row without its nulls: an absent member and a null are the same row to the table. */
const withoutNulls = (row: Record<string, unknown>) => Object.fromEntries(Object.entries(row).filter(([, v]) => v !== null))

const lines = (bytes: Uint8Array) =>
  new TextDecoder()
    .decode(bytes)
    .split('\n')
    .filter((l) => l !== '')

describe.each(Object.keys(PRESETS))('preset %s', (name) => {
  const preset = PRESETS[name]
  const files = readdirSync(join(DIR, name)).filter((f) => f.endsWith('.json'))
  const meta = tableFor(preset.columns)
  const compiled = compileDevice({ mapping: { preset: name }, require: null, strip: null }, meta)!

  it('has fixtures, and documents its sources', () => {
    expect(files.length).toBeGreaterThan(0)
    expect(preset.docs.length).toBeGreaterThan(0)
  })

  it.each(files)('%s maps to the documented row, and the roller accepts it', (file) => {
    const fx: Fixture = JSON.parse(readFileSync(join(DIR, name, file), 'utf8'))
    const body = fx.body === null ? new Uint8Array(0) : new TextEncoder().encode(fx.body)
    const payload = readPayload(body, fx.content_type ?? undefined, new URLSearchParams(fx.query))
    const out = deviceRows(payload, compiled, fx.device_id)
    expect(out.ignored !== null).toBe(fx.ignored)
    const joined = new Uint8Array(out.lines.flatMap((l) => [...l]))
    const got = lines(joined).map((l) => JSON.parse(l))
    expect(got.map(withoutNulls)).toEqual(fx.rows.map(withoutNulls))
    for (const line of lines(joined)) {
      const r = toRow({ type: 'struct', fields: meta.schemas[0].fields }, losslessParse(line), { formatVersion: 3 })
      expect(r.ok ? [] : r.rejects).toEqual([])
    }
  })

  it('is refused on a table that lacks one of its columns, naming it and its type', () => {
    const [first, ...rest] = Object.entries(preset.columns)
    const missing = tableFor(Object.fromEntries(rest))
    expect(() => compileDevice({ mapping: { preset: name }, require: null, strip: null }, missing)).toThrow(
      expect.objectContaining({ status: 400, code: 'mapping_invalid', details: expect.objectContaining({ column: first[0], type: first[1] }) }),
    )
  })
})
