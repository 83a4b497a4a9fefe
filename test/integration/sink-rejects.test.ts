// GET /v1/sinks/{id}/rejects and `lhbox sink rejects` (issue 16): the rows the roller rejected, a page
// at a time across the sink's rejects files, filtered by reason or batch, each as the roller wrote it
// with the producer's row byte for byte (a number too large for a double stays as sent).
import { beforeAll, describe, expect, it } from 'vitest'
import { lhbox } from '../support/cli.ts'
import { tickInProcess } from '../support/roller.ts'
import { rejectsKey } from '../../contract/bucket.ts'
import { rejectLine } from '../../roller/rejects.ts'
import { bucket, newProject, newSink, send, type Sink } from '../support/sinks.ts'
import { call, expectError, newApiKey, stack } from '../support/stack.ts'

let sink: Sink
// What the roller is expected to reject, in the order the route gives it (files in key order).
const BAD_A = ['{"x":"seven"}', '{"x":12345678901234567890123}', '{"who":"no x"}']
const BAD_B = ['{"x":1,"extra":true}', '[1,2]']

beforeAll(async () => {
  sink = await newSink(stack().adminKey)
  expect((await send(sink, `[{"x":1},${BAD_A.join(',')},{"x":2}]`, { batchId: 'batch-a' })).status).toBe(202)
  expect((await send(sink, `[${BAD_B.join(',')},{"x":3}]`, { batchId: 'batch-b' })).status).toBe(202)
  const tick = await tickInProcess({ sink: sink.id })
  expect(tick.code, tick.stdout).toBe(0)
  expect(tick.logs.some((l) => l.msg === 'rolled')).toBe(true)
}, 120_000)

const rejects = (query = '', key = stack().adminKey) => call(`/v1/sinks/${sink.id}/rejects${query}`, { key })

/** The producer's row of each line, cut from the answer's text (never parsed). */
const rowsIn = (text: string): string[] => [...text.matchAll(/,"row":(.*?)\}(?=,\{"batch_id"|\],"next_cursor")/g)].map((m) => m[1])

describe('GET /v1/sinks/{id}/rejects', () => {
  it('answers every rejected row with its reason, field, batch and index, and the row as it was sent', async () => {
    const res = await rejects()
    expect(res.status, res.text).toBe(200)
    expect(res.body.next_cursor).toBeNull()
    expect(res.body.rejects.map((r: any) => [r.batch_id, r.index, r.reason, r.field ?? null])).toEqual([
      ['batch-a', 1, 'type_mismatch', 'x'],
      ['batch-a', 2, 'type_mismatch', 'x'],
      ['batch-a', 3, 'missing_required', 'x'],
      ['batch-b', 0, 'unknown_field', 'extra'],
      ['batch-b', 1, 'not_an_object', null],
    ])
    expect(res.body.rejects[0]).toMatchObject({ expected: 'long', got: expect.stringContaining('seven') })
    expect(rowsIn(res.text)).toEqual([...BAD_A, ...BAD_B])
  })

  it('pages with limit and cursor: the pages together are the whole list, once each', async () => {
    const whole = (await rejects()).body.rejects
    const seen: unknown[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const page = await rejects(`?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
      expect(page.status, page.text).toBe(200)
      expect(page.body.rejects.length).toBeLessThanOrEqual(2)
      seen.push(...page.body.rejects)
      cursor = page.body.next_cursor
      pages++
    } while (cursor && pages < 10)
    expect(seen).toEqual(whole)
    expect(pages).toBeGreaterThanOrEqual(3)
  })

  it('filters by reason (any of a row’s problems) and by batch', async () => {
    const mismatched = await rejects('?reason=type_mismatch')
    expect(mismatched.body.rejects.map((r: any) => r.index)).toEqual([1, 2])
    expect(rowsIn(mismatched.text)).toEqual(BAD_A.slice(0, 2))
    expect((await rejects('?reason=key_null')).body).toEqual({ rejects: [], next_cursor: null })
    const b = await rejects('?batch_id=batch-b')
    expect(b.body.rejects.map((r: any) => r.reason)).toEqual(['unknown_field', 'not_an_object'])
    expect((await rejects('?batch_id=no-such-batch')).body).toEqual({ rejects: [], next_cursor: null })
    const paged = await rejects('?batch_id=batch-a&limit=1')
    const next = await rejects(`?batch_id=batch-a&limit=2&cursor=${paged.body.next_cursor}`)
    expect([...paged.body.rejects, ...next.body.rejects].map((r: any) => r.index)).toEqual([1, 2, 3])
  })

  it('answers 400 for an unknown reason, a bad limit or a cursor no page gave', async () => {
    expectError(await rejects('?reason=bad_mood'), 400, 'invalid_request')
    expectError(await rejects('?limit=0'), 400, 'invalid_request')
    expectError(await rejects('?limit=1001'), 400, 'invalid_request')
    expectError(await rejects('?batch_id=a%20b'), 400, 'invalid_request')
    expectError(await rejects('?cursor=not-a-cursor'), 400, 'invalid_request')
    expectError(await rejects(`?cursor=${btoa('{"batch":"a","line":-1}')}`), 400, 'invalid_request')
  })

  it('levels and projects: a read key looks; a send key (403 send_only), no key or another project’s key is refused', async () => {
    expect((await rejects('', await newApiKey('read'))).status).toBe(200)
    expectError(await rejects('', sink.sendKey), 403, 'send_only')
    expect((await call(`/v1/sinks/${sink.id}/rejects`)).status).toBe(401)
    expectError(await rejects('', (await newProject()).key), 404, 'sink_not_found')
    expectError(await call('/v1/sinks/snk_000000000000/rejects', { key: stack().adminKey }), 404, 'sink_not_found')
  })
})

describe('a filter that matches little', () => {
  it('reads at most 200 files a request: a short page with a cursor, and the match on a later page', async () => {
    const other = await newSink(stack().adminKey)
    // 205 rejects files as the roller writes them; only the last (in key order) holds a key_null row.
    const files = Array.from({ length: 205 }, (_, i) => `f${String(i).padStart(3, '0')}`)
    for (let i = 0; i < files.length; i += 25) {
      await Promise.all(
        files.slice(i, i + 25).map((b) => {
          const reason = b === 'f204' ? 'key_null' : 'type_mismatch'
          return bucket().put(rejectsKey(other.id, b), `${rejectLine(b, 0, 0, [{ reason, field: 'x' }], '{"x":null}')}\n`)
        }),
      )
    }
    const first = await call(`/v1/sinks/${other.id}/rejects?reason=key_null`, { key: stack().adminKey })
    expect(first.body.rejects).toEqual([])
    expect(first.body.next_cursor).toEqual(expect.any(String))
    const second = await call(`/v1/sinks/${other.id}/rejects?reason=key_null&cursor=${first.body.next_cursor}`, { key: stack().adminKey })
    expect(second.body.rejects.map((r: any) => r.batch_id)).toEqual(['f204'])
    expect(second.body.next_cursor).toBeNull()
  })
})

describe('lhbox sink rejects', () => {
  it('prints a table of the roller’s fields, and with --json the page as the API answered it', async () => {
    const shown = await lhbox(['sink', 'rejects', sink.name, '--reason', 'type_mismatch'])
    expect(shown.code, shown.stderr).toBe(0)
    const lines = shown.stdout.trim().split('\n')
    expect(lines[0]).toMatch(/^BATCH_ID\s+INDEX\s+REASON\s+FIELD\s+EXPECTED\s+GOT$/)
    expect(lines.slice(1).map((l) => l.split(/\s+/).slice(0, 5))).toEqual([
      ['batch-a', '1', 'type_mismatch', 'x', 'long'],
      ['batch-a', '2', 'type_mismatch', 'x', 'long'],
    ])
    const raw = await lhbox(['sink', 'rejects', sink.name, '--json'])
    expect(raw.code, raw.stderr).toBe(0)
    expect(raw.stdout.trim()).toBe((await rejects()).text)
    expect(raw.stdout).toContain('"row":{"x":12345678901234567890123}')
    const more = await lhbox(['sink', 'rejects', sink.name, '--limit', '1', '--reason', 'type_mismatch'])
    const hint = /\nmore: (lhbox sink rejects .+)$/.exec(more.stdout.trim())
    expect(hint?.[1]).toMatch(/^lhbox sink rejects \S+ --cursor \S+ --reason type_mismatch --limit 1$/)
    // The hint, run as printed, gives the next page.
    const next = await lhbox(hint![1].split(' ').slice(1))
    expect(next.stdout.split('\n')[1].split(/\s+/).slice(0, 3)).toEqual(['batch-a', '2', 'type_mismatch'])
  })
})
