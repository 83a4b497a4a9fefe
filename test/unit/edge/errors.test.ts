// The one error path, without HTTP servers: ApiError → envelope; anything else → 500 internal, no stack.
import { describe, expect, it, vi } from 'vitest'
import { HTTPException } from 'hono/http-exception'
import { createApp } from '../../../edge/app.ts'
import { ApiError } from '../../../edge/errors.ts'
import type { Env } from '../../../edge/env.ts'

const env = { DATABASE_URL: 'postgres://x@127.0.0.1:1/x', LHBOX_BOOTSTRAP_SECRET: 's' } as Env

describe('onError', () => {
  it('turns an ApiError into the envelope with its status, details and headers', async () => {
    const app = createApp()
    app.get('/t/api', () => {
      throw new ApiError(409, 'sink_exists', 'a sink already feeds this table', { sink_id: 'snk_1' }, { 'Retry-After': '3' })
    })
    const res = await app.request('/t/api', {}, env)
    expect(res.status).toBe(409)
    expect(res.headers.get('retry-after')).toBe('3')
    expect(await res.json()).toEqual({ error: { code: 'sink_exists', message: 'a sink already feeds this table', sink_id: 'snk_1' } })
  })

  it('answers an uncaught error with 500 internal and no stack', async () => {
    const app = createApp()
    app.get('/t/boom', () => {
      throw new Error('secret detail at /work/main/edge/x.ts:12')
    })
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    const res = await app.request('/t/boom', {}, env)
    const text = await res.text()
    expect(res.status).toBe(500)
    expect(JSON.parse(text)).toEqual({ error: { code: 'internal', message: 'an internal error occurred; it has been logged' } })
    expect(text).not.toContain('secret detail')
    expect(log).toHaveBeenCalledOnce()
    log.mockRestore()
  })

  it("maps Hono's HTTPException to the envelope", async () => {
    const app = createApp()
    app.get('/t/http', () => {
      throw new HTTPException(413, { message: 'too big' })
    })
    const res = await app.request('/t/http', {}, env)
    expect(res.status).toBe(413)
    expect(await res.json()).toEqual({ error: { code: 'payload_too_large', message: 'too big' } })
  })
})
