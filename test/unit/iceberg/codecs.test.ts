// A table's write.parquet.compression-codec and -level (iceberg/parquet/codecs.ts) decide how the
// roller's writer compresses pages: the footer names the codec, the level changes the bytes, and
// every file reads back the same rows.
import { parquetMetadata } from 'hyparquet'
import { describe, expect, it, vi } from 'vitest'
import { DEFAULT_ZSTD_LEVEL, pageCompression, type PageCodecs } from '../../../iceberg/parquet/codecs.ts'
import { readDataFile } from '../../../iceberg/parquet/read-rows.ts'
import { loadPageCodecs } from '../../../iceberg/parquet/codecs-node.ts'
import { currentSchema, newTableMetadata } from '../../../iceberg/spec/metadata.ts'
import type { Row } from '../../../iceberg/spec/types.ts'
import { PartitionedWriter } from '../../../iceberg/writer/partitioned.ts'

// reading every file back row by row takes seconds on a busy machine
vi.setConfig({ testTimeout: 60_000 })

const metadataWith = (properties: Record<string, string>) =>
  newTableMetadata({
    location: 's3://b/t',
    formatVersion: 2,
    properties,
    schema: {
      fields: [
        { id: 1, name: 'id', required: true, type: 'long' },
        { id: 2, name: 'msg', required: false, type: 'string' },
      ],
    },
  })

const ROWS: Row[] = Array.from({ length: 5_000 }, (_, i) => ({ id: BigInt(i), msg: `message ${i % 977} of a sensor ${i % 13}` }))

function write(properties: Record<string, string>, codecs: PageCodecs) {
  const metadata = metadataWith(properties)
  const w = new PartitionedWriter({ metadata }, codecs)
  w.appendRows(ROWS)
  const [file] = w.finish('f')
  const codec = parquetMetadata(file.bytes.buffer.slice(file.bytes.byteOffset, file.bytes.byteOffset + file.bytes.length) as ArrayBuffer).row_groups[0]
    .columns[0].meta_data!.codec
  return { bytes: file.bytes, codec, schema: currentSchema(metadata) }
}

describe('a table’s page codec', async () => {
  const codecs = await loadPageCodecs()

  it('is zstd at Iceberg Java’s level 3 when the table says nothing, and an invalid level is the default', () => {
    expect(pageCompression({}, codecs)).toBe(codecs.zstd(DEFAULT_ZSTD_LEVEL))
    expect(DEFAULT_ZSTD_LEVEL).toBe(3)
    expect(pageCompression({ 'write.parquet.compression-level': 'fast' }, codecs)).toBe(codecs.zstd(3))
    expect(pageCompression({ 'write.parquet.compression-level': '23' }, codecs)).toBe(codecs.zstd(3))
    expect(pageCompression({ 'write.parquet.compression-codec': 'ZSTD', 'write.parquet.compression-level': '1' }, codecs)).toBe(codecs.zstd(1))
    expect(pageCompression({ 'write.parquet.compression-codec': 'gzip', 'write.parquet.compression-level': '12' }, codecs)).toBe(codecs.gzip(6))
    // No compressor here for lz4 or brotli: the default, which every reader reads.
    expect(pageCompression({ 'write.parquet.compression-codec': 'lz4' }, codecs)).toBe(codecs.zstd(3))
  })

  it('is the one the footer names, and every file reads back the same rows', async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{}, 'ZSTD'],
      [{ 'write.parquet.compression-codec': 'gzip', 'write.parquet.compression-level': '9' }, 'GZIP'],
      [{ 'write.parquet.compression-codec': 'snappy' }, 'SNAPPY'],
      [{ 'write.parquet.compression-codec': 'uncompressed' }, 'UNCOMPRESSED'],
    ]
    for (const [properties, codec] of cases) {
      const file = write(properties, codecs)
      expect(file.codec, JSON.stringify(properties)).toBe(codec)
      expect(await readDataFile(file.bytes, file.schema)).toEqual(ROWS)
    }
  })

  it('compresses at the level asked for', () => {
    const level = (l: string) => write({ 'write.parquet.compression-level': l }, codecs).bytes
    const [one, three, nineteen] = [level('1'), level('3'), level('19')]
    expect(Buffer.compare(one, three)).not.toBe(0)
    expect(nineteen.length).toBeLessThan(one.length)
    // Unset is level 3, byte for byte.
    expect(Buffer.compare(write({}, codecs).bytes, three)).toBe(0)
  })
})
