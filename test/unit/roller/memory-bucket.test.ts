// The in-memory bucket answers as S3 does where the roller depends on it (so the roller's unit tests
// prove something about the real store).
import { describe, expect, it } from 'vitest'
import { S3Error } from '../../../iceberg/io/s3.ts'
import { MemoryBucket } from './memory-bucket.ts'

async function all<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const x of it) out.push(x)
  return out
}

describe('MemoryBucket', () => {
  it('lists in key order (UTF-8 bytes, as ListObjectsV2), page by page, under the prefix only', async () => {
    const b = new MemoryBucket()
    for (const k of ['p/b', 'p/a/1', 'p/\u00e9', 'p/Z', 'p/a', 'q/a', 'p/\uff01', 'p/\u{1f600}']) await b.put(k, 'x')
    const keys = ['p/Z', 'p/a', 'p/a/1', 'p/b', 'p/\u00e9', 'p/\uff01', 'p/\u{1f600}'] // U+FF01 before U+1F600 in UTF-8 (not in UTF-16)
    expect((await all(b.list('p/'))).map((o) => o.key)).toEqual(keys)
    expect((await all(b.list('p/', 2))).map((o) => o.key)).toEqual(keys)
    const first = await b.listPage('p/', { maxKeys: 3 })
    expect(first.objects.map((o) => o.key)).toEqual(keys.slice(0, 3))
    const second = await b.listPage('p/', { maxKeys: 10, continuationToken: first.nextToken! })
    expect(second).toEqual({ objects: expect.any(Array), nextToken: null })
    expect(second.objects.map((o) => o.key)).toEqual(keys.slice(3))
  })

  it('gives Last-Modified in whole seconds, the content length, the content type and x-amz-meta-* names lower-case', async () => {
    const b = new MemoryBucket()
    b.now = () => Date.UTC(2026, 0, 1, 0, 0, 7, 999)
    await b.put('k', '{"x":1}\n', { contentType: 'application/x-ndjson', metadata: { Received: '2026-01-01T00:00:07.999123Z', ROWS: '1' } })
    const head = await b.head('k')
    expect(head).toEqual({
      size: 8,
      lastModified: new Date(Date.UTC(2026, 0, 1, 0, 0, 7)),
      contentType: 'application/x-ndjson',
      metadata: { received: '2026-01-01T00:00:07.999123Z', rows: '1' },
    })
    expect((await b.get('k'))!.head).toEqual(head)
    expect(new TextDecoder().decode((await b.get('k'))!.body)).toBe('{"x":1}\n')
    expect((await all(b.list('')))[0]).toEqual({ key: 'k', size: 8, lastModified: head!.lastModified, etag: null })
  })

  it('answers null for a missing key; DELETE and DeleteObjects of missing keys succeed; a conditional PUT on an existing key is 412', async () => {
    const b = new MemoryBucket()
    expect(await b.get('nope')).toBeNull()
    expect(await b.head('nope')).toBeNull()
    await b.delete('nope')
    await b.put('a', '1')
    await b.deleteMany(['a', 'nope'])
    expect(b.keys()).toEqual([])
    await b.put('c', '1', { ifNoneMatch: true })
    await expect(b.put('c', '2', { ifNoneMatch: true })).rejects.toMatchObject({ status: 412 })
    expect(b.text('c')).toBe('1')
  })

  it('a DeleteObjects that fails for some keys deletes the others and throws', async () => {
    const b = new MemoryBucket()
    for (const k of ['a', 'b', 'c']) await b.put(k, k)
    b.fault = (op, key) => {
      if (op === 'deleteMany' && key === 'b') throw new S3Error(500, 'InternalError', 'no')
    }
    await expect(b.deleteMany(['a', 'b', 'c'])).rejects.toThrow(S3Error)
    expect(b.keys()).toEqual(['b'])
  })

  it('keeps its own copy of the bytes', async () => {
    const b = new MemoryBucket()
    const body = new TextEncoder().encode('abc')
    await b.put('k', body)
    body[0] = 0x7a
    const got = await b.get('k')
    got!.body[1] = 0x7a
    expect(b.text('k')).toBe('abc')
  })
})
