// /openapi.json describes every parameter and every status an operation answers (schemathesis checks
// the answers against it in test/integration/api-schema.test.ts; these are the document's own rules).
import { describe, expect, it } from 'vitest'
import { openApiDocument } from '../../../edge/openapi/document.ts'

const doc = openApiDocument() as any
const operations = Object.entries(doc.paths).flatMap(([path, ops]: [string, any]) =>
  Object.entries(ops).map(([method, op]: [string, any]) => ({ path, method, op })),
)

describe('openApiDocument parameters and statuses', () => {
  it('defines every path parameter, as required, on each operation of the path', () => {
    for (const { path, method, op } of operations) {
      const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1])
      const defined = (op.parameters ?? []).filter((p: any) => p.in === 'path')
      expect(
        defined.map((p: any) => [p.name, p.required, typeof p.schema]),
        `${method} ${path}`,
      ).toEqual(names.map((n) => [n, true, 'object']))
    }
  })

  it('takes the send route’s sink id and Idempotency-Key as the route checks them', () => {
    const send = doc.paths['/v1/sinks/{sink_id}'].post
    expect(send.parameters).toEqual([
      expect.objectContaining({ name: 'sink_id', in: 'path', schema: { type: 'string', pattern: '^snk_[0-9a-f]+$' } }),
      expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' } }),
    ])
    const list = doc.paths['/v1/tables'].get.parameters
    expect(list.map((p: any) => [p.name, p.in, p.required ?? false])).toEqual([
      ['warehouse', 'query', true],
      ['namespace', 'query', false],
    ])
  })

  it('documents 400 and 415 wherever a body is taken, and the refusals of each kind of key', () => {
    for (const { path, method, op } of operations) {
      const statuses = Object.keys(op.responses)
      const label = `${method} ${path}`
      if (op.requestBody) expect(statuses, label).toEqual(expect.arrayContaining(['400', '415']))
      const scheme = Object.keys(op.security?.[0] ?? {})[0]
      // POST /mcp refuses a key only with 401 (a tool's refusal, 403 included, is a JSON-RPC result).
      if (path === '/mcp') expect(statuses, label).toEqual(expect.arrayContaining(['401', '503']))
      else if (scheme === 'api_key' || scheme === 'send_key') expect(statuses, label).toEqual(expect.arrayContaining(['401', '403', '503']))
      if (scheme === 'bootstrap') expect(statuses, label).toEqual(expect.arrayContaining(['403', '503']))
      for (const status of statuses.filter((s) => Number(s) >= 400)) {
        expect(op.responses[status].content['application/json'].schema, `${label} ${status}`).toEqual({ $ref: '#/components/schemas/Error' })
      }
    }
  })

  it('gives every success answer a schema, and every $ref a component', () => {
    for (const { path, method, op } of operations) {
      for (const [status, response] of Object.entries(op.responses) as Array<[string, any]>) {
        // A notification to POST /mcp is taken with 202 and no body, as MCP's transport says.
        if (Number(status) < 400 && !(path === '/mcp' && status === '202'))
          expect(response.content?.['application/json']?.schema, `${method} ${path} ${status}`).toBeDefined()
      }
    }
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1])
    expect(refs.length).toBeGreaterThan(0)
    for (const ref of refs) expect(doc.components.schemas[ref], ref).toBeDefined()
  })
})
