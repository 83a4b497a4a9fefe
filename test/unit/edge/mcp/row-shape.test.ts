// describe_sink's ready example (edge/mcp/row-shape.ts): for every type a sink writes, the example
// row is one the roller takes (iceberg/spec/values.ts toRow, the reference), on v2 and v3 tables.
import { describe, expect, it } from 'vitest'
import { columnShapes, exampleRow } from '../../../../edge/mcp/row-shape.ts'
import type { NestedField } from '../../../../iceberg/spec/types.ts'
import { toRow } from '../../../../iceberg/spec/values.ts'

const V2_TYPES = [
  'boolean',
  'int',
  'long',
  'float',
  'double',
  'decimal(38, 10)',
  'decimal(5, 5)',
  'decimal(9, 0)',
  'date',
  'time',
  'timestamp',
  'timestamptz',
  'string',
  'uuid',
  'binary',
  'fixed[3]',
]
const V3_TYPES = [...V2_TYPES, 'timestamp_ns', 'timestamptz_ns', 'geometry', 'geometry(OGC:CRS84)']

let id = 0
const field = (name: string, type: NestedField['type'], required = true): NestedField => ({ id: ++id, name, type, required })

function fieldsOf(types: string[]): NestedField[] {
  return [
    ...types.map((t, i) => field(`c${i}`, t)),
    field('s', { type: 'struct', fields: [field('a', 'long'), field('b', 'string', false)] }),
    field('l', { type: 'list', 'element-id': ++id, element: 'timestamptz', 'element-required': true }),
    field('m', { type: 'map', 'key-id': ++id, key: 'string', 'value-id': ++id, value: 'double', 'value-required': true }),
    field('mk', { type: 'map', 'key-id': ++id, key: 'long', 'value-id': ++id, value: 'date', 'value-required': false }),
  ]
}

describe('describe_sink’s example row', () => {
  it.each([
    [2, V2_TYPES],
    [3, V3_TYPES],
  ] as const)('is taken whole by a v%i table of every type', (formatVersion, types) => {
    const fields = fieldsOf([...types])
    const example = JSON.parse(JSON.stringify(exampleRow(fields)))
    const result = toRow({ type: 'struct', fields }, example, { formatVersion })
    expect(result.ok ? [] : result.rejects).toEqual([])
  })

  it('says per column its type, whether it is required, its doc and the JSON it takes', () => {
    const shapes = columnShapes([{ ...field('at', 'timestamptz'), doc: 'when' }, field('n', 'decimal(10, 2)', false)])
    expect(shapes).toEqual([
      { name: 'at', type: 'timestamptz', required: true, doc: 'when', json: expect.stringContaining('UTC offset') },
      { name: 'n', type: 'decimal(10, 2)', required: false, doc: null, json: expect.stringContaining('2 digits after the point') },
    ])
  })
})
