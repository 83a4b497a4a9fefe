import { describe, expect, it } from 'vitest'
import { applyTransform, hashValue, parseTransform, resultType, transformToString } from '../../../iceberg/spec/transforms.ts'
import {
  bindSpec,
  buildPartitionSpec,
  humanString,
  parsePartitionExpression,
  partitionPath,
  partitionRecord,
  PartitionSpecError,
} from '../../../iceberg/spec/partition.ts'
import type { NestedField } from '../../../iceberg/spec/types.ts'

const micros = (iso: string) => BigInt(Date.parse(iso)) * 1000n
const days = (iso: string) => Date.parse(`${iso}T00:00:00Z`) / 86_400_000

describe('parseTransform', () => {
  it('parses every transform of the spec and keeps unknown ones', () => {
    for (const t of ['identity', 'year', 'month', 'day', 'hour', 'void', 'bucket[16]', 'truncate[4]']) {
      expect(transformToString(parseTransform(t))).toBe(t)
    }
    expect(parseTransform('bucket[16]')).toEqual({ kind: 'bucket', n: 16 })
    expect(parseTransform('truncate[10]')).toEqual({ kind: 'truncate', width: 10 })
    expect(parseTransform('zorder')).toEqual({ kind: 'unknown', name: 'zorder' })
  })

  it('types day as date and the other time transforms as int', () => {
    expect(resultType(parseTransform('day'), 'timestamptz')).toBe('date')
    expect(resultType(parseTransform('hour'), 'timestamptz')).toBe('int')
    expect(resultType(parseTransform('identity'), 'long')).toBe('long')
    expect(resultType(parseTransform('bucket[4]'), 'string')).toBe('int')
  })
})

describe('time transforms', () => {
  const t = (name: string, source: string, v: number | bigint) => applyTransform(parseTransform(name), source, v)

  it('day of 1970-01-01 is 0', () => {
    expect(t('day', 'date', 0)).toBe(0)
    expect(t('day', 'timestamptz', 0n)).toBe(0)
    expect(t('day', 'timestamp', micros('1970-01-01T23:59:59.999Z'))).toBe(0)
  })

  it('hour of 2026-09-21T12:34Z', () => {
    const expected = Date.UTC(2026, 8, 21, 12) / 3_600_000
    expect(t('hour', 'timestamptz', micros('2026-09-21T12:34:00Z'))).toBe(expected)
    expect(t('hour', 'timestamptz_ns', micros('2026-09-21T12:34:00Z') * 1000n + 999n)).toBe(expected)
    expect(t('day', 'timestamptz', micros('2026-09-21T12:34:00Z'))).toBe(days('2026-09-21'))
  })

  it('months and years count from 1970, flooring before the epoch', () => {
    expect(t('month', 'date', days('1969-12-31'))).toBe(-1)
    expect(t('month', 'date', days('1969-12-01'))).toBe(-1)
    expect(t('month', 'date', days('1969-11-30'))).toBe(-2)
    expect(t('year', 'date', days('1969-12-31'))).toBe(-1)
    expect(t('month', 'timestamptz', -1n)).toBe(-1)
    expect(t('day', 'timestamptz', -1n)).toBe(-1)
    expect(t('hour', 'timestamp', -1n)).toBe(-1)
    expect(t('year', 'timestamp_ns', -1n)).toBe(-1)
    expect(t('year', 'timestamptz', micros('2026-09-21T12:34:00Z'))).toBe(56)
    expect(t('month', 'timestamptz', micros('2026-09-21T12:34:00Z'))).toBe(56 * 12 + 8)
    expect(t('month', 'date', days('1970-01-31'))).toBe(0)
    expect(t('year', 'date', days('2000-02-29'))).toBe(30)
  })

  it('null in, null out; void is always null', () => {
    expect(t('day', 'date', null as unknown as number)).toBeNull()
    expect(t('void', 'long', 5n)).toBeNull()
    expect(t('identity', 'long', 9223372036854775807n)).toBe(9223372036854775807n)
  })
})

describe('bucket and truncate', () => {
  it('hashes the spec Appendix B test values', () => {
    expect(hashValue('int', 34)).toBe(2017239379)
    expect(hashValue('long', 34n)).toBe(2017239379)
    expect(hashValue('decimal(4,2)', 1420n)).toBe(-500754589)
    expect(hashValue('date', days('2017-11-16'))).toBe(-653330422)
    expect(hashValue('time', 81068000000n)).toBe(-662762989)
    expect(hashValue('timestamp', micros('2017-11-16T22:31:08Z'))).toBe(-2047944441)
    expect(hashValue('timestamp', micros('2017-11-16T22:31:08Z') + 1n)).toBe(-1207196810)
    expect(hashValue('timestamptz_ns', (micros('2017-11-16T22:31:08Z') + 1n) * 1000n + 1n)).toBe(-1207196810)
    expect(hashValue('string', 'iceberg')).toBe(1210000089)
    const uuid = Uint8Array.from('f79c3e09677c4bbda4793f349cb785e7'.match(/../g)!.map((h) => parseInt(h, 16)))
    expect(hashValue('uuid', uuid)).toBe(1488055340)
    expect(hashValue('binary', Uint8Array.of(0, 1, 2, 3))).toBe(-188683207)
    expect(hashValue('fixed[4]', Uint8Array.of(0, 1, 2, 3))).toBe(-188683207)
  })

  it('buckets are non-negative hash mod N', () => {
    expect(applyTransform(parseTransform('bucket[16]'), 'int', 34)).toBe((2017239379 & 0x7fffffff) % 16)
    expect(applyTransform(parseTransform('bucket[7]'), 'binary', Uint8Array.of(0, 1, 2, 3))).toBe((-188683207 & 0x7fffffff) % 7)
  })

  it('truncates as the spec examples say', () => {
    const tr = (w: number, s: string, v: number | bigint | string) => applyTransform({ kind: 'truncate', width: w }, s, v)
    expect(tr(10, 'int', 1)).toBe(0)
    expect(tr(10, 'int', -1)).toBe(-10)
    expect(tr(10, 'long', -1n)).toBe(-10n)
    expect(tr(50, 'decimal(9,2)', 1065n)).toBe(1050n)
    expect(tr(3, 'string', 'iceberg')).toBe('ice')
    expect(tr(2, 'string', '😀😀😀')).toBe('😀😀')
  })
})

const schema: { fields: NestedField[] } = {
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'ts', required: false, type: 'timestamptz' },
    { id: 3, name: 'region', required: false, type: 'string' },
    { id: 4, name: 'event', required: false, type: { type: 'struct', fields: [{ id: 5, name: 'at', required: false, type: 'timestamp' }] } },
  ],
}

describe('partition specs and paths', () => {
  it('builds specs with field ids from 1000 and Java/PyIceberg default names', () => {
    const spec = buildPartitionSpec(schema, [
      parsePartitionExpression('day(ts)'),
      parsePartitionExpression('region'),
      parsePartitionExpression('bucket(8, id)'),
    ])
    expect(spec).toEqual({
      'spec-id': 0,
      fields: [
        { 'source-id': 2, 'field-id': 1000, name: 'ts_day', transform: 'day' },
        { 'source-id': 3, 'field-id': 1001, name: 'region', transform: 'identity' },
        { 'source-id': 1, 'field-id': 1002, name: 'id_bucket', transform: 'bucket[8]' },
      ],
    })
    expect(buildPartitionSpec(schema, [parsePartitionExpression('hour(event.at)')]).fields[0]).toMatchObject({ 'source-id': 5, name: 'event.at_hour' })
  })

  it('rejects time transforms on non-time columns, unknown columns and bad expressions', () => {
    expect(() => buildPartitionSpec(schema, [{ source: 'region', transform: 'day' }])).toThrow(PartitionSpecError)
    expect(() => buildPartitionSpec(schema, [{ source: 'region', transform: 'day' }])).toThrow(/date or timestamp/)
    expect(() => buildPartitionSpec(schema, [{ source: 'nope', transform: 'day' }])).toThrow(/not in the schema/)
    expect(() => parsePartitionExpression('day(')).toThrow(PartitionSpecError)
  })

  it('computes partition records and Hive-style paths like PyIceberg', () => {
    const spec = buildPartitionSpec(schema, [
      { source: 'ts', transform: 'day' },
      { source: 'ts', transform: 'hour' },
      { source: 'ts', transform: 'month' },
      { source: 'ts', transform: 'year' },
      { source: 'region', transform: 'identity' },
    ])
    const bound = bindSpec(spec, schema)
    const rec = partitionRecord(bound, { id: 1n, ts: micros('2026-09-21T12:34:00Z'), region: 'eu west/1', event: null })
    expect(rec).toEqual({ ts_day: days('2026-09-21'), ts_hour: Date.UTC(2026, 8, 21, 12) / 3_600_000, ts_month: 680, ts_year: 56, region: 'eu west/1' })
    expect(partitionPath(bound, rec)).toBe('ts_day=2026-09-21/ts_hour=2026-09-21-12/ts_month=2026-09/ts_year=2026/region=eu+west%2F1')
    const nulls = partitionRecord(bound, { id: 1n, ts: null, region: null, event: null })
    expect(partitionPath(bound, nulls)).toBe('ts_day=null/ts_hour=null/ts_month=null/ts_year=null/region=null')
  })

  it('prints human values before the epoch and of identity types', () => {
    expect(humanString({ kind: 'month' }, 'int', -1)).toBe('1969-12')
    expect(humanString({ kind: 'hour' }, 'int', -1)).toBe('1969-12-31-23')
    expect(humanString({ kind: 'identity' }, 'timestamptz', micros('2026-09-21T12:34:00.5Z'))).toBe('2026-09-21T12:34:00.500000+00:00')
    expect(humanString({ kind: 'identity' }, 'decimal(9,2)', -5n)).toBe('-0.05')
    expect(humanString({ kind: 'identity' }, 'date', -1)).toBe('1969-12-31')
  })
})
