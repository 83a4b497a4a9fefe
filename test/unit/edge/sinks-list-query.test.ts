// GET /v1/sinks's query: the limit the OpenAPI document states is exactly the limit the route takes
// (schemathesis holds the live route to it; this checks every number around the range), and the
// page cursor is opaque base64url that comes back as it went and refuses anything else.
import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { decodeCursor, encodeCursor } from '../../../edge/cursor.ts'
import { openApiDocument } from '../../../edge/openapi/document.ts'
import { ListSinksQuery } from '../../../edge/routes/sinks.ts'

const doc = openApiDocument() as any
const param = (name: string) => doc.paths['/v1/sinks'].get.parameters.find((p: any) => p.name === name)

describe('GET /v1/sinks ?limit=', () => {
  it('documents exactly what the route takes: 1 to 1000, default 100', () => {
    const { schema } = param('limit')
    expect(schema.default).toBe('100')
    const pattern = new RegExp(schema.pattern, 'u')
    const texts = [...Array.from({ length: 1100 }, (_, i) => String(i)), '01', '0100', '1000.0', '1e3', '+5', ' 5', '-1', 'x', '', '10000']
    for (const text of texts) {
      const taken = v.safeParse(ListSinksQuery, { limit: text })
      expect(taken.success, text).toBe(pattern.test(text))
      const n = Number(text)
      expect(taken.success, text).toBe(/^[0-9]+$/.test(text) && !text.startsWith('0') && n >= 1 && n <= 1000)
      if (taken.success) expect(taken.output.limit).toBe(n)
    }
    expect(v.parse(ListSinksQuery, {}).limit).toBe(100)
  })

  it('documents the cursor and include_deleted beside it', () => {
    expect(param('cursor').schema).toMatchObject({ type: 'string', minLength: 1 })
    expect(param('include_deleted').schema).toMatchObject({ enum: ['true', 'false'] })
    expect(doc.paths['/v1/sinks'].get.responses['200'].content['application/json'].schema.required).toEqual(['sinks', 'next_cursor'])
  })
})

describe('page cursors', () => {
  const Key = v.strictObject({ name: v.string(), n: v.number() })

  it('come back as they went, in URL-safe characters with no padding', () => {
    for (const value of [
      { name: 'a', n: 1 },
      { name: 'é→/+?=', n: 1_700_000_000_123_456 },
      { name: '', n: 0 },
    ]) {
      const text = encodeCursor(value)
      expect(text).toMatch(/^[A-Za-z0-9_-]+$/)
      expect(decodeCursor(Key, text)).toEqual(value)
    }
  })

  it('refuse, as 400 invalid_request, anything a page did not give', () => {
    const b64 = (s: string) => Buffer.from(s).toString('base64url')
    // Not base64url, not UTF-8 (the last), not JSON, not the schema's shape.
    for (const text of [
      '%%%',
      'x',
      b64('[]'),
      b64('{"name":"a"}'),
      b64('{"name":"a","n":1,"x":1}'),
      b64('not json'),
      Buffer.from([0xff, 0xfe, 0x7b]).toString('base64url'),
    ]) {
      try {
        decodeCursor(Key, text)
        expect.unreachable(text)
      } catch (err: any) {
        expect([err.status, err.code, err.message], text).toEqual([400, 'invalid_request', 'cursor: give the next_cursor of a previous page, unchanged'])
      }
    }
  })
})
