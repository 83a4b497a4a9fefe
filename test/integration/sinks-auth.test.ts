// Who may do what with sinks: levels, the send key's one route (send_only), projects (another
// project's sinks do not exist for you), the send route's uniform 401, /internal/* only to the secret.
import { beforeAll, describe, expect, it } from 'vitest'
import { call, expectError, newApiKey, stack, type Answer } from '../support/stack.ts'
import { createTable, expect401, newProject, newSink, postSink, send, uid, type Sink } from '../support/sinks.ts'

const patch = (path: string, key: string, json: unknown = { roll_seconds: 600 }) => call(path, { key, method: 'PATCH', json })
const del = (path: string, key: string) => call(path, { key, method: 'DELETE' })
const dedupe = (path: string, key: string) => call(`${path}/dedupe`, { key, method: 'POST' })

describe('levels', () => {
  let read: string, write: string, admin: string
  beforeAll(async () => {
    ;[read, write, admin] = await Promise.all([newApiKey('read'), newApiKey('write'), newApiKey('admin')])
  })

  it('a read key can list and get sinks but not create, change, delete or dedupe them (403 forbidden)', async () => {
    const sink = await newSink(admin, { sink: { key: ['who'] } })
    expect((await call('/v1/sinks', { key: read })).status).toBe(200)
    expect((await call(`/v1/sinks/${sink.id}`, { key: read })).body.id).toBe(sink.id)
    expect((await call(`/v1/sinks/${sink.name}`, { key: read })).body.id).toBe(sink.id)
    expect((await call('/v1/usage', { key: read })).status).toBe(200)
    expect((await call('/v1/connection', { key: read })).status).toBe(200)
    expectError(await postSink(read, { name: `s_${uid()}`, table: await createTable(admin) }), 403, 'forbidden')
    expectError(await patch(`/v1/sinks/${sink.id}`, read), 403, 'forbidden')
    expectError(await del(`/v1/sinks/${sink.id}`, read), 403, 'forbidden')
    expectError(await dedupe(`/v1/sinks/${sink.id}`, read), 403, 'forbidden')
    // Nothing changed.
    expect((await call(`/v1/sinks/${sink.id}`, { key: admin })).body).toMatchObject({
      state: 'active',
      roll: { roll_seconds: 300 },
      dedupe: { requested_at: null },
    })
  })

  it.each(['write', 'admin'] as const)('a %s key can create, change, dedupe and delete a sink', async (level) => {
    const key = level === 'write' ? write : admin
    const created = await postSink(key, { name: `s_${uid()}`, table: await createTable(admin), key: ['who'] })
    expect(created.status).toBe(201)
    const id = created.body.id
    expect((await patch(`/v1/sinks/${id}`, key)).body.roll.roll_seconds).toBe(600)
    expect((await dedupe(`/v1/sinks/${id}`, key)).status).toBe(202)
    expect((await del(`/v1/sinks/${id}`, key)).status).toBe(202)
  })

  it('refuses a missing or unknown API key with 401 unauthorized', async () => {
    expectError(await call('/v1/sinks'), 401, 'unauthorized')
    expectError(await call('/v1/sinks', { key: 'al_key_000000000000_' + 'a'.repeat(43) }), 401, 'unauthorized')
    expectError(await call('/v1/sinks', { json: { name: 'x', table: 'a.b', warehouse: 'default' } }), 401, 'unauthorized')
  })
})

describe('send_only: the send key opens one route', () => {
  let sink: Sink
  beforeAll(async () => {
    sink = await newSink(stack().adminKey)
  })

  it('answers 403 send_only to the send key on every other route', async () => {
    const key = sink.sendKey
    const wh = stack().warehouse
    const answers: Array<[string, Answer]> = [
      ['GET /v1/sinks', await call('/v1/sinks', { key })],
      ['GET /v1/sinks/{id}', await call(`/v1/sinks/${sink.id}`, { key })],
      ['GET /v1/sinks/{name}', await call(`/v1/sinks/${sink.name}`, { key })],
      ['PATCH /v1/sinks/{id}', await patch(`/v1/sinks/${sink.id}`, key)],
      ['DELETE /v1/sinks/{id}', await del(`/v1/sinks/${sink.id}`, key)],
      ['POST /v1/sinks/{id}/dedupe', await dedupe(`/v1/sinks/${sink.id}`, key)],
      ['POST /v1/sinks', await postSink(key, { name: `s_${uid()}`, table: sink.table })],
      ['GET /v1/usage', await call('/v1/usage', { key })],
      ['GET /v1/connection', await call('/v1/connection', { key })],
      ['GET /v1/tables', await call(`/v1/tables?warehouse=${wh}`, { key })],
      ['GET /v1/tables/{t}', await call(`/v1/tables/${wh}.${sink.table}`, { key })],
      ['POST /v1/tables', await call('/v1/tables', { key, json: { warehouse: wh, table: `sinks.t_${uid()}`, columns: [{ name: 'x', type: 'long' }] } })],
      ['GET /v1/warehouses', await call('/v1/warehouses', { key })],
      ['POST /v1/warehouses', await call('/v1/warehouses', { key, json: { name: `w-${uid()}` } })],
    ]
    for (const [route, answer] of answers) {
      expect({ route, status: answer.status, code: answer.body?.error?.code }).toEqual({ route, status: 403, code: 'send_only' })
      expectError(answer, 403, 'send_only')
    }
    // The sink is as it was: the key changed nothing.
    expect((await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })).body).toMatchObject({ state: 'active', roll: { roll_seconds: 300 } })
  })

  it('answers 403 send_only to an API key of any level on the send route, and stores nothing', async () => {
    for (const level of ['read', 'write', 'admin'] as const) {
      const res = await send(sink, [{ x: 1 }], { key: await newApiKey(level), batchId: `api-${level}` })
      expectError(res, 403, 'send_only')
    }
    const res = await call(`/v1/sinks/${sink.id}`, { key: stack().adminKey })
    expect(res.body.received.batches).toBe(0)
  })

  it('answers 401 to no key and to a token that is no send key', async () => {
    expect401(await send(sink, [{ x: 1 }], { key: '' }))
    expect401(await send(sink, [{ x: 1 }], { key: 'not-a-key' }))
    expect401(await send(sink, [{ x: 1 }], { key: stack().bootstrapSecret }))
  })
})

describe('projects', () => {
  let mine: Sink
  let other: { project: string; key: string; warehouse: string }
  let theirs: Sink
  beforeAll(async () => {
    mine = await newSink(stack().adminKey, { sink: { key: ['who'] } })
    other = await newProject()
    // The same name in another project is another sink.
    theirs = await newSink(other.key, { name: mine.name, tableSpec: { warehouse: other.warehouse }, sink: { warehouse: other.warehouse, key: ['who'] } })
  })

  it('another project’s key gets 404 sink_not_found for your sink, by id and by name, for every route', async () => {
    const otherRead = await newApiKey('read', other.project)
    expectError(await call(`/v1/sinks/${mine.id}`, { key: otherRead }), 404, 'sink_not_found')
    // The level is checked first: a read key learns nothing more from a PATCH.
    expectError(await patch(`/v1/sinks/${mine.id}`, otherRead), 403, 'forbidden')
    const key = other.key
    expectError(await call(`/v1/sinks/${mine.id}`, { key }), 404, 'sink_not_found')
    expectError(await patch(`/v1/sinks/${mine.id}`, key), 404, 'sink_not_found')
    expectError(await dedupe(`/v1/sinks/${mine.id}`, key), 404, 'sink_not_found')
    expectError(await del(`/v1/sinks/${mine.id}`, key), 404, 'sink_not_found')
    // By name, the other project finds its own sink, never yours.
    expect((await call(`/v1/sinks/${mine.name}`, { key })).body.id).toBe(theirs.id)
    const list = await call('/v1/sinks?include_deleted=true', { key })
    expect(list.body.sinks.map((s: { id: string }) => s.id)).toEqual([theirs.id])
    expect(list.text).not.toContain(mine.id)
    // Yours is untouched.
    const got = await call(`/v1/sinks/${mine.id}`, { key: stack().adminKey })
    expect(got.body).toMatchObject({ state: 'active', roll: { roll_seconds: 300 }, dedupe: { requested_at: null } })
  })

  it('by name, another project only reaches its own sink; once that is gone, yours is still 404', async () => {
    const key = other.key
    const name = `only-${uid()}`
    const solo = await newSink(stack().adminKey, { name })
    for (const answer of [
      await call(`/v1/sinks/${name}`, { key }),
      await patch(`/v1/sinks/${name}`, key),
      await dedupe(`/v1/sinks/${name}`, key),
      await del(`/v1/sinks/${name}`, key),
    ])
      expectError(answer, 404, 'sink_not_found')
    expect((await call(`/v1/sinks/${solo.id}`, { key: stack().adminKey })).body.state).toBe('active')
  })

  it('its send key cannot send to your sink (401), and its usage never shows yours', async () => {
    expect401(await send({ id: mine.id, sendKey: theirs.sendKey }, [{ x: 1 }]))
    expect((await send(theirs, [{ x: 1 }])).status).toBe(202)
    const usage = (await call('/v1/usage', { key: other.key })).body.ingest_bytes
    expect(usage.by_sink.map((s: { sink_id: string }) => s.sink_id)).toEqual([theirs.id])
    expect((await call(`/v1/sinks/${mine.id}`, { key: stack().adminKey })).body.received.batches).toBe(0)
  })

  it('a table of another project’s warehouse is not found by name', async () => {
    expectError(await postSink(other.key, { name: `s_${uid()}`, table: mine.table, warehouse: stack().warehouse }), 404, 'warehouse_not_found')
  })
})

describe('the send route’s 401 tells nothing', () => {
  it('answers an unknown sink, a deleted sink and a wrong key with the same 401 body', async () => {
    const admin = stack().adminKey
    const sink = await newSink(admin)
    const gone = await newSink(admin)
    expect((await del(`/v1/sinks/${gone.id}`, admin)).status).toBe(202)
    const forged = `al_send_${'0'.repeat(12)}_${'A'.repeat(43)}`
    const answers = [
      await send({ id: 'snk_00000000deadbeef', sendKey: sink.sendKey }, [{ x: 1 }]),
      await send(gone, [{ x: 1 }]),
      await send({ id: sink.id, sendKey: forged }, [{ x: 1 }]),
      await send({ id: sink.id, sendKey: gone.sendKey }, [{ x: 1 }]),
    ]
    for (const a of answers) expect401(a)
    expect(new Set(answers.map((a) => a.text)).size).toBe(1)
    expect((await call(`/v1/sinks/${sink.id}`, { key: admin })).body.received.batches).toBe(0)
  })
})

describe('/internal/*', () => {
  it('answers 403 forbidden without the bootstrap secret, with an API key or a send key', async () => {
    const sink = await newSink(stack().adminKey)
    const report = { roller: 'x', roll_id: 'r', consumed: [] }
    for (const key of [undefined, 'wrong-secret', stack().adminKey, sink.sendKey]) {
      expectError(await call('/internal/sinks', { key }), 403, 'forbidden')
      expectError(await call(`/internal/sinks?roller=x&force=true&sink=${sink.id}`, { key }), 403, 'forbidden')
      expectError(await call(`/internal/sinks/${sink.id}/roll`, { key, json: report }), 403, 'forbidden')
    }
    const ok = await call(`/internal/sinks?sink=${sink.id}`, { key: stack().bootstrapSecret })
    expect(ok.status).toBe(200)
    expect(ok.body.sinks.map((s: { id: string }) => s.id)).toEqual([sink.id])
    expect(ok.body.sinks[0].lease).toBeNull()
  })
})
