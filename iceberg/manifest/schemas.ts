// The Avro schemas of manifests and manifest lists (spec "Manifests", "Manifest Lists"), with the
// `field-id` attributes readers resolve columns by. Shapes follow what Java's AvroSchemaUtil and
// PyIceberg's iceberg_to_avro emit for the same Iceberg structs: optional fields as
// ["null", T] with "default": null, records named r<field id>, int-keyed maps as arrays of
// k<key id>_v<value id> records with "logicalType": "map", lists with "element-id".

import { decimalRequiredBytes } from '../spec/decimal.ts'
import type { AvroSchema } from '../avro/schema.ts'
import { parsePrimitive, type NestedField, type PrimitiveTypeName } from '../spec/types.ts'

type AvroField = { name: string; type: AvroSchema; 'field-id': number; default?: null; doc?: string }

function field(id: number, name: string, type: AvroSchema, required: boolean, doc?: string): AvroField {
  const f: AvroField = required ? { name, type, 'field-id': id } : { name, type: ['null', type], default: null, 'field-id': id }
  if (doc) f.doc = doc
  return f
}

function intMap(name: string, id: number, keyId: number, valueId: number, value: AvroSchema, doc: string): AvroField {
  return field(
    id,
    name,
    {
      type: 'array',
      items: {
        type: 'record',
        name: `k${keyId}_v${valueId}`,
        fields: [
          { name: 'key', type: 'int', 'field-id': keyId },
          { name: 'value', type: value, 'field-id': valueId },
        ],
      },
      logicalType: 'map',
    },
    false,
    doc,
  )
}

const list = (elementId: number, items: AvroSchema): AvroSchema => ({ type: 'array', items, 'element-id': elementId })

/** Bytes of the fixed that holds a decimal of this precision (Java/PyIceberg: the fewest that fit 10^P - 1). */
/**
 * The Avro type of a primitive Iceberg type. `defined` tracks named types already written: Avro
 * forbids defining a name twice, so later uses are references by name.
 */
function avroPrimitive(type: PrimitiveTypeName, defined: Set<string>): AvroSchema {
  const p = parsePrimitive(type)
  const named = (name: string, schema: { type: string; [k: string]: unknown }): AvroSchema => {
    if (defined.has(name)) return name
    defined.add(name)
    return { ...schema, name }
  }
  switch (p.kind) {
    case 'boolean':
    case 'int':
    case 'long':
    case 'float':
    case 'double':
    case 'string':
      return p.kind
    case 'binary':
    case 'geometry':
    case 'geography':
    case 'variant':
      return 'bytes'
    case 'unknown':
      return 'null'
    case 'date':
      return { type: 'int', logicalType: 'date' }
    case 'time':
      return { type: 'long', logicalType: 'time-micros' }
    case 'timestamp':
      return { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': false }
    case 'timestamptz':
      return { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': true }
    case 'timestamp_ns':
      return { type: 'long', logicalType: 'timestamp-nanos', 'adjust-to-utc': false }
    case 'timestamptz_ns':
      return { type: 'long', logicalType: 'timestamp-nanos', 'adjust-to-utc': true }
    case 'uuid':
      return named('uuid_fixed', { type: 'fixed', size: 16, logicalType: 'uuid' })
    case 'fixed':
      return named(`fixed_${p.length}`, { type: 'fixed', size: p.length })
    case 'decimal':
      return named(`decimal_${p.precision}_${p.scale}`, {
        type: 'fixed',
        size: decimalRequiredBytes(p.precision),
        logicalType: 'decimal',
        precision: p.precision,
        scale: p.scale,
      })
  }
}

/** The `partition` record (field 102): one optional field per partition field, typed by its result. */
function partitionRecordSchema(partitionFields: NestedField[]): AvroSchema {
  const defined = new Set<string>()
  return {
    type: 'record',
    name: 'r102',
    fields: partitionFields.map((f) => field(f.id, f.name, avroPrimitive(f.type as PrimitiveTypeName, defined), f.required)),
  }
}

/** The `data_file` struct (field 2) for format v2 or v3, in the spec's field order. */
function dataFileSchema(formatVersion: 2 | 3, partition: AvroSchema): AvroSchema {
  const fields: AvroField[] = [
    field(134, 'content', 'int', true, 'Contents of the file: 0=data, 1=position deletes, 2=equality deletes'),
    field(100, 'file_path', 'string', true, 'Location URI with FS scheme'),
    field(101, 'file_format', 'string', true, 'File format name: avro, orc, or parquet'),
    field(102, 'partition', partition, true, 'Partition data tuple, schema based on the partition spec'),
    field(103, 'record_count', 'long', true, 'Number of records in the file'),
    field(104, 'file_size_in_bytes', 'long', true, 'Total file size in bytes'),
    intMap('column_sizes', 108, 117, 118, 'long', 'Map of column id to total size on disk'),
    intMap('value_counts', 109, 119, 120, 'long', 'Map of column id to total count, including null and NaN'),
    intMap('null_value_counts', 110, 121, 122, 'long', 'Map of column id to null value count'),
    intMap('nan_value_counts', 137, 138, 139, 'long', 'Map of column id to number of NaN values in the column'),
    intMap('lower_bounds', 125, 126, 127, 'bytes', 'Map of column id to lower bound'),
    intMap('upper_bounds', 128, 129, 130, 'bytes', 'Map of column id to upper bound'),
    field(131, 'key_metadata', 'bytes', false, 'Encryption key metadata blob'),
    field(132, 'split_offsets', list(133, 'long'), false, 'Splittable offsets'),
    field(135, 'equality_ids', list(136, 'int'), false, 'Equality comparison field IDs'),
    field(140, 'sort_order_id', 'int', false, 'Sort order ID'),
  ]
  if (formatVersion >= 3) fields.push(field(142, 'first_row_id', 'long', false, 'The _row_id for the first row in the data file'))
  fields.push(field(143, 'referenced_data_file', 'string', false, 'Fully qualified location of a data file that all deletes reference'))
  if (formatVersion >= 3) {
    fields.push(field(144, 'content_offset', 'long', false, 'The offset in the file where the content starts'))
    fields.push(field(145, 'content_size_in_bytes', 'long', false, 'The length of referenced content stored in the file'))
  }
  return { type: 'record', name: 'r2', fields }
}

/** The `manifest_entry` schema of a v2/v3 manifest whose partition struct has these fields. */
export function manifestEntrySchema(formatVersion: 2 | 3, partitionFields: NestedField[]): AvroSchema {
  return {
    type: 'record',
    name: 'manifest_entry',
    fields: [
      field(0, 'status', 'int', true),
      field(1, 'snapshot_id', 'long', false),
      field(3, 'sequence_number', 'long', false),
      field(4, 'file_sequence_number', 'long', false),
      field(2, 'data_file', dataFileSchema(formatVersion, partitionRecordSchema(partitionFields)), true),
    ],
  }
}

const FIELD_SUMMARY: AvroSchema = {
  type: 'record',
  name: 'r508',
  fields: [
    field(509, 'contains_null', 'boolean', true, 'True if any file has a null partition value'),
    field(518, 'contains_nan', 'boolean', false, 'True if any file has a nan partition value'),
    field(510, 'lower_bound', 'bytes', false, 'Partition lower bound for all files'),
    field(511, 'upper_bound', 'bytes', false, 'Partition upper bound for all files'),
  ],
}

/** The `manifest_file` schema of a v2/v3 manifest list. */
export function manifestListSchema(formatVersion: 2 | 3): AvroSchema {
  const fields: AvroField[] = [
    field(500, 'manifest_path', 'string', true, 'Location URI with FS scheme'),
    field(501, 'manifest_length', 'long', true, 'Total file size in bytes'),
    field(502, 'partition_spec_id', 'int', true, 'Spec ID used to write'),
    field(517, 'content', 'int', true, 'Contents of the manifest: 0=data, 1=deletes'),
    field(515, 'sequence_number', 'long', true, 'Sequence number when the manifest was added'),
    field(516, 'min_sequence_number', 'long', true, 'Lowest sequence number in the manifest'),
    field(503, 'added_snapshot_id', 'long', true, 'Snapshot ID that added the manifest'),
    field(504, 'added_files_count', 'int', true, 'Added entry count'),
    field(505, 'existing_files_count', 'int', true, 'Existing entry count'),
    field(506, 'deleted_files_count', 'int', true, 'Deleted entry count'),
    field(512, 'added_rows_count', 'long', true, 'Added rows count'),
    field(513, 'existing_rows_count', 'long', true, 'Existing rows count'),
    field(514, 'deleted_rows_count', 'long', true, 'Deleted rows count'),
    field(507, 'partitions', list(508, FIELD_SUMMARY), false, 'Summary for each partition'),
    field(519, 'key_metadata', 'bytes', false, 'Encryption key metadata blob'),
  ]
  if (formatVersion >= 3) fields.push(field(520, 'first_row_id', 'long', false, 'Starting row ID to assign to new rows in ADDED data files'))
  return { type: 'record', name: 'manifest_file', fields }
}
