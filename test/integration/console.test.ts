// The console's own routes over HTTP (issue 16): the shell and its assets under a strict CSP, and the
// views (/console/f/…) with the API's rules: levels, projects, the error envelope, HTML escaped.
import { beforeAll, describe, expect, it } from 'vitest'
import { tickInProcess } from '../support/roller.ts'
import { newProject, newSink, send, type Sink } from '../support/sinks.ts'
import { call, expectError, newApiKey } from '../support/stack.ts'

let owner: { project: string; key: string; warehouse: string }
let sink: Sink
// A rejected row whose text is markup: a view must show it, never run it.
const MARKUP = '{"x":"<img src=x onerror=alert(1)>","who":"</code><script>alert(2)</script>"}'

beforeAll(async () => {
  owner = await newProject()
  sink = await newSink(owner.key, { tableSpec: { warehouse: owner.warehouse, namespace: 'console' }, sink: { warehouse: owner.warehouse } })
  expect((await send(sink, `[{"x":1,"who":"a"},${MARKUP}]`, { batchId: 'b-1' })).status).toBe(202)
  const tick = await tickInProcess({ sink: sink.id })
  expect(tick.code, tick.stdout).toBe(0)
}, 120_000)

const view = (path: string, key?: string) => call(`/console/f${path}`, { key })

describe('the shell', () => {
  it('is one document with no data, under a CSP that allows only this origin’s script and styles', async () => {
    const res = await call('/console')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^text\/html/)
    const csp = res.headers.get('content-security-policy') ?? ''
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("style-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).not.toContain('unsafe-inline')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(res.text.startsWith('<!doctype html>')).toBe(true)
    // No inline script or style anywhere: every script is the one file.
    expect(res.text.match(/<script[^>]*>/g)).toEqual(['<script src="/console/console.js" defer="">'])
    expect(res.text).not.toMatch(/ style=|<style/)
    const js = await call('/console/console.js')
    expect(js.headers.get('content-type')).toMatch(/^text\/javascript/)
    expect(js.text).toContain('sessionStorage')
    expect((await call('/console/console.css')).headers.get('content-type')).toMatch(/^text\/css/)
  })
})

describe('the views', () => {
  it('answer HTML to a read key: the overview lists the project’s sinks, each view its part', async () => {
    const read = await newApiKey('read', owner.project)
    const overview = await view('/overview', read)
    expect(overview.status).toBe(200)
    expect(overview.headers.get('content-type')).toMatch(/^text\/html/)
    expect(overview.headers.get('cache-control')).toBe('no-store')
    expect(overview.text).toContain(`href="#/sinks/${sink.id}"`)
    expect(overview.text).toContain(`${owner.warehouse}.${sink.table}`)
    const page = await view(`/sinks/${sink.id}`, read)
    expect(page.status).toBe(200)
    expect(page.text).toContain('id="rolls"')
    // The roll in the last day's chart: one good row committed, one rejected.
    expect(page.text).toContain('rows (max 1)')
    expect(page.text).toContain('rejected (max 1)')
    expect(page.text).not.toContain('id="actions"')
    const rejects = await view(`/sinks/${sink.id}/rejects?reason=type_mismatch`, read)
    expect(rejects.status).toBe(200)
    expect(rejects.text).toContain('type_mismatch')
    expect((await view(`/tables/${owner.warehouse}.${sink.table}`, read)).text).toContain('id="schema"')
    expect((await view('/usage', read)).text).toContain(sink.name)
  })

  it('show a write key the actions', async () => {
    const page = await view(`/sinks/${sink.id}`, await newApiKey('write', owner.project))
    expect(page.text).toContain('id="actions"')
    expect(page.text).toContain(`data-path="/v1/sinks/${sink.id}"`)
  })

  it('escape what producers sent: a rejected row of markup is text', async () => {
    const res = await view(`/sinks/${sink.id}/rejects`, owner.key)
    expect(res.status).toBe(200)
    expect(res.text).not.toContain('<img src=x')
    expect(res.text).not.toContain('<script>alert')
    expect(res.text).toContain('&lt;img src=x onerror=alert(1)&gt;')
  })

  it('refuse as the API does: no key or a wrong one 401, a send key 403 send_only, another project’s sink 404', async () => {
    for (const path of ['/overview', `/sinks/${sink.id}`, `/sinks/${sink.id}/rejects`, '/usage', `/tables/${owner.warehouse}.${sink.table}`]) {
      expectError(await view(path), 401, 'unauthorized')
      expectError(await view(path, 'al_key_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'), 401, 'unauthorized')
      expectError(await view(path, sink.sendKey), 403, 'send_only')
    }
    const other = await newProject()
    expectError(await view(`/sinks/${sink.id}`, other.key), 404, 'sink_not_found')
    expectError(await view(`/sinks/${sink.id}/rejects`, other.key), 404, 'sink_not_found')
    // Its warehouse of the same name holds no such table.
    expectError(await view(`/tables/${owner.warehouse}.${sink.table}`, other.key), 404, 'table_not_found')
    // Another project's view does not list this sink.
    expect((await view('/overview', other.key)).text).not.toContain(sink.id)
  })

  it('answer 400 for a filter the rejects route refuses, and 404 for a view that does not exist', async () => {
    expectError(await view(`/sinks/${sink.id}/rejects?reason=bad_mood`, owner.key), 400, 'invalid_request')
    expectError(await view(`/sinks/${sink.id}/rejects?cursor=nope`, owner.key), 400, 'invalid_request')
    expectError(await view('/tables/nodots', owner.key), 400, 'invalid_request')
    expectError(await view('/nothing', owner.key), 404, 'not_found')
  })
})
