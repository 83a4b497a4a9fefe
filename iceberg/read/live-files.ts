// A table's live files at its current snapshot: the manifest list, then each manifest's ADDED and
// EXISTING entries with what they inherit filled in. Reading only (manifests and lists are decoded,
// never written): the replace commit, maintenance, keyed rolls and the edge's table sample share it.
import type { LoadedTable } from '../catalog/index.ts'
import { readManifestList, type ManifestFile } from '../manifest/read-list.ts'
import { DELETED, inheritFromManifest, readManifest, type ManifestEntry } from '../manifest/read-manifest.ts'
import { currentSnapshot, type Snapshot } from '../spec/metadata.ts'

export interface LiveEntry {
  manifest: ManifestFile
  /** With inherited snapshot id, sequence numbers and first_row_id filled in. */
  entry: ManifestEntry
}

export interface TableFiles {
  snapshot?: Snapshot
  manifests: ManifestFile[]
  /** Live (ADDED or EXISTING) entries of data manifests. */
  data: LiveEntry[]
  /** Live entries of delete manifests. */
  deletes: LiveEntry[]
}

/** Manifests never change once written: their entries can be cached by path across attempts. */
export type ManifestCache = Map<string, ManifestEntry[]>

export async function readLiveFiles(table: LoadedTable, cache: ManifestCache = new Map()): Promise<TableFiles> {
  const snapshot = currentSnapshot(table.metadata)
  const out: TableFiles = { snapshot, manifests: [], data: [], deletes: [] }
  if (!snapshot?.['manifest-list']) return out
  out.manifests = (await readManifestList(await table.io.read(snapshot['manifest-list']))).manifests
  for (const manifest of out.manifests) {
    let entries = cache.get(manifest.manifestPath)
    if (!entries) {
      entries = inheritFromManifest((await readManifest(await table.io.read(manifest.manifestPath))).entries, manifest)
      cache.set(manifest.manifestPath, entries)
    }
    for (const entry of entries) {
      if (entry.status === DELETED) continue
      ;(manifest.content === 0 ? out.data : out.deletes).push({ manifest, entry })
    }
  }
  return out
}

/** A live file's data sequence number: the commit its rows belong to (readLiveFiles fills inherited ones in). */
export function dataSequenceNumber(live: LiveEntry): bigint {
  const seq = live.entry.sequenceNumber
  if (seq === null) throw new Error(`${live.entry.dataFile.filePath}: a live manifest entry without a data sequence number`)
  return seq
}
