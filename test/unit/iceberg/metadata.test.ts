import { LosslessNumber } from 'lossless-json'
import { describe, expect, it } from 'vitest'
import { currentSnapshot, newTableMetadata, parseMetadata, serializeMetadata, type TableMetadata } from '../../../iceberg/spec/metadata.ts'
import { appendSnapshot, appendSummary, commitChanges, manifestListLocation, newSnapshotId, planSnapshot } from '../../../iceberg/transaction/snapshot.ts'
import { applyUpdates, requirementFailure } from '../../../iceberg/spec/updates.ts'

const MAX = '9223372036854775807'

// A v2 metadata file as Java writes it, plus fields we do not model (top level, in a snapshot,
// in a schema field) carrying numbers JSON.parse would corrupt.
const v2 =
  `{"format-version":2,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1","location":"s3://bucket/wh/ns/t",` +
  `"last-sequence-number":34,"last-updated-ms":1602638573590,"last-column-id":3,"current-schema-id":1,` +
  `"schemas":[{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"x","required":true,"type":"long"}]},` +
  `{"type":"struct","schema-id":1,"identifier-field-ids":[1],"fields":[{"id":1,"name":"x","required":true,"type":"long","initial-default":${MAX}},` +
  `{"id":2,"name":"y","required":true,"type":"long","doc":"comment"},{"id":3,"name":"z","required":true,"type":"long"}]}],` +
  `"default-spec-id":0,"partition-specs":[{"spec-id":0,"fields":[{"name":"x","transform":"identity","source-id":1,"field-id":1000}]}],` +
  `"last-partition-id":1000,"default-sort-order-id":3,"sort-orders":[{"order-id":3,"fields":[{"transform":"identity","source-id":2,"direction":"asc","null-order":"nulls-first"}]}],` +
  `"properties":{"read.split.target.size":"134217728"},"current-snapshot-id":${MAX},` +
  `"snapshots":[{"snapshot-id":3051729675574597004,"timestamp-ms":1515100955770,"sequence-number":0,"summary":{"operation":"append"},"manifest-list":"s3://a/b/1.avro"},` +
  `{"snapshot-id":${MAX},"parent-snapshot-id":3051729675574597004,"timestamp-ms":1555100955770,"sequence-number":34,"summary":{"operation":"append","total-records":"10"},"manifest-list":"s3://a/b/2.avro","schema-id":1,"x-snap":123456789012345678901}],` +
  `"snapshot-log":[{"snapshot-id":3051729675574597004,"timestamp-ms":1515100955770},{"snapshot-id":${MAX},"timestamp-ms":1555100955770}],` +
  `"metadata-log":[{"metadata-file":"s3://bucket/.../v1.json","timestamp-ms":1515100}],` +
  `"refs":{"main":{"snapshot-id":${MAX},"type":"branch"},"t1":{"snapshot-id":3051729675574597004,"type":"tag","max-ref-age-ms":86400000}},` +
  `"statistics":[{"snapshot-id":${MAX},"statistics-path":"s3://a/s.puffin","file-size-in-bytes":413,"file-footer-size-in-bytes":42,"blob-metadata":[]}],` +
  `"x-vendor":{"n":12345678901234567890.5,"list":[1,2.50]}}`

describe('table metadata JSON', () => {
  it('parses 63-bit ids exactly and writes the same text back, unknown fields included', () => {
    const m = parseMetadata(v2)
    expect(m['current-snapshot-id']).toBe(BigInt(MAX))
    expect(m.snapshots[1]['snapshot-id']).toBe(BigInt(MAX))
    expect(m.snapshots[1]['parent-snapshot-id']).toBe(3051729675574597004n)
    expect(m.refs.main['snapshot-id']).toBe(BigInt(MAX))
    expect(m['last-sequence-number']).toBe(34n)
    expect(m['last-updated-ms']).toBe(1602638573590)
    expect(m.schemas[1].fields[0].id).toBe(1)
    expect(currentSnapshot(m)?.summary['total-records']).toBe('10')
    expect(m['x-vendor']).toEqual({ n: new LosslessNumber('12345678901234567890.5'), list: [new LosslessNumber('1'), new LosslessNumber('2.50')] })
    expect(serializeMetadata(m)).toBe(v2)
    expect(serializeMetadata(parseMetadata(serializeMetadata(m)))).toBe(v2)
  })

  it('reads v1 metadata into the v2 shape', () => {
    const v1 =
      `{"format-version":1,"table-uuid":"u","location":"s3://b/t","last-updated-ms":1,"last-column-id":1,` +
      `"schema":{"type":"struct","fields":[{"id":1,"name":"x","required":true,"type":"long"}]},"partition-spec":[],"properties":{},"current-snapshot-id":-1}`
    const m = parseMetadata(v1)
    expect(m.schemas).toHaveLength(1)
    expect(m['current-schema-id']).toBe(0)
    expect(m['partition-specs']).toEqual([{ 'spec-id': 0, fields: [] }])
    expect(m['last-partition-id']).toBe(999)
    expect(m.refs).toEqual({})
    expect(currentSnapshot(m)).toBeUndefined()
  })

  it('rejects unsupported versions and non-integer ids', () => {
    expect(() => parseMetadata('{"format-version":4}')).toThrow(/format-version/)
    expect(() => parseMetadata(v2.replace('"last-sequence-number":34', '"last-sequence-number":3.5'))).toThrow(/last-sequence-number/)
  })
})

describe('newTableMetadata', () => {
  it('assigns fresh ids breadth-first and partition ids from 1000', () => {
    const m = newTableMetadata({
      location: 's3://bucket/wh/ns/t/',
      formatVersion: 3,
      tableUuid: '00000000-0000-4000-8000-000000000000',
      lastUpdatedMs: 5,
      properties: { 'write.format.default': 'parquet' },
      schema: {
        fields: [
          { id: 0, name: 'ts', required: true, type: 'timestamptz' },
          { id: 0, name: 'tags', required: false, type: { type: 'list', 'element-id': 0, element: 'string', 'element-required': false } },
          {
            id: 0,
            name: 'attrs',
            required: false,
            type: {
              type: 'map',
              'key-id': 0,
              key: 'string',
              'value-id': 0,
              value: { type: 'struct', fields: [{ id: 0, name: 'v', required: false, type: 'long' }] },
              'value-required': false,
            },
          },
          { id: 0, name: 'n', required: false, type: 'long' },
        ],
      },
      partitionFields: [{ source: 'ts', transform: 'day' }],
    })
    const [ts, tags, attrs, n] = m.schemas[0].fields
    expect([ts.id, tags.id, attrs.id, n.id]).toEqual([1, 2, 3, 4])
    expect(tags.type).toMatchObject({ 'element-id': 5 })
    expect(attrs.type).toMatchObject({ 'key-id': 6, 'value-id': 7, value: { fields: [{ id: 8 }] } })
    expect(m['last-column-id']).toBe(8)
    expect(m['partition-specs']).toEqual([{ 'spec-id': 0, fields: [{ 'source-id': 1, 'field-id': 1000, name: 'ts_day', transform: 'day' }] }])
    expect(m['last-partition-id']).toBe(1000)
    expect(m.location).toBe('s3://bucket/wh/ns/t')
    expect(m['next-row-id']).toBe(0n)
    expect(parseMetadata(serializeMetadata(m))).toEqual(m)
    const unpartitioned = newTableMetadata({ location: 's3://b/t', formatVersion: 2, schema: { fields: [{ id: 9, name: 'x', required: false, type: 'int' }] } })
    expect(unpartitioned['last-partition-id']).toBe(999)
    expect(unpartitioned['next-row-id']).toBeUndefined()
  })
})

describe('fast append snapshots and applyUpdates', () => {
  const base = () =>
    newTableMetadata({
      location: 's3://b/t',
      formatVersion: 3,
      lastUpdatedMs: 1000,
      schema: { fields: [{ id: 1, name: 'ts', required: false, type: 'timestamptz' }] },
    })

  function append(m: TableMetadata, rows: number, props: Record<string, string> = {}) {
    const plan = planSnapshot(m, { timestampMs: 2000 })
    const summary = appendSummary(currentSnapshot(m), [{ recordCount: rows, fileSizeInBytes: 100, partition: {} }], props)
    const snapshot = appendSnapshot(plan, { manifestList: manifestListLocation(m, plan.snapshotId, 'uuid'), summary, addedRows: BigInt(rows) })
    return { plan, snapshot, ...commitChanges(m, snapshot) }
  }

  it('snapshot ids are positive 63-bit', () => {
    for (let i = 0; i < 100; i++) {
      const id = newSnapshotId()
      expect(id > 0n && id < 2n ** 63n).toBe(true)
    }
  })

  it('builds the snapshot, summary totals and REST updates, and applies them', () => {
    const m0 = base()
    const first = append(m0, 10, { 'lakehousebox.sink.id': 's1', operation: 'overwrite' })
    expect(first.snapshot).toMatchObject({ 'sequence-number': 1n, 'timestamp-ms': 2000, 'first-row-id': 0n, 'added-rows': 10n, 'schema-id': 0 })
    expect(first.snapshot['parent-snapshot-id']).toBeUndefined()
    expect(first.snapshot['manifest-list']).toBe(`s3://b/t/metadata/snap-${first.plan.snapshotId}-0-uuid.avro`)
    expect(first.snapshot.summary).toEqual({
      operation: 'append',
      'lakehousebox.sink.id': 's1',
      'added-data-files': '1',
      'added-records': '10',
      'added-files-size': '100',
      'changed-partition-count': '1',
      'total-records': '10',
      'total-files-size': '100',
      'total-data-files': '1',
      'total-delete-files': '0',
      'total-position-deletes': '0',
      'total-equality-deletes': '0',
    })
    expect(first.requirements).toEqual([
      { type: 'assert-table-uuid', uuid: m0['table-uuid'] },
      { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': null },
    ])
    expect(first.updates).toEqual([
      { action: 'add-snapshot', snapshot: first.snapshot },
      { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': first.plan.snapshotId },
    ])
    expect(requirementFailure(m0, first.requirements)).toBeNull()
    const m1 = applyUpdates(m0, first.updates, { now: 3000, previousMetadataLocation: 's3://b/t/metadata/00000-a.metadata.json' })
    expect(m1['current-snapshot-id']).toBe(first.plan.snapshotId)
    expect(m1['last-sequence-number']).toBe(1n)
    expect(m1['next-row-id']).toBe(10n)
    expect(m1['last-updated-ms']).toBe(2000)
    expect(m1['snapshot-log']).toEqual([{ 'timestamp-ms': 2000, 'snapshot-id': first.plan.snapshotId }])
    expect(m1['metadata-log']).toEqual([{ 'timestamp-ms': 1000, 'metadata-file': 's3://b/t/metadata/00000-a.metadata.json' }])
    expect(m0.snapshots).toHaveLength(0) // base untouched

    const second = append(m1, 5)
    expect(second.snapshot).toMatchObject({ 'parent-snapshot-id': first.plan.snapshotId, 'sequence-number': 2n, 'first-row-id': 10n })
    expect(second.snapshot.summary['total-records']).toBe('15')
    expect(requirementFailure(m0, second.requirements)).toMatch(/^Requirement failed: branch or tag main is missing, expected \d+$/)
    // Apache Iceberg's words (UpdateRequirement), which its clients and catalog tests look for.
    expect(requirementFailure(m1, first.requirements)).toBe('Requirement failed: branch main was created concurrently')
    const m2 = applyUpdates(m1, second.updates)
    expect(m2['next-row-id']).toBe(15n)
    expect(requirementFailure(m2, second.requirements)).toBe(
      `Requirement failed: branch main has changed: expected id ${first.plan.snapshotId} != ${second.plan.snapshotId}`,
    )
    expect(currentSnapshot(m2)?.['snapshot-id']).toBe(second.plan.snapshotId)
    expect(parseMetadata(serializeMetadata(m2))).toEqual(m2)

    // A snapshot planned on a stale base cannot be applied on the new one.
    expect(() => applyUpdates(m2, second.updates)).toThrow(/already exists/)
    const stale = append(m1, 1)
    expect(() => applyUpdates(m2, stale.updates)).toThrow(/sequence number/)
  })

  it('omits totals the parent summary lacks, as Java does', () => {
    const parent = { 'snapshot-id': 1n, 'timestamp-ms': 1, summary: { operation: 'append', 'total-records': '7' } }
    const s = appendSummary(parent, [{ recordCount: 3n, fileSizeInBytes: 9n }])
    expect(s['total-records']).toBe('10')
    expect(s['total-files-size']).toBeUndefined()
  })

  it('applies schema, property and location updates', () => {
    const m = applyUpdates(
      base(),
      [
        {
          action: 'add-schema',
          schema: {
            type: 'struct',
            'schema-id': 1,
            fields: [
              { id: 1, name: 'ts', required: false, type: 'timestamptz' },
              { id: 2, name: 'n', required: false, type: 'long', doc: 'count' },
            ],
          },
          'last-column-id': 2,
        },
        { action: 'set-current-schema', 'schema-id': -1 },
        { action: 'set-properties', updates: { comment: 'events', a: '1' } },
        { action: 'remove-properties', removals: ['a'] },
        { action: 'set-location', location: 's3://b/t2/' },
      ],
      { now: 4000 },
    )
    expect(m['current-schema-id']).toBe(1)
    expect(m['last-column-id']).toBe(2)
    expect(m.properties).toEqual({ comment: 'events' })
    expect(m.location).toBe('s3://b/t2')
    expect(m['last-updated-ms']).toBe(4000)
    expect(requirementFailure(m, [{ type: 'assert-current-schema-id', 'current-schema-id': 0 }])).toMatch(/current schema/)
    expect(requirementFailure(null, [{ type: 'assert-create' }])).toBeNull()

    // Unused schemas and specs removed, as Java's removeSchemas/removeSpecs; never the current ones.
    const pruned = applyUpdates(m, [{ action: 'remove-schemas', 'schema-ids': [0] }])
    expect(pruned.schemas.map((x) => x['schema-id'])).toEqual([1])
    expect(() => applyUpdates(m, [{ action: 'remove-schemas', 'schema-ids': [1] }])).toThrow('Cannot remove the current schema')
    const specs = applyUpdates(m, [{ action: 'add-spec', spec: { 'spec-id': -1, fields: [] } }])
    expect(specs['partition-specs']).toHaveLength(2)
    const unused = specs['partition-specs'].find((x) => x['spec-id'] !== specs['default-spec-id'])?.['spec-id'] as number
    expect(applyUpdates(specs, [{ action: 'remove-partition-specs', 'spec-ids': [unused] }])['partition-specs']).toHaveLength(1)
    expect(() => applyUpdates(specs, [{ action: 'remove-partition-specs', 'spec-ids': [specs['default-spec-id']] }])).toThrow(
      'Cannot remove the default partition spec',
    )
  })
})
