// Exactly once by recovery (spec "Exactly once"; roller/recovery.ts), the pure rules at their
// boundaries: which summaries name a batch (both prefixes), every retained snapshot and every marker
// as a record, "the newer record wins", the 1 h tolerance, and the conflict re-check.
import { describe, expect, it } from 'vitest'
import { newTableMetadata, type Snapshot, type TableMetadata } from '../../../iceberg/spec/metadata.ts'
import type { LoadedTable } from '../../../iceberg/catalog/index.ts'
import { CommitAbandoned } from '../../../iceberg/transaction/transact.ts'
import { receivedMicros, type Marker } from '../../../roller/intake.ts'
import { SUMMARY_PREFIXES, summaryBatchIds } from '../../../contract/summary.ts'
import { CLOCK_SKEW_MS, consumedRecords, recheckFor, storedBefore, type ConsumedRecord } from '../../../roller/recovery.ts'

const SINK = 'snk_r'
const T = Date.UTC(2026, 0, 10, 12, 0, 0)
const HOUR = 3600_000

const named = (prefix: string, batches: string, sink = SINK) => ({ [`${prefix}id`]: sink, [`${prefix}batches`]: batches })
const snap = (id: bigint, atMs: number, summary: Record<string, string>): Snapshot => ({
  'snapshot-id': id,
  'timestamp-ms': atMs,
  summary: { operation: 'append', ...summary },
})
const marker = (batchIds: string[], snapshotId: string | null, atMs: number): Marker => ({
  key: `_sink/${SINK}/committed/m-${atMs}.json`,
  batchIds,
  snapshotId,
  committedAt: new Date(atMs).toISOString(),
})

function metadataWith(snapshots: Snapshot[]): TableMetadata {
  const m = newTableMetadata({ location: 's3://b/t', schema: { fields: [{ id: 1, name: 'x', required: false, type: 'long' }] }, formatVersion: 2 })
  m.snapshots = snapshots
  return m
}

describe('summaryBatchIds: a snapshot summary names batches of this sink under either prefix', () => {
  it('accepts the current prefix (lakehousebox.sink.) and the earlier one (tablemere.sink.), in that order', () => {
    expect(SUMMARY_PREFIXES).toEqual(['lakehousebox.sink.', 'tablemere.sink.'])
    expect(summaryBatchIds(named('lakehousebox.sink.', 'a,b'), SINK)).toEqual(['a', 'b'])
    expect(summaryBatchIds(named('tablemere.sink.', 'c'), SINK)).toEqual(['c'])
  })

  it('another sink, or no sink at all, names nothing (null); a roll of this sink without batches names none ([])', () => {
    expect(summaryBatchIds(named('lakehousebox.sink.', 'a'), 'snk_other')).toBeNull()
    expect(summaryBatchIds(named('tablemere.sink.', 'a'), 'snk_other')).toBeNull()
    expect(summaryBatchIds({ operation: 'append', 'added-records': '3' }, SINK)).toBeNull()
    expect(summaryBatchIds({ 'lakehousebox.sink.id': SINK }, SINK)).toEqual([])
    expect(summaryBatchIds(named('lakehousebox.sink.', ''), SINK)).toEqual([])
    // the key names are exact: a look-alike prefix is not a record
    expect(summaryBatchIds(named('lakehousebox.sinks.', 'a'), SINK)).toBeNull()
    expect(summaryBatchIds(named('LAKEHOUSEBOX.SINK.', 'a'), SINK)).toBeNull()
  })

  it('the current prefix is read first; the earlier one counts when the current one is of another sink', () => {
    const both = { ...named('lakehousebox.sink.', 'new1'), ...named('tablemere.sink.', 'old1') }
    expect(summaryBatchIds(both, SINK)).toEqual(['new1'])
    const mixed = { ...named('lakehousebox.sink.', 'x1', 'snk_other'), ...named('tablemere.sink.', 'old1') }
    expect(summaryBatchIds(mixed, SINK)).toEqual(['old1'])
  })
})

describe('consumedRecords: every retained snapshot of the sink and every marker; the newer record wins', () => {
  it('every retained snapshot counts, not only the current one, under both prefixes; others are ignored', () => {
    const m = metadataWith([
      snap(1n, T, named('tablemere.sink.', 'a')),
      snap(2n, T + 1000, named('lakehousebox.sink.', 'b,c')),
      snap(3n, T + 2000, named('lakehousebox.sink.', 'z', 'snk_other')),
      snap(4n, T + 3000, { 'added-records': '9' }), // the tenant's own write, now the current snapshot
    ])
    m['current-snapshot-id'] = 4n
    const records = consumedRecords(m, SINK, [])
    expect(Object.fromEntries(records)).toEqual({
      a: { atMs: T, snapshotId: '1', source: 'snapshot' },
      b: { atMs: T + 1000, snapshotId: '2', source: 'snapshot' },
      c: { atMs: T + 1000, snapshotId: '2', source: 'snapshot' },
    })
  })

  it('markers are records: a committed one carries its snapshot id, an empty roll’s none', () => {
    const records = consumedRecords(metadataWith([]), SINK, [marker(['a', 'b'], '9007199254740993', T), marker(['e'], null, T + 5)])
    expect(records.get('a')).toEqual({ atMs: T, snapshotId: '9007199254740993', source: 'marker' })
    expect(records.get('b')).toEqual({ atMs: T, snapshotId: '9007199254740993', source: 'marker' })
    expect(records.get('e')).toEqual({ atMs: T + 5, snapshotId: null, source: 'marker' })
    expect(records.size).toBe(3)
  })

  it('the newer record wins: snapshot vs marker either way, snapshot vs snapshot in any order, across prefixes', () => {
    const s = snap(10n, T, named('lakehousebox.sink.', 'a'))
    expect(consumedRecords(metadataWith([s]), SINK, [marker(['a'], '11', T + 1)]).get('a')).toEqual({ atMs: T + 1, snapshotId: '11', source: 'marker' })
    expect(consumedRecords(metadataWith([s]), SINK, [marker(['a'], '11', T - 1)]).get('a')).toEqual({ atMs: T, snapshotId: '10', source: 'snapshot' })
    // two snapshots name the batch (a new send of the same id, rolled again): the newer, whatever the list order
    const older = snap(20n, T - 5 * HOUR, named('tablemere.sink.', 'a'))
    const newer = snap(21n, T, named('lakehousebox.sink.', 'a'))
    expect(consumedRecords(metadataWith([older, newer]), SINK, []).get('a')?.snapshotId).toBe('21')
    expect(consumedRecords(metadataWith([newer, older]), SINK, []).get('a')?.snapshotId).toBe('21')
    // two markers: the newer
    expect(consumedRecords(metadataWith([]), SINK, [marker(['a'], '31', T + 2), marker(['a'], '30', T + 1)]).get('a')?.snapshotId).toBe('31')
  })

  it('a tie keeps the record met first (snapshots before markers)', () => {
    const records = consumedRecords(metadataWith([snap(10n, T, named('lakehousebox.sink.', 'a'))]), SINK, [marker(['a'], null, T)])
    expect(records.get('a')).toEqual({ atMs: T, snapshotId: '10', source: 'snapshot' })
  })
})

describe('storedBefore: the object was stored before the record, with 1 h of tolerance', () => {
  const record: ConsumedRecord = { atMs: T, snapshotId: '1', source: 'snapshot' }
  const micros = (ms: number, extraMicros = 0) => BigInt(ms) * 1000n + BigInt(extraMicros)

  it('is one hour', () => expect(CLOCK_SKEW_MS).toBe(HOUR))

  it('after the record: consumed up to 1 h later (the intake clock ahead), a new send from 1 h + 1 ms', () => {
    expect(storedBefore(micros(T + 1), record)).toBe(true)
    expect(storedBefore(micros(T + HOUR - 1), record)).toBe(true)
    expect(storedBefore(micros(T + HOUR), record)).toBe(true)
    expect(storedBefore(micros(T + HOUR + 1), record)).toBe(false)
    expect(storedBefore(micros(T + 7 * 24 * HOUR), record)).toBe(false)
  })

  it('before the record: consumed however long before, the 1 h edge included (no lower bound: a batch may wait a week)', () => {
    expect(storedBefore(micros(T), record)).toBe(true)
    expect(storedBefore(micros(T - HOUR), record)).toBe(true)
    expect(storedBefore(micros(T - HOUR - 1), record)).toBe(true)
    expect(storedBefore(micros(T - 8 * 24 * HOUR), record)).toBe(true)
  })

  it('compares whole milliseconds: a received time 1 h + 0.999 ms after still counts, 1 h + 1.000 ms does not', () => {
    expect(storedBefore(micros(T + HOUR, 999), record)).toBe(true)
    expect(storedBefore(micros(T + HOUR, 1000), record)).toBe(false)
  })

  it('the same rule for a marker’s record', () => {
    const m: ConsumedRecord = { atMs: T, snapshotId: null, source: 'marker' }
    expect(storedBefore(micros(T + HOUR), m)).toBe(true)
    expect(storedBefore(micros(T + HOUR + 1), m)).toBe(false)
    expect(storedBefore(micros(T - HOUR - 1), m)).toBe(true)
  })
})

describe('receivedMicros: the stored time compared with the record', () => {
  const head = (metadata: Record<string, string>, lastModifiedMs = T) => ({ size: 1, lastModified: new Date(lastModifiedMs), contentType: null, metadata })

  it('x-amz-meta-received to the microsecond, whatever Last-Modified says', () => {
    expect(receivedMicros(head({ received: '2026-01-10T12:00:00.123456Z' }, T + 5000))).toBe(BigInt(T) * 1000n + 123456n)
    expect(receivedMicros(head({ received: '2026-01-10T13:00:00.000001+01:00' }))).toBe(BigInt(T) * 1000n + 1n)
  })

  it('the store’s Last-Modified when the header is missing or not a timestamp', () => {
    expect(receivedMicros(head({}, T + 2000))).toBe(BigInt(T + 2000) * 1000n)
    expect(receivedMicros(head({ received: 'yesterday' }, T + 3000))).toBe(BigInt(T + 3000) * 1000n)
  })
})

describe('recheckFor: a commit is abandoned when a newer snapshot of the sink holds one of its batches', () => {
  const base = (snapshots: Snapshot[]) => ({ metadata: metadataWith(snapshots) }) as unknown as LoadedTable
  const seen = new Set([1n])
  const check = recheckFor({ id: SINK }, ['a', 'b'], seen)

  it('throws CommitAbandoned for a snapshot not seen at step 1 naming one of the batches, under either prefix', () => {
    expect(() => check(base([snap(1n, T, named('lakehousebox.sink.', 'a')), snap(2n, T + 1, named('lakehousebox.sink.', 'b,q'))]))).toThrow(CommitAbandoned)
    expect(() => check(base([snap(2n, T + 1, named('tablemere.sink.', 'a'))]))).toThrow(CommitAbandoned)
  })

  it('ignores the snapshots seen at step 1, other batches, and other sinks', () => {
    expect(() => check(base([snap(1n, T, named('lakehousebox.sink.', 'a,b'))]))).not.toThrow()
    expect(() => check(base([snap(2n, T + 1, named('lakehousebox.sink.', 'c'))]))).not.toThrow()
    expect(() => check(base([snap(2n, T + 1, named('lakehousebox.sink.', 'a', 'snk_other'))]))).not.toThrow()
    expect(() => check(base([snap(2n, T + 1, { 'added-records': '1' })]))).not.toThrow()
  })
})
