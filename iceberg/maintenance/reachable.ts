// What a table's metadata reaches: manifest lists, manifests, live data and delete files, statistics
// files and metadata files. Expiry and the orphan sweep delete only what this walk does not find,
// so it fails loudly rather than skip a file it cannot read.
//
// Like Java's ReachableFileCleanup (ManifestFiles.readPaths → liveEntries), a DELETED entry's file
// is not reached: the snapshot that deleted it no longer serves it. It stays reachable from its
// older snapshots while they are retained.

import { FileNotFound, type FileIO } from '../io/file-io.ts'
import { DELETED, readManifest, readManifestList, type ManifestFile } from '../manifest/manifest.ts'
import type { Snapshot, TableMetadata } from '../spec/metadata.ts'

export type FileKind = 'metadata' | 'manifest-list' | 'manifest' | 'data' | 'delete' | 'statistics'

export interface ReachedFile {
  /** The location as the metadata spells it. */
  location: string
  kind: FileKind
  /** Bytes, when the metadata says (data and delete files, manifests, statistics). */
  size?: number
}

/** A location compared across spellings (s3a://, s3n:// and s3:// name the same object). */
export function locationKey(location: string): string {
  return location.replace(/^s3[an]?:\/\//, 's3://')
}

/** Reads of manifest lists and manifests, shared by the walks of one maintenance run. */
export class ManifestCache {
  private readonly lists = new Map<string, Promise<ManifestFile[]>>()
  private readonly manifests = new Map<string, Promise<ReachedFile[]>>()

  constructor(readonly io: FileIO) {}

  manifestList(location: string): Promise<ManifestFile[]> {
    let p = this.lists.get(location)
    if (!p) {
      p = this.io.read(location).then(async (bytes) => (await readManifestList(bytes)).manifests)
      this.lists.set(location, p)
    }
    return p
  }

  /** The live (ADDED and EXISTING) data and delete files of a manifest. */
  liveFiles(location: string): Promise<ReachedFile[]> {
    let p = this.manifests.get(location)
    if (!p) {
      p = this.io.read(location).then(async (bytes) => {
        const m = await readManifest(bytes)
        return m.entries
          .filter((e) => e.status !== DELETED)
          .map((e) => ({
            location: e.dataFile.filePath,
            kind: (e.dataFile.content ?? 0) === 0 ? ('data' as const) : ('delete' as const),
            size: Number(e.dataFile.fileSizeInBytes),
          }))
      })
      this.manifests.set(location, p)
    }
    return p
  }
}

/** Runs `fn` over `items`, at most `limit` at a time. */
export async function forEachLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < items.length) await fn(items[next++])
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
}

export class Reached {
  readonly files = new Map<string, ReachedFile>()
  add(f: ReachedFile): void {
    const key = locationKey(f.location)
    if (!this.files.has(key)) this.files.set(key, f)
  }
  has(location: string): boolean {
    return this.files.has(locationKey(location))
  }
}

/** The manifests a snapshot names (v1 snapshots may list them inline instead of a manifest list). */
export async function snapshotManifests(snapshot: Snapshot, cache: ManifestCache): Promise<Array<{ location: string; size?: number }>> {
  if (snapshot['manifest-list']) {
    const list = await cache.manifestList(snapshot['manifest-list'])
    return list.map((m) => ({ location: m.manifestPath, size: Number(m.manifestLength) }))
  }
  return (snapshot.manifests ?? []).map((location) => ({ location }))
}

function statisticsFiles(metadata: TableMetadata): ReachedFile[] {
  const out: ReachedFile[] = []
  for (const s of [...(metadata.statistics ?? []), ...(metadata['partition-statistics'] ?? [])] as Array<Record<string, unknown>>) {
    const path = s['statistics-path']
    if (typeof path !== 'string') continue
    const size = s['file-size-in-bytes']
    out.push({ location: path, kind: 'statistics', size: size === undefined || size === null ? undefined : Number(String(size)) })
  }
  return out
}

export interface WalkOptions {
  /** The location of the metadata file itself (a TableMetadata does not know it). */
  metadataLocation?: string
  cache?: ManifestCache
  /** Parallel reads; default 8. */
  concurrency?: number
}

/**
 * Every file `metadata` reaches, keyed by locationKey. Throws when a manifest list or manifest of a
 * retained snapshot cannot be read: without it, nothing may be called unreachable.
 */
export async function walkReachable(metadata: TableMetadata, io: FileIO, opts: WalkOptions = {}): Promise<Reached> {
  const cache = opts.cache ?? new ManifestCache(io)
  const limit = opts.concurrency ?? 8
  const reached = new Reached()
  if (opts.metadataLocation) reached.add({ location: opts.metadataLocation, kind: 'metadata' })
  for (const e of metadata['metadata-log']) reached.add({ location: e['metadata-file'], kind: 'metadata' })
  for (const f of statisticsFiles(metadata)) reached.add(f)

  const manifests = new Map<string, { location: string; size?: number }>()
  await forEachLimit(metadata.snapshots, limit, async (s) => {
    if (s['manifest-list']) reached.add({ location: s['manifest-list'], kind: 'manifest-list' })
    for (const m of await snapshotManifests(s, cache)) manifests.set(locationKey(m.location), m)
  })
  await forEachLimit([...manifests.values()], limit, async (m) => {
    reached.add({ location: m.location, kind: 'manifest', size: m.size })
    for (const f of await cache.liveFiles(m.location)) reached.add(f)
  })
  return reached
}

/**
 * Every manifest list, manifest and live data/delete file reachable from the snapshots of
 * `metadata`, its statistics files, its metadata-log files and (when given) its own location.
 */
export async function reachableFiles(metadata: TableMetadata, io: FileIO, metadataLocation?: string): Promise<Set<string>> {
  const reached = await walkReachable(metadata, io, { metadataLocation })
  return new Set([...reached.files.values()].map((f) => f.location))
}

/** Whether an error means the file is simply not there (then a candidate walk may skip it). */
export function isNotFound(err: unknown): boolean {
  return err instanceof FileNotFound
}

export { statisticsFiles }
