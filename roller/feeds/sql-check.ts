// POST /sql/check on the roller's port: the edge's create and PATCH ask DuckDB's parser whether a query is
// one SELECT (the Worker cannot hold DuckDB). Guarded by the bootstrap secret, like /internal on the edge.
import { timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import * as v from 'valibot'
import { SqlCheck, type SqlCheckAnswer } from '../../contract/internal.ts'
import { checkQuery } from './sql.ts'

const MAX_BODY = 256 * 1024

export function sqlCheckHandler(bootstrapSecret: string): (req: IncomingMessage, res: ServerResponse) => void {
  const expected = Buffer.from(`Bearer ${bootstrapSecret}`)
  const answer = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(JSON.stringify(body))
  }
  return (req, res) => {
    const given = Buffer.from(req.headers.authorization ?? '')
    if (req.method !== 'POST') return answer(res, 405, { error: { code: 'method_not_allowed', message: 'POST /sql/check {query}' } })
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      return answer(res, 401, { error: { code: 'unauthorized', message: 'the bootstrap secret is required' } })
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (c: Buffer) => {
      size += c.length
      if (size <= MAX_BODY) chunks.push(c)
    })
    req.on('end', async () => {
      let query: string
      try {
        if (size > MAX_BODY) throw new Error('too large')
        query = v.parse(SqlCheck, JSON.parse(Buffer.concat(chunks).toString('utf8'))).query
      } catch {
        return answer(res, 400, { error: { code: 'invalid_request', message: 'send {"query": "<one SELECT>"}' } })
      }
      try {
        const error = await checkQuery(query)
        answer(res, 200, { ok: error === null, error } satisfies SqlCheckAnswer)
      } catch (err) {
        answer(res, 503, { error: { code: 'unavailable', message: `DuckDB did not start: ${(err as Error).message}` } })
      }
    })
  }
}
