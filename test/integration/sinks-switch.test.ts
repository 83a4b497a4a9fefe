// The switch for the whole feature (issue 14 §6) and the self-hosted edge (§5), on both hosts: an
// edge started with AL_SINKS_ENABLED=false (workerd) or LHBOX_SINKS_ENABLED=false (Node) answers the
// send and device routes 503 sinks_disabled with Retry-After, says so on the control plane, and leases
// nothing, so a roller rolls nothing; the batch accepted before waits in the bucket, and an edge that
// is on again rolls it once. On Node the whole round trip (create, send, roll through its /internal
// routes, read back by PyIceberg) runs on the Node-hosted edge.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EDGE_HOSTS, startEdge, type Edge, type EdgeHost } from '../support/edge.ts'
import { ensureVenv } from '../support/python.ts'
import { expectExactlyOnce, rowsOf, scan, sinkSnapshots, warehouseId } from '../support/roller-check.ts'
import { tickInProcess } from '../support/roller.ts'
import { createTable, intakeObjects, send, uid } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

const FLAG: Record<EdgeHost, string> = { workerd: 'AL_SINKS_ENABLED', node: 'LHBOX_SINKS_ENABLED' }

describe.each(EDGE_HOSTS)('on %s', { timeout: 120_000 }, (host) => {
  let on: Edge | null = null
  let off: Edge
  const onUrl = () => on?.url ?? stack().apiUrl

  beforeAll(async () => {
    await ensureVenv()
    // On workerd the stack's own edge is the one that is on; on Node, one more edge.
    if (host === 'node') on = await startEdge('node')
    off = await startEdge(host, { [FLAG[host]]: 'false' })
  }, 180_000)

  afterAll(async () => {
    await off?.stop()
    await on?.stop()
  })

  it('switched off: 503 sinks_disabled on send and device routes, the control plane says so, nothing rolls; back on, the waiting batch rolls once', async () => {
    const key = stack().adminKey
    const table = await createTable(key)
    const created = await call('/v1/sinks', { base: onUrl(), key, json: { warehouse: stack().warehouse, name: `sw_${uid()}`, table } })
    expect(created.status, created.text).toBe(201)
    const sink = { id: created.body.id, sendKey: created.body.send_key }
    expect((await send(sink, rowsOf(1, 3), { batchId: 'a', base: onUrl() })).status).toBe(202)

    const refused = await send(sink, rowsOf(4, 1), { batchId: 'b', base: off.url })
    expect(refused.status, refused.text).toBe(503)
    expect(refused.body.error.code).toBe('sinks_disabled')
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/)
    const device = await call(`/v1/sinks/${sink.id}/devices/d1?key=${sink.sendKey}&x=5`, { base: off.url })
    expect(device.status).toBe(503)
    expect(device.body.error.code).toBe('sinks_disabled')
    const view = await call(`/v1/sinks/${sink.id}`, { base: off.url, key })
    expect(view.status).toBe(200)
    expect(view.body).toMatchObject({ sinks_enabled: false, notice: expect.stringMatching(/switched off/) })
    expect((await call('/v1/sinks', { base: off.url, key })).body.sinks_enabled).toBe(false)
    expect((await call('/v1/connection', { base: off.url, key })).body.sinks_enabled).toBe(false)
    expect((await call(`/v1/sinks/${sink.id}`, { base: onUrl(), key })).body.sinks_enabled).toBeUndefined()
    expect((await call('/healthz', { base: off.url })).status).toBe(200)

    // Nothing is leased through the switched-off edge, and a roller switched off itself leases nothing.
    for (const env of [{ LHBOX_URL: off.url }, { LHBOX_URL: onUrl(), AL_SINKS_ENABLED: 'false' }] as Record<string, string>[]) {
      const t = await tickInProcess({ sink: sink.id, env })
      expect(t.code, t.stdout).toBe(0)
      expect(t.logs.at(-1)).toMatchObject({ msg: 'tick done', rolled: 0, failed: 0 })
    }
    expect(await intakeObjects(sink.id)).toEqual([`_sink/${sink.id}/a.ndjson`])
    expect((await call(`/v1/sinks/${sink.id}`, { base: onUrl(), key })).body.lag.batches_waiting).toBe(1)

    const t = await tickInProcess({ sink: sink.id, env: { LHBOX_URL: onUrl() } })
    expect(t.logs.at(-1)).toMatchObject({ msg: 'tick done', rolled: 1, failed: 0 })
    const s = await scan({ sql: await warehouseId(stack().warehouse) }, table)
    expectExactlyOnce(s, [1, 2, 3])
    expect(sinkSnapshots(s, sink.id)).toHaveLength(1)
    expect(await intakeObjects(sink.id)).toEqual([])
  })
})
