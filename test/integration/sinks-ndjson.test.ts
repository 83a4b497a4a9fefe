// NDJSON bodies on the send route (issue 30, part 1): Content-Type application/x-ndjson or
// application/jsonl, one element a line, every other rule as for a JSON array; rows read back with
// PyIceberg after a roll.
//
// The producer here is a Node client that frames a batch exactly as Vector's `http` sink does with
// `encoding.codec = "json"` and `framing.method = "newline_delimited"` (no Vector binary is packaged
// on this machine's registries). Vector's documentation of that sink
// (https://vector.dev/docs/reference/configuration/sinks/http/) and its source say what goes out:
// - src/sinks/http/config.rs: Content-Type `application/x-ndjson` for the json serializer with
//   newline_delimited framing; `Content-Encoding: gzip` with `compression = "gzip"`; the token of
//   `auth.strategy = "bearer"` as Authorization; `request.headers` as given (the Idempotency-Key here);
// - src/sinks/http/encoder.rs: each event serialized as one JSON object followed by '\n', then the
//   batch's trailing newline removed ("for backwards-compatibility with Vector 0.20.x").
import { createHash } from 'node:crypto'
import { gzipSync } from 'node:zlib'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { expectExactlyOnce, scan, rollerSetup, SETUP_TIMEOUT } from '../support/roller-check.ts'
import { tickInProcess } from '../support/roller.ts'
import { bucket, bytes, intakeKey, ledger, newSink, send, uid, type Sink } from '../support/sinks.ts'
import { call, expectError, stack, type Answer } from '../support/stack.ts'

const MiB = 1024 * 1024
const LIMIT = 16 * MiB

/** One request of Vector's http sink (json codec, newline_delimited framing), `compression` none or gzip. */
function vectorRequest(
  sink: Sink,
  events: Array<Record<string, unknown>>,
  opts: { compression?: 'none' | 'gzip'; batchId?: string | null } = {},
): Promise<Answer> {
  let body = events.map((e) => `${JSON.stringify(e)}\n`).join('')
  body = body.slice(0, -1) // the encoder drops the batch's last '\n'
  // batchId null: no Idempotency-Key, as Vector sends without a request.headers entry.
  const headers: Record<string, string> = { 'content-type': 'application/x-ndjson' }
  if (opts.batchId !== null) headers['idempotency-key'] = opts.batchId ?? `vector-${uid()}`
  const gzip = opts.compression === 'gzip'
  if (gzip) headers['content-encoding'] = 'gzip'
  return call(`/v1/sinks/${sink.id}`, { method: 'POST', key: sink.sendKey, headers, body: gzip ? new Uint8Array(gzipSync(body)) : body })
}

/** POST of NDJSON text as any client would (the send helper with another Content-Type). */
const sendLines = (sink: Sink, text: string | Uint8Array, opts: { batchId?: string | null; type?: string; headers?: Record<string, string> } = {}) =>
  send(sink, text, { batchId: opts.batchId, headers: { 'content-type': opts.type ?? 'application/x-ndjson', ...opts.headers } })

const stored = async (sink: Sink, batchId: string) => {
  const got = await bucket().get(intakeKey(sink.id, batchId))
  return got ? Buffer.from(got.body).toString('utf8') : null
}

let db: pg.Client
let whId: string
beforeAll(async () => ({ db, whId } = await rollerSetup()), SETUP_TIMEOUT)
afterAll(() => db?.end())

describe('a log shipper’s NDJSON, rolled and read back', () => {
  let sink: Sink
  const answers: Answer[] = []
  beforeAll(async () => {
    sink = await newSink(stack().adminKey)
    // Vector, gzip and not: its batches end without a newline.
    answers.push(
      await vectorRequest(
        sink,
        [
          { x: 1, who: 'vector' },
          { x: 2, who: 'vector' },
        ],
        { compression: 'gzip' },
      ),
    )
    answers.push(await vectorRequest(sink, [{ x: 3 }]))
    // Mixed bad lines: elements that are no objects (rejected at the edge), a row that does not fit the
    // schema (rejected by the roll); blank lines and CRLF between them.
    answers.push(await sendLines(sink, '{"x":4,"who":"crlf"}\r\n\r\n[5]\n"six"\n\n{"x":"seven"}\n{"x":8}\n   \n42', { batchId: 'mixed' }))
    answers.push(await sendLines(sink, '{"x":9}\n', { type: 'application/jsonl; charset=utf-8', batchId: 'jsonl' }))
  }, 120_000)

  it('answers each batch as an array’s: 202, accepted and rejected with the lines’ indexes', () => {
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202])
    expect(answers[0].body).toMatchObject({ accepted: 2, rejected: 0, reasons: [], state: 'pending', bytes: 46 })
    expect(answers[2].body).toMatchObject({
      batch_id: 'mixed',
      accepted: 3,
      rejected: 3,
      reasons: [
        { index: 1, reason: 'not_an_object' },
        { index: 2, reason: 'not_an_object' },
        { index: 5, reason: 'not_an_object' },
      ],
    })
    expect(answers[3].body).toMatchObject({ batch_id: 'jsonl', accepted: 1 })
  })

  it('stores exactly what the same elements sent as an array store', async () => {
    const asArray = await send(sink, '[{"x":4,"who":"crlf"},[5],"six",{"x":"seven"},{"x":8},42]', { batchId: 'mixed-as-array' })
    expect(asArray.status).toBe(202)
    expect(await stored(sink, 'mixed')).toBe(await stored(sink, 'mixed-as-array'))
    expect(await stored(sink, 'mixed')).toBe('{"x":4,"who":"crlf"}\n[5]\n"six"\n{"x":"seven"}\n{"x":8}\n42\n')
    expect(await stored(sink, answers[0].body.batch_id)).toBe('{"x":1,"who":"vector"}\n{"x":2,"who":"vector"}\n')
    // The array's copy is rolled too: the readback below counts 4 and 8 twice.
  })

  it('rolls them: PyIceberg reads the good rows; the rejects say why the others were not', async () => {
    const t = await tickInProcess({ sink: sink.id })
    expect(t.code, t.stdout + t.stderr).toBe(0)
    const s = await scan({ sql: whId }, sink.table)
    expectExactlyOnce(s, [1, 2, 3, 4, 4, 8, 8, 9])
    expect(s.rows.filter((r) => r.who !== null).map((r) => [Number(r.x), r.who])).toEqual([
      [1, 'vector'],
      [2, 'vector'],
      [4, 'crlf'],
      [4, 'crlf'],
    ])
    const rejects = await call(`/v1/sinks/${sink.id}/rejects?batch_id=mixed`, { key: stack().adminKey })
    rejects.body.rejects.sort((a: any, b: any) => a.index - b.index)
    expect(rejects.body.rejects.map((r: any) => [r.index, r.reason])).toEqual([
      [1, 'not_an_object'],
      [2, 'not_an_object'],
      [3, 'type_mismatch'],
      [5, 'not_an_object'],
    ])
    expect(rejects.body.rejects[0].row).toEqual([5])
    expect((await ledger(db, sink.id)).every((r) => r.state === 'committed')).toBe(true)
  })
})

describe('the rules an array has', () => {
  let sink: Sink
  beforeAll(async () => {
    sink = await newSink(stack().adminKey)
  })

  it('Idempotency-Key: the same lines again are a duplicate; other bytes under the key are 409', async () => {
    const first = await sendLines(sink, '{"x":1}\n{"x":2}', { batchId: 'again' })
    expect(first.status).toBe(202)
    const again = await sendLines(sink, '{"x":1}\n{"x":2}', { batchId: 'again' })
    expect(again.status).toBe(200)
    expect(again.body).toMatchObject({ duplicate: true, accepted: 2, batch_id: 'again', received_at: first.body.received_at })
    expectError(await sendLines(sink, '{"x":1}\n{"x":2}\n', { batchId: 'again' }), 409, 'idempotency_key_reused')
    expectError(await sendLines(sink, '{"x":1}', { batchId: '' }), 400, 'invalid_idempotency_key')
    // An array still needs one.
    expectError(await send(sink, '[{"x":1}]', { batchId: null }), 400, 'invalid_idempotency_key')
  })

  it('without an Idempotency-Key (Vector cannot set one a batch) the batch id is the body’s hash: a retry is a duplicate', async () => {
    const events = [
      { x: 11, msg: 'a' },
      { x: 12, msg: 'b' },
    ]
    const first = await vectorRequest(sink, events, { batchId: null })
    expect(first.status, first.text).toBe(202)
    const text = `${events.map((e) => JSON.stringify(e)).join('\n')}`
    const id = `ndjson:${createHash('sha256').update(text).digest('hex')}`
    expect(first.body).toMatchObject({ batch_id: id, accepted: 2 })
    // Vector retries with the same bytes, gzipped or not (the hash is of what was sent, decompressed): stored once.
    const retry = await vectorRequest(sink, events, { batchId: null, compression: 'gzip' })
    expect(retry.status).toBe(200)
    expect(retry.body).toMatchObject({ duplicate: true, batch_id: id, received_at: first.body.received_at })
    expect(await stored(sink, id)).toBe(`${text}\n`)
    // Other lines are another batch.
    const other = await vectorRequest(sink, [{ x: 13 }], { batchId: null })
    expect(other.status).toBe(202)
    expect(other.body.batch_id).not.toBe(id)
    expect((await ledger(db, sink.id)).filter((b) => b.batch_id.startsWith('ndjson:'))).toHaveLength(2)
  })

  it('16 MiB of lines are taken, one byte more is 413, and gzip is measured decompressed', async () => {
    const line = (n: number) => `{"p":"${'a'.repeat(n - 8)}"}` // n bytes
    const ok = await sendLines(sink, line(LIMIT), { batchId: 'limit' })
    expect(ok.status).toBe(202)
    expect(ok.body).toMatchObject({ accepted: 1, bytes: LIMIT + 1 }) // the stored line's '\n' counts, as for an array
    const res = await sendLines(sink, `${line(LIMIT)}\n`, { batchId: 'over' })
    expectError(res, 413, 'payload_too_large')
    expect(res.body.error.limit).toBe(LIMIT)
    expect(await bucket().head(intakeKey(sink.id, 'over'))).toBeNull()
    const bomb = new Uint8Array(gzipSync('{"x":1}\n'.repeat(LIMIT / 8 + 1)))
    expect(bomb.byteLength).toBeLessThan(MiB)
    expectError(await sendLines(sink, bomb, { batchId: 'bomb', headers: { 'content-encoding': 'gzip' } }), 413, 'payload_too_large')
    expectError(await sendLines(sink, bytes('not gzip'), { headers: { 'content-encoding': 'gzip' } }), 400, 'malformed_gzip')
  })

  it('a malformed line is 400 malformed_json at its byte; nothing of the batch is stored', async () => {
    const cases: Array<[string, number]> = [
      ['{"x":1}\n{"x":\n2}\n', 13], // a line break inside an element
      ['{"x":1} {"x":2}\n', 8], // two elements on a line
      ['{"x":1},\n{"x":2}\n', 7], // an array's comma
      ['{"x":1}\n{"x":', 13], // cut short
      ['\n', -1], // only blank lines: nothing to store, as for []
    ]
    for (const [body, offset] of cases) {
      const batchId = `bad-${uid()}`
      const res = await sendLines(sink, body, { batchId })
      if (offset < 0) {
        expect(res.status).toBe(202)
        expect(res.body).toMatchObject({ accepted: 0, rejected: 0 })
        continue
      }
      expectError(res, 400, 'malformed_json')
      expect(res.body.error.offset).toBe(offset)
      expect(await bucket().head(intakeKey(sink.id, batchId))).toBeNull()
    }
    expectError(await sendLines(sink, '', { batchId: 'empty' }), 400, 'malformed_json')
  })

  it('takes no other Content-Type', async () => {
    for (const type of ['application/ndjson-x', 'text/plain', 'application/json-seq']) {
      expectError(await sendLines(sink, '{"x":1}', { type }), 415, 'unsupported_media_type')
    }
  })
})
