import { describe, expect, it } from 'vitest'
import { MetadataCache } from '../../../iceberg/catalog/metadata-cache.ts'
import type { TableMetadata } from '../../../iceberg/spec/metadata.ts'

const meta = (location: string) => ({ location }) as unknown as TableMetadata

describe('MetadataCache', () => {
  it('keeps at most max locations, the least recently used dropped first', () => {
    const cache = new MetadataCache(2)
    cache.set('a', meta('a'), 10)
    cache.set('b', meta('b'), 10)
    expect(cache.get('a')?.location).toBe('a') // a is now the most recent
    cache.set('c', meta('c'), 10)
    expect(cache.get('b')).toBeUndefined()
    expect(cache.get('a')?.location).toBe('a')
    expect(cache.get('c')?.location).toBe('c')
    expect(cache.size).toBe(2)
  })

  it('holds at most maxSize characters of JSON, and never a file larger than that', () => {
    const cache = new MetadataCache(100, 100)
    cache.set('a', meta('a'), 40)
    cache.set('b', meta('b'), 40)
    cache.set('c', meta('c'), 40)
    expect(cache.get('a')).toBeUndefined()
    expect(cache.heldSize).toBe(80)
    cache.set('huge', meta('huge'), 101)
    expect(cache.get('huge')).toBeUndefined()
    expect(cache.heldSize).toBe(80)
    // The same location set again is counted once.
    cache.set('b', meta('b'), 60)
    expect(cache.heldSize).toBe(100)
    expect(cache.get('c')?.location).toBe('c')
    cache.set('d', meta('d'), 1)
    expect(cache.heldSize).toBeLessThanOrEqual(100)
    expect(cache.size).toBe(2)
  })

  it('keeps two stores’ same path apart', () => {
    const cache = new MetadataCache(10)
    const one = cache.within('http://store-1')
    const two = cache.within('http://store-2')
    one.set('s3://b/t/metadata/00001-x.metadata.json', meta('one'), 10)
    expect(two.get('s3://b/t/metadata/00001-x.metadata.json')).toBeUndefined()
    expect(one.get('s3://b/t/metadata/00001-x.metadata.json')?.location).toBe('one')
    two.set('s3://b/t/metadata/00001-x.metadata.json', meta('two'), 10)
    expect(one.get('s3://b/t/metadata/00001-x.metadata.json')?.location).toBe('one')
    expect(cache.size).toBe(2)
  })
})
