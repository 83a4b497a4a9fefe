// zstd for Parquet pages (Iceberg's default codec, write.parquet.compression-codec=zstd, level 3).
// Node 20's zlib has no zstd, so this is the wasm build of the reference C library. It loads
// asynchronously once; the returned compressor is synchronous, as hyparquet-writer requires.
// Kept apart from parquet/data-file.ts so code that never writes Parquet (the edge) never bundles the wasm.

import type { Compression } from './data-file.ts'
import { zstdWasm } from './zstd-wasm.ts'

/** Loads the zstd wasm module (once) and returns the `compression` option for writeDataFile. */
export async function loadZstd(level = 3): Promise<Compression> {
  const zstd = await zstdWasm()
  return { codec: 'zstd', compress: (input) => zstd.compress(input, level) }
}

/** Decompresses one zstd frame (for reading our own files back in tests and tools). */
export async function loadZstdDecompress(): Promise<(input: Uint8Array) => Uint8Array> {
  const zstd = await zstdWasm()
  return (input) => zstd.decompress(input)
}
