// The zstd wasm module (the reference C library), loaded and initialized once for every caller: the
// writer's compressor (zstd.ts) and the reader's default ZSTD decompressor (pages.ts). Initializing
// it twice breaks it. Lazy: a reader given its own ZSTD decompressor (the edge's table sample) never
// loads it.

let ready: Promise<typeof import('@bokuweb/zstd-wasm')> | undefined

export function zstdWasm(): Promise<typeof import('@bokuweb/zstd-wasm')> {
  ready ??= import('@bokuweb/zstd-wasm').then(async (zstd) => {
    await zstd.init()
    return zstd
  })
  return ready
}
