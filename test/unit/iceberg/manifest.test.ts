import { describe, expect, it } from 'vitest'
import { readAvroFile } from '../../../iceberg/avro/read-container.ts'
import {
  ADDED,
  DELETED,
  EXISTING,
  inheritFromManifest,
  readManifest,
  readManifestList,
  writeManifest,
  writeManifestList,
  type DataFile,
  type ManifestFile,
} from '../../../iceberg/manifest/manifest.ts'
import { buildPartitionSpec, UNPARTITIONED } from '../../../iceberg/spec/partition.ts'
import type { Schema } from '../../../iceberg/spec/types.ts'

const MAX = 9223372036854775807n
const schema: Schema = {
  type: 'struct',
  'schema-id': 0,
  fields: [
    { id: 1, name: 'id', required: true, type: 'long' },
    { id: 2, name: 'ts', required: false, type: 'timestamptz' },
    { id: 3, name: 'amount', required: false, type: 'decimal(38, 10)' },
    { id: 4, name: 'region', required: false, type: 'string' },
  ],
}
const spec = buildPartitionSpec(schema, [
  { source: 'ts', transform: 'day' },
  { source: 'id', transform: 'identity' },
  { source: 'amount', transform: 'identity' },
  { source: 'region', transform: 'identity' },
])

function dataFile(i: number, partition: DataFile['partition']): DataFile {
  return {
    filePath: `s3://bucket/t/data/${i}.parquet`,
    partition,
    recordCount: 10 + i,
    fileSizeInBytes: 1000 + i,
    columnSizes: new Map([
      [1, 100],
      [2, 200],
    ]),
    valueCounts: new Map([
      [1, 10 + i],
      [2, 10 + i],
    ]),
    nullValueCounts: new Map([
      [1, 0],
      [2, 1],
    ]),
    nanValueCounts: new Map(),
    lowerBounds: new Map([[1, Uint8Array.of(1, 0, 0, 0, 0, 0, 0, 0)]]),
    upperBounds: new Map([[1, Uint8Array.of(255, 255, 255, 255, 255, 255, 255, 127)]]),
    splitOffsets: [4],
  }
}

describe('manifest files', () => {
  it('round-trips entries with partitions, metrics, a 63-bit snapshot id and inherited sequence numbers', async () => {
    const files = [
      dataFile(0, { ts_day: 20717, id: MAX, amount: -123456789012345678901234567890n, region: 'eu' }),
      dataFile(1, { ts_day: -1, id: -5n, amount: 5n, region: null }),
    ]
    const { bytes, manifest } = await writeManifest({
      formatVersion: 2,
      schema,
      spec,
      snapshotId: MAX,
      manifestPath: 's3://bucket/t/metadata/m0.avro',
      entries: files.map((dataFile) => ({ dataFile })),
    })
    const read = await readManifest(bytes)
    expect(read.formatVersion).toBe(2)
    expect(read.content).toBe('data')
    expect(read.specId).toBe(0)
    expect(read.partitionFields).toEqual(spec.fields)
    expect(JSON.parse(read.schemaJson!)).toEqual(schema)
    expect(read.entries).toHaveLength(2)
    const [e0, e1] = read.entries
    expect(e0.status).toBe(ADDED)
    expect(e0.snapshotId).toBe(MAX)
    expect(e0.sequenceNumber).toBeNull()
    expect(e0.fileSequenceNumber).toBeNull()
    expect(e0.dataFile).toMatchObject({
      content: 0,
      filePath: files[0].filePath,
      fileFormat: 'PARQUET',
      recordCount: 10n,
      fileSizeInBytes: 1000n,
      partition: files[0].partition,
      splitOffsets: [4n],
      keyMetadata: null,
      equalityIds: null,
      sortOrderId: null,
    })
    expect(e0.dataFile.columnSizes).toEqual(
      new Map([
        [1, 100n],
        [2, 200n],
      ]),
    )
    expect(e0.dataFile.nanValueCounts).toEqual(new Map())
    expect(e0.dataFile.upperBounds).toEqual(files[0].upperBounds)
    expect(e1.dataFile.partition).toEqual({ ts_day: -1, id: -5n, amount: 5n, region: null })

    expect(manifest).toMatchObject({
      manifestPath: 's3://bucket/t/metadata/m0.avro',
      manifestLength: BigInt(bytes.length),
      partitionSpecId: 0,
      content: 0,
      sequenceNumber: null,
      minSequenceNumber: null,
      addedSnapshotId: MAX,
      addedFilesCount: 2,
      existingFilesCount: 0,
      deletedFilesCount: 0,
      addedRowsCount: 21n,
      existingRowsCount: 0n,
      deletedRowsCount: 0n,
    })
    // day: int days LE; identity long: 8 bytes LE; region has a null.
    expect(manifest.partitions![0]).toEqual({
      containsNull: false,
      containsNan: false,
      lowerBound: Uint8Array.of(255, 255, 255, 255),
      upperBound: Uint8Array.of(0xed, 0x50, 0, 0),
    })
    expect(manifest.partitions![1].upperBound).toEqual(Uint8Array.of(255, 255, 255, 255, 255, 255, 255, 127))
    expect(manifest.partitions![3]).toEqual({
      containsNull: true,
      containsNan: false,
      lowerBound: new TextEncoder().encode('eu'),
      upperBound: new TextEncoder().encode('eu'),
    })
  })

  it('writes the spec header metadata and an Avro schema with field ids and typed partition fields', async () => {
    const { bytes } = await writeManifest({
      formatVersion: 3,
      schema,
      spec,
      snapshotId: 1n,
      manifestPath: 'm.avro',
      entries: [{ dataFile: dataFile(0, { ts_day: 1, id: 1n, amount: 1n, region: 'x' }) }],
    })
    const file = await readAvroFile(bytes)
    expect(file.metadata).toMatchObject({ 'schema-id': '0', 'partition-spec-id': '0', 'format-version': '3', content: 'data', 'avro.codec': 'deflate' })
    expect(JSON.parse(file.metadata['partition-spec'])).toEqual(spec.fields)
    const avro = file.schemaJson
    for (const fragment of [
      '"name":"status","type":"int","field-id":0',
      '"name":"snapshot_id","type":["null","long"],"default":null,"field-id":1',
      '"name":"sequence_number","type":["null","long"],"default":null,"field-id":3',
      '"name":"file_sequence_number","type":["null","long"],"default":null,"field-id":4',
      '"field-id":2',
      '"field-id":134',
      '"field-id":100',
      '"field-id":102',
      '"name":"r102"',
      '"name":"k117_v118"',
      '"name":"first_row_id","type":["null","long"],"default":null,"field-id":142',
      '"name":"ts_day","type":["null",{"type":"int","logicalType":"date"}],"default":null,"field-id":1000',
      '"logicalType":"decimal","precision":38,"scale":10,"name":"decimal_38_10"',
    ])
      expect(avro).toContain(fragment)
    expect(JSON.parse(file.metadata.schema)).toEqual(schema)
  })

  it('requires sequence numbers on existing and deleted entries', async () => {
    const base = { formatVersion: 2 as const, schema, spec: UNPARTITIONED, snapshotId: 7n, manifestPath: 'm.avro' }
    await expect(writeManifest({ ...base, entries: [{ status: EXISTING, dataFile: dataFile(0, {}) }] })).rejects.toThrow(/sequence numbers/)
    const { bytes, manifest } = await writeManifest({
      ...base,
      entries: [
        { status: EXISTING, snapshotId: 3n, sequenceNumber: 2n, fileSequenceNumber: 2n, dataFile: dataFile(0, {}) },
        { status: DELETED, snapshotId: 7n, sequenceNumber: 1n, fileSequenceNumber: 1n, dataFile: dataFile(1, {}) },
        { dataFile: dataFile(2, {}) },
      ],
    })
    expect(manifest).toMatchObject({
      addedFilesCount: 1,
      existingFilesCount: 1,
      deletedFilesCount: 1,
      existingRowsCount: 10n,
      deletedRowsCount: 11n,
      minSequenceNumber: 2n,
      partitions: [],
    })
    const read = await readManifest(bytes)
    expect(read.entries.map((e) => [e.status, e.snapshotId, e.sequenceNumber])).toEqual([
      [0, 3n, 2n],
      [2, 7n, 1n],
      [1, 7n, null],
    ])
  })
})

describe('manifest lists', () => {
  async function manifests(): Promise<ManifestFile[]> {
    const a = await writeManifest({
      formatVersion: 3,
      schema,
      spec,
      snapshotId: MAX,
      manifestPath: 'a.avro',
      entries: [0, 1].map((i) => ({ dataFile: dataFile(i, { ts_day: i, id: 1n, amount: 1n, region: 'x' }) })),
    })
    const b = await writeManifest({
      formatVersion: 3,
      schema,
      spec,
      snapshotId: MAX,
      manifestPath: 'b.avro',
      entries: [{ dataFile: dataFile(5, { ts_day: 9, id: 1n, amount: 1n, region: 'x' }) }],
    })
    const old: ManifestFile = { ...a.manifest, manifestPath: 'old.avro', addedSnapshotId: 11n, sequenceNumber: 1n, minSequenceNumber: 1n, firstRowId: 0n }
    return [a.manifest, b.manifest, old]
  }

  it('v2: assigns the sequence number to new manifests and round-trips', async () => {
    const list = await writeManifestList({
      formatVersion: 2,
      snapshotId: MAX,
      parentSnapshotId: 11n,
      sequenceNumber: 5n,
      manifests: (await manifests()).map((m) => ({ ...m, firstRowId: null })),
    })
    const read = await readManifestList(list.bytes)
    expect(read.metadata).toMatchObject({ 'snapshot-id': String(MAX), 'parent-snapshot-id': '11', 'sequence-number': '5', 'format-version': '2' })
    expect(read.manifests).toEqual(list.manifests)
    expect(read.manifests.map((m) => [m.manifestPath, m.sequenceNumber, m.minSequenceNumber, m.addedSnapshotId])).toEqual([
      ['a.avro', 5n, 5n, MAX],
      ['b.avro', 5n, 5n, MAX],
      ['old.avro', 1n, 1n, 11n],
    ])
    const avro = (await readAvroFile(list.bytes)).schemaJson
    expect(avro).toContain('"name":"manifest_path","type":"string","field-id":500')
    expect(avro).toContain('"element-id":508')
    expect(avro).not.toContain('"field-id":520')
  })

  it('v3: gives new data manifests first_row_id in order and reports the rows assigned', async () => {
    const list = await writeManifestList({
      formatVersion: 3,
      snapshotId: MAX,
      parentSnapshotId: null,
      sequenceNumber: 1n,
      firstRowId: 1000n,
      manifests: await manifests(),
    })
    expect(list.manifests.map((m) => m.firstRowId)).toEqual([1000n, 1021n, 0n])
    expect(list.addedRows).toBe(36n) // 21 rows in a, 15 in b; old keeps its id
    const read = await readManifestList(list.bytes)
    expect(read.metadata).toMatchObject({ 'parent-snapshot-id': 'null', 'first-row-id': '1000', 'format-version': '3' })
    expect(read.manifests).toEqual(list.manifests)
    expect((await readAvroFile(list.bytes)).schemaJson).toContain('"name":"first_row_id","type":["null","long"],"default":null,"field-id":520')
  })

  it('refuses an unassigned manifest from another snapshot', async () => {
    const [a] = await manifests()
    await expect(writeManifestList({ formatVersion: 2, snapshotId: 1n, parentSnapshotId: null, sequenceNumber: 1n, manifests: [a] })).rejects.toThrow(
      /no sequence number/,
    )
  })

  it('entries inherit snapshot id, sequence numbers and first_row_id from their list entry', async () => {
    const { bytes, manifest } = await writeManifest({
      formatVersion: 3,
      schema,
      spec: UNPARTITIONED,
      snapshotId: MAX,
      manifestPath: 'm.avro',
      entries: [0, 1].map((i) => ({ dataFile: dataFile(i, {}) })),
    })
    const list = await writeManifestList({
      formatVersion: 3,
      snapshotId: MAX,
      parentSnapshotId: null,
      sequenceNumber: 4n,
      firstRowId: 100n,
      manifests: [manifest],
    })
    const entries = inheritFromManifest((await readManifest(bytes)).entries, list.manifests[0])
    expect(entries.map((e) => [e.snapshotId, e.sequenceNumber, e.fileSequenceNumber, e.dataFile.firstRowId])).toEqual([
      [MAX, 4n, 4n, 100n],
      [MAX, 4n, 4n, 110n],
    ])
  })
})
