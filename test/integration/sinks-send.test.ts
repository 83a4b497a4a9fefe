// The send route through real workerd: headers, limits (streamed, gzip), JSON errors, byte-exact
// storage, idempotency (also under concurrency), usage, and the roller's internal view/lease/report.
import { gzipSync } from 'node:zlib'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, expectError, stack } from '../support/stack.ts'
import { bucket, bytes, database, intakeKey, intakeObjects, ledger, newSink, poll, send, uid, usage, type Sink } from '../support/sinks.ts'

const MiB = 1024 * 1024
const LIMIT = 16 * MiB
const MICROS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/
let db: pg.Client
let sink: Sink
beforeAll(async () => {
  db = await database()
  sink = await newSink(stack().adminKey)
})
afterAll(() => db.end())

/** `[{"p":"aaa…"}]` of exactly n bytes. */
const padded = (n: number) => `[{"p":"${'a'.repeat(n - 10)}"}]`

describe('the request', () => {
  it('needs an Idempotency-Key of 1–128 chars of A-Z a-z 0-9 . _ : - (400 invalid_idempotency_key)', async () => {
    for (const batchId of [null, '', 'a'.repeat(129), 'a b', 'a/b', 'a%2F', 'x*y', 'ünï']) {
      expectError(await send(sink, [{ x: 1 }], { batchId }), 400, 'invalid_idempotency_key')
    }
    const longest = 'Az09._:-'.repeat(16).slice(0, 128)
    const res = await send(sink, [{ x: 1 }], { batchId: longest })
    expect(res.status).toBe(202)
    expect(res.body.batch_id).toBe(longest)
    expect(await bucket().head(intakeKey(sink.id, longest))).not.toBeNull()
  })

  it('needs Content-Type: application/json (415 otherwise)', async () => {
    for (const type of ['text/plain', 'application/json-seq', 'application/octet-stream', 'multipart/form-data; boundary=x']) {
      expectError(await send(sink, '[{"x":1}]', { headers: { 'content-type': type } }), 415, 'unsupported_media_type')
    }
    expect((await send(sink, '[{"x":1}]', { headers: { 'content-type': 'application/json; charset=utf-8' } })).status).toBe(202)
  })

  it('takes a body of 16 MiB and refuses 16 MiB + 1 with 413', async () => {
    const ok = await send(sink, padded(LIMIT))
    expect(ok.status).toBe(202)
    expect(ok.body).toMatchObject({ accepted: 1, bytes: LIMIT - 1 })
    const res = await send(sink, padded(LIMIT + 1), { batchId: 'too-big' })
    expectError(res, 413, 'payload_too_large')
    expect(res.body.error.limit).toBe(LIMIT)
    expect(await ledger(db, sink.id).then((rows) => rows.filter((r) => r.batch_id === 'too-big'))).toEqual([])
    expect(await bucket().head(intakeKey(sink.id, 'too-big'))).toBeNull()
  })

  /** POSTs a chunked body of `total` bytes (`[` then `{"x":1},` repeated), counting what the server pulled. */
  async function sendStreamed(total: number, batchId: string) {
    const chunk = bytes('{"x":1},'.repeat(MiB / 8))
    let pulled = 0
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled === 0) controller.enqueue(bytes('['))
        if (pulled >= total) return controller.close()
        pulled += chunk.byteLength
        controller.enqueue(chunk)
      },
    })
    try {
      const res = await fetch(`${stack().apiUrl}/v1/sinks/${sink.id}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sink.sendKey}`, 'idempotency-key': batchId, 'content-type': 'application/json' },
        body,
        duplex: 'half',
      } as RequestInit)
      return { status: res.status, text: await res.text().catch(() => 'truncated'), pulled }
    } catch (err) {
      return { status: 0, text: `reset ${(err as { cause?: { code?: string } }).cause?.code ?? String(err)}`, pulled }
    }
  }

  // Issue 15, defect 1: the Worker used to cancel the upload at the limit, and workerd then lost the
  // connection: the next request answered 503 "Your worker restarted mid-request". A refused body is
  // now drained (up to 100 MiB more), so the answer is a whole 413 and the next request is served.
  it('refuses a streamed body over the limit with a whole 413, and the next requests are served', async () => {
    for (const [i, encoding] of ['identity', 'gzip'].entries()) {
      const big = encoding === 'gzip' ? new Uint8Array(gzipSync(padded(17 * MiB))) : bytes(padded(17 * MiB))
      expectError(await send(sink, big, { batchId: `big-${i}`, headers: { 'content-encoding': encoding } }), 413, 'payload_too_large')
      expect((await send(sink, [{ x: i }], { batchId: `after-big-${i}` })).status).toBe(202)
    }
    const streamed = await sendStreamed(48 * MiB, 'streamed')
    expect(streamed.status).toBe(413)
    expect(JSON.parse(streamed.text).error.code).toBe('payload_too_large')
    expect(streamed.pulled).toBe(48 * MiB)
    expect((await send(sink, [{ x: 1 }], { batchId: 'after-streamed' })).status).toBe(202)
    expect(await bucket().head(intakeKey(sink.id, 'streamed'))).toBeNull()
    expect((await ledger(db, sink.id)).filter((r) => /^(streamed|big-)/.test(r.batch_id))).toEqual([])
  })

  // Past 16 + 100 MiB the upload is cut instead (Cloudflare itself refuses bodies over 100 MB on most
  // plans): whatever the client then sees, it did not get to send it all, and nothing was stored.
  it('cuts a streamed body past the drain limit without reading it all', async () => {
    const total = 160 * MiB
    const cut = await sendStreamed(total, 'endless')
    expect(cut.pulled).toBeLessThan(total)
    expect(cut.status === 413 || cut.status === 503 || cut.status === 0).toBe(true)
    expect(await bucket().head(intakeKey(sink.id, 'endless'))).toBeNull()
    expect((await ledger(db, sink.id)).filter((r) => r.batch_id === 'endless')).toEqual([])
  })

  it('accepts Content-Encoding: gzip, and applies the 16 MiB to the decompressed bytes', async () => {
    const text = '[{"x":1,"who":"gz"},\n {"x":2}]'
    for (const encoding of ['gzip', 'x-gzip']) {
      const res = await send(sink, new Uint8Array(gzipSync(text)), { headers: { 'content-encoding': encoding } })
      expect(res.status).toBe(202)
      expect(res.body).toMatchObject({ accepted: 2, bytes: 27 })
      const got = await bucket().get(intakeKey(sink.id, res.body.batch_id))
      expect(Buffer.from(got!.body).toString()).toBe('{"x":1,"who":"gz"}\n{"x":2}\n')
    }
    const bomb = new Uint8Array(gzipSync(`[${'{"x":1},'.repeat(LIMIT / 8 + 1)}{"x":1}]`))
    expect(bomb.byteLength).toBeLessThan(MiB)
    expectError(await send(sink, bomb, { headers: { 'content-encoding': 'gzip' }, batchId: 'bomb' }), 413, 'payload_too_large')
    expect(await bucket().head(intakeKey(sink.id, 'bomb'))).toBeNull()
    expectError(await send(sink, bytes('not gzip at all'), { headers: { 'content-encoding': 'gzip' } }), 400, 'malformed_gzip')
    expectError(await send(sink, '[{"x":1}]', { headers: { 'content-encoding': 'br' } }), 415, 'unsupported_encoding')
  })

  it('answers malformed JSON with 400 malformed_json and the byte offset', async () => {
    const cases: Array<[string | Uint8Array, number]> = [
      ['[{"x":1},{"x":}]', 14],
      ['[{"x":1}', 8],
      ['[{"x":1}] x', 10],
      ['[{"x":01}]', 7],
      ['[{"x":"a\nb"}]', 8],
      [new Uint8Array([0x5b, 0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d, 0x5d]), 7],
      ['', 0],
    ]
    for (const [body, offset] of cases) {
      const res = await send(sink, body)
      expectError(res, 400, 'malformed_json')
      expect({ body: String(body), offset: res.body.error.offset }).toEqual({ body: String(body), offset })
    }
    expect((await send(sink, '[{"x":}]')).body.error.message).toMatch(/at byte 6/)
  })

  it('answers a body that is no array with 400 not_an_array', async () => {
    for (const body of ['{"x":1}', '42', '"s"', 'null', '  ']) expectError(await send(sink, body), 400, 'not_an_array')
  })

  it('rejects the elements that are not objects, by index, and stores every element, one a line', async () => {
    const res = await send(sink, '[{"x":1}, 2, "s", null, [1], true, {"x":2}]')
    expect(res.status).toBe(202)
    // bytes: the accepted rows' lines only, as before the non-objects were stored
    expect(res.body).toMatchObject({ accepted: 2, rejected: 5, bytes: 16 })
    expect(res.body.reasons).toEqual([1, 2, 3, 4, 5].map((index) => ({ index, reason: 'not_an_object' })))
    const got = await bucket().get(intakeKey(sink.id, res.body.batch_id))
    // line i is element i: the roller rejects the non-objects into the rejects file with their bytes
    expect(Buffer.from(got!.body).toString()).toBe('{"x":1}\n2\n"s"\nnull\n[1]\ntrue\n{"x":2}\n')
    expect(got!.head.metadata.rows).toBe('7')
    expect(got!.head.metadata.skipped).toBeUndefined()
  })
})

describe('storage', () => {
  it('stores each object element’s bytes unchanged, one per line (line breaks between tokens become spaces)', async () => {
    const elements = [
      '{\r\n    "x": 9223372036854775807,\r\n    "f": 0.1000000000000000055511151231257827,\r\n    "n": -1.5E+300\r\n  }',
      '{"who": "\\u00e9\\ud83d\\ude00 \\"q\\" \\\\ \\/ \\n", "raw": "é😀 日本", "nested": {"a": [1, 2.50, {"b": null}]},\t"t": true}',
      '{\n\t"empty": {}, "list": [ ], "big": 123456789012345678901234567890\n}',
    ]
    const body = `\uFEFF[\r\n  ${elements[0]},\r\n  ${elements[1]} ,\n${elements[2]}\n]\n`
    const expected = Buffer.from(elements.map((e) => e.replace(/[\r\n]/g, ' ')).join('\n') + '\n', 'utf8')
    const batchId = `exact-${uid()}`
    const res = await send(sink, bytes(body), { batchId })
    expect(res.status).toBe(202)
    expect(res.body).toEqual({
      accepted: 3,
      rejected: 0,
      reasons: [],
      batch_id: batchId,
      bytes: expected.byteLength,
      received_at: expect.stringMatching(MICROS),
      state: 'pending',
    })
    const got = await bucket().get(intakeKey(sink.id, batchId))
    expect(Buffer.from(got!.body).toString('utf8')).toBe(expected.toString('utf8'))
    expect(Buffer.compare(Buffer.from(got!.body), expected)).toBe(0)
    expect(got!.head.contentType).toBe('application/x-ndjson')
    expect(got!.head.metadata).toMatchObject({ received: res.body.received_at, rows: '3', sink: sink.id })
    const [row] = (await ledger(db, sink.id)).filter((r) => r.batch_id === batchId)
    expect(row).toMatchObject({ bytes: String(expected.byteLength), rows: 3, rejected: 0 })
  })

  it('answers the same batch id with the same body 200 duplicate, with another body 409 idempotency_key_reused', async () => {
    const batchId = `dup-${uid()}`
    const first = await send(sink, '[{"x":1},7]', { batchId })
    expect(first.status).toBe(202)
    const again = await send(sink, '[{"x":1},7]', { batchId })
    expect(again.status).toBe(200)
    expect(again.body).toEqual({ ...first.body, duplicate: true })
    expectError(await send(sink, '[{"x":1}, 7]', { batchId }), 409, 'idempotency_key_reused')
    expect(await intakeObjects(sink.id).then((k) => k.filter((key) => key.includes(batchId)))).toEqual([intakeKey(sink.id, batchId)])
    expect(Buffer.from((await bucket().get(intakeKey(sink.id, batchId)))!.body).toString()).toBe('{"x":1}\n7\n')
    // The same batch id on another sink is another batch.
    const other = await newSink(stack().adminKey)
    expect((await send(other, '[{"x":2}]', { batchId })).status).toBe(202)
  })

  it('stores a batch once under 20 concurrent sends of one Idempotency-Key', async () => {
    const s = await newSink(stack().adminKey)
    const body = '[{"x":1,"who":"race"},{"x":2}]'
    const answers = await Promise.all(Array.from({ length: 20 }, () => send(s, body, { batchId: 'race' })))
    const statuses = answers.map((a) => a.status).sort()
    expect(statuses).toEqual([...Array(19).fill(200), 202])
    const created = answers.find((a) => a.status === 202)!
    for (const a of answers) expect(a.body).toEqual(a.status === 202 ? created.body : { ...created.body, duplicate: true })
    expect(new Set(answers.map((a) => a.body.received_at)).size).toBe(1)
    expect(await ledger(db, s.id)).toHaveLength(1)
    expect(await intakeObjects(s.id)).toEqual([intakeKey(s.id, 'race')])
    expect(await poll(async () => (await ledger(db, s.id))[0].state === 'pending')).toBe(true)
    const mine = (await usage(stack().adminKey)).by_sink.find((u: { sink_id: string }) => u.sink_id === s.id)
    expect(mine).toEqual({ sink_id: s.id, name: s.name, bytes: 29, batches: 1, rows_accepted: 2, rows_rejected: 0, rate_limited: 0 })
  })

  it('counts 20 concurrent distinct batches once each', async () => {
    const s = await newSink(stack().adminKey)
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => send(s, `[{"x":${i}}]`, { batchId: `b${i}` })))
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(202))
    expect(await intakeObjects(s.id)).toHaveLength(20)
    expect(await poll(async () => (await ledger(db, s.id)).every((r) => r.state === 'pending'))).toBe(true)
    const got = await call(`/v1/sinks/${s.id}`, { key: stack().adminKey })
    const total = answers.reduce((n, a) => n + a.body.bytes, 0)
    expect(got.body.received).toMatchObject({ batches: 20, rows: 20, bytes: total })
    expect(got.body.lag).toMatchObject({ batches_waiting: 20, bytes_waiting: total })
  })
})

describe('the roller’s view, lease and report', () => {
  it('shows the lag, leases to one roller at a time, and marks the reported batches committed', async () => {
    const admin = stack().adminKey
    const secret = stack().bootstrapSecret
    const s = await newSink(admin, { sink: { inactivity_seconds: 600 } })
    const a = await send(s, '[{"x":1},{"x":2},"no"]', { batchId: 'a' })
    const b = await send(s, '[{"x":3}]', { batchId: 'b' })
    await poll(async () => (await ledger(db, s.id)).every((r) => r.state === 'pending'))

    const view = await call(`/internal/sinks?sink=${s.id}`, { key: secret })
    expect(view.status).toBe(200)
    expect(view.body.sinks).toHaveLength(1)
    const table = s.table.split('.')
    expect(view.body.sinks[0]).toMatchObject({
      id: s.id,
      name: s.name,
      state: 'active',
      key: null,
      due: false,
      lease: null,
      dedupe_requested_at: null,
      table: { namespace: table[0], name: table[1] },
      policy: { roll_seconds: 300, roll_bytes: 64 * MiB, inactivity_seconds: 600, max_batches: 1000 },
      lag: { batches: 2, bytes: a.body.bytes + b.body.bytes, oldest_at: a.body.received_at, newest_at: b.body.received_at },
      warehouse: { name: stack().warehouse, bucket: stack().s3.bucket, catalog: { type: 'sql' } },
    })
    expect(view.text).not.toContain(stack().s3.secretAccessKey)
    const lagged = await call(`/v1/sinks/${s.id}`, { key: admin })
    expect(lagged.body.lag).toMatchObject({ batches_waiting: 2, oldest_waiting_at: a.body.received_at })
    expect(lagged.body.received).toEqual({ batches: 2, rows: 3, bytes: a.body.bytes + b.body.bytes, last_at: b.body.received_at, rate_limited: 0 })

    // Past roll_seconds the sink is due.
    await db.query(`update batches set received_at = received_at - interval '400 seconds' where sink_id = $1`, [s.id])
    expect((await call(`/internal/sinks?sink=${s.id}`, { key: secret })).body.sinks[0].due).toBe(true)
    expect((await call(`/v1/sinks/${s.id}`, { key: admin })).body.lag.seconds_behind).toBeGreaterThanOrEqual(400)

    const leaseA = await call(`/internal/sinks?roller=a&force=true&sink=${s.id}`, { key: secret })
    expect(leaseA.body.sinks.map((x: { id: string }) => x.id)).toEqual([s.id])
    expect(leaseA.body.sinks[0].lease).toEqual({ owner: 'a', expires_at: expect.stringMatching(MICROS) })
    expect((await call(`/internal/sinks?roller=b&force=true&sink=${s.id}`, { key: secret })).body.sinks).toEqual([])
    expect((await call(`/internal/sinks?roller=b&sink=${s.id}`, { key: secret })).body.sinks).toEqual([])
    expect((await call(`/internal/sinks?roller=a&force=true&sink=${s.id}`, { key: secret })).body.sinks).toHaveLength(1)

    const snapshot = '9223372036854775807'
    const lastRoll = { at: new Date().toISOString(), batches: 2, rows: 3, rejected_rows: 1, snapshot_id: snapshot, seconds: 1.5 }
    const report = {
      roller: 'a',
      roll_id: 'r1',
      consumed: [{ batch_ids: ['a', 'b'], snapshot_id: snapshot }],
      last_roll: lastRoll,
      rejects: { rows: 1, batches: 1 },
    }
    const res = await call(`/internal/sinks/${s.id}/roll`, { key: secret, json: report })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ok: true, batches_committed: 2 })
    const { rows } = await db.query(
      `select batch_id, state, snapshot_id::text as snapshot_id, committed_at from batches where sink_id = $1 order by batch_id`,
      [s.id],
    )
    expect(rows.map((r) => [r.batch_id, r.state, r.snapshot_id])).toEqual([
      ['a', 'committed', snapshot],
      ['b', 'committed', snapshot],
    ])
    for (const r of rows) expect(r.committed_at).toBeInstanceOf(Date)

    const after = await call(`/v1/sinks/${s.id}`, { key: admin })
    expect(after.body.last_roll).toEqual(lastRoll)
    expect(after.body.rejects).toEqual({
      rows_total: 1,
      batches_with_rejects: 1,
      last_at: expect.stringMatching(MICROS),
      prefix: `s3://${stack().s3.bucket}/_sink/${s.id}/rejects/`,
    })
    expect(after.body.lag).toEqual({ batches_waiting: 0, bytes_waiting: 0, oldest_waiting_at: null, seconds_behind: 0 })
    const audit = await db.query(`select actor, details from audit_events where subject = $1 and action = 'sink.roll'`, [s.id])
    expect(audit.rows).toEqual([{ actor: 'roller:a', details: expect.objectContaining({ roll_id: 'r1', batches_committed: 2 }) }])

    // The lease is released; a repeated report marks nothing; a committed batch is still a duplicate.
    expect((await call(`/internal/sinks?roller=b&force=true&sink=${s.id}`, { key: secret })).body.sinks[0].lease.owner).toBe('b')
    const repeat = await call(`/internal/sinks/${s.id}/roll`, { key: secret, json: { ...report, roller: 'b', last_roll: null, rejects: undefined } })
    expect(repeat.body).toEqual({ ok: true, batches_committed: 0 })
    expect((await call(`/v1/sinks/${s.id}`, { key: admin })).body.rejects.rows_total).toBe(1)
    const dup = await send(s, '[{"x":3}]', { batchId: 'b' })
    expect(dup.status).toBe(200)
    // (received_at as moved back 400 s above)
    expect(dup.body).toEqual({ ...b.body, received_at: expect.stringMatching(MICROS), duplicate: true })
    expect(Date.parse(b.body.received_at) - Date.parse(dup.body.received_at)).toBe(400_000)
  })

  it('checks the roll report: 404 for an unknown sink, 400 for a numeric snapshot id', async () => {
    const secret = stack().bootstrapSecret
    expectError(await call('/internal/sinks/snk_00000000deadbeef/roll', { key: secret, json: { roller: 'a', roll_id: 'r' } }), 404, 'sink_not_found')
    // biome-ignore lint/correctness/noPrecisionLoss: the number a careless client sends (the edge must refuse it)
    const bad = { roller: 'a', roll_id: 'r', consumed: [{ batch_ids: ['x'], snapshot_id: 9223372036854775807 }] }
    expectError(await call(`/internal/sinks/${sink.id}/roll`, { key: secret, json: bad }), 400, 'invalid_request')
    expectError(await call(`/internal/sinks?roller=a&lease_seconds=5`, { key: secret }), 400, 'invalid_request')
  })
})
