// The page codec a table asks for: `write.parquet.compression-codec` and `write.parquet.compression-level`
// as Iceberg defines them. The default is Iceberg's, zstd, at level 3 (what Iceberg Java writes: its
// level property is unset and parquet-java's zstd level is 3; PyIceberg leaves it to pyarrow, level 1).
// A codec this writer has no compressor for (lz4, brotli) gets the default: any reader reads zstd.
// The compressors themselves: codecs-node.ts (the roller's; the edge writes no Parquet).
import type { Compression } from './data-file.ts'

export const DEFAULT_ZSTD_LEVEL = 3

/** The compressors a process has, each level's made on first use. */
export interface PageCodecs {
  zstd(level: number): Compression
  gzip(level: number): Compression
}

/** The table's codec and level; a level outside the codec's range is the codec's default. */
export function pageCompression(properties: Record<string, string>, codecs: PageCodecs): Compression {
  const codec = (properties['write.parquet.compression-codec'] ?? 'zstd').toLowerCase()
  const level = levelOf(properties['write.parquet.compression-level'])
  switch (codec) {
    case 'uncompressed':
      return 'uncompressed'
    case 'snappy':
      return 'snappy'
    case 'gzip':
      return codecs.gzip(level !== null && level >= 0 && level <= 9 ? level : 6)
    default:
      return codecs.zstd(level !== null && level >= 1 && level <= 22 ? level : DEFAULT_ZSTD_LEVEL)
  }
}

function levelOf(text: string | undefined): number | null {
  if (text === undefined || !/^\s*-?\d+\s*$/.test(text)) return null
  return Number(text)
}
