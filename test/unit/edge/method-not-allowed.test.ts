// A path the app serves, asked with a method it does not serve: 405 method_not_allowed with Allow,
// from the app's own routes (no list kept by hand); a path it does not serve at all stays 404.
import { describe, expect, it } from 'vitest'
import { allowedMethods, createApp } from '../../../edge/app.ts'
import type { Env } from '../../../edge/env.ts'

const env = { DATABASE_URL: 'postgres://x@127.0.0.1:1/x', LHBOX_BOOTSTRAP_SECRET: 's' } as Env

describe('405 method_not_allowed', () => {
  it('answers the envelope with the Allow header, without touching the database', async () => {
    const res = await createApp().request('/healthz', { method: 'PUT' }, env)
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('GET, HEAD')
    expect(await res.json()).toEqual({
      error: { code: 'method_not_allowed', message: '/healthz does not take PUT; it takes GET, HEAD', allow: ['GET', 'HEAD'] },
    })
  })

  it('lists what each path takes, whatever its parameters', async () => {
    const app = createApp()
    const cases: Array<[string, string, string]> = [
      ['DELETE', '/v1/sinks', 'GET, HEAD, POST'],
      ['PUT', '/v1/sinks/snk_0123456789abcdef', 'GET, HEAD, POST, PATCH, DELETE'],
      // A name: every POST /v1/sinks/{x} is the send route (an unknown sink there is 401).
      ['PUT', '/v1/sinks/events_in', 'GET, HEAD, POST, PATCH, DELETE'],
      ['GET', '/v1/sinks/events_in/dedupe', 'POST'],
      ['OPTIONS', '/v1/tables/main.ns.events/docs', 'PATCH'],
      ['POST', '/v1/tables/main.ns.events', 'GET, HEAD'],
      ['PATCH', '/openapi.json', 'GET, HEAD'],
    ]
    for (const [method, path, allow] of cases) {
      const res = await app.request(path, { method }, env)
      expect([method, path, res.status, res.headers.get('allow')]).toEqual([method, path, 405, allow])
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('method_not_allowed')
    }
  })

  it('leaves a path no route serves at 404 not_found, with no Allow', async () => {
    for (const [method, path] of [
      ['GET', '/v1/nothing'],
      ['PUT', '/v1/sinks/a/b/c'],
      ['GET', '/'],
    ]) {
      const res = await createApp().request(path, { method }, env)
      expect(res.status).toBe(404)
      expect(res.headers.get('allow')).toBeNull()
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found')
    }
  })

  it('reads the methods from the router: middleware serves none', () => {
    const app = createApp()
    expect(allowedMethods(app, '/v1/usage')).toEqual(['GET', 'HEAD'])
    expect(allowedMethods(app, '/internal/sinks/snk_1/roll')).toEqual(['POST'])
    expect(allowedMethods(app, '/internal/nothing')).toEqual([])
  })
})
