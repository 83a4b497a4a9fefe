// The merging append (iceberg/transaction): Java's MergeAppend rule — bins of the target size packed
// from the oldest end, the new manifest's bin merged only at min-count, older full bins always —
// what merged entries keep (status, snapshot ids, sequence numbers, v3 row ids), the manifest list
// counts, the properties, delete manifests left alone, and retries. In memory.
import { describe, expect, it } from 'vitest'
import type { LoadedTable } from '../../../iceberg/catalog/index.ts'
import { setPropertiesChange } from '../../../iceberg/transaction/changes.ts'
import {
  ADDED,
  EXISTING,
  readManifest,
  readManifestList,
  writeManifest,
  writeManifestList,
  type DataFile,
  type ManifestFile,
} from '../../../iceberg/manifest/manifest.ts'
import { currentSchema, currentSnapshot, defaultSpec } from '../../../iceberg/spec/metadata.ts'
import { readLiveFiles } from '../../../iceberg/read/live-files.ts'
import { appendSnapshot, commitChanges, manifestListLocation, manifestLocation, planSnapshot } from '../../../iceberg/transaction/snapshot.ts'
import { appendFiles, mergeSettings } from '../../../iceberg/transaction/merge-append.ts'
import { packEnd, specAndSchema } from '../../../iceberg/transaction/manifest-merge.ts'
import { LOC, type MemoryCatalog, partitionedTable as setup } from './memory-catalog.ts'

const FAST = { attempts: 5, minBackoffMs: 1, maxBackoffMs: 2 }
const int = (v: number) => {
  const b = new Uint8Array(4)
  new DataView(b.buffer).setInt32(0, v, true)
  return b
}

let n = 0
const file = (d: number, rows = 2): DataFile => ({
  filePath: `${LOC}/data/f${n++}.parquet`,
  fileFormat: 'PARQUET',
  partition: { d },
  recordCount: rows,
  fileSizeInBytes: 100 + rows,
})

async function append(catalog: MemoryCatalog, files: DataFile[] = [file(n % 3)], table: LoadedTable = catalog.current) {
  return appendFiles(catalog, table, files, { retry: FAST })
}

async function listOf(t: LoadedTable): Promise<ManifestFile[]> {
  return (await readManifestList(await t.io.read(currentSnapshot(t.metadata)!['manifest-list']!))).manifests
}

/** Every live file: path → what its entry says once inherited fields are filled in. */
async function liveByPath(t: LoadedTable) {
  const files = await readLiveFiles(t)
  return new Map(
    files.data.map(({ entry: e }) => [
      e.dataFile.filePath,
      { status: e.status, snapshotId: e.snapshotId, seq: e.sequenceNumber, fileSeq: e.fileSequenceNumber, firstRowId: e.dataFile.firstRowId ?? null },
    ]),
  )
}

describe('packEnd (Java ListPacker, lookback 1, packed from the end)', () => {
  it('makes runs in order, the under-filled bin at the front; an oversized item gets a bin alone', () => {
    expect(packEnd([5, 5, 5, 5], 10, (x) => x)).toEqual([
      [5, 5],
      [5, 5],
    ])
    expect(packEnd(['a3', 'b9', 'c2', 'd2'], 10, (x) => Number(x.slice(1)))).toEqual([['a3'], ['b9'], ['c2', 'd2']])
    expect(packEnd([1, 4, 4, 4], 8, (x) => x)).toEqual([
      [1, 4],
      [4, 4],
    ])
    expect(packEnd([20, 1, 1], 10, (x) => x)).toEqual([[20], [1, 1]])
    expect(packEnd([], 10, (x: number) => x)).toEqual([])
  })
})

describe('mergeSettings', () => {
  it('defaults as Java (on, 100, 8 MiB); booleans as Boolean.parseBoolean; bad numbers fall back', () => {
    expect(mergeSettings({})).toEqual({ enabled: true, minCountToMerge: 100, targetSizeBytes: 8 * 1024 * 1024 })
    expect(
      mergeSettings({ 'commit.manifest-merge.enabled': 'FALSE', 'commit.manifest.min-count-to-merge': '5', 'commit.manifest.target-size-bytes': '1024' }),
    ).toEqual({ enabled: false, minCountToMerge: 5, targetSizeBytes: 1024 })
    expect(mergeSettings({ 'commit.manifest-merge.enabled': 'yes', 'commit.manifest.min-count-to-merge': 'x' })).toMatchObject({
      enabled: false,
      minCountToMerge: 100,
    })
  })
})

describe('specAndSchema', () => {
  it('types an old spec with the newest schema that still has its source column', async () => {
    const catalog = await setup()
    const m = structuredClone(catalog.current.metadata)
    const s0 = m.schemas[0]
    m.schemas.push({ ...s0, 'schema-id': 1, fields: s0.fields.filter((f) => f.name !== 'd') })
    m['current-schema-id'] = 1
    expect(specAndSchema(m, 0).schema['schema-id']).toBe(0)
    m['current-schema-id'] = 0
    expect(specAndSchema(m, 0).schema['schema-id']).toBe(0)
    expect(() => specAndSchema(m, 7)).toThrow(/spec 7/)
  })
})

describe('appendFiles merges manifests', () => {
  it('keeps 99 manifests, merges at the 100th (the default min-count); entries keep their snapshot ids and sequence numbers', { timeout: 60_000 }, async () => {
    const catalog = await setup()
    for (let i = 0; i < 99; i++) await append(catalog)
    expect(await listOf(catalog.current)).toHaveLength(99)
    const before = await liveByPath(catalog.current)
    expect([...before.values()].every((e) => e.status === ADDED)).toBe(true)

    const added = file(1, 5)
    const { table, snapshotId } = await append(catalog, [added])
    const list = await listOf(table)
    expect(list).toHaveLength(1)
    const [merged] = list
    expect(merged).toMatchObject({
      content: 0,
      partitionSpecId: 0,
      addedSnapshotId: snapshotId,
      sequenceNumber: 100n,
      minSequenceNumber: 1n,
      addedFilesCount: 1,
      existingFilesCount: 99,
      deletedFilesCount: 0,
      addedRowsCount: 5n,
      existingRowsCount: 198n,
      deletedRowsCount: 0n,
    })
    expect(merged.partitions).toEqual([{ containsNull: false, containsNan: false, lowerBound: int(0), upperBound: int(2) }])

    // Carried entries: EXISTING, with the snapshot and sequence numbers they were added with.
    const after = await liveByPath(table)
    expect(after.size).toBe(100)
    for (const [path, e] of before) expect(after.get(path)).toEqual({ ...e, status: EXISTING })
    expect(after.get(added.filePath)).toEqual({ status: ADDED, snapshotId, seq: 100n, fileSeq: 100n, firstRowId: null })
    // As written: the new file's sequence numbers are inherited (null), the others explicit.
    const raw = (await readManifest(await table.io.read(merged.manifestPath))).entries
    expect(raw[0]).toMatchObject({ status: ADDED, snapshotId, sequenceNumber: null, fileSequenceNumber: null })
    expect(raw.slice(1).every((e) => e.status === EXISTING && e.sequenceNumber !== null && e.sequenceNumber === e.fileSequenceNumber)).toBe(true)
    expect(new Set(raw.slice(1).map((e) => e.snapshotId)).size).toBe(99)

    // The snapshot is an ordinary append.
    expect(currentSnapshot(table.metadata)!.summary).toMatchObject({
      operation: 'append',
      'added-data-files': '1',
      'added-records': '5',
      'total-data-files': '100',
      'total-records': '203',
      'changed-partition-count': '1',
    })

    // Next append: the new manifest stands beside the merged one again.
    const next = await append(catalog)
    expect((await listOf(next.table)).map((m) => m.manifestPath)).toEqual([expect.stringContaining('-m0.avro'), merged.manifestPath])
  })

  it('merges again at min-count; twice-carried entries still hold their first snapshot and sequence numbers', async () => {
    const catalog = await setup({ 'commit.manifest.min-count-to-merge': '3' })
    const counts: number[] = []
    for (let i = 0; i < 7; i++) counts.push((await listOf((await append(catalog)).table)).length)
    expect(counts).toEqual([1, 2, 1, 2, 1, 2, 1])
    const entries = [...(await liveByPath(catalog.current)).values()]
    expect(entries.map((e) => e.seq)).toEqual([7n, 6n, 5n, 4n, 3n, 2n, 1n]) // newest first, as listed
    const ids = catalog.current.metadata.snapshots.map((s) => s['snapshot-id'])
    expect(entries.map((e) => e.snapshotId)).toEqual([...ids].reverse())
    expect(entries.map((e) => e.status)).toEqual([ADDED, ...Array(6).fill(EXISTING)])
  })

  it('does not merge with commit.manifest-merge.enabled=false (a fast append)', async () => {
    const catalog = await setup({ 'commit.manifest-merge.enabled': 'false', 'commit.manifest.min-count-to-merge': '2' })
    for (let i = 0; i < 5; i++) await append(catalog)
    const list = await listOf(catalog.current)
    expect(list).toHaveLength(5)
    expect(list.every((m) => m.addedFilesCount === 1 && m.existingFilesCount === 0)).toBe(true)
  })

  it('merges older full bins whatever their count; the new manifest alone in its bin stays (Java rule)', async () => {
    const catalog = await setup({ 'commit.manifest-merge.enabled': 'false' })
    for (let i = 0; i < 6; i++) await append(catalog, [file(1)])
    const old = await listOf(catalog.current)
    const lengths = old.map((m) => Number(m.manifestLength))
    const target = 3 * Math.max(...lengths) + 2
    expect(4 * Math.min(...lengths)).toBeGreaterThan(target)
    const change = setPropertiesChange(catalog.current.metadata, {
      'commit.manifest-merge.enabled': 'true',
      'commit.manifest.target-size-bytes': String(target),
    })
    await catalog.commitTable(catalog.current, change.requirements, change.updates)

    const { table, snapshotId } = await append(catalog, [file(1)])
    const list = await listOf(table)
    // [new] [m6 m5 m4] [m3 m2 m1]: the new manifest's bin has one manifest; the two older bins merge.
    expect(list).toHaveLength(3)
    expect(list[0]).toMatchObject({ addedFilesCount: 1, existingFilesCount: 0, addedSnapshotId: snapshotId })
    expect(list.slice(1).map((m) => [m.addedFilesCount, m.existingFilesCount, m.addedSnapshotId, m.minSequenceNumber])).toEqual([
      [0, 3, snapshotId, 4n],
      [0, 3, snapshotId, 1n],
    ])
  })

  it('never merges delete manifests with data manifests; they are carried as they are', async () => {
    const catalog = await setup({ 'commit.manifest.min-count-to-merge': '2' })
    await append(catalog)
    // A snapshot adding a position-delete manifest (as Spark or PyIceberg could).
    const base = catalog.current.metadata
    const plan = planSnapshot(base)
    const uuid = crypto.randomUUID()
    const deleteFile: DataFile = {
      content: 1,
      filePath: `${LOC}/data/pos-del.parquet`,
      fileFormat: 'PARQUET',
      partition: { d: 1 },
      recordCount: 1,
      fileSizeInBytes: 10,
    }
    const dm = await writeManifest({
      formatVersion: 2,
      schema: currentSchema(base),
      spec: defaultSpec(base),
      snapshotId: plan.snapshotId,
      manifestPath: manifestLocation(base, uuid, 0),
      entries: [{ dataFile: deleteFile }],
      content: 'deletes',
    })
    await catalog.io.write(dm.manifest.manifestPath, dm.bytes)
    const list = await writeManifestList({
      formatVersion: 2,
      snapshotId: plan.snapshotId,
      parentSnapshotId: plan.parentSnapshotId,
      sequenceNumber: plan.sequenceNumber,
      manifests: [dm.manifest, ...(await listOf(catalog.current))],
    })
    const listPath = manifestListLocation(base, plan.snapshotId, uuid)
    await catalog.io.write(listPath, list.bytes)
    const change = commitChanges(base, appendSnapshot(plan, { manifestList: listPath, summary: { operation: 'delete' } }))
    await catalog.commitTable(catalog.current, change.requirements, change.updates)

    for (let i = 0; i < 3; i++) await append(catalog)
    const after = await listOf(catalog.current)
    expect(after.map((m) => m.content)).toEqual([0, 1]) // every data manifest merged into one, each time
    expect(after[0]).toMatchObject({ addedFilesCount: 1, existingFilesCount: 3 })
    expect(after[1]).toMatchObject({ manifestPath: dm.manifest.manifestPath, sequenceNumber: 2n, addedSnapshotId: plan.snapshotId })
    const files = await readLiveFiles(catalog.current)
    expect(files.deletes.map((x) => x.entry.dataFile.filePath)).toEqual([deleteFile.filePath])
    expect(files.data).toHaveLength(4)
  })

  it('v3: carried files keep their first_row_id; the new ones get fresh ids, none overlap', async () => {
    const catalog = await setup({ 'commit.manifest.min-count-to-merge': '3' }, 3)
    await append(catalog, [file(0, 2)])
    await append(catalog, [file(1, 3)])
    const before = await liveByPath(catalog.current)
    expect([...before.values()].map((e) => e.firstRowId).sort()).toEqual([0n, 2n])
    expect(catalog.current.metadata['next-row-id']).toBe(5n)
    const { table } = await append(catalog, [file(2, 4), file(0, 1)])
    expect(await listOf(table)).toHaveLength(1)
    const after = await liveByPath(table)
    for (const [path, e] of before) expect(after.get(path)!.firstRowId).toBe(e.firstRowId)
    const ranges = [...(await readLiveFiles(table)).data]
      .map(({ entry: e }) => [e.dataFile.firstRowId!, e.dataFile.firstRowId! + BigInt(e.dataFile.recordCount)] as const)
      .sort((a, b) => (a[0] < b[0] ? -1 : 1))
    expect(ranges).toEqual([
      [0n, 2n],
      [2n, 5n],
      [5n, 9n],
      [9n, 10n],
    ])
    for (let i = 1; i < ranges.length; i++) expect(ranges[i][0]).toBeGreaterThanOrEqual(ranges[i - 1][1])
    expect(table.metadata['next-row-id']).toBeGreaterThanOrEqual(10n)
  })

  it('a conflict re-plans the merge on the fresh base; the unused merged manifest is deleted', async () => {
    const catalog = await setup({ 'commit.manifest.min-count-to-merge': '3' })
    await append(catalog)
    await append(catalog)
    const stale = catalog.current
    await append(catalog) // merges the two and itself
    const commitUuid = crypto.randomUUID()
    const added = file(2)
    const { table } = await appendFiles(catalog, stale, [added], { retry: FAST, commitUuid })
    expect(catalog.conflicts).toBe(1)
    const list = await listOf(table)
    expect(list.map((m) => [m.addedFilesCount, m.existingFilesCount])).toEqual([
      [1, 0],
      [1, 2],
    ])
    // attempt 1 wrote a merged manifest (m1) for the stale base; it is gone, m0 stays
    expect([...catalog.io.files.keys()].filter((p) => p.includes(`${commitUuid}-m`))).toEqual([`${LOC}/metadata/${commitUuid}-m0.avro`])
    expect((await liveByPath(table)).size).toBe(4)
  })
})
