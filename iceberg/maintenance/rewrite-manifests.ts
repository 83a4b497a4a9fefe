// Manifest rewrite (Java's RewriteManifests): one `replace` snapshot that changes no file and no row,
// only how the current snapshot's data files are listed — per partition spec, the live entries of
// the small data manifests go into as few manifests as the target size allows.
//
// Which manifests: per spec, the data manifests with live files under half the target
// (`commit.manifest.target-size-bytes`, 8 MiB), when there are two or more or one holds dead
// entries; fuller ones are left as they are, so a second sweep over the result commits nothing.
// Entries are written EXISTING with their original snapshot id, data and file sequence numbers (and
// v3 first_row_id), clustered by partition; DELETED entries are dropped, and so are the manifests
// with no live file (what a compaction leaves). Delete manifests are carried over unchanged.
//
// Racing a writer: on a conflict, when every rewritten manifest is still listed by the fresh base,
// the same new manifests are committed with whatever else that base lists (a roll's new manifest,
// say); when one is gone (a merge or a compaction rewrote it) the new manifests are deleted and the
// rewrite is planned again. An unknown outcome is resolved by looking for the snapshot id.

import type { Catalog, LoadedTable } from '../catalog/index.ts'
import { PlanStale, transact, type RetryPolicy, type TransactOptions } from '../transaction/transact.ts'
import { compareValues } from '../spec/bounds.ts'
import { EXISTING, hasLiveFiles, readManifestList, writeManifest, writeManifestList, type ManifestFile } from '../manifest/manifest.ts'
import { currentSnapshot, type Snapshot, type SnapshotSummary } from '../spec/metadata.ts'
import { readLiveFiles, type LiveEntry, type ManifestCache, type TableFiles } from '../read/live-files.ts'
import { appendSnapshot, commitChanges, manifestListLocation, manifestLocation, newSnapshotId, planSnapshot, writableFormat } from '../transaction/snapshot.ts'
import { mergeSettings, specAndSchema } from '../transaction/manifest-merge.ts'

export interface RewriteManifestsOptions {
  /** Default: the table's `commit.manifest.target-size-bytes` (8 MiB). */
  targetSizeBytes?: number
  retry?: RetryPolicy
  onRetry?: TransactOptions['onRetry']
}

export interface RewriteManifestsResult {
  snapshotId: bigint
  table: LoadedTable
  /** Manifests written. */
  created: number
  /** Data manifests the new ones replace, and those with no live file that are dropped. */
  replaced: number
  /** Data manifests listed as they were. */
  kept: number
  /** Live entries rewritten. */
  entries: number
}

interface Group {
  specId: number
  entries: LiveEntry[]
}

const liveCount = (m: ManifestFile) => (m.addedFilesCount ?? 0) + (m.existingFilesCount ?? 0)

/**
 * Per spec, the live entries of the data manifests under half the target, when there are two or
 * more of them or one holds DELETED entries; and the data manifests with no live file left (a
 * compaction leaves one per manifest it touched), which are dropped. Rewriting a group always
 * lowers its count or its dead entries (each manifest is under half the target, and entries take no
 * more room together than apart), and its outputs are one manifest or several of over half the
 * target each, with no dead entry: a second pass finds nothing to do.
 */
function planManifestRewrite(files: TableFiles, targetSizeBytes: number): { groups: Group[]; replaced: Set<string>; dropped: ManifestFile[] } {
  const bySpec = new Map<number, ManifestFile[]>()
  const dropped: ManifestFile[] = []
  for (const m of files.manifests) {
    if (m.content !== 0) continue
    if (!hasLiveFiles(m)) dropped.push(m)
    else if (Number(m.manifestLength) < targetSizeBytes / 2) bySpec.set(m.partitionSpecId, [...(bySpec.get(m.partitionSpecId) ?? []), m])
  }
  const groups: Group[] = []
  const replaced = new Set<string>()
  for (const [specId, manifests] of [...bySpec].sort((a, b) => a[0] - b[0])) {
    if (manifests.length < 2 && !manifests.some((m) => (m.deletedFilesCount ?? 0) > 0)) continue
    const paths = new Set(manifests.map((m) => m.manifestPath))
    for (const p of paths) replaced.add(p)
    groups.push({ specId, entries: files.data.filter((x) => paths.has(x.manifest.manifestPath)) })
  }
  return { groups, replaced, dropped }
}

/** Partition tuple order (nulls first), then data sequence number, then path: each manifest covers a narrow range. */
function byPartition(a: LiveEntry, b: LiveEntry): number {
  const pa = a.entry.dataFile.partition
  const pb = b.entry.dataFile.partition
  for (const k of Object.keys(pa)) {
    const x = pa[k] ?? null
    const y = pb[k] ?? null
    if (x === null || y === null) {
      if (x !== y) return x === null ? -1 : 1
      continue
    }
    const c = compareValues(x, y)
    if (c !== 0) return c
  }
  const sa = a.entry.sequenceNumber ?? 0n
  const sb = b.entry.sequenceNumber ?? 0n
  if (sa !== sb) return sa < sb ? -1 : 1
  return a.entry.dataFile.filePath < b.entry.dataFile.filePath ? -1 : a.entry.dataFile.filePath > b.entry.dataFile.filePath ? 1 : 0
}

/** Java's BaseRewriteManifests summary; totals carried from the parent (no file changed). */
function rewriteManifestsSummary(parent: Snapshot | undefined, counts: { created: number; kept: number; replaced: number; entries: number }): SnapshotSummary {
  const summary: SnapshotSummary = {
    operation: 'replace',
    'manifests-created': String(counts.created),
    'manifests-kept': String(counts.kept),
    'manifests-replaced': String(counts.replaced),
    'entries-processed': String(counts.entries),
    'changed-partition-count': '0',
  }
  for (const key of ['total-records', 'total-files-size', 'total-data-files', 'total-delete-files', 'total-position-deletes', 'total-equality-deletes']) {
    const previous = parent ? parent.summary[key] : '0'
    if (previous !== undefined && /^\d+$/.test(previous)) summary[key] = previous // unknown stays unknown, as in Java
  }
  return summary
}

/**
 * Writes each group as one manifest; one over the target is split into ceil(size / target) manifests
 * of equal entry counts (Java's rolling writer cuts at the target instead; the result is as many).
 */
async function writeGroups(
  base: LoadedTable,
  groups: Group[],
  target: number,
  snapshotId: bigint,
  commitUuid: string,
  written: string[],
): Promise<ManifestFile[]> {
  const out: ManifestFile[] = []
  let n = 0
  for (const g of groups) {
    const sorted = [...g.entries].sort(byPartition)
    const write = (slice: LiveEntry[]) =>
      writeManifest({
        formatVersion: writableFormat(base.metadata),
        ...specAndSchema(base.metadata, g.specId),
        snapshotId,
        manifestPath: manifestLocation(base.metadata, commitUuid, n++),
        entries: slice.map(({ entry: e }) => ({
          status: EXISTING,
          snapshotId: e.snapshotId,
          sequenceNumber: e.sequenceNumber,
          fileSequenceNumber: e.fileSequenceNumber,
          dataFile: e.dataFile,
        })),
      })
    const whole = await write(sorted)
    let parts = [whole]
    if (whole.bytes.length > target) {
      const size = Math.ceil(sorted.length / Math.ceil(whole.bytes.length / target))
      parts = []
      for (let i = 0; i < sorted.length; i += size) parts.push(await write(sorted.slice(i, i + size)))
    }
    for (const w of parts) {
      written.push(w.manifest.manifestPath)
      await base.io.write(w.manifest.manifestPath, w.bytes, 'application/octet-stream')
      out.push(w.manifest)
    }
  }
  return out
}

async function deleteQuietly(table: LoadedTable, paths: string[]): Promise<void> {
  if (paths.length) await table.io.delete(paths).catch(() => undefined) // orphans are harmless; a later sweep may remove them
}

interface RewritePlan {
  /** the table the plan was made on, and its live files */
  base: LoadedTable
  files: TableFiles
  replaced: Set<string>
  dropped: ManifestFile[]
  created: ManifestFile[]
  entries: number
  snapshotId: bigint
  commitUuid: string
  written: string[]
  kept: number
}

/**
 * Rewrites the current snapshot's small data manifests in one `replace` commit; null when there is
 * nothing to fold and no manifest without live files to drop (no commit then).
 */
export async function rewriteManifests(catalog: Catalog, table: LoadedTable, opts: RewriteManifestsOptions = {}): Promise<RewriteManifestsResult | null> {
  const cache: ManifestCache = new Map()
  const done = await transact<RewritePlan>(
    catalog,
    table,
    {
      plan: async (base) => {
        const target = opts.targetSizeBytes ?? mergeSettings(base.metadata.properties).targetSizeBytes
        const files = await readLiveFiles(base, cache)
        const { groups, replaced, dropped } = planManifestRewrite(files, target)
        if (groups.length === 0 && dropped.length === 0) return null
        const p: RewritePlan = {
          base,
          files,
          replaced,
          dropped,
          created: [],
          entries: groups.reduce((n, g) => n + g.entries.length, 0),
          snapshotId: newSnapshotId(),
          commitUuid: crypto.randomUUID(),
          written: [],
          kept: 0,
        }
        try {
          p.created = await writeGroups(base, groups, target, p.snapshotId, p.commitUuid, p.written)
        } catch (err) {
          await deleteQuietly(base, p.written)
          throw err
        }
        // Java's validateFilesCounts: the new manifests hold exactly the live files of the replaced ones.
        const before = files.manifests.filter((m) => replaced.has(m.manifestPath)).reduce((n, m) => n + liveCount(m), 0)
        const after = p.created.reduce((n, m) => n + liveCount(m), 0)
        if (before !== after) {
          await deleteQuietly(base, p.written)
          throw new Error(`manifest rewrite: ${after} live files written for ${before}`)
        }
        return p
      },
      change: async (p, fresh, attempt) => {
        const head = currentSnapshot(fresh.metadata)?.['manifest-list']
        const listed = fresh === p.base ? p.files.manifests : head ? (await readManifestList(await fresh.io.read(head))).manifests : []
        const paths = new Set(listed.map((m) => m.manifestPath))
        const gone = [...p.replaced].filter((path) => !paths.has(path))
        if (gone.length) throw new PlanStale(`${gone.length} manifest(s) to rewrite are no longer listed, e.g. ${gone[0]}`)
        if (p.created.length === 0 && !p.dropped.some((m) => paths.has(m.manifestPath))) throw new PlanStale('the manifests to drop are gone already')
        const keep = listed.filter((m) => m.content === 0 && hasLiveFiles(m) && !p.replaced.has(m.manifestPath))
        p.kept = keep.length
        const plan = planSnapshot(fresh.metadata, { snapshotId: p.snapshotId })
        const list = await writeManifestList({
          formatVersion: writableFormat(fresh.metadata),
          snapshotId: p.snapshotId,
          parentSnapshotId: plan.parentSnapshotId,
          sequenceNumber: plan.sequenceNumber,
          firstRowId: plan.firstRowId,
          manifests: [...p.created, ...keep, ...listed.filter((m) => m.content !== 0 && hasLiveFiles(m))],
        })
        const listPath = manifestListLocation(fresh.metadata, p.snapshotId, p.commitUuid, attempt)
        p.written.push(listPath)
        await fresh.io.write(listPath, list.bytes, 'application/octet-stream')
        const summary = rewriteManifestsSummary(currentSnapshot(fresh.metadata), {
          created: p.created.length,
          kept: p.kept,
          replaced: p.replaced.size + p.dropped.length,
          entries: p.entries,
        })
        return commitChanges(fresh.metadata, appendSnapshot(plan, { manifestList: listPath, summary, addedRows: list.addedRows }), plan.branch)
      },
      snapshotId: (p) => p.snapshotId,
      discard: (p) => deleteQuietly(table, p.written), // nothing of this plan was committed
    },
    { retry: opts.retry, onRetry: opts.onRetry },
  )
  if (!done) return null
  const p = done.plan
  return {
    snapshotId: p.snapshotId,
    table: done.table,
    created: p.created.length,
    replaced: p.replaced.size + p.dropped.length,
    kept: p.kept,
    entries: p.entries,
  }
}
