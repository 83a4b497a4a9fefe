// The append every writer of ours uses: a fast append whose manifests are merged as Java's MergeAppend
// merges them (manifest-merge.ts), so the manifest list stops growing by one per commit. With
// `commit.manifest-merge.enabled=false` it is exactly fastAppend. The snapshot is the same either
// way (`operation: append`, the same summary); only the manifest list differs.

import { CommitStateUnknown, type Catalog, type LoadedTable } from '../catalog/index.ts'
import { appendWith, type AppendOptions, type AppendResult } from './append.ts'
import type { DataFile } from '../manifest/manifest.ts'
import { ManifestMerger } from './manifest-merge.ts'

export { mergeSettings } from './manifest-merge.ts'

/**
 * Appends `files` in one snapshot, merging small manifests per the table's properties (read on
 * each attempt's base). Merged manifests no commit used are deleted afterwards, except when the
 * outcome is unknown (one of them may be committed).
 */
export async function appendFiles(catalog: Catalog, table: LoadedTable, files: DataFile[], opts: AppendOptions = {}): Promise<AppendResult> {
  const commitUuid = opts.commitUuid ?? crypto.randomUUID()
  const merger = new ManifestMerger(commitUuid)
  try {
    const result = await appendWith(catalog, table, files, { ...opts, commitUuid }, (input) => merger.manifests(input))
    await merger.cleanUncommitted(table.io, true)
    return result
  } catch (err) {
    if (!(err instanceof CommitStateUnknown)) await merger.cleanUncommitted(table.io, false)
    throw err
  }
}
