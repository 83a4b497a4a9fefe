// How the console writes figures, and how it colours lag against a sink's policy.
import { describe, expect, it } from 'vitest'
import { ago, bytes, count, duration, lagState } from '../../../../edge/console/format.ts'

describe('console figures', () => {
  it('sizes: exact below 1 KiB, one decimal below 10 of a unit', () => {
    expect(bytes(0)).toBe('0 B')
    expect(bytes(1023)).toBe('1023 B')
    expect(bytes(1536)).toBe('1.5 KiB')
    expect(bytes(64 * 1024 * 1024)).toBe('64 MiB')
    expect(bytes(null)).toBe('—')
  })

  it('durations: the two largest parts', () => {
    expect(duration(0)).toBe('0 s')
    expect(duration(75)).toBe('1 m 15 s')
    expect(duration(3600)).toBe('1 h')
    expect(duration(7260)).toBe('2 h 1 m')
    expect(duration(190_000)).toBe('2 d 4 h')
    expect(duration(undefined)).toBe('—')
  })

  it('times as "… ago", counts with separators', () => {
    const now = Date.parse('2026-12-02T12:00:00Z')
    expect(ago('2026-12-02T11:58:30Z', now)).toBe('1 m 30 s ago')
    expect(ago(null, now)).toBe('—')
    expect(count(1234567)).toBe('1,234,567')
  })

  it('lag: ok within one roll_seconds, behind within three, late past that', () => {
    expect(lagState(0, 300)).toBe('ok')
    expect(lagState(300, 300)).toBe('ok')
    expect(lagState(301, 300)).toBe('behind')
    expect(lagState(900, 300)).toBe('behind')
    expect(lagState(901, 300)).toBe('late')
  })
})
