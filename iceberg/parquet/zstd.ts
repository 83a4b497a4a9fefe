// zstd for Parquet pages (Iceberg's default codec, write.parquet.compression-codec=zstd, level 3).
// Node 20's zlib has no zstd, so this is the wasm build of the reference C library. It loads
// asynchronously once; the returned compressor is synchronous, as hyparquet-writer requires.
// Kept apart from parquet/data-file.ts so code that never writes Parquet (the edge) never bundles the wasm.

import type { Compression } from './data-file.ts'

let ready: Promise<typeof import('@bokuweb/zstd-wasm')> | undefined

/** Loads the zstd wasm module (once) and returns the `compression` option for writeDataFile. */
export async function loadZstd(level = 3): Promise<Compression> {
  ready ??= import('@bokuweb/zstd-wasm').then(async (zstd) => {
    await zstd.init()
    return zstd
  })
  const zstd = await ready
  return { codec: 'zstd', compress: (input) => zstd.compress(input, level) }
}

/** Decompresses one zstd frame (for reading our own files back in tests and tools). */
export async function loadZstdDecompress(): Promise<(input: Uint8Array) => Uint8Array> {
  await loadZstd()
  const zstd = await ready!
  return (input) => zstd.decompress(input)
}
