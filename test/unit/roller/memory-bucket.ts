// An in-memory Bucket (iceberg/io/s3.ts) for the roller's unit tests. It behaves like S3 where the
// roller depends on it: listings in key order (UTF-8 bytes, as ListObjectsV2), Last-Modified in whole
// seconds (as most stores give it), x-amz-meta-* names lower-case, a missing key null on get/head,
// DELETE and DeleteObjects of a missing key a success, the content length in head.
import { S3Error, type Bucket, type PutOptions, type S3Config, type S3Head, type S3Object } from '../../../iceberg/io/s3.ts'

interface Stored {
  body: Uint8Array
  contentType: string | null
  metadata: Record<string, string>
  lastModified: Date
}

export type BucketOp = 'put' | 'get' | 'head' | 'list' | 'delete' | 'deleteMany'

const utf8 = new TextEncoder()
const byKey = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))
const wholeSeconds = (ms: number) => new Date(Math.floor(ms / 1000) * 1000)

export class MemoryBucket implements Bucket {
  readonly config: S3Config = { endpoint: 'memory://', bucket: 'mem', region: 'auto', accessKeyId: 'unit', secretAccessKey: 'unit' }
  readonly objects = new Map<string, Stored>()
  /** The store's clock (ms); Last-Modified keeps its whole seconds. */
  now: () => number = () => Date.now()
  /** Called before every operation on a key (a listing: its prefix): throw to make the call fail. */
  fault: ((op: BucketOp, key: string) => void) | null = null

  async put(key: string, body: Uint8Array | string, opts: PutOptions = {}): Promise<{ etag: string | null }> {
    this.fault?.('put', key)
    if (opts.ifNoneMatch && this.objects.has(key)) throw new S3Error(412, 'PreconditionFailed', `PUT ${key}: 412 PreconditionFailed`)
    this.store(key, body, { contentType: opts.contentType, metadata: opts.metadata })
    return { etag: `"${this.objects.size}"` }
  }

  async get(key: string): Promise<{ body: Uint8Array; head: S3Head } | null> {
    this.fault?.('get', key)
    const o = this.objects.get(key)
    return o ? { body: o.body.slice(), head: headOf(o) } : null
  }

  async head(key: string): Promise<S3Head | null> {
    this.fault?.('head', key)
    const o = this.objects.get(key)
    return o ? headOf(o) : null
  }

  /** One page of ListObjectsV2: keys after the token, in key order. */
  async listPage(prefix: string, opts: { continuationToken?: string; maxKeys?: number } = {}): Promise<{ objects: S3Object[]; nextToken: string | null }> {
    this.fault?.('list', prefix)
    const after = opts.continuationToken
    const keys = [...this.objects.keys()].filter((k) => k.startsWith(prefix) && (after === undefined || byKey(k, after) > 0)).sort(byKey)
    const page = keys.slice(0, opts.maxKeys ?? 1000)
    const objects = page.map((key) => {
      const o = this.objects.get(key)!
      return { key, size: o.body.length, lastModified: o.lastModified, etag: null }
    })
    return { objects, nextToken: keys.length > page.length ? page[page.length - 1] : null }
  }

  async *list(prefix: string, pageSize = 1000): AsyncGenerator<S3Object> {
    let token: string | undefined
    do {
      const page = await this.listPage(prefix, { continuationToken: token, maxKeys: pageSize })
      yield* page.objects
      token = page.nextToken ?? undefined
    } while (token)
  }

  /** Every key is tried (a store applies DeleteObjects key by key); throws when any was not deleted. */
  async deleteMany(keys: string[]): Promise<void> {
    const failed: string[] = []
    for (const key of keys) {
      try {
        this.fault?.('deleteMany', key)
        this.objects.delete(key)
      } catch {
        failed.push(key)
      }
    }
    if (failed.length > 0) throw new S3Error(500, 'InternalError', `DELETE ${failed[0]}: InternalError`)
  }

  async delete(key: string): Promise<void> {
    this.fault?.('delete', key)
    this.objects.delete(key)
  }

  // ---- for the tests, not part of Bucket ----

  /** Stores an object as a PUT would, or with a Last-Modified of the test's choosing. */
  store(key: string, body: Uint8Array | string, opts: { contentType?: string; metadata?: Record<string, string>; lastModified?: Date } = {}): void {
    const metadata = Object.fromEntries(Object.entries(opts.metadata ?? {}).map(([k, v]) => [k.toLowerCase(), v]))
    this.objects.set(key, {
      body: typeof body === 'string' ? utf8.encode(body) : body.slice(),
      contentType: opts.contentType ?? null,
      metadata,
      lastModified: wholeSeconds(opts.lastModified?.getTime() ?? this.now()),
    })
  }

  /** The keys under a prefix, in key order. */
  keys(prefix = ''): string[] {
    return [...this.objects.keys()].filter((k) => k.startsWith(prefix)).sort(byKey)
  }

  text(key: string): string | null {
    const o = this.objects.get(key)
    return o ? new TextDecoder().decode(o.body) : null
  }
}

function headOf(o: Stored): S3Head {
  return { size: o.body.length, lastModified: o.lastModified, contentType: o.contentType, metadata: { ...o.metadata } }
}
