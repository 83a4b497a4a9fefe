// "A keyed sink rolls its batches in the order they arrived" (spec), across rolls too. Most stores'
// listings give Last-Modified in whole seconds, so two batches received in the same second must still
// be rolled in arrival order when a roll's 1,000-batch limit falls between them: by the listing alone
// (time, then id) the later one would go into the table with the first roll, and the earlier one —
// rolled next — would replace it. Read with PyIceberg.
//
// The two batches are not raced into one wall-clock second: the sink's warehouse reaches the bucket
// through a proxy that gives both the same Last-Modified in every listing of the intake, so the listing
// cannot tell them apart on every run, whatever the machine's speed.
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.ts'
import { ensureVenv } from '../support/python.ts'
import { tickInProcess } from '../support/roller.ts'
import { ledgerStates, proxiedWarehouse, scan } from '../support/roller-check.ts'
import { bucket, database, intakeKey, newSink, send } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

const cols = [
  { name: 'x', type: 'long', required: true },
  { name: 'who', type: 'string' },
]

let db: pg.Client
let proxy: FaultProxy
let warehouse: { name: string; id: string }

beforeAll(async () => {
  await ensureVenv()
  db = await database()
  proxy = await startFaultProxy(stack().s3.endpoint)
  warehouse = await proxiedWarehouse(proxy.url)
}, 15 * 60_000)

afterAll(async () => {
  await db?.end()
  await proxy?.stop()
})

async function tick(sinkId: string) {
  // One roll a tick (no catch-up): the test looks at what the first roll of the split left waiting.
  const r = await tickInProcess({ sink: sinkId, rollerId: `korder-${sinkId}`, env: { LHBOX_ROLLER_CATCH_UP_ROLLS: '1' } })
  expect(r.code, r.stdout + r.stderr).toBe(0)
  return r
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** A ListObjectsV2 answer with `at` as the LastModified of each of `keys`; answers which it found. */
function sameLastModified(xml: string, keys: string[], at: string, found: Set<string>): string {
  return xml.replace(/<Contents>[\s\S]*?<\/Contents>/g, (entry) => {
    const key = keys.find((k) => entry.includes(`<Key>${k}</Key>`))
    if (!key) return entry
    found.add(key)
    return entry.replace(/<LastModified>[^<]*<\/LastModified>/, `<LastModified>${at}</LastModified>`)
  })
}

describe('arrival order across rolls', () => {
  it('two batches of one listing time, split by the 1,000-batch limit: the later-received value wins', { timeout: 240_000 }, async () => {
    const sink = await newSink(stack().adminKey, {
      tableSpec: { columns: cols, warehouse: warehouse.name },
      sink: { key: ['x'], warehouse: warehouse.name },
    })
    // 999 fillers (ids sorting first), then `zzz` with the old value and `aaa` with the new. By the
    // listing's (time, id), the first roll's 1,000 would be the fillers and `aaa`; `zzz` left.
    const fillers = Array.from({ length: 999 }, (_, i) => i)
    for (let i = 0; i < fillers.length; i += 50) {
      const answers = await Promise.all(
        fillers.slice(i, i + 50).map((n) => send(sink, [{ x: 1000 + n, who: 'filler' }], { batchId: `0-${String(n).padStart(4, '0')}` })),
      )
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 202))
    }
    expect((await send(sink, [{ x: 1, who: 'old' }], { batchId: 'zzz' })).status).toBe(202)
    expect((await send(sink, [{ x: 1, who: 'new' }], { batchId: 'aaa' })).status).toBe(202)
    const [z, a] = await Promise.all([bucket().head(intakeKey(sink.id, 'zzz')), bucket().head(intakeKey(sink.id, 'aaa'))])
    // Sent one after the other: the intake's own clock (microseconds) orders them.
    expect(a!.metadata.received > z!.metadata.received).toBe(true)
    // Both listed at the later one's time (never before a filler's): one second, as far as a listing says.
    const pair = [intakeKey(sink.id, 'zzz'), intakeKey(sink.id, 'aaa')]
    const at = new Date(Math.max(z!.lastModified.getTime(), a!.lastModified.getTime())).toISOString()
    const tied = new Set<string>()
    const listing = proxy.rule({
      method: 'GET',
      path: new RegExp(`[?&]prefix=${escapeRegExp(encodeURIComponent(`_sink/${sink.id}/`))}(&|$)`),
      action: { rewrite: (xml) => sameLastModified(xml, pair, at, tied) },
    })
    try {
      await tick(sink.id)
      expect(listing.matched).toBeGreaterThan(0)
      expect([...tied].sort()).toEqual([...pair].sort())
      // The first roll took the 1,000 that arrived first: the one left is the last to arrive.
      expect(Object.entries(await ledgerStates(db, sink.id)).filter(([, state]) => state === 'pending')).toEqual([['aaa', 'pending']])
      expect((await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })).body.lag.batches_waiting).toBe(1)
      await tick(sink.id)
      expect((await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })).body.lag.batches_waiting).toBe(0)
    } finally {
      proxy.heal(listing)
    }
    const s = await scan({ sql: warehouse.id }, sink.table)
    expect(s.rows.filter((r) => Number(r.x) === 1).map((r) => r.who)).toEqual(['new'])
    expect(s.rows).toHaveLength(1000)
  })
})
