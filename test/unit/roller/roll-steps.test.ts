// roll() step by step (spec "The roll", DESIGN.md "the roll's seven steps"), on the in-memory catalog
// and bucket: what each step leaves in the table, the bucket and the ledger's reports.
import { describe, expect, it } from 'vitest'
import { currentSchema, currentSnapshot } from '../../../iceberg/spec/metadata.ts'
import { readLiveFiles } from '../../../iceberg/read/live-files.ts'
import { addColumnsChange } from '../../../iceberg/transaction/changes.ts'
import { S3Error } from '../../../iceberg/io/s3.ts'
import { batchKey, markerKey, rejectsKey } from '../../../contract/bucket.ts'
import { EndTick } from '../../../roller/intake.ts'
import { commitRecord, consumedOf, HOUR, leftovers, rejectsOf, rollOnce, send, SINK, snapshots, tableRows, world, xs, type World } from './harness.ts'

const DAY = 24 * HOUR
/** A producer's batch may be 16 MiB at most (spec "Rejects", batch_too_large). */
const MAX_BATCH_BYTES = 16 * 1024 * 1024

/** What the bucket, table and ledger hold at one checkpoint. */
async function observe(w: World) {
  const left = leftovers(w)
  return { snapshots: snapshots(w).length, intake: left.intake, markers: left.markers.length, reports: w.ledger.reports.length }
}

describe('a roll, step by step', () => {
  it('passes the step boundaries in order, each step done before the next starts', async () => {
    const w = await world()
    send(w, 'b1', ['{"x": 1}', '{"x": "bad"}'])
    send(w, 'b2', ['{"x": 2, "who": "w2"}'])
    const steps: string[] = []
    const seen: Record<string, Awaited<ReturnType<typeof observe>>> = {}
    await rollOnce(w, { steps, at: async (name) => void (seen[name] = await observe(w)) })

    expect(steps).toEqual([
      'reload',
      'first-roll-commit',
      'rejects',
      'data-file',
      'commit',
      'marker',
      'batch-delete',
      'before-report',
      'marker-delete',
      'after-report',
      'settled-marker-delete',
    ])
    expect(seen.reload).toEqual({ snapshots: 0, intake: ['b1', 'b2'], markers: 0, reports: 0 })
    expect(seen.rejects).toEqual({ snapshots: 0, intake: ['b1', 'b2'], markers: 0, reports: 0 })
    expect(seen['data-file']).toEqual({ snapshots: 0, intake: ['b1', 'b2'], markers: 0, reports: 0 })
    expect(seen.commit).toEqual({ snapshots: 1, intake: ['b1', 'b2'], markers: 0, reports: 0 })
    expect(seen.marker).toEqual({ snapshots: 1, intake: ['b1', 'b2'], markers: 1, reports: 0 })
    expect(seen['batch-delete']).toEqual({ snapshots: 1, intake: [], markers: 1, reports: 0 })
    // The marker is deleted while the report is made.
    expect(seen['before-report']).toEqual({ snapshots: 1, intake: [], markers: 1, reports: 0 })
    expect(seen['marker-delete']).toEqual({ snapshots: 1, intake: [], markers: 0, reports: 1 })
    expect(seen['after-report']).toEqual({ snapshots: 1, intake: [], markers: 0, reports: 1 })
    expect(seen['settled-marker-delete']).toEqual({ snapshots: 1, intake: [], markers: 0, reports: 1 })
    expect(w.ledger.reports).toHaveLength(1)
    expect(w.ledger.pending).toEqual([])
  })

  describe('1. reload', () => {
    it('reads the table as it is now: a column added since the last roll is written', async () => {
      const w = await world({ prepared: true })
      send(w, 'b1', ['{"x": 1}'])
      await rollOnce(w)
      // the tenant adds a column between two rolls
      const add = addColumnsChange(w.catalog.current.metadata, [{ name: 'extra', type: 'string' }])
      await w.catalog.commitTable(w.catalog.current, add.requirements, add.updates)
      send(w, 'b2', ['{"x": 2, "extra": "yes"}'])
      await rollOnce(w)
      const rows = (await tableRows(w)).sort((a, b) => Number(a.x) - Number(b.x))
      expect(rows.map((r) => [Number(r.x), r.extra])).toEqual([
        [1, null],
        [2, 'yes'],
      ])
      expect(rejectsOf(w, 'b2')).toEqual([])
    })
  })

  describe('2. re-establish the invariant', () => {
    it('deletes a batch a snapshot of the sink already names before anything new is committed, and reports the repair', async () => {
      const w = await world({ prepared: true })
      send(w, 'old', ['{"x": 1}', '{"x": 2}'])
      const earlier = await commitRecord(w, ['old'], [1, 2]) // a roller died after committing, before its deletes
      send(w, 'new', ['{"x": 3}'])
      const seen: Record<string, Awaited<ReturnType<typeof observe>>> = {}
      const steps: string[] = []
      const result = await rollOnce(w, { steps, at: async (name) => void (seen[name] = await observe(w)) })

      expect(steps.slice(0, 3)).toEqual(['reload', 'repair-delete', 'rejects'])
      expect(seen['repair-delete']).toEqual({ snapshots: 1, intake: ['new'], markers: 0, reports: 0 })
      expect(await xs(w)).toEqual([1, 2, 3])
      expect(result).toMatchObject({ batches: 1, rows: 1, repaired: 1 })
      const [report] = w.ledger.reports
      expect(report.repaired).toEqual(['old'])
      expect(report.consumed).toContainEqual({ batch_ids: ['old'], snapshot_id: earlier.snapshotId })
      expect(report.consumed).toContainEqual({ batch_ids: ['new'], snapshot_id: currentSnapshot(w.catalog.current.metadata)!['snapshot-id'].toString() })
      expect(w.ledger.committed.get('old')).toBe(earlier.snapshotId)
      expect(w.warnings.map((l) => l.msg)).toContain('repaired a consumed batch')
    })

    it('a consumed batch whose delete fails ends the tick: nothing new is committed, nothing reported', async () => {
      const w = await world({ prepared: true })
      send(w, 'old', ['{"x": 1}'])
      await commitRecord(w, ['old'], [1])
      send(w, 'new', ['{"x": 2}'])
      w.bucket.fault = (op, key) => {
        if (op === 'delete' && key === batchKey(SINK, 'old')) throw new S3Error(503, 'SlowDown', 'DELETE: 503 SlowDown')
      }
      await expect(rollOnce(w)).rejects.toThrow(EndTick)
      expect(snapshots(w)).toHaveLength(1)
      expect(leftovers(w).intake).toEqual(['new', 'old'])
      expect(w.ledger.reports).toEqual([])

      w.bucket.fault = null
      await rollOnce(w)
      expect(await xs(w)).toEqual([1, 2])
      expect(leftovers(w)).toEqual({ intake: [], markers: [], rejects: [] })
      expect(w.ledger.pending).toEqual([])
    })

    it('a marker that cannot be read, or is not a marker, ends the tick; nothing is rolled', async () => {
      for (const bad of ['read', 'garbage', 'no committed_at'] as const) {
        const w = await world({ prepared: true })
        send(w, 'b1', ['{"x": 1}'])
        const key = markerKey(SINK, 'some-file.parquet')
        w.bucket.store(key, bad === 'garbage' ? '{"batch_ids": [' : bad === 'no committed_at' ? '{"batch_ids": ["b1"], "snapshot_id": null}' : '{}')
        if (bad === 'read') {
          w.bucket.fault = (op, k) => {
            if (op === 'get' && k === key) throw new S3Error(500, 'InternalError', 'GET: 500')
          }
        }
        await expect(rollOnce(w), bad).rejects.toThrow(EndTick)
        expect(snapshots(w), bad).toHaveLength(0)
        expect(leftovers(w), bad).toEqual({ intake: ['b1'], markers: [key.slice(`_sink/${SINK}/`.length)], rejects: [] })
        expect(w.ledger.reports, bad).toEqual([])
      }
    })

    it('a marker deleted between the listing and its read is no record (another roller finished)', async () => {
      const w = await world({ prepared: true })
      send(w, 'b1', ['{"x": 1}'])
      const key = markerKey(SINK, 'gone.parquet')
      w.bucket.store(key, '{"batch_ids":["b1"],"snapshot_id":5,"committed_at":"2020-01-01T00:00:00Z"}')
      w.bucket.fault = (op, k) => {
        if (op === 'get' && k === key) w.bucket.objects.delete(k)
      }
      await rollOnce(w)
      w.bucket.fault = null
      expect(await xs(w)).toEqual([1])
      expect(w.ledger.reports[0].repaired).toEqual([])
    })

    it('the intake listing failing ends the tick', async () => {
      const w = await world({ prepared: true })
      send(w, 'b1', ['{"x": 1}'])
      w.bucket.fault = (op) => {
        if (op === 'list') throw new S3Error(0, 'NetworkError', 'S3 unreachable')
      }
      await expect(rollOnce(w)).rejects.toThrow(EndTick)
      expect(snapshots(w)).toHaveLength(0)
    })
  })

  describe('3. the first-roll changes, once', () => {
    it('adds an optional __ingest_ts timestamptz and the retention properties in one commit, then never again', async () => {
      const w = await world({ properties: { owner: 'tenant' } })
      send(w, 'b1', ['{"x": 1}'])
      const steps: string[] = []
      await rollOnce(w, { steps })
      expect(steps).toContain('first-roll-commit')
      const meta = w.catalog.current.metadata
      expect(currentSchema(meta).fields.find((f) => f.name === '__ingest_ts')).toMatchObject({ required: false, type: 'timestamptz' })
      expect(meta.properties).toEqual({ owner: 'tenant', 'write.metadata.delete-after-commit.enabled': 'true', 'write.metadata.previous-versions-max': '5' })
      expect(w.catalog.commits).toBe(2) // the first-roll changes, then the append
      expect(meta.schemas).toHaveLength(2)

      send(w, 'b2', ['{"x": 2}'])
      const again: string[] = []
      await rollOnce(w, { steps: again })
      expect(again).not.toContain('first-roll-commit')
      expect(w.catalog.commits).toBe(3)
      expect(w.catalog.current.metadata.schemas).toHaveLength(2)
    })

    it('a table that already has both is left untouched; one missing property is added alone, an existing one kept', async () => {
      const w = await world({ prepared: true })
      send(w, 'b1', ['{"x": 1}'])
      const steps: string[] = []
      await rollOnce(w, { steps })
      expect(steps).not.toContain('first-roll-commit')
      expect(w.catalog.commits).toBe(1)

      const v = await world({ ingestTs: true, properties: { 'write.metadata.previous-versions-max': '10' } })
      send(v, 'b1', ['{"x": 1}'])
      await rollOnce(v)
      expect(v.catalog.commits).toBe(2)
      expect(v.catalog.current.metadata.schemas).toHaveLength(1)
      expect(v.catalog.current.metadata.properties).toEqual({
        'write.metadata.previous-versions-max': '10',
        'write.metadata.delete-after-commit.enabled': 'true',
      })
    })
  })

  describe('4. choosing the pending batches', () => {
    it('in arrival order: the ledger’s order first, then Last-Modified (whole seconds), then the batch id; at most max_batches', async () => {
      const w = await world({ prepared: true })
      const t0 = Date.UTC(2026, 0, 1)
      const at = (s: number) => new Date(t0 + s * 1000)
      // the ledger knows c then a; b, d and e are past its list, ordered by the listing's Last-Modified
      send(w, 'a', ['{"x": 2}'], { lastModified: at(0), ledger: false })
      send(w, 'b', ['{"x": 5}'], { lastModified: at(9), ledger: false })
      send(w, 'c', ['{"x": 1}'], { lastModified: at(5), ledger: false })
      send(w, 'd', ['{"x": 4}'], { lastModified: at(3.9), ledger: false })
      send(w, 'e', ['{"x": 3}'], { lastModified: at(3.1), ledger: false })
      w.ledger.pending = ['c', 'a']
      await rollOnce(w, { policy: { max_batches: 4 } })

      const snap = currentSnapshot(w.catalog.current.metadata)!
      expect(snap.summary['lakehousebox.sink.batches']).toBe('c,a,d,e')
      expect((await tableRows(w)).map((r) => Number(r.x))).toEqual([1, 2, 4, 3]) // the rows in the roll's order
      expect(leftovers(w).intake).toEqual(['b'])

      await rollOnce(w)
      expect(currentSnapshot(w.catalog.current.metadata)!.summary['lakehousebox.sink.batches']).toBe('b')
      expect(await xs(w)).toEqual([1, 2, 3, 4, 5])
    })

    it('never more than 1,000 batches, whatever the policy says', async () => {
      const w = await world({ prepared: true })
      for (let i = 0; i < 1001; i++) send(w, `b${String(i).padStart(4, '0')}`, [`{"x": ${i}}`])
      const result = await rollOnce(w, { policy: { max_batches: 5000 } })
      expect(result.batches).toBe(1000)
      expect(leftovers(w).intake).toEqual(['b1000'])
      expect(currentSnapshot(w.catalog.current.metadata)!.summary['lakehousebox.sink.rows']).toBe('1000')
    })

    it('within roll_bytes; the first batch goes even when it is larger alone', async () => {
      const w = await world({ prepared: true })
      for (const id of ['a', 'b', 'c']) send(w, id, ['{"x": 1}']) // 9 bytes each
      expect(w.bucket.objects.get(batchKey(SINK, 'a'))!.body.length).toBe(9)
      await rollOnce(w, { policy: { roll_bytes: 18 } })
      expect(currentSnapshot(w.catalog.current.metadata)!.summary['lakehousebox.sink.batches']).toBe('a,b')
      expect(leftovers(w).intake).toEqual(['c'])

      const v = await world({ prepared: true })
      send(v, 'big', ['{"x": 1, "who": "a longer row than the roll allows"}'])
      send(v, 'small', ['{"x": 2}'])
      await rollOnce(v, { policy: { roll_bytes: 10 } })
      expect(currentSnapshot(v.catalog.current.metadata)!.summary['lakehousebox.sink.batches']).toBe('big')
      expect(leftovers(v).intake).toEqual(['small'])
    })

    it('an object over 16 MiB is rejected whole, unread (batch_too_large, its stored rows counted), and does not count against roll_bytes', async () => {
      const w = await world({ prepared: true })
      send(w, 'a', ['{"x": 1}'])
      w.bucket.store(batchKey(SINK, 'huge'), new Uint8Array(MAX_BATCH_BYTES + 1).fill(0x20), { metadata: { rows: '4', sink: SINK } })
      w.ledger.pending.push('huge')
      send(w, 'b', ['{"x": 2}'])
      let reads = 0
      w.bucket.fault = (op, key) => void (op === 'get' && key === batchKey(SINK, 'huge') && reads++)
      const result = await rollOnce(w, { policy: { roll_bytes: 18 } })

      expect(reads).toBe(0)
      expect(result).toMatchObject({ batches: 3, rows: 2, rejectedRows: 4 })
      expect(currentSnapshot(w.catalog.current.metadata)!.summary).toMatchObject({
        'lakehousebox.sink.batches': 'a,huge,b',
        'lakehousebox.sink.rows': '2',
        'lakehousebox.sink.rejected_rows': '4',
      })
      expect(await xs(w)).toEqual([1, 2])
      expect(rejectsOf(w, 'huge')).toEqual([
        {
          batch_id: 'huge',
          index: null,
          reason: 'batch_too_large',
          error: `the object is ${MAX_BATCH_BYTES + 1} bytes; a producer's batch may be 16 MiB at most`,
          row: null,
        },
      ])
      expect(leftovers(w)).toEqual({ intake: [], markers: [], rejects: ['huge'] })
      expect(w.ledger.reports[0].rejects).toEqual({ rows: 4, batches: 1 })
    })
  })

  describe('5. validation and the rejects files', () => {
    it('checks row by row: each rejected row in _sink/<id>/rejects/<batch>.ndjson with its reason, field, index and bytes', async () => {
      const w = await world({ prepared: true })
      send(w, 'b1', ['{"x": 1, "who": "ok"}', '{"x": "bad"}', '{"x": 2,  "extra": true}', '[1, 2]', '{"x": 3}'])
      send(w, 'b2', ['{"x": 4}'])
      const result = await rollOnce(w)

      expect(result).toMatchObject({ batches: 2, rows: 3, rejectedRows: 3 })
      expect(await xs(w)).toEqual([1, 3, 4])
      expect(rejectsOf(w, 'b1')).toEqual([
        { batch_id: 'b1', index: 1, line: 1, reason: 'type_mismatch', field: 'x', expected: 'long', got: expect.any(String), row: { x: 'bad' } },
        { batch_id: 'b1', index: 2, line: 2, reason: 'unknown_field', field: 'extra', row: { x: 2, extra: true } },
        { batch_id: 'b1', index: 3, line: 3, reason: 'not_an_object', got: expect.any(String), row: [1, 2] },
      ])
      // the row exactly as the producer sent it (its spacing kept)
      expect(w.bucket.text(rejectsKey(SINK, 'b1'))!.split('\n')[1]).toContain(',"row":{"x": 2,  "extra": true}}')
      expect(leftovers(w).rejects).toEqual(['b1'])
      expect(w.ledger.reports[0].rejects).toEqual({ rows: 3, batches: 1 })
    })

    it('writes one line per rejected row, every problem of a row listed under problems (spec: one JSON object per rejected row)', async () => {
      const w = await world({ prepared: true })
      send(w, 'b1', ['{"x": "bad", "extra": 1, "more": 2}', '{"x": 1}'])
      await rollOnce(w)
      expect(rejectsOf(w, 'b1')).toEqual([
        {
          batch_id: 'b1',
          index: 0,
          line: 0,
          reason: 'type_mismatch',
          field: 'x',
          expected: 'long',
          got: expect.any(String),
          problems: [
            { reason: 'type_mismatch', field: 'x', expected: 'long', got: expect.any(String) },
            { reason: 'unknown_field', field: 'extra' },
            { reason: 'unknown_field', field: 'more' },
          ],
          row: { x: 'bad', extra: 1, more: 2 },
        },
      ])
      expect(w.ledger.reports[0].rejects).toEqual({ rows: 1, batches: 1 })
    })

    it('a batch an older edge stored (objects only): gives back the producer’s own index from x-amz-meta-skipped, null when unrecorded', async () => {
      const w = await world({ prepared: true })
      send(w, 'b1', ['{"x": 1}', '{"x": "bad"}', '{"x": "bad"}'], { skipped: '0,2' })
      send(w, 'b2', ['{"x": "bad"}'], { skipped: 'unrecorded' })
      await rollOnce(w)
      expect(rejectsOf(w, 'b1').map((r) => [r.line, r.index])).toEqual([
        [1, 3],
        [2, 4],
      ])
      expect(rejectsOf(w, 'b2').map((r) => [r.line, r.index])).toEqual([[0, null]])
    })

    it('stamps __ingest_ts from the batch’s arrival (x-amz-meta-received), never from the producer', async () => {
      const w = await world({ prepared: true })
      const received = Date.UTC(2026, 2, 3, 4, 5, 6, 789)
      send(w, 'b1', ['{"x": 1, "__ingest_ts": "1999-01-01T00:00:00Z"}', '{"x": 2}'], { receivedMs: received, receivedMicros: 123 })
      send(w, 'b2', ['{"x": 3}'], { receivedMs: null, lastModified: new Date(Date.UTC(2026, 2, 3, 5, 0, 0, 900)) })
      await rollOnce(w)
      const ts = Object.fromEntries((await tableRows(w)).map((r) => [Number(r.x), r.__ingest_ts]))
      expect(ts).toEqual({ 1: BigInt(received) * 1000n + 123n, 2: BigInt(received) * 1000n + 123n, 3: BigInt(Date.UTC(2026, 2, 3, 5, 0, 0)) * 1000n })
      expect(rejectsOf(w, 'b1')).toEqual([])
    })

    it('a batch that cannot be parsed is rejected whole (batch_unreadable, every line counted); the others are rolled', async () => {
      const w = await world({ prepared: true })
      send(w, 'bad', ['{"x": 1}', '{"x": ', '{"x": 2}'])
      send(w, 'notutf8', ['{"x": 1}'])
      w.bucket.store(batchKey(SINK, 'notutf8'), new Uint8Array([0x7b, 0xff, 0xfe, 0x7d, 0x0a]), { metadata: { rows: '1', sink: SINK } })
      send(w, 'good', ['{"x": 7}'])
      const result = await rollOnce(w)
      expect(result).toMatchObject({ batches: 3, rows: 1, rejectedRows: 4 })
      expect(await xs(w)).toEqual([7])
      expect(rejectsOf(w, 'bad')).toEqual([{ batch_id: 'bad', index: null, reason: 'batch_unreadable', error: expect.any(String), row: null }])
      expect(rejectsOf(w, 'notutf8')).toEqual([
        { batch_id: 'notutf8', index: null, reason: 'batch_unreadable', error: 'the batch is not UTF-8 text', row: null },
      ])
      expect(leftovers(w).intake).toEqual([])
    })
  })

  describe('6. the data file, one append naming the batches, the marker', () => {
    it('writes one Parquet file, commits one append with the lakehousebox.sink.* summary, then the marker naming the batches', async () => {
      const w = await world({ prepared: true })
      send(w, 'b1', ['{"x": 1}', '{"x": "bad"}'])
      send(w, 'b2', ['{"x": 2, "who": "w2"}', '{"x": 3}'])
      let marker: { key: string; text: string } | null = null
      await rollOnce(w, {
        at: (name) => {
          if (name !== 'marker') return
          const [key] = w.bucket.keys(`_sink/${SINK}/committed/`)
          marker = { key, text: w.bucket.text(key)! }
        },
      })
      const meta = w.catalog.current.metadata
      expect(meta.snapshots).toHaveLength(1)
      const snap = currentSnapshot(meta)!
      expect(snap.summary).toMatchObject({
        operation: 'append',
        'added-data-files': '1',
        'added-records': '3',
        'lakehousebox.sink.id': SINK,
        'lakehousebox.sink.batches': 'b1,b2',
        'lakehousebox.sink.rows': '3',
        'lakehousebox.sink.rejected_rows': '1',
      })
      expect(Number.isNaN(Date.parse(snap.summary['lakehousebox.sink.rolled_at']))).toBe(false)
      const files = (await readLiveFiles(w.catalog.current)).data.map((d) => d.entry.dataFile.filePath)
      expect(files).toHaveLength(1)
      expect(files[0]).toMatch(/^s3:\/\/bucket\/wh\/ns\/t\/data\/roll-\d+-.*\.parquet$/)

      expect(marker).not.toBeNull()
      const m = marker!
      expect(m.key).toBe(markerKey(SINK, files[0].split('/').pop()!))
      // the snapshot id as a JSON integer with its exact digits (a 63-bit id is beyond a double)
      expect(m.text).toBe(`{"batch_ids":["b1","b2"],"snapshot_id":${snap['snapshot-id']},"committed_at":"${snap.summary['lakehousebox.sink.rolled_at']}"}`)
      expect(w.bucket.keys().includes(m.key)).toBe(false) // deleted in step 7
    })

    it('an empty roll (every row rejected) commits nothing; its marker (snapshot_id null) is the record until reported', async () => {
      const w = await world({ prepared: true })
      send(w, 'b1', ['{"x": "bad"}'])
      send(w, 'b2', ['{"x": "worse"}'])
      const steps: string[] = []
      let markerBody: any = null
      const result = await rollOnce(w, {
        steps,
        at: (name) => {
          if (name === 'before-report') markerBody = JSON.parse(w.bucket.text(w.bucket.keys(`_sink/${SINK}/committed/`)[0])!)
        },
      })
      expect(steps).toEqual(['reload', 'rejects', 'marker', 'batch-delete', 'before-report', 'after-report', 'settled-marker-delete'])
      expect(result).toMatchObject({ snapshotIds: [], batches: 2, rows: 0, rejectedRows: 2 })
      expect(snapshots(w)).toHaveLength(0)
      expect(markerBody).toEqual({ batch_ids: ['b1', 'b2'], snapshot_id: null, committed_at: expect.any(String) })
      expect(w.ledger.reports[0].consumed).toEqual([{ batch_ids: ['b1', 'b2'], snapshot_id: null }])
      expect(w.ledger.reports[0].last_roll).toMatchObject({ batches: 2, rows: 0, rejected_rows: 2, snapshot_id: null })
      expect(leftovers(w)).toEqual({ intake: [], markers: [], rejects: ['b1', 'b2'] })
    })

    it('loses a race to another writer: re-commits the same file on the fresh base', async () => {
      const w = await world({ prepared: true })
      send(w, 'b1', ['{"x": 1}'])
      w.catalog.beforeCommit = async () => void (await commitRecord(w, [], [100], { sinkId: 'snk_tenant' }))
      await rollOnce(w)
      expect(w.catalog.conflicts).toBe(1)
      expect(await xs(w)).toEqual([1, 100])
      expect(snapshots(w)).toHaveLength(2)
      expect(leftovers(w).intake).toEqual([])
    })

    it('commits nothing when another roller committed one of its batches meanwhile; the next roll repairs', async () => {
      const w = await world({ prepared: true })
      send(w, 'b1', ['{"x": 1}'])
      send(w, 'b2', ['{"x": 2}'])
      w.catalog.beforeCommit = async () => void (await commitRecord(w, ['b1'], [1]))
      await expect(rollOnce(w)).rejects.toThrow(EndTick)
      expect(snapshots(w)).toHaveLength(1)
      expect(leftovers(w).intake).toEqual(['b1', 'b2'])

      await rollOnce(w)
      expect(await xs(w)).toEqual([1, 2])
      expect(w.ledger.reports[0].repaired).toEqual(['b1'])
      expect(leftovers(w)).toEqual({ intake: [], markers: [], rejects: [] })
    })
  })

  describe('7. deletes, report, sweep', () => {
    it('deletes the batches, then the marker; reports what was consumed; leaves old rejects to the maintenance sweep', async () => {
      const w = await world({ prepared: true })
      w.bucket.store(rejectsKey(SINK, 'ancient'), '{}\n', { lastModified: new Date(Date.now() - 8 * DAY) })
      w.bucket.store(rejectsKey(SINK, 'recent'), '{}\n', { lastModified: new Date(Date.now() - 6 * DAY) })
      w.bucket.store(`_sink/snk_other/${'x'}.ndjson`, '{"x": 9}\n')
      send(w, 'b1', ['{"x": 1}', '{"x": "bad"}'])
      send(w, 'b2', ['{"x": 2}'])
      const result = await rollOnce(w)
      const snapshotId = currentSnapshot(w.catalog.current.metadata)!['snapshot-id'].toString()

      expect(result).toEqual({ snapshotIds: [snapshotId], batches: 2, rows: 2, rejectedRows: 1, repaired: 0 })
      expect(leftovers(w)).toEqual({ intake: [], markers: [], rejects: ['ancient', 'b1', 'recent'] })
      expect(w.bucket.keys('_sink/snk_other/')).toEqual(['_sink/snk_other/x.ndjson'])
      expect(w.ledger.reports).toEqual([
        {
          roller: 'unit-roller',
          roll_id: 'roll-1',
          consumed: [{ batch_ids: ['b1', 'b2'], snapshot_id: snapshotId }],
          repaired: [],
          last_roll: { at: expect.any(String), batches: 2, rows: 2, rejected_rows: 1, snapshot_id: snapshotId, seconds: expect.any(Number) },
          rejects: { rows: 1, batches: 1 },
          release: true,
        },
      ])
      expect(w.ledger.committed).toEqual(
        new Map([
          ['b1', snapshotId],
          ['b2', snapshotId],
        ]),
      )
    })

    it('a roll with nothing waiting commits nothing and reports no last_roll', async () => {
      const w = await world({ prepared: true })
      const result = await rollOnce(w)
      expect(result).toEqual({ snapshotIds: [], batches: 0, rows: 0, rejectedRows: 0, repaired: 0 })
      expect(snapshots(w)).toHaveLength(0)
      expect(consumedOf(w.ledger.reports[0])).toEqual([])
      expect(w.ledger.reports[0]).toMatchObject({
        roller: 'unit-roller',
        roll_id: 'roll-1',
        repaired: [],
        last_roll: null,
        rejects: { rows: 0, batches: 0 },
        release: true,
      })
      expect(leftovers(w)).toEqual({ intake: [], markers: [], rejects: [] })
    })
  })
})
