// The feeds' shared rules: schedule slots and run ids, and files-to-rows patterns.
import { describe, expect, it } from 'vitest'
import { compilePattern, runId, slotStart } from '../../../contract/feeds.ts'

describe('slots and run ids', () => {
  it('aligns slots to the epoch, so an hourly run starts on the hour, and names a run by its slot', () => {
    const at = new Date('2026-12-02T03:17:36.213Z')
    expect(runId(slotStart(at, 3600))).toBe('2026-12-02T03:00:00Z')
    expect(runId(slotStart(at, 300))).toBe('2026-12-02T03:15:00Z')
    expect(runId(slotStart(new Date('2026-12-02T03:15:00Z'), 300))).toBe('2026-12-02T03:15:00Z')
    // A run asked for now keeps its milliseconds: two requests are two runs.
    expect(runId(at)).toBe('2026-12-02T03:17:36.213Z')
    expect(runId(at)).toMatch(/^[A-Za-z0-9._:-]{1,128}$/) // a batch id the roll report accepts
  })
})

describe('patterns', () => {
  it('takes named parts from the end of a key, one segment each', () => {
    const p = compilePattern('cams/{camera}/{day}/{name}.jpg')
    if ('error' in p) throw new Error(p.error)
    expect(p.names).toEqual(['camera', 'day', 'name'])
    expect(p.match('uploads/cams/front/2026-12-01/a.jpg')).toEqual({ camera: 'front', day: '2026-12-01', name: 'a' })
    expect(p.match('cams/front/2026-12-01/a.jpg')).toEqual({ camera: 'front', day: '2026-12-01', name: 'a' })
    expect(p.match('uploads/xcams/front/2026-12-01/a.jpg')).toBeNull()
    expect(p.match('uploads/cams/front/2026-12-01/a.png')).toBeNull()
    expect(p.match('uploads/cams/front/deep/2026-12-01/a.jpg')).toBeNull()
  })

  it('treats other text literally and refuses malformed patterns', () => {
    const p = compilePattern('logs/{host}.log+1')
    if ('error' in p) throw new Error(p.error)
    expect(p.match('logs/web.log+1')).toEqual({ host: 'web' })
    expect(p.match('logs/webXlog+1')).toBeNull()
    expect(compilePattern('cams/{camera')).toEqual({ error: expect.stringMatching(/brace/) })
    expect(compilePattern('cams/{a}/{a}')).toEqual({ error: expect.stringMatching(/twice/) })
    expect(compilePattern('cams/{size}')).toEqual({ error: expect.stringMatching(/every file row has/) })
    expect(compilePattern('cams/x.jpg')).toEqual({ error: expect.stringMatching(/at least one/) })
  })
})
