import { describe, expect, it } from 'vitest'
import { errorText } from '../../../roller/log.ts'

describe('errorText', () => {
  it('names the causes a wrapper hides (undici says only "fetch failed")', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' })
    expect(errorText(new TypeError('fetch failed', { cause: refused }))).toBe('fetch failed: connect ECONNREFUSED 127.0.0.1:9')
  })
  it('does not repeat a cause its wrapper already quotes', () => {
    const inner = new TypeError('fetch failed', { cause: new Error('other side closed') })
    const outer = new Error(`cannot list the intake of snk_1: ${inner.message}`, { cause: inner })
    expect(errorText(outer)).toBe('cannot list the intake of snk_1: fetch failed: other side closed')
  })
  it('takes what is thrown when it is not an Error', () => {
    expect(errorText('boom')).toBe('boom')
    expect(errorText(new Error('outer', { cause: 42 }))).toBe('outer: 42')
  })
})
