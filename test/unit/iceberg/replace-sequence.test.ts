// Rewrites keep commit order (issue 15, defect 6): a replace's added file given a data sequence number
// is written ADDED with that number explicit and a null file sequence number (spec "Sequence Number
// Inheritance"; Java's RewriteFiles.dataSequenceNumber), so readers see the source's data sequence
// number and the new snapshot's file sequence number, also after later commits carry the entry as
// EXISTING. Compaction: a merged file keeps its oldest input's number and never spans a number another
// file of the partition holds; a delete file that may apply (its partition, or any partition for one in
// an unpartitioned spec) leaves the partition alone. In memory; the merged Parquet read back.
import { parquetReadObjects } from 'hyparquet'
import { describe, expect, it } from 'vitest'
import type { LoadedTable } from '../../../iceberg/catalog/index.ts'
import { compactTable } from '../../../iceberg/maintenance/compact.ts'
import { rewriteManifests } from '../../../iceberg/maintenance/rewrite-manifests.ts'
import {
  ADDED,
  DELETED,
  EXISTING,
  readManifest,
  readManifestList,
  writeManifest,
  writeManifestList,
  type DataFile,
} from '../../../iceberg/manifest/manifest.ts'
import { writeDataFile } from '../../../iceberg/parquet/data-file.ts'
import { currentSchema, currentSnapshot, defaultSpec } from '../../../iceberg/spec/metadata.ts'
import type { Row } from '../../../iceberg/spec/types.ts'
import { fastAppend } from '../../../iceberg/transaction/append.ts'
import { replaceDataFiles } from '../../../iceberg/transaction/replace.ts'
import { dataSequenceNumber, readLiveFiles } from '../../../iceberg/read/live-files.ts'
import { appendSnapshot, commitChanges, manifestListLocation, manifestLocation, planSnapshot } from '../../../iceberg/transaction/snapshot.ts'
import { LOC, type MemoryCatalog, partitionedTable } from './memory-catalog.ts'
import { prng } from './prng.ts'

const FAST = { attempts: 3, minBackoffMs: 1, maxBackoffMs: 2 }
let n = 0

/** A real Parquet file of `rows` (id, d; one d) in the catalog's memory, and its manifest entry. */
async function put(catalog: MemoryCatalog, rows: Row[]): Promise<DataFile> {
  const d = rows[0].d as number
  const { bytes, metrics } = writeDataFile(currentSchema(catalog.current.metadata), rows)
  const filePath = `${LOC}/data/d=${d}/f${n++}.parquet`
  await catalog.io.write(filePath, bytes)
  return { filePath, fileFormat: 'PARQUET', partition: { d }, ...metrics }
}

const ids = (from: number, count: number, d = 1): Row[] => Array.from({ length: count }, (_, i) => ({ id: BigInt(from + i), d }))
/** Random ids, which no encoding packs small: a file big for its row count. */
const scattered = (count: number, seed = count): Row[] => {
  const { int64 } = prng(seed)
  return Array.from({ length: count }, () => ({ id: int64(), d: 1 }))
}

/** One commit adding `files`; returns its sequence number. */
async function commit(catalog: MemoryCatalog, files: DataFile[]): Promise<bigint> {
  const { table } = await fastAppend(catalog, catalog.current, files, { retry: FAST })
  return currentSnapshot(table.metadata)!['sequence-number']!
}

async function live(t: LoadedTable) {
  const files = await readLiveFiles(t)
  return new Map(
    files.data.map((x) => [x.entry.dataFile.filePath, { status: x.entry.status, seq: x.entry.sequenceNumber, fileSeq: x.entry.fileSequenceNumber }]),
  )
}

/** The ids of a data file, in file order. */
async function idsOf(t: LoadedTable, path: string): Promise<bigint[]> {
  const bytes = await t.io.read(path)
  return (await parquetReadObjects({ file: bytes.slice().buffer as ArrayBuffer, columns: ['id'] })).map((r) => r.id as bigint)
}

describe('replace: an added file keeping its source data sequence number', () => {
  it('is written ADDED with the number explicit and no file sequence number; readers inherit only the file sequence number', async () => {
    const catalog = await partitionedTable()
    const source = await put(catalog, ids(0, 3))
    const s1 = await commit(catalog, [source])
    const other = await put(catalog, ids(10, 1))
    const s2 = await commit(catalog, [other])
    expect([s1, s2]).toEqual([1n, 2n])

    const rewrite = await put(catalog, ids(0, 2))
    const fresh = await put(catalog, ids(20, 1))
    const { table, snapshotId } = await replaceDataFiles(catalog, catalog.current, {
      deleted: new Set([source.filePath]),
      added: [
        { specId: 0, dataFile: rewrite, dataSequenceNumber: s1 },
        { specId: 0, dataFile: fresh },
      ],
      operation: 'overwrite',
      retry: FAST,
    })
    const s3 = currentSnapshot(table.metadata)!['sequence-number']
    expect(s3).toBe(3n)

    // The manifest as written: explicit data sequence number on the rewrite only, file sequence numbers null.
    const list = (await readManifestList(await table.io.read(currentSnapshot(table.metadata)!['manifest-list']!))).manifests
    const added = list.find((m) => m.addedSnapshotId === snapshotId && m.addedFilesCount === 2)!
    expect(added).toMatchObject({ sequenceNumber: 3n, minSequenceNumber: 1n, addedFilesCount: 2, existingFilesCount: 0 })
    const raw = (await readManifest(await table.io.read(added.manifestPath))).entries
    expect(raw.map((e) => [e.dataFile.filePath, e.status, e.snapshotId, e.sequenceNumber, e.fileSequenceNumber])).toEqual([
      [rewrite.filePath, ADDED, snapshotId, 1n, null],
      [fresh.filePath, ADDED, snapshotId, null, null],
    ])
    // The removed source: DELETED with both of its numbers.
    const rewritten = list.find((m) => m.addedSnapshotId === snapshotId && m.deletedFilesCount === 1)!
    const gone = (await readManifest(await table.io.read(rewritten.manifestPath))).entries.find((e) => e.status === DELETED)!
    expect([gone.dataFile.filePath, gone.sequenceNumber, gone.fileSequenceNumber]).toEqual([source.filePath, 1n, 1n])

    // Read back: data sequence number the source's, file sequence number the new snapshot's.
    const files = await live(table)
    expect(files.get(rewrite.filePath)).toEqual({ status: ADDED, seq: 1n, fileSeq: 3n })
    expect(files.get(fresh.filePath)).toEqual({ status: ADDED, seq: 3n, fileSeq: 3n })
    expect(files.get(other.filePath)).toEqual({ status: ADDED, seq: 2n, fileSeq: 2n })
    expect(files.has(source.filePath)).toBe(false)

    // Carried by a later commit (a manifest rewrite), the entry is EXISTING with both numbers kept.
    const folded = (await rewriteManifests(catalog, table, { retry: FAST }))!
    expect(folded).not.toBeNull()
    expect((await live(folded.table)).get(rewrite.filePath)).toEqual({ status: EXISTING, seq: 1n, fileSeq: 3n })
  })

  it('refuses a data sequence number no commit of the table has had', async () => {
    const catalog = await partitionedTable()
    const source = await put(catalog, ids(0, 2))
    await commit(catalog, [source])
    const rewrite = await put(catalog, ids(0, 1))
    for (const bad of [2n, -1n]) {
      await expect(
        replaceDataFiles(catalog, catalog.current, { deleted: new Set([source.filePath]), added: [{ specId: 0, dataFile: rewrite, dataSequenceNumber: bad }] }),
      ).rejects.toThrow(RangeError)
    }
    expect(catalog.current.metadata.snapshots).toHaveLength(1)
  })
})

describe('compaction keeps commit order', () => {
  it('one merged file: the oldest input’s data sequence number, rows in commit order, the new file sequence number', async () => {
    const catalog = await partitionedTable()
    const paths: string[] = []
    for (let i = 0; i < 4; i++) {
      const f = await put(catalog, ids(100 - 10 * i, 2)) // ids fall as commits go: file order is commit order, not id order
      paths.push(f.filePath)
      await commit(catalog, [f])
    }
    const result = (await compactTable(catalog, catalog.current, { retry: FAST }))!
    expect(result).toMatchObject({ rewrittenFiles: 4, addedFiles: 1 })
    const files = await readLiveFiles(result.table)
    expect(files.data).toHaveLength(1)
    const [merged] = files.data
    expect([merged.entry.status, merged.entry.sequenceNumber, merged.entry.fileSequenceNumber]).toEqual([ADDED, 1n, 5n])
    expect(await idsOf(result.table, merged.entry.dataFile.filePath)).toEqual([100n, 101n, 90n, 91n, 80n, 81n, 70n, 71n])
  })

  it('a file left out (over the target) ends the run: the files on each side merge apart, each keeping its oldest number', async () => {
    const catalog = await partitionedTable()
    const small = async (from: number) => commit(catalog, [await put(catalog, ids(from, 1))])
    await small(0) // seq 1
    await small(1) // 2
    const big = await put(catalog, scattered(400))
    await commit(catalog, [big]) // 3, over the target
    await small(2) // 4
    await small(3) // 5
    const target = Number(big.fileSizeInBytes) - 1
    const result = (await compactTable(catalog, catalog.current, { targetFileSizeBytes: target, retry: FAST }))!
    expect(result).toMatchObject({ rewrittenFiles: 4, addedFiles: 2 })
    const files = await readLiveFiles(result.table)
    const bySeq = new Map(files.data.map((x) => [dataSequenceNumber(x), x.entry.dataFile.filePath]))
    expect([...bySeq.keys()].sort()).toEqual([1n, 3n, 4n])
    expect(bySeq.get(3n)).toBe(big.filePath)
    expect(await idsOf(result.table, bySeq.get(1n)!)).toEqual([0n, 1n])
    expect(await idsOf(result.table, bySeq.get(4n)!)).toEqual([2n, 3n])
  })

  it('a run starting at a number another file holds stays within it (one commit of two files, the target cut between them)', async () => {
    const catalog = await partitionedTable()
    const a = await put(catalog, scattered(300, 1))
    const b = await put(catalog, scattered(300, 2))
    await commit(catalog, [a, b]) // seq 1: two files; a and b together are over the target
    for (let i = 0; i < 2; i++) await commit(catalog, [await put(catalog, ids(1000 + i, 1))]) // 2, 3
    const target = Number(a.fileSizeInBytes) + Number(b.fileSizeInBytes) - 1
    const result = (await compactTable(catalog, catalog.current, { targetFileSizeBytes: target, retry: FAST }))!
    // b may not take 2 and 3 along at number 1: a's rows (number 1) would then tie with them.
    expect(result).toMatchObject({ rewrittenFiles: 2, addedFiles: 1 })
    const files = await readLiveFiles(result.table)
    const seqs = files.data.map((x) => [x.entry.dataFile.filePath, dataSequenceNumber(x)])
    expect(seqs).toContainEqual([a.filePath, 1n])
    expect(seqs).toContainEqual([b.filePath, 1n])
    const merged = files.data.find((x) => x.entry.dataFile.filePath.endsWith('-compacted.parquet'))!
    expect(dataSequenceNumber(merged)).toBe(2n)
    expect(await idsOf(result.table, merged.entry.dataFile.filePath)).toEqual([1000n, 1001n])
  })

  it('a delete file in an unpartitioned spec applies everywhere: nothing is compacted; one in a partition leaves only that one', async () => {
    const catalog = await partitionedTable()
    for (let i = 0; i < 2; i++) await commit(catalog, [await put(catalog, ids(i, 1, 1)), await put(catalog, ids(10 + i, 1, 2))])
    // An equality delete in partition d=1 (as another engine writes one).
    await addDeleteFile(catalog, 0, { d: 1 })
    const one = (await compactTable(catalog, catalog.current, { retry: FAST }))!
    expect(one).toMatchObject({ rewrittenFiles: 2, addedFiles: 1 })
    const after = await readLiveFiles(one.table)
    expect(after.data.filter((x) => x.entry.dataFile.partition.d === 1)).toHaveLength(2)
    expect(after.data.filter((x) => x.entry.dataFile.partition.d === 2)).toHaveLength(1)

    // The same table, two more small files per partition and a global delete (unpartitioned spec 1).
    for (let i = 0; i < 2; i++) await commit(catalog, [await put(catalog, ids(20 + i, 1, 1)), await put(catalog, ids(30 + i, 1, 2))])
    const base = catalog.current
    await catalog.commitTable(
      base,
      [{ type: 'assert-table-uuid', uuid: base.metadata['table-uuid'] }],
      [{ action: 'add-spec', spec: { 'spec-id': 1, fields: [] } }],
    )
    await addDeleteFile(catalog, 1, {})
    const before = catalog.current.metadataLocation
    expect(await compactTable(catalog, catalog.current, { retry: FAST })).toBeNull()
    expect(catalog.current.metadataLocation).toBe(before)
  })
})

/** A snapshot adding one equality delete file in spec `specId` (as Spark or PyIceberg could write). */
async function addDeleteFile(catalog: MemoryCatalog, specId: number, partition: Record<string, number>): Promise<void> {
  const base = catalog.current.metadata
  const plan = planSnapshot(base)
  const uuid = crypto.randomUUID()
  const spec = base['partition-specs'].find((s) => s['spec-id'] === specId) ?? defaultSpec(base)
  const dm = await writeManifest({
    formatVersion: 2,
    schema: currentSchema(base),
    spec,
    snapshotId: plan.snapshotId,
    manifestPath: manifestLocation(base, uuid, 0),
    entries: [
      {
        dataFile: {
          content: 2,
          filePath: `${LOC}/data/eq-del-${n++}.parquet`,
          fileFormat: 'PARQUET',
          partition,
          recordCount: 1,
          fileSizeInBytes: 10,
          equalityIds: [1],
        },
      },
    ],
    content: 'deletes',
  })
  await catalog.io.write(dm.manifest.manifestPath, dm.bytes)
  const parent = (await readManifestList(await catalog.io.read(currentSnapshot(base)!['manifest-list']!))).manifests
  const list = await writeManifestList({
    formatVersion: 2,
    snapshotId: plan.snapshotId,
    parentSnapshotId: plan.parentSnapshotId,
    sequenceNumber: plan.sequenceNumber,
    manifests: [dm.manifest, ...parent],
  })
  const listPath = manifestListLocation(base, plan.snapshotId, uuid)
  await catalog.io.write(listPath, list.bytes)
  const change = commitChanges(base, appendSnapshot(plan, { manifestList: listPath, summary: { operation: 'delete' } }))
  await catalog.commitTable(catalog.current, change.requirements, change.updates)
}
