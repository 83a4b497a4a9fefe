// Merging an append's manifests, as Java's ManifestMergeManager (MergeAppend) and PyIceberg's
// _ManifestMergeManager do, so a table appended to every minute keeps a short manifest list.
//
// The rule, per partition spec (spec ids descending, as Java's TreeMap(reverseOrder)):
//   - the data manifests [new, ...parent's live ones] are bin-packed by manifest_length into bins of
//     `commit.manifest.target-size-bytes` (default 8 MiB) with Java's ListPacker(target, lookback 1)
//     .packEnd: packed from the oldest end, so bins are runs in list order and the under-filled bin
//     is the newest one, the one holding the new manifest;
//   - a bin of one manifest is kept as it is;
//   - a bin holding the new manifest with fewer than `commit.manifest.min-count-to-merge` (default
//     100) manifests is kept as it is (Java applies the count only to that bin, "so that large
//     manifests don't prevent merging older groups");
//   - any other bin is rewritten as one manifest: this snapshot's files stay ADDED (sequence numbers
//     inherited from the list), every other live entry becomes EXISTING with its original snapshot
//     id, data and file sequence numbers (and v3 first_row_id), DELETED entries of earlier snapshots
//     are dropped.
// Delete manifests are never merged with data manifests; like PyIceberg, they are carried over as
// they are (Java merges them among themselves; our writers add none).
// `commit.manifest-merge.enabled` (default true, as Java; PyIceberg defaults to false) off: the
// snapshot's manifests are exactly a fast append's.

import type { FileIO } from '../io/file-io.ts'
import type { AppendManifestsInput } from './append.ts'
import { ADDED, DELETED, EXISTING, inheritFromManifest, readManifest, writeManifest, type ManifestEntry, type ManifestFile } from '../manifest/manifest.ts'
import { currentSchema, type TableMetadata } from '../spec/metadata.ts'
import { partitionType, type PartitionSpec } from '../spec/partition.ts'
import type { Schema } from '../spec/types.ts'
import { manifestLocation, writableFormat } from './snapshot.ts'

const MANIFEST_MERGE_ENABLED = 'commit.manifest-merge.enabled'
const MANIFEST_MIN_MERGE_COUNT = 'commit.manifest.min-count-to-merge'
const MANIFEST_TARGET_SIZE_BYTES = 'commit.manifest.target-size-bytes'
const DEFAULT_MIN_MERGE_COUNT = 100
const DEFAULT_MANIFEST_TARGET_SIZE_BYTES = 8 * 1024 * 1024

export interface MergeSettings {
  enabled: boolean
  minCountToMerge: number
  targetSizeBytes: number
}

const intProperty = (v: string | undefined, fallback: number) => (v !== undefined && /^\s*-?\d+\s*$/.test(v) ? Number(v) : fallback)

/** The table's merge properties; booleans read as Java's Boolean.parseBoolean, bad numbers as the default. */
export function mergeSettings(properties: Record<string, string> = {}): MergeSettings {
  const enabled = properties[MANIFEST_MERGE_ENABLED]
  return {
    enabled: enabled === undefined ? true : enabled.trim().toLowerCase() === 'true',
    minCountToMerge: intProperty(properties[MANIFEST_MIN_MERGE_COUNT], DEFAULT_MIN_MERGE_COUNT),
    targetSizeBytes: intProperty(properties[MANIFEST_TARGET_SIZE_BYTES], DEFAULT_MANIFEST_TARGET_SIZE_BYTES),
  }
}

/**
 * Java's BinPacking.ListPacker(target, lookback 1, largestBinFirst false).packEnd: the items are
 * packed from the end with one open bin (an item that does not fit closes it), then each bin and the
 * list of bins are put back in the items' order. An item heavier than the target gets a bin alone.
 */
export function packEnd<T>(items: T[], targetWeight: number, weight: (item: T) => number): T[][] {
  const bins: T[][] = []
  let open: T[] | null = null
  let openWeight = 0
  for (let i = items.length - 1; i >= 0; i--) {
    const w = weight(items[i])
    if (open && openWeight + w <= targetWeight) {
      open.push(items[i])
      openWeight += w
      continue
    }
    if (open) bins.push(open)
    open = [items[i]]
    openWeight = w
  }
  if (open) bins.push(open)
  return bins.reverse().map((bin) => bin.reverse())
}

function specOf(meta: TableMetadata, specId: number) {
  const spec = meta['partition-specs'].find((s) => s['spec-id'] === specId)
  if (!spec) throw new Error(`partition spec ${specId} is not in the table metadata`)
  return spec
}

/**
 * The spec and a schema that types its partition tuple: the current schema, or (an older spec whose
 * source column was since dropped) the newest schema that still has every source column.
 */
export function specAndSchema(meta: TableMetadata, specId: number): { spec: PartitionSpec; schema: Schema } {
  const spec = specOf(meta, specId)
  const current = currentSchema(meta)
  const candidates = [current, ...[...meta.schemas].sort((a, b) => b['schema-id'] - a['schema-id'])]
  for (const schema of candidates) {
    try {
      partitionType(spec, schema)
      return { spec, schema }
    } catch {
      /* a source column is missing from this schema: try an older one */
    }
  }
  return { spec, schema: current } // let the writer report it
}

const live = (m: ManifestFile) => (m.addedFilesCount ?? 0) + (m.existingFilesCount ?? 0)

/**
 * One append's merging across its commit attempts: a merged manifest is written once per bin and
 * reused by a later attempt whose base packs the same bin (Java caches by bin the same way).
 */
export class ManifestMerger {
  /** Merged manifests by the paths of the bin they replace. */
  private readonly merged = new Map<string, ManifestFile>()
  /** Entries of parent manifests (inherited fields filled in); manifests never change once written. */
  private readonly entries = new Map<string, ManifestEntry[]>()
  /** Every merged manifest written, for the clean-up of the ones no commit used. */
  readonly written: string[] = []
  /** What the last attempt listed (the committed list, when the commit succeeded). */
  private last: ManifestFile[] = []
  private next = 1 // m0 is the append's own manifest

  constructor(private readonly commitUuid: string) {}

  async manifests(input: AppendManifestsInput): Promise<ManifestFile[]> {
    const settings = mergeSettings(input.base.metadata.properties)
    if (!settings.enabled) return (this.last = [input.added, ...input.parent])
    const groups = new Map<number, ManifestFile[]>()
    for (const m of [input.added, ...input.parent]) {
      if (m.content !== 0) continue
      const group = groups.get(m.partitionSpecId)
      if (group) group.push(m)
      else groups.set(m.partitionSpecId, [m])
    }
    const out: ManifestFile[] = []
    for (const specId of [...groups.keys()].sort((a, b) => b - a)) {
      for (const bin of packEnd(groups.get(specId)!, settings.targetSizeBytes, (m) => Number(m.manifestLength))) {
        if (bin.length === 1 || (bin.includes(input.added) && bin.length < settings.minCountToMerge)) out.push(...bin)
        else out.push(await this.mergeBin(input, specId, bin))
      }
    }
    out.push(...input.parent.filter((m) => m.content !== 0))
    return (this.last = out)
  }

  private async mergeBin(input: AppendManifestsInput, specId: number, bin: ManifestFile[]): Promise<ManifestFile> {
    const key = bin.map((m) => m.manifestPath).join('\n')
    const cached = this.merged.get(key)
    if (cached) return cached
    const { base, snapshotId } = input
    const entries: ManifestEntry[] = []
    for (const m of bin) {
      if (m === input.added) {
        for (const dataFile of input.files) entries.push({ status: ADDED, snapshotId, sequenceNumber: null, fileSequenceNumber: null, dataFile })
        continue
      }
      for (const e of await this.read(base.io, m)) {
        if (e.status === DELETED) {
          if (e.snapshotId === snapshotId) entries.push(e) // only this snapshot's deletes stay
        } else if (e.status === ADDED && e.snapshotId === snapshotId) {
          entries.push(e)
        } else {
          entries.push({
            status: EXISTING,
            snapshotId: e.snapshotId,
            sequenceNumber: e.sequenceNumber,
            fileSequenceNumber: e.fileSequenceNumber,
            dataFile: e.dataFile,
          })
        }
      }
    }
    const manifestPath = manifestLocation(base.metadata, this.commitUuid, this.next++)
    const written = await writeManifest({
      formatVersion: writableFormat(base.metadata),
      ...specAndSchema(base.metadata, specId),
      snapshotId,
      manifestPath,
      entries,
    })
    // A merge must carry every live file of its bin: counts differing means a manifest was misread.
    const expected = bin.reduce((n, m) => n + live(m), 0)
    const known = bin.every((m) => m.addedFilesCount !== null && m.existingFilesCount !== null) // v1 lists may leave counts out
    if (known && live(written.manifest) !== expected)
      throw new Error(`manifest merge wrote ${live(written.manifest)} live files for ${expected} in ${bin.length} manifests`)
    this.written.push(manifestPath)
    await base.io.write(manifestPath, written.bytes, 'application/octet-stream')
    this.merged.set(key, written.manifest)
    return written.manifest
  }

  private async read(io: FileIO, m: ManifestFile): Promise<ManifestEntry[]> {
    let entries = this.entries.get(m.manifestPath)
    if (!entries) {
      entries = inheritFromManifest((await readManifest(await io.read(m.manifestPath))).entries, m)
      this.entries.set(m.manifestPath, entries)
    }
    return entries
  }

  /** Deletes the merged manifests the committed list does not name (all of them: `committed` false). */
  async cleanUncommitted(io: FileIO, committed: boolean): Promise<void> {
    const kept = new Set(committed ? this.last.map((m) => m.manifestPath) : [])
    const orphans = this.written.filter((p) => !kept.has(p))
    if (orphans.length) await io.delete(orphans).catch(() => undefined) // an orphan is harmless; a later sweep removes it
  }
}
