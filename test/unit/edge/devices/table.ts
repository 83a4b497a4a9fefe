// A table's metadata for the device unit tests: the named columns, all optional, format-version 3.
import { newTableMetadata } from '../../../../iceberg/spec/metadata.ts'

export function tableFor(columns: Record<string, string>, formatVersion: 2 | 3 = 3) {
  return newTableMetadata({
    formatVersion,
    location: 's3://b/t',
    schema: { fields: Object.entries(columns).map(([name, type], i) => ({ id: i + 1, name, type, required: false })) },
  })
}
