// The send route when the bucket or the database fails: 503 with Retry-After (or 409 quota_exceeded),
// nothing half-stored (no ledger row, no usage, no object), and the same Idempotency-Key succeeds
// once things are healthy again. The bucket's faults come from a small HTTP proxy in front of the
// stack's real S3 gateway: the warehouse's endpoint is the proxy (the send route PUTs to the warehouse's endpoint).
import { createHash } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEdge, type Edge } from '../support/edge.ts'
import { call, edgeHost, expectError, stack } from '../support/stack.ts'
import { bucket, database, intakeKey, ledger, newProject, newSink, poll, send, usage, type Sink } from '../support/sinks.ts'

type Mode = 'ok' | '503' | 'quota' | 'drop' | 'hold'

interface Proxy {
  url: string
  mode: Mode
  /** The mode after the next intake PUT (then cleared); null: `mode` stays. */
  nextMode: Mode | null
  sinkPuts: number
  /** Resolves when an intake PUT is held (mode 'hold'). */
  held: Promise<void>
  /** Answers every held PUT 503 (the connections it held are released). */
  release(): void
  close(): Promise<void>
}

/**
 * A proxy to the S3 gateway that fails the PUTs under _sink/ as told; everything else passes through. In
 * mode 'hold' an intake PUT gets no answer until release(): a request that waited for it would not be
 * answered before then.
 */
async function faultProxy(target: string): Promise<Proxy> {
  const upstream = new URL(target)
  let heldNow: () => void = () => undefined
  const holding: http.ServerResponse[] = []
  const state = {
    mode: 'ok' as Mode,
    nextMode: null as Mode | null,
    sinkPuts: 0,
    held: new Promise<void>(() => undefined),
  }
  const armHeld = () => {
    state.held = new Promise<void>((r) => {
      heldNow = r
    })
  }
  armHeld()
  const server = http.createServer((req, res) => {
    const intake = req.method === 'PUT' && (req.url ?? '').includes('/_sink/')
    const mode = intake ? state.mode : 'ok'
    if (intake) {
      state.sinkPuts++
      if (state.nextMode !== null) {
        state.mode = state.nextMode
        state.nextMode = null
      }
    }
    if (mode === 'drop') return req.socket.destroy()
    if (mode === 'hold') {
      req.resume()
      holding.push(res)
      heldNow()
      return
    }
    if (mode === '503' || mode === 'quota') {
      req.resume()
      req.on('end', () => {
        const [status, code] = mode === '503' ? [503, 'ServiceUnavailable'] : [403, 'QuotaExceeded']
        res.writeHead(status, { 'content-type': 'application/xml' })
        res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>refused by the fault proxy</Message></Error>`)
      })
      return
    }
    // Host is forwarded unchanged: it is part of the SigV4 signature the gateway checks.
    const out = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers)
      up.pipe(res)
    })
    out.on('error', () => res.destroy())
    req.pipe(out)
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as AddressInfo).port
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    release: () => {
      for (const res of holding.splice(0)) {
        res.writeHead(503, { 'content-type': 'application/xml' })
        res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>ServiceUnavailable</Code><Message>held by the fault proxy</Message></Error>')
      }
      armHeld()
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  })
}

let db: pg.Client
let proxy: Proxy
let project: { key: string; warehouse: string }
let sink: Sink

beforeAll(async () => {
  db = await database()
  proxy = await faultProxy(stack().s3.endpoint)
  project = await newProject({ endpoint: proxy.url })
  sink = await newSink(project.key, { tableSpec: { warehouse: project.warehouse }, sink: { warehouse: project.warehouse } })
})
afterAll(async () => {
  await proxy?.close()
  await db?.end()
})

/** The project's usage totals and this sink's lag/received, to compare before and after. */
async function counters(): Promise<unknown> {
  const u = await usage(project.key)
  const got = await call(`/v1/sinks/${sink.id}`, { key: project.key })
  return {
    usage: { month_to_date: u.month_to_date, batches: u.batches, rows_accepted: u.rows_accepted, rows_rejected: u.rows_rejected },
    lag: { batches: got.body.lag.batches_waiting, bytes: got.body.lag.bytes_waiting },
    received: got.body.received,
  }
}

/**
 * With the proxy in `mode`, a send of a new batch answers `status code`, and nothing of it is stored
 * anywhere (no ledger row, no object, usage and lag unchanged); with the proxy healthy again, the
 * same Idempotency-Key is a new batch: 202, not a duplicate.
 */
async function failThenRetry(mode: Mode, batchId: string, status: number, code: string) {
  const before = await counters()
  const puts = proxy.sinkPuts
  proxy.mode = mode
  const res = await send(sink, '[{"x":1}]', { batchId })
  proxy.mode = 'ok'
  expectError(res, status, code)
  expect(proxy.sinkPuts).toBeGreaterThan(puts)
  expect((await ledger(db, sink.id)).filter((r) => r.batch_id === batchId)).toEqual([])
  expect(await bucket().head(intakeKey(sink.id, batchId))).toBeNull()
  expect(await counters()).toEqual(before)

  const retry = await send(sink, '[{"x":1}]', { batchId })
  expect(retry.status).toBe(202)
  expect(retry.body).toEqual({ accepted: 1, rejected: 0, reasons: [], batch_id: batchId, bytes: 8, received_at: expect.any(String), state: 'pending' })
  const got = await bucket().get(intakeKey(sink.id, batchId))
  expect(Buffer.from(got!.body).toString()).toBe('{"x":1}\n')
  expect(got!.head.metadata.received).toBe(retry.body.received_at)
  expect(await poll(async () => (await ledger(db, sink.id)).find((r) => r.batch_id === batchId)?.state === 'pending', 15_000, `${batchId} pending`)).toBe(true)
  const after = (await counters()) as { usage: { batches: number; month_to_date: number } }
  expect(after.usage.batches).toBe((before as typeof after).usage.batches + 1)
  expect(after.usage.month_to_date).toBe((before as typeof after).usage.month_to_date + 8)
  return res
}

describe('a bucket that fails the PUT', () => {
  it('answers 503 unavailable with Retry-After when the bucket answers 503; stores nothing; the retry is a 202', async () => {
    const res = await failThenRetry('503', 'b503', 503, 'unavailable')
    expect(res.body.error.failed).toEqual(['bucket'])
    expect(res.headers.get('retry-after')).toBe('5')
  }, 30_000)

  it('answers a bucket 503 promptly, after one PUT', async () => {
    // The first PUT is answered 503 at once; any later one is held with no answer. An edge that tried
    // the bucket again (or waited on it) before answering could not answer before the release.
    proxy.mode = '503'
    proxy.nextMode = 'hold'
    const before = proxy.sinkPuts
    const sent = send(sink, '[{"x":1}]', { batchId: 'b503-prompt' })
    try {
      const first = await Promise.race([sent.then((res) => ({ res })), proxy.held.then(() => ({ res: null }))])
      expect(first.res, 'the edge sent the bucket another PUT (held, unanswered) before answering').not.toBeNull()
      expectError(first.res!, 503, 'unavailable')
      expect(first.res!.headers.get('retry-after')).toBe('5')
      expect(proxy.sinkPuts - before).toBe(1)
    } finally {
      proxy.mode = 'ok'
      proxy.nextMode = null
      proxy.release()
      await sent.catch(() => undefined)
    }
  })

  it('answers 409 quota_exceeded when the bucket refuses for quota; stores nothing; the retry is a 202', async () => {
    const res = await failThenRetry('quota', 'bquota', 409, 'quota_exceeded')
    expect(res.headers.get('retry-after')).toBeNull()
  })

  it('answers 503 when the connection to the bucket drops; stores nothing; the retry is a 202', async () => {
    const res = await failThenRetry('drop', 'bdrop', 503, 'unavailable')
    expect(res.body.error.failed).toEqual(['bucket'])
    expect(res.headers.get('retry-after')).toBe('5')
  })

  it('stores a batch again when its ledger row is still receiving (a Worker that died after the insert)', async () => {
    const body = '[{"x":42}]'
    const sha = createHash('sha256').update(body).digest('hex')
    const { rows } = await db.query(
      `insert into batches (sink_id, batch_id, body_sha256, bytes, rows, rejected, reasons, received_at, state)
       values ($1, 'orphan', $2, 9, 1, 0, '[]', date_trunc('microseconds', now() - interval '1 minute'), 'receiving')
       returning to_char(received_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at`,
      [sink.id, sha],
    )
    expect(await bucket().head(intakeKey(sink.id, 'orphan'))).toBeNull()
    const res = await send(sink, body, { batchId: 'orphan' })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      accepted: 1,
      rejected: 0,
      reasons: [],
      batch_id: 'orphan',
      bytes: 9,
      received_at: rows[0].at,
      state: 'pending',
      duplicate: true,
    })
    const got = await bucket().get(intakeKey(sink.id, 'orphan'))
    expect(Buffer.from(got!.body).toString()).toBe('{"x":42}\n')
    expect(got!.head.metadata).toMatchObject({ received: rows[0].at, rows: '1', sink: sink.id })
    expect(await poll(async () => (await ledger(db, sink.id)).find((r) => r.batch_id === 'orphan')?.state === 'pending', 15_000, 'orphan pending')).toBe(true)
  })
})

describe('a database that is down', () => {
  let worker: Edge
  beforeAll(async () => {
    worker = await startEdge(edgeHost(), {}, { databaseDown: true })
  }, 180_000)
  afterAll(async () => {
    await worker?.stop()
  })

  it('answers the send route 503 unavailable (database) with Retry-After, stores nothing; the retry then succeeds', async () => {
    proxy.mode = 'ok'
    const before = proxy.sinkPuts
    const res = await fetch(`${worker.url}/v1/sinks/${sink.id}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sink.sendKey}`, 'idempotency-key': 'dbdown', 'content-type': 'application/json' },
      body: '[{"x":7}]',
    })
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBe('5')
    const text = await res.text()
    expect(JSON.parse(text).error).toMatchObject({ code: 'unavailable', failed: ['database'], message: expect.any(String) })
    expect(text).not.toMatch(/\n\s+at\s/)
    expect(proxy.sinkPuts).toBe(before)
    expect(await bucket().head(intakeKey(sink.id, 'dbdown'))).toBeNull()
    expect((await ledger(db, sink.id)).filter((r) => r.batch_id === 'dbdown')).toEqual([])

    const retry = await send(sink, '[{"x":7}]', { batchId: 'dbdown' })
    expect(retry.status).toBe(202)
    expect(retry.body).not.toHaveProperty('duplicate')
    expect(await bucket().head(intakeKey(sink.id, 'dbdown'))).not.toBeNull()
  })

  it('answers the control plane 503 too', async () => {
    for (const [path, init] of [
      ['/v1/sinks', {}],
      [`/v1/sinks/${sink.id}`, {}],
      ['/v1/usage', {}],
      ['/v1/sinks', { method: 'POST', body: JSON.stringify({ name: 'x', table: 'a.b', warehouse: 'main' }), headers: { 'content-type': 'application/json' } }],
    ] as const) {
      const res = await fetch(`${worker.url}${path}`, {
        ...init,
        headers: { ...(init as { headers?: object }).headers, authorization: `Bearer ${project.key}` },
      })
      expect({ path, status: res.status, retry: res.headers.get('retry-after') }).toEqual({ path, status: 503, retry: '5' })
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unavailable')
    }
  })
})
