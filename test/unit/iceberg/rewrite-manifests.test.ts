// The manifest rewrite of the maintenance sweep: the small data manifests of each spec folded into as
// few as the target allows, entries EXISTING with their original snapshot ids and sequence numbers,
// dead entries dropped, delete manifests and totals untouched, nothing committed when nothing gains,
// and a racing append kept (or a racing merge re-planned). In memory.
import { describe, expect, it } from 'vitest'
import type { LoadedTable } from '../../../iceberg/catalog/index.ts'
import { DELETED, EXISTING, readManifest, readManifestList, type DataFile, type ManifestFile } from '../../../iceberg/manifest/manifest.ts'
import { currentSnapshot } from '../../../iceberg/spec/metadata.ts'
import { replaceDataFiles } from '../../../iceberg/transaction/replace.ts'
import { readLiveFiles } from '../../../iceberg/read/live-files.ts'
import { rewriteManifests } from '../../../iceberg/maintenance/rewrite-manifests.ts'
import { appendFiles } from '../../../iceberg/transaction/merge-append.ts'
import { LOC, type MemoryCatalog, partitionedTable as setup } from './memory-catalog.ts'

const FAST = { attempts: 5, minBackoffMs: 1, maxBackoffMs: 2 }

let n = 0
const file = (d: number | null, rows = 2): DataFile => ({
  filePath: `${LOC}/data/g${n++}.parquet`,
  fileFormat: 'PARQUET',
  partition: { d },
  recordCount: rows,
  fileSizeInBytes: 100 + rows,
})
const append = (catalog: MemoryCatalog, files: DataFile[], table: LoadedTable = catalog.current) => appendFiles(catalog, table, files, { retry: FAST })

async function listOf(t: LoadedTable): Promise<ManifestFile[]> {
  return (await readManifestList(await t.io.read(currentSnapshot(t.metadata)!['manifest-list']!))).manifests
}

async function liveByPath(t: LoadedTable) {
  const files = await readLiveFiles(t)
  return new Map(
    files.data.map(({ entry: e }) => [
      e.dataFile.filePath,
      { snapshotId: e.snapshotId, seq: e.sequenceNumber, fileSeq: e.fileSequenceNumber, firstRowId: e.dataFile.firstRowId ?? null },
    ]),
  )
}

const NO_MERGE = { 'commit.manifest-merge.enabled': 'false' }

describe('rewriteManifests', () => {
  it('folds 30 small manifests into one: entries EXISTING with their snapshot ids and sequence numbers, totals kept', async () => {
    const catalog = await setup(NO_MERGE)
    for (let i = 0; i < 30; i++) await append(catalog, [file(i % 4 === 3 ? null : i % 4), file(7 - (i % 5))])
    const before = await liveByPath(catalog.current)
    const parent = currentSnapshot(catalog.current.metadata)!
    expect(await listOf(catalog.current)).toHaveLength(30)

    const res = (await rewriteManifests(catalog, catalog.current, { retry: FAST }))!
    expect(res).toMatchObject({ created: 1, replaced: 30, kept: 0, entries: 60 })
    const list = await listOf(res.table)
    expect(list).toHaveLength(1)
    expect(list[0]).toMatchObject({
      addedFilesCount: 0,
      existingFilesCount: 60,
      deletedFilesCount: 0,
      existingRowsCount: 120n,
      minSequenceNumber: 1n,
      sequenceNumber: 31n,
      addedSnapshotId: res.snapshotId,
    })
    expect(list[0].partitions![0].containsNull).toBe(true)
    expect(await liveByPath(res.table)).toEqual(before)
    const raw = (await readManifest(await res.table.io.read(list[0].manifestPath))).entries
    expect(raw.every((e) => e.status === EXISTING)).toBe(true)
    // clustered by partition: nulls first, then ascending
    const ds = raw.map((e) => e.dataFile.partition.d as number | null)
    expect(ds).toEqual([...ds].sort((a, b) => (a === null ? -1 : b === null ? 1 : a - b)))

    const snap = currentSnapshot(res.table.metadata)!
    expect(snap['parent-snapshot-id']).toBe(parent['snapshot-id'])
    expect(snap.summary).toEqual({
      operation: 'replace',
      'manifests-created': '1',
      'manifests-kept': '0',
      'manifests-replaced': '30',
      'entries-processed': '60',
      'changed-partition-count': '0',
      'total-records': '120',
      'total-files-size': parent.summary['total-files-size'],
      'total-data-files': '60',
      'total-delete-files': '0',
      'total-position-deletes': '0',
      'total-equality-deletes': '0',
    })

    // Nothing more to gain: no commit.
    const commits = catalog.commits
    expect(await rewriteManifests(catalog, res.table, { retry: FAST })).toBeNull()
    expect(catalog.commits).toBe(commits)
  })

  it('splits what is over the target into ceil(size/target) manifests of over half of it; a second pass keeps them', async () => {
    // Two identical tables of 4 appends of 200 files (random paths, so entries do not compress away).
    const batches = Array.from({ length: 4 }, () =>
      Array.from({ length: 200 }, (_, i): DataFile => ({ ...file(i % 7, 1 + i), filePath: `${LOC}/data/${crypto.randomUUID()}.parquet` })),
    )
    const tables = []
    for (let t = 0; t < 2; t++) {
      const catalog = await setup(NO_MERGE)
      for (const b of batches) await append(catalog, b)
      tables.push(catalog)
    }
    const small = Math.max(...(await listOf(tables[0].current)).map((m) => Number(m.manifestLength)))
    const one = (await rewriteManifests(tables[0], tables[0].current, { retry: FAST }))!
    const whole = Number((await listOf(one.table))[0].manifestLength)
    expect(whole).toBeGreaterThan(2 * small)

    const catalog = tables[1]
    const before = await liveByPath(catalog.current)
    const target = Math.floor((2 * small + whole) / 2) // the inputs are under half of it, all of them together over it
    const res = (await rewriteManifests(catalog, catalog.current, { targetSizeBytes: target, retry: FAST }))!
    const list = await listOf(res.table)
    expect(list).toHaveLength(Math.ceil(whole / target))
    expect(list.reduce((n, m) => n + m.existingFilesCount!, 0)).toBe(800)
    for (const m of list) expect(Number(m.manifestLength)).toBeGreaterThan(target / 2)
    expect(await liveByPath(res.table)).toEqual(before)
    expect(await rewriteManifests(catalog, res.table, { targetSizeBytes: target, retry: FAST })).toBeNull()
  })

  it('drops dead entries: files a replace removed are gone, the rest carried with their sequence numbers (v3 row ids too)', async () => {
    const catalog = await setup(NO_MERGE, 3)
    const files: DataFile[] = []
    for (let i = 0; i < 6; i++) {
      const f = [file(i % 2), file(i % 2)]
      files.push(...f)
      await append(catalog, f)
    }
    const gone = new Set([files[0].filePath, files[3].filePath, files[4].filePath])
    const replacement = file(0, 6)
    const r = await replaceDataFiles(catalog, catalog.current, { deleted: gone, added: [{ specId: 0, dataFile: replacement }], retry: FAST })
    const withDead = await listOf(r.table)
    expect(withDead.some((m) => (m.deletedFilesCount ?? 0) > 0)).toBe(true)
    const before = await liveByPath(r.table)

    const res = (await rewriteManifests(catalog, r.table, { retry: FAST }))!
    const list = await listOf(res.table)
    expect(list).toHaveLength(1)
    expect(list[0]).toMatchObject({ deletedFilesCount: 0, existingFilesCount: 10, addedFilesCount: 0 })
    const raw = (await readManifest(await res.table.io.read(list[0].manifestPath))).entries
    expect(raw.some((e) => e.status === DELETED)).toBe(false)
    expect(await liveByPath(res.table)).toEqual(before) // first_row_id included
    for (const p of gone) expect(before.has(p)).toBe(false)
  })

  it('drops the manifests a compaction leaves with no live file, in a commit of its own', async () => {
    const catalog = await setup(NO_MERGE)
    const files: DataFile[] = []
    for (let i = 0; i < 4; i++) {
      files.push(file(1))
      await append(catalog, [files[i]])
    }
    const merged = file(1, 8)
    const r = await replaceDataFiles(catalog, catalog.current, {
      deleted: new Set(files.map((f) => f.filePath)),
      added: [{ specId: 0, dataFile: merged }],
      retry: FAST,
    })
    expect(await listOf(r.table)).toHaveLength(5) // the new one and four of DELETED entries only
    const res = (await rewriteManifests(catalog, r.table, { retry: FAST }))!
    expect(res).toMatchObject({ created: 0, replaced: 4, kept: 1, entries: 0 })
    const list = await listOf(res.table)
    expect(list.map((m) => [m.addedFilesCount, m.existingFilesCount, m.deletedFilesCount])).toEqual([[1, 0, 0]])
    expect(currentSnapshot(res.table.metadata)!.summary).toMatchObject({
      operation: 'replace',
      'manifests-created': '0',
      'manifests-replaced': '4',
      'manifests-kept': '1',
      'total-data-files': '1',
      'total-records': '8',
    })
    expect(await rewriteManifests(catalog, res.table, { retry: FAST })).toBeNull()
  })

  it('keeps an append that lands meanwhile (same new manifests, committed on the fresh base)', async () => {
    const catalog = await setup(NO_MERGE)
    for (let i = 0; i < 8; i++) await append(catalog, [file(i)])
    let raced: DataFile | undefined
    catalog.beforeCommit = async () => {
      raced = file(99)
      await append(catalog, [raced])
    }
    const res = (await rewriteManifests(catalog, catalog.current, { retry: FAST }))!
    expect(catalog.conflicts).toBe(1)
    expect(res).toMatchObject({ created: 1, replaced: 8, kept: 1 })
    const list = await listOf(res.table)
    expect(list.map((m) => [m.existingFilesCount, m.addedFilesCount])).toEqual([
      [8, 0],
      [0, 1],
    ])
    expect((await liveByPath(res.table)).has(raced!.filePath)).toBe(true)
    expect((await liveByPath(res.table)).size).toBe(9)
  })

  it('re-plans when a racing merge rewrote its manifests; nothing of the first plan is left behind', async () => {
    const catalog = await setup({ 'commit.manifest.min-count-to-merge': '100' })
    for (let i = 0; i < 8; i++) await append(catalog, [file(i)])
    const before = new Set(catalog.io.files.keys())
    catalog.beforeCommit = async () => {
      // another writer merges everything (as a merge append at min-count would)
      const { setPropertiesChange } = await import('../../../iceberg/transaction/changes.ts')
      const c = setPropertiesChange(catalog.current.metadata, { 'commit.manifest.min-count-to-merge': '2' })
      await catalog.commitTable(catalog.current, c.requirements, c.updates)
      await append(catalog, [file(50)])
    }
    const res = await rewriteManifests(catalog, catalog.current, { retry: FAST })
    expect(res).toBeNull() // on the fresh base one merged manifest is left: nothing to gain
    expect(await listOf(catalog.current)).toHaveLength(1)
    const left = [...catalog.io.files.keys()].filter((p) => !before.has(p))
    // only the racing commits' files: its metadata, its manifests, its manifest list
    expect(left.filter((p) => !p.endsWith('.metadata.json'))).toHaveLength(3)
    expect((await liveByPath(catalog.current)).size).toBe(9)
  })

  it('after 250 merging appends (default min-count), one manifest is left', { timeout: 60_000 }, async () => {
    const catalog = await setup()
    for (let i = 0; i < 250; i++) await append(catalog, [file(i % 24)])
    const list = await listOf(catalog.current)
    expect(list).toHaveLength(52) // merged at the 100th and the 199th append, 51 since
    const res = (await rewriteManifests(catalog, catalog.current, { retry: FAST }))!
    expect(await listOf(res.table)).toHaveLength(1)
    expect((await liveByPath(res.table)).size).toBe(250)
  })
})
