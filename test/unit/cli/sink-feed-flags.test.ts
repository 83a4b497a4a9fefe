// lhbox sink create/update's feed flags (--sql, --files-prefix, --pattern, --every) → the request body.
import { parseArgs } from 'node:util'
import { describe, expect, it } from 'vitest'
import { createBody, SINK_FLAGS, updateBody } from '../../../cli/commands/sink.ts'
import { everySeconds } from '../../../cli/commands/sink-feeds.ts'

const flags = (argv: string[]) => parseArgs({ args: argv, allowPositionals: true, options: SINK_FLAGS }).values
const create = (argv: string[]) => createBody('wh', flags(['--table', 'a.b', '--name', 'n', ...argv]))

describe('feed flags', () => {
  it('reads --every as seconds, minutes, hours or days', () => {
    expect([everySeconds('90'), everySeconds('90s'), everySeconds('5m'), everySeconds('1h'), everySeconds('2d')]).toEqual([90, 90, 300, 3600, 172_800])
    expect(() => everySeconds('1w')).toThrow(/--every 1w/)
    expect(() => everySeconds('-5m')).toThrow(/--every/)
  })

  it('makes a SQL sink or a files sink at create, never both, --every required', () => {
    expect(create(['--sql', 'SELECT 1', '--every', '1h'])).toMatchObject({ sql: { query: 'SELECT 1', every_seconds: 3600 } })
    expect(create(['--files-prefix', 'up/', '--every', '5m', '--pattern', 'cams/{camera}/{name}.jpg'])).toMatchObject({
      files: { prefix: 'up/', every_seconds: 300, pattern: 'cams/{camera}/{name}.jpg' },
    })
    expect(create([])).not.toHaveProperty('sql')
    expect(() => create(['--sql', 'SELECT 1'])).toThrow(/--every is required/)
    expect(() => create(['--sql', 'SELECT 1', '--files-prefix', 'x/', '--every', '1h'])).toThrow(/one of --sql and --files-prefix/)
    expect(() => create(['--every', '1h'])).toThrow(/go with --sql or --files-prefix/)
    expect(() => create(['--sql', 'SELECT 1', '--every', '1h', '--pattern', 'p/{a}'])).toThrow(/--pattern goes with --files-prefix/)
  })

  it('changes only what the flags name at update; --every alone follows the sink kind', () => {
    expect(updateBody(flags(['--sql', 'SELECT 2']))).toEqual({ sql: { query: 'SELECT 2' } })
    expect(updateBody(flags(['--every', '2h']), undefined, 'sql')).toEqual({ sql: { every_seconds: 7200 } })
    expect(updateBody(flags(['--every', '10m']), undefined, 'files')).toEqual({ files: { every_seconds: 600 } })
    expect(updateBody(flags(['--pattern', 'a/{b}']))).toEqual({ files: { pattern: 'a/{b}' } })
    expect(() => updateBody(flags(['--every', '1h']))).toThrow(/send sink/)
  })
})
