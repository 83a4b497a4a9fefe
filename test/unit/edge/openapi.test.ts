// /openapi.json comes from the same valibot schemas that validate requests.
import { describe, expect, it } from 'vitest'
import { openApiDocument } from '../../../edge/openapi/document.ts'

describe('openApiDocument', () => {
  const doc = openApiDocument() as any

  it('is OpenAPI 3.1 with the three kinds of bearer key, and the send key as Basic or ?key= on the device route', () => {
    expect(doc.openapi).toBe('3.1.0')
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['api_key', 'bootstrap', 'send_key', 'send_key_basic', 'send_key_query'])
    const device = doc.paths['/v1/sinks/{sink_id}/devices/{device_id}']
    expect(Object.keys(device).sort()).toEqual(['get', 'post'])
    expect(device.post.security).toEqual([{ send_key: [] }, { send_key_basic: [] }, { send_key_query: [] }])
    expect(device.post.requestBody.required).toBe(false)
    expect(device.get.requestBody).toBeUndefined()
    expect(Object.keys(device.post.responses)).toEqual(expect.arrayContaining(['200', '202', '400', '401', '403', '409', '413', '503']))
  })

  it('derives request bodies from the validating schemas, ranges included', () => {
    const create = doc.paths['/v1/sinks'].post.requestBody.content['application/json'].schema
    expect(create.required).toEqual(['name', 'table', 'warehouse'])
    expect(create.properties.roll_seconds).toMatchObject({ type: 'integer', minimum: 60, default: 300 })
    expect(create.properties.roll_bytes).toMatchObject({ minimum: 32 * 1024 * 1024, maximum: 64 * 1024 * 1024 })
    expect(create.additionalProperties).toBe(false)
    const warehouse = doc.paths['/v1/warehouses'].post.requestBody.content['application/json'].schema
    expect(warehouse.required).toEqual(['name'])
  })

  it('documents the send route with the send key and its statuses', () => {
    const send = doc.paths['/v1/sinks/{sink_id}'].post
    expect(send.security).toEqual([{ send_key: [] }])
    expect(Object.keys(send.responses)).toEqual(expect.arrayContaining(['200', '202', '400', '401', '403', '409', '413', '415', '503']))
    expect(send.responses['413'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' })
  })

  it('takes any element in the send body: one that is not an object is a rejected row (not_an_object), not a refused batch', () => {
    const body = doc.paths['/v1/sinks/{sink_id}'].post.requestBody.content['application/json'].schema
    expect(body.type).toBe('array')
    expect(body.items.type).toBeUndefined()
    expect(body.description).toMatch(/not_an_object/)
    expect(doc.paths['/v1/sinks/{sink_id}'].post.responses['202'].description).toMatch(/not_an_object/)
  })
})
