import { describe, expect, it } from 'vitest'
import { MetadataCache, metadataJson } from '../../../iceberg/catalog/metadata-cache.ts'
import { newTableMetadata, parseMetadata, serializeMetadata, type TableMetadata } from '../../../iceberg/spec/metadata.ts'

const meta = (location: string) => ({ location }) as unknown as TableMetadata
/** A file's JSON of n characters (only its length counts here). */
const text = (n: number) => 'x'.repeat(n)

describe('MetadataCache', () => {
  it('keeps at most max locations, the least recently used dropped first', () => {
    const cache = new MetadataCache(2)
    cache.set('a', meta('a'), text(10))
    cache.set('b', meta('b'), text(10))
    expect(cache.get('a')?.metadata.location).toBe('a') // a is now the most recent
    cache.set('c', meta('c'), text(10))
    expect(cache.get('b')).toBeUndefined()
    expect(cache.get('a')?.metadata.location).toBe('a')
    expect(cache.get('c')?.metadata.location).toBe('c')
    expect(cache.size).toBe(2)
  })

  it('holds at most maxSize characters of JSON, and never a file larger than that', () => {
    const cache = new MetadataCache(100, 100)
    cache.set('a', meta('a'), text(40))
    cache.set('b', meta('b'), text(40))
    cache.set('c', meta('c'), text(40))
    expect(cache.get('a')).toBeUndefined()
    expect(cache.heldSize).toBe(80)
    cache.set('huge', meta('huge'), text(101))
    expect(cache.get('huge')).toBeUndefined()
    expect(cache.heldSize).toBe(80)
    // The same location set again is counted once.
    cache.set('b', meta('b'), text(60))
    expect(cache.heldSize).toBe(100)
    expect(cache.get('c')?.metadata.location).toBe('c')
    cache.set('d', meta('d'), text(1))
    expect(cache.heldSize).toBeLessThanOrEqual(100)
    expect(cache.size).toBe(2)
  })

  it('keeps two stores’ same path apart', () => {
    const cache = new MetadataCache(10)
    const one = cache.within('http://store-1')
    const two = cache.within('http://store-2')
    one.set('s3://b/t/metadata/00001-x.metadata.json', meta('one'), text(10))
    expect(two.get('s3://b/t/metadata/00001-x.metadata.json')).toBeUndefined()
    expect(one.get('s3://b/t/metadata/00001-x.metadata.json')?.metadata.location).toBe('one')
    two.set('s3://b/t/metadata/00001-x.metadata.json', meta('two'), text(10))
    expect(one.get('s3://b/t/metadata/00001-x.metadata.json')?.metadata.location).toBe('one')
    expect(cache.size).toBe(2)
  })
})

describe('metadataJson: the JSON a load answers for a file', () => {
  const written = serializeMetadata(
    newTableMetadata({ location: 's3://b/t', schema: { fields: [{ id: 1, name: 'a', required: false, type: 'long' }] }, formatVersion: 2 }),
  )

  it('is the file as stored when it says what its parse says: unknown fields, 64-bit ids and spacing kept byte for byte', () => {
    // Another engine's file: a field lhbox does not know, a snapshot id past 2^53, pretty-printed, an escape.
    const other = written
      .replace('"properties":{}', '"properties":{"owner":"caf\\u00e9"},"x-engine-extra":{"n":1.50,"big":9223372036854775807}')
      .replace('"current-snapshot-id":-1', '"current-snapshot-id":9223372036854775807')
    const pretty = other.replace(/,"/g, ',\n  "')
    for (const text of [written, other, pretty]) expect(metadataJson(text, parseMetadata(text))).toBe(text)
  })

  it('is the serialization when the parse fills in what the file leaves out (a format 1 file)', () => {
    const v1 =
      '{"format-version":1,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1","location":"s3://b/t","last-updated-ms":1,"last-column-id":1,' +
      '"schema":{"type":"struct","fields":[{"id":1,"name":"a","required":false,"type":"long"}]},"partition-spec":[]}'
    const parsed = parseMetadata(v1)
    expect(metadataJson(v1, parsed)).toBe(serializeMetadata(parsed))
    expect(metadataJson(v1, parsed)).not.toBe(v1)
  })

  it('is kept per file by a cache that keeps JSON (counted twice), never by one that does not', () => {
    const keeping = new MetadataCache(10, 10_000, true)
    const text = written.replace('"properties":{}', '"properties":{}, "x-unknown": true')
    keeping.set('a', parseMetadata(text), text)
    expect(keeping.get('a')?.json).toBe(text)
    expect(keeping.heldSize).toBe(2 * text.length)
    const plain = new MetadataCache(10, 10_000)
    plain.set('a', parseMetadata(text), text)
    expect(plain.get('a')?.json).toBeUndefined()
    expect(plain.heldSize).toBe(text.length)
  })
})
