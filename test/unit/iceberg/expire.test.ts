// Snapshot expiry: which ids a plan removes (retainLast, maxAgeMs, both, refs, branches, tags, ties), the commit and
// its re-plan on conflict, and the cleanup after it, on an in-memory catalog and FileIO with real
// manifests (written by fastAppend and by a hand-made overwrite that drops files).
import { describe, expect, it } from 'vitest'
import type { LoadedTable } from '../../../iceberg/catalog/index.ts'
import { fastAppend } from '../../../iceberg/transaction/append.ts'
import { DELETED, readManifest, readManifestList, writeManifest, writeManifestList, type DataFile } from '../../../iceberg/manifest/manifest.ts'
import {
  branchSnapshotId,
  currentSchema,
  currentSnapshot,
  defaultSpec,
  newTableMetadata,
  type Snapshot,
  type SnapshotRef,
  type TableMetadata,
} from '../../../iceberg/spec/metadata.ts'
import { appendSnapshot, commitChanges, manifestListLocation, manifestLocation, planSnapshot } from '../../../iceberg/transaction/snapshot.ts'
import { deleteUnreachable, expireChange, expireSnapshots, planExpire } from '../../../iceberg/maintenance/expire.ts'
import { FileNotFound } from '../../../iceberg/io/file-io.ts'
import { reachableFiles } from '../../../iceberg/maintenance/reachable.ts'
import { LOC, MemoryCatalog, MemoryIO } from './memory-catalog.ts'

const FAST = { attempts: 5, minBackoffMs: 1, maxBackoffMs: 2 }

function tableWith(snaps: Array<{ id: bigint; ts: number; seq?: bigint }>, refs: Record<string, SnapshotRef> = {}, current?: bigint): TableMetadata {
  const m = newTableMetadata({ location: LOC, schema: { fields: [{ id: 1, name: 'id', required: true, type: 'long' }] }, formatVersion: 2 })
  m.snapshots = snaps.map(
    (s, i): Snapshot => ({
      'snapshot-id': s.id,
      'sequence-number': s.seq ?? BigInt(i + 1),
      'timestamp-ms': s.ts,
      'manifest-list': `${LOC}/metadata/snap-${s.id}.avro`,
      summary: { operation: 'append' },
    }),
  )
  const head = current ?? snaps.at(-1)?.id
  if (head !== undefined) {
    m['current-snapshot-id'] = head
    m.refs = { main: { 'snapshot-id': head, type: 'branch' }, ...refs }
  }
  return m
}
const ids = (n: number, from = 1) => Array.from({ length: n }, (_, i) => ({ id: BigInt(from + i), ts: 1_000 + (from + i) * 10 }))
const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => BigInt(a + i))

describe('planExpire', () => {
  it('keeps the newest retainLast by timestamp, oldest expired first', () => {
    expect(planExpire(tableWith(ids(30)), { retainLast: 20 })).toEqual(range(1, 10))
    expect(planExpire(tableWith(ids(30)))).toEqual(range(1, 10)) // default 20
  })

  it('expires nothing at or below retainLast, and nothing on an empty table', () => {
    expect(planExpire(tableWith(ids(20)), { retainLast: 20 })).toEqual([])
    expect(planExpire(tableWith(ids(5)), { retainLast: 20 })).toEqual([])
    expect(planExpire(tableWith([]), { retainLast: 1 })).toEqual([])
  })

  it('retainLast 1 keeps only the current snapshot; below 1 or fractional is refused', () => {
    expect(planExpire(tableWith(ids(4)), { retainLast: 1 })).toEqual(range(1, 3))
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => planExpire(tableWith(ids(4)), { retainLast: bad })).toThrow(RangeError)
  })

  it('never expires a tag or branch head, however old', () => {
    const refs: Record<string, SnapshotRef> = { v1: { 'snapshot-id': 2n, type: 'tag' }, audit: { 'snapshot-id': 5n, type: 'branch' } }
    expect(planExpire(tableWith(ids(30), refs), { retainLast: 20 })).toEqual([1n, 3n, 4n, 6n, 7n, 8n, 9n, 10n])
    expect(planExpire(tableWith(ids(6), refs), { retainLast: 1 })).toEqual([1n, 3n, 4n])
  })

  it('never expires the current snapshot of main, even when main was rolled back to an old one', () => {
    const m = tableWith(ids(10), {}, 3n)
    expect(planExpire(m, { retainLast: 2 })).toEqual([1n, 2n, 4n, 5n, 6n, 7n, 8n])
    // metadata with current-snapshot-id but no refs (older writers): still protected
    delete (m as Partial<TableMetadata>).refs
    m.refs = {}
    expect(planExpire(m, { retainLast: 2 })).not.toContain(3n)
  })

  it('orders by timestamp, not by position, and breaks ties by sequence number', () => {
    const snaps = [
      { id: 10n, ts: 5000, seq: 3n },
      { id: 11n, ts: 1000, seq: 1n },
      { id: 12n, ts: 5000, seq: 2n },
      { id: 13n, ts: 3000, seq: 4n },
    ]
    expect(planExpire(tableWith(snaps, {}, 10n), { retainLast: 2 })).toEqual([11n, 13n])
    expect(planExpire(tableWith(snaps, {}, 10n), { retainLast: 1 })).toEqual([11n, 13n, 12n])
  })

  // ids(10): snapshots 1..10 at 1010, 1020, ..., 1100 ms; 10 is current.
  it('age only: every snapshot older than maxAgeMs before now goes, however few there are', () => {
    // now 1100, 35 ms: older than 1065 → 1..6 (1060 is older; 1070 is not)
    expect(planExpire(tableWith(ids(10)), { retainLast: 20, maxAgeMs: 35, now: 1100 })).toEqual(range(1, 6))
    // exactly maxAgeMs old stays
    expect(planExpire(tableWith(ids(10)), { retainLast: 20, maxAgeMs: 40, now: 1100 })).toEqual(range(1, 5))
    // nothing that old: nothing expired
    expect(planExpire(tableWith(ids(10)), { retainLast: 20, maxAgeMs: 1000, now: 1100 })).toEqual([])
  })

  it('count only (no maxAgeMs): the newest retainLast stay, however old', () => {
    expect(planExpire(tableWith(ids(10)), { retainLast: 3, now: 10_000_000 })).toEqual(range(1, 7))
  })

  it('both: a snapshot goes when either limit says so, whichever comes first', () => {
    // the age reaches further (1..6) than the count (1..2)
    expect(planExpire(tableWith(ids(10)), { retainLast: 8, maxAgeMs: 35, now: 1100 })).toEqual(range(1, 6))
    // the count reaches further (1..7) than the age (1..2)
    expect(planExpire(tableWith(ids(10)), { retainLast: 3, maxAgeMs: 75, now: 1100 })).toEqual(range(1, 7))
  })

  it('the current snapshot and every ref head are kept however old; maxAgeMs 0 keeps only them', () => {
    const refs: Record<string, SnapshotRef> = { v1: { 'snapshot-id': 2n, type: 'tag' }, dev: { 'snapshot-id': 4n, type: 'branch' } }
    // every snapshot is a week older than the limit: all but main's head, the tag and the branch go
    const week = 7 * 24 * 3600_000
    expect(planExpire(tableWith(ids(5), refs), { retainLast: 20, maxAgeMs: 168 * 3600_000, now: 1050 + 168 * 3600_000 + week })).toEqual([1n, 3n])
    expect(planExpire(tableWith(ids(5)), { maxAgeMs: 0, now: 1050 })).toEqual(range(1, 4))
    expect(planExpire(tableWith(ids(1)), { retainLast: 1, maxAgeMs: 0, now: 10_000_000 })).toEqual([])
  })

  it('refuses a maxAgeMs that is not a duration, and a now that is not a time', () => {
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => planExpire(tableWith(ids(4)), { maxAgeMs: bad, now: 1 })).toThrow(RangeError)
    expect(() => planExpire(tableWith(ids(4)), { maxAgeMs: 1, now: Number.NaN })).toThrow(RangeError)
  })

  it('the change asserts the table, main and every other ref', () => {
    const m = tableWith(ids(5), { v1: { 'snapshot-id': 2n, type: 'tag' } })
    expect(expireChange(m, [1n])).toEqual({
      requirements: [
        { type: 'assert-table-uuid', uuid: m['table-uuid'] },
        { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': 5n },
        { type: 'assert-ref-snapshot-id', ref: 'v1', 'snapshot-id': 2n },
      ],
      updates: [{ action: 'remove-snapshots', 'snapshot-ids': [1n] }],
    })
  })
})

// ---------- an in-memory catalog and FileIO (memory-catalog.ts) ----------

async function setup(properties: Record<string, string> = {}) {
  const io = new MemoryIO()
  const catalog = new MemoryCatalog(io)
  await catalog.createTable(['ns'], { name: 't', schema: { fields: [{ id: 1, name: 'id', required: true, type: 'long' }] }, properties })
  return { io, catalog }
}

async function append(catalog: MemoryCatalog, table: LoadedTable = catalog.current): Promise<{ table: LoadedTable; file: DataFile }> {
  const file: DataFile = { filePath: `${LOC}/data/${crypto.randomUUID()}.parquet`, partition: {}, recordCount: 1, fileSizeInBytes: 100 }
  await catalog.io.write(file.filePath, new Uint8Array(100))
  const { table: t } = await fastAppend(catalog, table, [file], { retry: FAST })
  return { table: t, file }
}

/** A hand-made overwrite: one new manifest with a new file ADDED and `dropped` marked DELETED; older manifests left out. */
async function overwrite(catalog: MemoryCatalog, dropped: DataFile[]): Promise<DataFile> {
  const base = catalog.current.metadata
  const plan = planSnapshot(base)
  const uuid = crypto.randomUUID()
  const file: DataFile = { filePath: `${LOC}/data/${uuid}.parquet`, partition: {}, recordCount: 1, fileSizeInBytes: 100 }
  await catalog.io.write(file.filePath, new Uint8Array(100))
  const manifestPath = manifestLocation(base, uuid, 0)
  const seq = base['last-sequence-number']
  const m = await writeManifest({
    formatVersion: 2,
    schema: currentSchema(base),
    spec: defaultSpec(base),
    snapshotId: plan.snapshotId,
    manifestPath,
    entries: [
      { dataFile: file },
      ...dropped.map((dataFile) => ({
        dataFile,
        status: DELETED as typeof DELETED,
        snapshotId: plan.snapshotId,
        sequenceNumber: seq,
        fileSequenceNumber: seq,
      })),
    ],
  })
  await catalog.io.write(manifestPath, m.bytes)
  const list = await writeManifestList({
    formatVersion: 2,
    snapshotId: plan.snapshotId,
    parentSnapshotId: plan.parentSnapshotId,
    sequenceNumber: plan.sequenceNumber,
    manifests: [m.manifest],
  })
  const listPath = manifestListLocation(base, plan.snapshotId, uuid)
  await catalog.io.write(listPath, list.bytes)
  const snapshot = appendSnapshot(plan, { manifestList: listPath, summary: { operation: 'overwrite' } })
  const change = commitChanges(base, snapshot)
  await catalog.commitTable(catalog.current, change.requirements, change.updates)
  return file
}

/** Every file the metadata references, each read back (live entries only). */
async function referencedExist(t: LoadedTable): Promise<number> {
  let n = 0
  for (const s of t.metadata.snapshots) {
    await t.io.read(s['manifest-list']!)
    for (const m of (await readManifestList(await t.io.read(s['manifest-list']!))).manifests) {
      for (const e of (await readManifest(await t.io.read(m.manifestPath))).entries)
        if (e.status !== DELETED) {
          await t.io.read(e.dataFile.filePath)
          n++
        }
    }
  }
  for (const e of t.metadata['metadata-log']) await t.io.read(e['metadata-file'])
  return n
}

describe('expireSnapshots and deleteUnreachable (in memory)', () => {
  it('expires to retainLast in one commit; appends keep every data file, expired manifest lists go', async () => {
    const { io, catalog } = await setup()
    for (let i = 0; i < 6; i++) await append(catalog)
    const before = catalog.current
    const commits = catalog.commits
    const res = await expireSnapshots(catalog, before, { retainLast: 3 })
    expect(catalog.commits).toBe(commits + 1)
    expect(res.expired).toEqual(before.metadata.snapshots.slice(0, 3).map((s) => s['snapshot-id']))
    expect(res.table.metadata.snapshots).toHaveLength(3)
    expect(branchSnapshotId(res.table.metadata)).toBe(branchSnapshotId(before.metadata))
    expect(res.table.metadata['snapshot-log'].map((e) => e['snapshot-id'])).toEqual(res.table.metadata.snapshots.map((s) => s['snapshot-id']))

    const cleaned = await deleteUnreachable(res.base, res.table)
    expect(cleaned.counts).toMatchObject({ 'manifest-list': 3, manifest: 0, data: 0 })
    expect(cleaned.deleted.sort()).toEqual(
      before.metadata.snapshots
        .slice(0, 3)
        .map((s) => s['manifest-list'])
        .sort(),
    )
    expect(await referencedExist(res.table)).toBe(6 * 3 - 3) // 3 retained snapshots see 4, 5 and 6 files
    for (const f of await reachableFiles(res.table.metadata, io, res.table.metadataLocation)) expect(io.files.has(f)).toBe(true)

    const again = await expireSnapshots(catalog, res.table, { retainLast: 3 })
    expect(again.expired).toEqual([])
    expect(catalog.commits).toBe(commits + 1) // nothing to expire → no commit
  })

  it('expires by age in one commit: snapshots committed a week ago go, the recent ones and the current stay', async () => {
    const { catalog } = await setup()
    const HOUR = 3600_000
    const now = 1_800_000_000_000
    let clock = now - 200 * HOUR // three commits 200 h ago, then two within the hour
    catalog.snapshotClock = () => clock
    for (let i = 0; i < 3; i++) await append(catalog)
    clock = now - 30 * 60_000
    for (let i = 0; i < 2; i++) await append(catalog)
    const before = catalog.current
    const old = before.metadata.snapshots.slice(0, 3).map((s) => s['snapshot-id'])
    const res = await expireSnapshots(catalog, before, { retainLast: 20, maxAgeMs: 168 * HOUR, now })
    expect(res.expired).toEqual(old)
    expect(res.table.metadata.snapshots.map((s) => s['snapshot-id'])).toEqual(before.metadata.snapshots.slice(3).map((s) => s['snapshot-id']))

    // A table idle for a week: its current snapshot stays, alone.
    const idle = await expireSnapshots(catalog, res.table, { retainLast: 20, maxAgeMs: 168 * HOUR, now: now + 200 * HOUR })
    expect(idle.expired).toEqual([res.table.metadata.snapshots[0]['snapshot-id']])
    expect(idle.table.metadata.snapshots.map((s) => s['snapshot-id'])).toEqual([branchSnapshotId(before.metadata)])
  })

  it('deletes data files and manifests only the expired snapshots reached (DELETED entries are not live)', async () => {
    const { io, catalog } = await setup()
    const a = await append(catalog)
    const b = await append(catalog)
    const oldManifests = (await readManifestList(await io.read(currentSnapshot(catalog.current.metadata)!['manifest-list']!))).manifests.map(
      (m) => m.manifestPath,
    )
    const c = await overwrite(catalog, [a.file]) // drops a (DELETED entry) and b (left out)
    await append(catalog)
    const res = await expireSnapshots(catalog, catalog.current, { retainLast: 2 })
    expect(res.expired).toHaveLength(2)
    const cleaned = await deleteUnreachable(res.base, res.table)
    expect(cleaned.counts).toMatchObject({ data: 2, manifest: 2, 'manifest-list': 2 })
    expect(cleaned.deleted).toEqual(expect.arrayContaining([a.file.filePath, b.file.filePath, ...oldManifests]))
    expect(io.files.has(c.filePath)).toBe(true)
    expect(cleaned.bytes).toBeGreaterThanOrEqual(200)
    await referencedExist(res.table)
  })

  it('re-plans on a conflict: an append committed meanwhile survives as the newest', async () => {
    const { catalog } = await setup()
    for (let i = 0; i < 5; i++) await append(catalog)
    const stale = catalog.current
    const { table: moved } = await append(catalog)
    const newest = branchSnapshotId(moved.metadata)!
    const res = await expireSnapshots(catalog, stale, { retainLast: 2, retry: FAST })
    expect(catalog.conflicts).toBe(1)
    expect(res.expired).toEqual(moved.metadata.snapshots.slice(0, 4).map((s) => s['snapshot-id']))
    expect(res.table.metadata.snapshots.map((s) => s['snapshot-id'])).toContain(newest)
    expect(branchSnapshotId(res.table.metadata)).toBe(newest)
    expect(res.base.snapshots).toHaveLength(6)
    await deleteUnreachable(res.base, res.table)
    await referencedExist(res.table)
  })

  it('metadata files that fell out of metadata-log are deleted; the orphan pass respects the age guard', async () => {
    const { io, catalog } = await setup({ 'write.metadata.previous-versions-max': '2' })
    for (let i = 0; i < 4; i++) await append(catalog)
    const logged = new Set(catalog.current.metadata['metadata-log'].map((e) => e['metadata-file']))
    const res = await expireSnapshots(catalog, catalog.current, { retainLast: 2 })
    const cleaned = await deleteUnreachable(res.base, res.table)
    const dropped = [...logged].filter((f) => !res.table.metadata['metadata-log'].some((e) => e['metadata-file'] === f))
    expect(dropped).toHaveLength(1)
    expect(cleaned.counts.metadata).toBe(1)
    expect(io.files.has(dropped[0])).toBe(false)

    // Metadata files trimmed by earlier commits, a failed commit's manifest, a stray object; and one written just now.
    const stale = `${LOC}/metadata/snap-1-0-${crypto.randomUUID()}.avro`
    await io.write(stale, 'x')
    await io.write(`${LOC}/data/stray.parquet`, 'x')
    const cutoff = io.clock
    await io.write(`${LOC}/data/in-flight.parquet`, 'x')
    await io.write('s3://bucket/wh/ns/t2/data/other-table.parquet', 'x')
    const orphans = await deleteUnreachable(res.table.metadata, res.table, { orphanOlderThanMs: 1, now: cutoff, listTableFolder: (p) => io.list(p) })
    expect(orphans.deleted).toEqual(expect.arrayContaining([stale, `${LOC}/data/stray.parquet`, `${LOC}/metadata/00000.metadata.json`]))
    expect(io.files.has(`${LOC}/data/in-flight.parquet`)).toBe(true)
    expect(io.files.has('s3://bucket/wh/ns/t2/data/other-table.parquet')).toBe(true)
    const reach = await reachableFiles(res.table.metadata, io, res.table.metadataLocation)
    const left = [...io.files.keys()].filter((f) => f.startsWith(`${LOC}/`))
    expect(left.filter((f) => !reach.has(f))).toEqual([`${LOC}/data/in-flight.parquet`])
    await referencedExist(res.table)
  })

  it('statistics of expired snapshots leave the metadata, and their files are deleted', async () => {
    const { io, catalog } = await setup()
    for (let i = 0; i < 3; i++) await append(catalog)
    const [s1, , s3] = catalog.current.metadata.snapshots.map((s) => s['snapshot-id'])
    const stat = (id: bigint) => ({
      'snapshot-id': id,
      'statistics-path': `${LOC}/metadata/${id}.stats`,
      'file-size-in-bytes': 7n,
      'file-footer-size-in-bytes': 3n,
      'blob-metadata': [],
    })
    catalog.current.metadata.statistics = [stat(s1), stat(s3)]
    for (const id of [s1, s3]) await io.write(`${LOC}/metadata/${id}.stats`, 'puffin!')
    const res = await expireSnapshots(catalog, catalog.current, { retainLast: 2 })
    expect(res.expired).toEqual([s1])
    expect(res.table.metadata.statistics).toEqual([stat(s3)])
    const cleaned = await deleteUnreachable(res.base, res.table)
    expect(cleaned.counts.statistics).toBe(1)
    expect(io.files.has(`${LOC}/metadata/${s1}.stats`)).toBe(false)
    expect(io.files.has(`${LOC}/metadata/${s3}.stats`)).toBe(true)
  })

  it('deletes nothing when a retained manifest cannot be read', async () => {
    const { io, catalog } = await setup()
    for (let i = 0; i < 3; i++) await append(catalog)
    const res = await expireSnapshots(catalog, catalog.current, { retainLast: 1 })
    const list = (await readManifestList(await io.read(currentSnapshot(res.table.metadata)!['manifest-list']!))).manifests
    io.files.delete(list[0].manifestPath)
    const count = io.files.size
    await expect(deleteUnreachable(res.base, res.table)).rejects.toThrow(FileNotFound)
    expect(io.files.size).toBe(count)
  })

  it('refuses to clean with metadata of another table', async () => {
    const one = await setup()
    const two = await setup()
    await expect(deleteUnreachable(one.catalog.current.metadata, two.catalog.current)).rejects.toThrow(/different tables/)
  })
})
