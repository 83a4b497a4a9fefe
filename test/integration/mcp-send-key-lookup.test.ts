// POST /mcp with a send key finds the key's sink by an index, not a scan of `sinks`: EXPLAIN of the
// caller's own statement (edge/mcp/caller.ts SEND_KEY_SINK) on this Postgres shows each arm an Index
// Scan of its partial index (sinks_send_key, sinks_previous_send_key) with the key's hash as the
// index condition. Sequential scans are switched off for the EXPLAIN only, so a small shared table
// does not hide a missing index (without a usable index the plan would still be a Seq Scan, or a
// full scan of another index with the hash as a filter). And the lookup still does its work: the
// current and the previous key (in its overlap) both reach the sink, a retired one is 401.
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SEND_KEY_SINK } from '../../edge/mcp/caller.ts'
import { sha256Hex } from '../../edge/keys.ts'
import { database, newSink, type Sink } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

let db: pg.Client
beforeAll(async () => {
  db = await database()
})
afterAll(() => db?.end())

interface PlanNode {
  'Node Type': string
  'Index Name'?: string
  'Index Cond'?: string
  'Relation Name'?: string
  Plans?: PlanNode[]
}

const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)]

/** The plan of the caller's statement for this hash, with sequential scans off (for this transaction only). */
async function plan(hash: string): Promise<PlanNode[]> {
  await db.query('begin')
  try {
    await db.query('set local enable_seqscan = off')
    const { rows } = await db.query(`explain (format json) ${SEND_KEY_SINK}`, [hash])
    return nodes(rows[0]['QUERY PLAN'][0].Plan)
  } finally {
    await db.query('rollback')
  }
}

/** A JSON-RPC ping to /mcp with this key (the caller is known, or 401, before any message is read). */
const ping = (key: string) =>
  call('/mcp', {
    method: 'POST',
    key,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
  })

describe('POST /mcp finds a send key’s sink by an index', () => {
  let sink: Sink
  let next: string
  beforeAll(async () => {
    sink = await newSink(stack().adminKey)
    const rotated = await call(`/v1/sinks/${sink.id}/send-keys`, { method: 'POST', key: stack().adminKey, json: {} })
    expect(rotated.status, rotated.text).toBe(201)
    next = rotated.body.send_key
  })

  it('reads each key hash column by equality on its own index, never scanning sinks', async () => {
    const hash = await sha256Hex(sink.sendKey)
    const scans = await plan(hash)
    const onSinks = scans.filter((n) => n['Relation Name'] === 'sinks')
    expect(onSinks.map((n) => [n['Node Type'], n['Index Name']]).sort()).toEqual([
      ['Index Scan', 'sinks_previous_send_key'],
      ['Index Scan', 'sinks_send_key'],
    ])
    expect(onSinks.find((n) => n['Index Name'] === 'sinks_send_key')!['Index Cond']).toBe(`(send_key_sha256 = '${hash}'::text)`)
    expect(onSinks.find((n) => n['Index Name'] === 'sinks_previous_send_key')!['Index Cond']).toBe(`(previous_send_key_sha256 = '${hash}'::text)`)
  })

  it('the current key and the previous one in its overlap reach the sink; a retired key is 401', async () => {
    expect((await ping(next)).status).toBe(200)
    expect((await ping(sink.sendKey)).status).toBe(200)
    const retired = await call(`/v1/sinks/${sink.id}/send-keys/previous`, { method: 'DELETE', key: stack().adminKey })
    expect(retired.status, retired.text).toBe(200)
    expect((await ping(sink.sendKey)).status).toBe(401)
    expect((await ping(next)).status).toBe(200)
  })
})
