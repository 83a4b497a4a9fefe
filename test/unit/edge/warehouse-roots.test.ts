// Warehouse roots (edge/warehouse-roots.ts): the default root, the prefixes a create may not take, and
// how two roots of one bucket meet (a segment boundary, not a string prefix).
import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { CreateWarehouse } from '../../../edge/routes/warehouses.ts'
import { defaultPrefix, normalPrefix, prefixProblem, rootsMeet } from '../../../edge/warehouse-roots.ts'

describe('warehouse roots', () => {
  it('gives a warehouse wh/<its id> by default, and compares prefixes without their slashes', () => {
    expect(defaultPrefix('wh_0123456789abcdef')).toBe('wh/wh_0123456789abcdef')
    expect(normalPrefix('/a/b/')).toBe('a/b')
    expect(normalPrefix('')).toBe('')
  })

  it('meets at segment boundaries: equal, contains, inside; a sibling with a longer name is apart', () => {
    expect(rootsMeet('a', 'a')).toBe('equal')
    expect(rootsMeet('', '')).toBe('equal')
    expect(rootsMeet('a', 'a/b')).toBe('contains')
    expect(rootsMeet('', 'a')).toBe('contains')
    expect(rootsMeet('a/b', 'a')).toBe('inside')
    expect(rootsMeet('a', '')).toBe('inside')
    expect(rootsMeet('a', 'ab')).toBeNull()
    expect(rootsMeet('a-sibling', 'a')).toBeNull()
    expect(rootsMeet('wh/wh_1', 'wh/wh_10')).toBeNull()
  })

  it('refuses prefixes under _sink (the intake) or wh (the default roots)', () => {
    for (const p of ['_sink', '_sink/', '/_sink/x', 'wh', 'wh/wh_0123456789abcdef', '/wh/']) expect(prefixProblem(p), p).not.toBeNull()
    for (const p of ['', 'lake', '_sinks', 'whale/x', 'a/_sink', 'a/wh']) expect(prefixProblem(p), p).toBeNull()
  })

  it('takes key segments joined by /, never a . or .. segment, an empty segment or other characters', () => {
    const ok = (prefix: string) => v.safeParse(CreateWarehouse, { name: 'w', prefix }).success
    for (const p of ['', 'a', 'a/b', '/a/b/', 'a.b/c_d-e', 'year=2026/x+y']) expect(ok(p), p).toBe(true)
    for (const p of ['.', '..', 'a/../b', 'a/./b', '.hidden', 'a//b', 'a b', 'a?b', 'a%2fb', 'é', 'a\\b']) expect(ok(p), p).toBe(false)
  })
})
