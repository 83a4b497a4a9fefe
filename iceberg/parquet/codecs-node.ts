// The compressors behind codecs.ts's choice, in a Node process (the roller): zstd's wasm, gzip from
// node:zlib. Never bundled by the edge, which writes no Parquet.
import { gzipSync } from 'node:zlib'
import type { PageCodecs } from './codecs.ts'
import type { Compression } from './data-file.ts'
import { zstdWasm } from './zstd-wasm.ts'

/** Every codec a table may ask for, each level's compressor made once. */
export async function loadPageCodecs(): Promise<PageCodecs> {
  const zstd = await zstdWasm()
  const made = new Map<string, Compression>()
  const once = (key: string, make: () => Compression) => {
    let c = made.get(key)
    if (!c) made.set(key, (c = make()))
    return c
  }
  return {
    zstd: (level) => once(`zstd ${level}`, () => ({ codec: 'zstd', compress: (input) => zstd.compress(input, level) })),
    gzip: (level) => once(`gzip ${level}`, () => ({ codec: 'gzip', compress: (input) => new Uint8Array(gzipSync(input, { level })) })),
  }
}
