// A table's first metadata from a create transaction's updates (iceberg/spec/from-updates.ts), as a
// REST client sends them after stage-create: what they give, what is filled in, what is refused.
import { describe, expect, it } from 'vitest'
import { metadataFromUpdates } from '../../../iceberg/spec/from-updates.ts'
import { MetadataError } from '../../../iceberg/spec/metadata.ts'
import type { TableUpdate } from '../../../iceberg/spec/updates.ts'

const schema = {
  type: 'struct' as const,
  'schema-id': 0,
  fields: [
    { id: 1, name: 'x', type: 'long', required: true },
    { id: 2, name: 'ts', type: 'timestamptz', required: false },
  ],
}
const UUID = '0190f2a3-7c1e-7cc3-98c4-dc0c0c07398f'

/** What PyIceberg's CreateTableTransaction sends (its _initial_changes). */
const created = (formatVersion: 2 | 3): TableUpdate[] => [
  { action: 'assign-uuid', uuid: UUID },
  { action: 'upgrade-format-version', 'format-version': formatVersion },
  { action: 'add-schema', schema },
  { action: 'set-current-schema', 'schema-id': -1 },
  { action: 'add-spec', spec: { 'spec-id': 0, fields: [{ 'source-id': 2, 'field-id': 1000, name: 'ts_day', transform: 'day' }] } },
  { action: 'set-default-spec', 'spec-id': -1 },
  { action: 'add-sort-order', 'sort-order': { 'order-id': 0, fields: [] } },
  { action: 'set-default-sort-order', 'sort-order-id': -1 },
  { action: 'set-location', location: 's3://b/w/ns/t/' },
  { action: 'set-properties', updates: { owner: 'me' } },
]

describe('metadataFromUpdates', () => {
  it('makes the table the updates describe', () => {
    const m = metadataFromUpdates(created(3), { location: 's3://b/w/default', now: 1000 })
    expect(m).toMatchObject({
      'format-version': 3,
      'table-uuid': UUID,
      location: 's3://b/w/ns/t',
      'current-schema-id': 0,
      'last-column-id': 2,
      'default-spec-id': 0,
      'last-partition-id': 1000,
      'default-sort-order-id': 0,
      'sort-orders': [{ 'order-id': 0, fields: [] }],
      properties: { owner: 'me' },
      'last-sequence-number': 0n,
      'next-row-id': 0n,
      'last-updated-ms': 1000,
      snapshots: [],
      refs: {},
    })
    expect(m.schemas).toEqual([schema])
  })

  it('fills in what the updates leave out: a uuid, the default location, unpartitioned, unsorted', () => {
    const m = metadataFromUpdates(
      [
        { action: 'add-schema', schema },
        { action: 'set-current-schema', 'schema-id': -1 },
      ],
      { location: 's3://b/w/ns/t' },
    )
    expect(m['format-version']).toBe(2)
    expect(m['table-uuid']).toMatch(/^[0-9a-f-]{36}$/)
    expect(m.location).toBe('s3://b/w/ns/t')
    expect(m['partition-specs']).toEqual([{ 'spec-id': 0, fields: [] }])
    expect(m['sort-orders']).toEqual([{ 'order-id': 0, fields: [] }])
  })

  it('refuses a table with no current schema, and format-version 1', () => {
    expect(() => metadataFromUpdates([{ action: 'set-properties', updates: {} }], { location: 's3://b/t' })).toThrow(MetadataError)
    expect(() => metadataFromUpdates([{ action: 'add-schema', schema }], { location: 's3://b/t' })).toThrow(/set-current-schema/)
    expect(() =>
      metadataFromUpdates([{ action: 'upgrade-format-version', 'format-version': 1 as 2 }, ...created(2).slice(2)], { location: 's3://b/t' }),
    ).toThrow(/downgrade/)
  })
})
