// The fixture the Parquet write and read tests share: one column of every writable type, nested ones
// included; ids are not in field order on purpose.
import type { NestedField } from '../../../iceberg/spec/types.ts'

export const EVERY_TYPE_FIELDS: NestedField[] = [
  { id: 1, name: 'b', required: false, type: 'boolean' },
  { id: 2, name: 'i', required: true, type: 'int' },
  { id: 3, name: 'l', required: false, type: 'long' },
  { id: 4, name: 'f', required: false, type: 'float' },
  { id: 5, name: 'd', required: false, type: 'double' },
  { id: 6, name: 'dec38', required: false, type: 'decimal(38, 10)' },
  { id: 7, name: 'dec9', required: false, type: 'decimal(9, 2)' },
  { id: 8, name: 'dec18', required: false, type: 'decimal(18, 4)' },
  { id: 9, name: 'dt', required: false, type: 'date' },
  { id: 10, name: 't', required: false, type: 'time' },
  { id: 11, name: 'ts', required: false, type: 'timestamp' },
  { id: 12, name: 'tstz', required: true, type: 'timestamptz' },
  { id: 13, name: 'tsns', required: false, type: 'timestamp_ns' },
  { id: 14, name: 'tstzns', required: false, type: 'timestamptz_ns' },
  { id: 15, name: 's', required: false, type: 'string' },
  { id: 16, name: 'u', required: false, type: 'uuid' },
  { id: 17, name: 'fx', required: false, type: 'fixed[4]' },
  { id: 18, name: 'bin', required: false, type: 'binary' },
  { id: 19, name: 'geo', required: false, type: 'geometry' },
  {
    id: 20,
    name: 'st',
    required: false,
    type: {
      type: 'struct',
      fields: [
        { id: 21, name: 'a', required: true, type: 'int' },
        { id: 22, name: 'z', required: false, type: 'string' },
      ],
    },
  },
  { id: 23, name: 'tags', required: false, type: { type: 'list', 'element-id': 24, element: 'long', 'element-required': false } },
  {
    id: 25,
    name: 'attrs',
    required: false,
    type: { type: 'map', 'key-id': 26, key: 'string', 'value-id': 27, value: 'double', 'value-required': false },
  },
  { id: 28, name: 'nothing', required: false, type: 'unknown' },
  {
    id: 29,
    name: 'points',
    required: false,
    type: {
      type: 'list',
      'element-id': 30,
      'element-required': true,
      element: { type: 'struct', fields: [{ id: 31, name: 'x', required: true, type: 'int' }] },
    },
  },
]

export function wkbPoint(x: number, y: number): Uint8Array {
  const b = new Uint8Array(21)
  const v = new DataView(b.buffer)
  v.setUint8(0, 1)
  v.setUint32(1, 1, true)
  v.setFloat64(5, x, true)
  v.setFloat64(13, y, true)
  return b
}
