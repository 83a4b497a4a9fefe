// Deleting what an expiry unreferenced, after its commit succeeded. Two passes:
//
// 1. Incremental (always): the manifest lists, manifests and live data/delete files the expired
//    snapshots reached, the statistics files and the metadata-log files that `before` had and
//    `after` no longer has (write.metadata.previous-versions-max) — minus everything `after`
//    reaches. `after` is walked in full first; if any of its manifests cannot be read, nothing is
//    deleted.
// 2. Orphans (only with orphanOlderThanMs): every object under `<table location>/` that `after`
//    does not reach and that is older than the given age — files of failed or abandoned commits,
//    metadata files that fell out of metadata-log earlier. The age guard protects the files of
//    commits in flight (written, not yet committed): keep it well above a commit's duration.

import { parseS3Location, S3FileIO, type FileIO } from '../io/file-io.ts'
import type { TableMetadata } from '../spec/metadata.ts'
import type { LoadedTable } from '../catalog/index.ts'
import {
  forEachLimit,
  isNotFound,
  locationKey,
  ManifestCache,
  snapshotManifests,
  statisticsFiles,
  walkReachable,
  type FileKind,
  type ReachedFile,
} from './reachable.ts'

interface ListedObject {
  location: string
  size: number
  lastModified: Date
}

export interface CleanupOptions {
  /** Also delete unreachable objects under the table location older than this (ms). */
  orphanOlderThanMs?: number
  /** Lists every object under a location prefix (ends with '/'); default: the S3FileIO's client. */
  listTableFolder?: (prefix: string) => AsyncIterable<ListedObject>
  /** Clock for the orphan age (default Date.now()). */
  now?: number
  /** Parallel manifest reads (default 8). */
  concurrency?: number
}

type CleanupKind = FileKind | 'orphan'

export interface CleanupResult {
  /** Every location deleted (incremental pass first, then orphans). */
  deleted: string[]
  /** Bytes of the deleted files whose size was known (manifest lists and metadata files: only via a listing). */
  bytes: number
  counts: Record<CleanupKind, number>
  /** Locations whose delete failed (they stay garbage; the next orphan pass finds them). */
  failed: string[]
}

const emptyCounts = (): Record<CleanupKind, number> => ({ metadata: 0, 'manifest-list': 0, manifest: 0, data: 0, delete: 0, statistics: 0, orphan: 0 })

/** Never an orphan, whatever the metadata says: Hadoop tables' pointer file. */
const KEEP = /\/version-hint\.text$/

function defaultLister(io: FileIO): ((prefix: string) => AsyncIterable<ListedObject>) | undefined {
  if (!(io instanceof S3FileIO)) return undefined
  return async function* (prefix: string) {
    const { bucket, key } = parseS3Location(prefix)
    for await (const o of io.client(bucket).list(key)) yield { location: `s3://${bucket}/${o.key}`, size: o.size, lastModified: o.lastModified }
  }
}

/**
 * Deletes what `before` reached and `after` (the committed table) does not; with orphanOlderThanMs,
 * also the unreachable objects under the table folder older than that. Nothing `after` reaches is
 * ever deleted.
 */
export async function deleteUnreachable(before: TableMetadata, after: LoadedTable, opts: CleanupOptions = {}): Promise<CleanupResult> {
  if (before['table-uuid'] !== after.metadata['table-uuid']) {
    throw new Error(`before and after are different tables (${before['table-uuid']} vs ${after.metadata['table-uuid']})`)
  }
  const io = after.io
  const limit = opts.concurrency ?? 8
  const cache = new ManifestCache(io)
  const result: CleanupResult = { deleted: [], bytes: 0, counts: emptyCounts(), failed: [] }

  const keptIds = new Set(after.metadata.snapshots.map((s) => s['snapshot-id']))
  const gone = before.snapshots.filter((s) => !keptIds.has(s['snapshot-id']))
  const droppedLog = before['metadata-log'].filter(
    (e) => !after.metadata['metadata-log'].some((x) => locationKey(x['metadata-file']) === locationKey(e['metadata-file'])),
  )
  const orphans = opts.orphanOlderThanMs !== undefined
  if (gone.length === 0 && droppedLog.length === 0 && !orphans) return result

  // Everything the committed table reaches: protected, whatever else is found below.
  const reached = await walkReachable(after.metadata, io, { metadataLocation: after.metadataLocation, cache, concurrency: limit })

  const candidates = new Map<string, ReachedFile>()
  const consider = (f: ReachedFile) => {
    const key = locationKey(f.location)
    if (!reached.files.has(key) && !candidates.has(key)) candidates.set(key, f)
  }
  for (const e of droppedLog) consider({ location: e['metadata-file'], kind: 'metadata' })
  for (const f of statisticsFiles(before)) consider(f)

  // Manifests of expired snapshots that `after` still has need no reading: their live files are reached.
  const manifests = new Map<string, { location: string; size?: number }>()
  await forEachLimit(gone, limit, async (s) => {
    if (s['manifest-list']) consider({ location: s['manifest-list'], kind: 'manifest-list' })
    try {
      for (const m of await snapshotManifests(s, cache)) if (!reached.has(m.location)) manifests.set(locationKey(m.location), m)
    } catch (err) {
      if (!isNotFound(err)) throw err // already deleted by an earlier, interrupted run
    }
  })
  await forEachLimit([...manifests.values()], limit, async (m) => {
    consider({ location: m.location, kind: 'manifest', size: m.size })
    try {
      for (const f of await cache.liveFiles(m.location)) consider(f)
    } catch (err) {
      if (!isNotFound(err)) throw err
    }
  })

  // Data first, then what indexes it: an interrupted run leaves only unreachable files behind.
  const order: FileKind[] = ['data', 'delete', 'statistics', 'manifest', 'manifest-list', 'metadata']
  for (const kind of order) {
    const files = [...candidates.values()].filter((f) => f.kind === kind)
    await remove(io, files, kind, result)
  }

  if (orphans) {
    const list = opts.listTableFolder ?? defaultLister(io)
    if (!list) throw new Error('the orphan pass needs listTableFolder: this FileIO cannot list')
    const prefix = after.metadata.location.replace(/\/+$/, '') + '/'
    parseS3Location(prefix) // refuses a bucket root
    const now = opts.now ?? Date.now()
    const age = opts.orphanOlderThanMs!
    const done = new Set(result.deleted.map(locationKey))
    const found: ReachedFile[] = []
    for await (const o of list(prefix)) {
      const key = locationKey(o.location)
      if (!key.startsWith(locationKey(prefix)) || reached.files.has(key) || done.has(key) || KEEP.test(key)) continue
      if (now - o.lastModified.getTime() < age) continue
      found.push({ location: o.location, kind: 'metadata', size: o.size })
    }
    await remove(io, found, 'orphan', result)
  }
  return result
}

async function remove(io: FileIO, files: ReachedFile[], kind: CleanupKind, result: CleanupResult): Promise<void> {
  for (let i = 0; i < files.length; i += 1000) {
    const chunk = files.slice(i, i + 1000)
    try {
      await io.delete(chunk.map((f) => f.location))
    } catch {
      result.failed.push(...chunk.map((f) => f.location))
      continue
    }
    for (const f of chunk) {
      result.deleted.push(f.location)
      result.bytes += f.size ?? 0
      result.counts[kind]++
    }
  }
}
