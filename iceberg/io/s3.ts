// The one S3 client of the project (edge and roller alike): path-style URLs, single PUTs with a
// signed payload hash, through a transport (s3-transport.ts: aws4fetch and fetch unless a Node
// process installed s3-node.ts's). Runtime-neutral.
import { XMLParser } from 'fast-xml-parser'
import { md5 } from '@noble/hashes/legacy.js'
import { type S3Answer, type S3Transport, transportFor } from './s3-transport.ts'

export interface S3Config {
  endpoint: string
  bucket: string
  region: string
  accessKeyId: string
  secretAccessKey: string
  sessionToken?: string
  /**
   * Retries inside one call, with a jittered backoff from 50 ms: of a 5xx/429, and of a request that
   * got no answer unless it was conditional (If-None-Match: a retry could find its own first write and
   * be refused). Default 0: callers decide — the send route answers 503 at once; the roller retries a
   * few times, so one hiccup of a busy store does not cost a sink its roll.
   */
  retries?: number
  /** Told when each request starts; what it returns is called when the answer's headers are in (request counts). */
  observe?: () => () => void
}

export interface S3Object {
  key: string
  size: number
  lastModified: Date
  /** The ETag as listed, without its quotes (null where the store lists none). */
  etag: string | null
}

export interface S3Head {
  size: number
  lastModified: Date
  contentType: string | null
  /** x-amz-meta-* headers, names without the prefix. */
  metadata: Record<string, string>
}

export interface PutOptions {
  contentType?: string
  metadata?: Record<string, string>
  /** Conditional create: fail with 412 when the key exists. */
  ifNoneMatch?: boolean
}

/** An S3 answer other than success. `retryable` says whether the same request may work later. */
export class S3Error extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
    this.name = 'S3Error'
  }
  get retryable(): boolean {
    return this.status === 0 || this.status >= 500 || this.code === 'SlowDown'
  }
  /** The bucket refuses writes because its quota is used up. */
  get quotaExceeded(): boolean {
    // AWS-style names, and MinIO's for a bucket quota.
    return ['QuotaExceeded', 'StorageQuotaExceeded', 'BucketQuotaExceeded', 'XMinioAdminBucketQuotaExceeded'].includes(this.code)
  }
}

// htmlEntities: numeric character references (&#34;) are XML too, and fast-xml-parser decodes them only
// with it. versitygw (Go's encoding/xml) lists every ETag as &#34;…&#34;; AWS S3 writes &quot;.
const xml = new XMLParser({
  ignoreAttributes: true,
  parseTagValue: false,
  htmlEntities: true,
  isArray: (name) => name === 'Contents' || name === 'Error' || name === 'Deleted',
})

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;')
}

/**
 * What the roller asks of a bucket: S3Client is one; the roller's unit tests use an in-memory one.
 * `get` and `head` answer null for a missing key; `delete` and `deleteMany` succeed for one.
 */
export interface Bucket {
  readonly config: S3Config
  put(key: string, body: Uint8Array | string, opts?: PutOptions): Promise<{ etag: string | null }>
  get(key: string): Promise<{ body: Uint8Array; head: S3Head } | null>
  head(key: string): Promise<S3Head | null>
  /** Every object under the prefix, in key order. */
  list(prefix: string, pageSize?: number): AsyncIterable<S3Object>
  deleteMany(keys: string[]): Promise<void>
  delete(key: string): Promise<void>
}

export class S3Client implements Bucket {
  readonly bucket: string
  private readonly transport: S3Transport
  private readonly base: string

  constructor(
    readonly config: S3Config,
    transport?: S3Transport,
  ) {
    this.bucket = config.bucket
    this.transport = transport ?? transportFor(config)
    this.base = config.endpoint.replace(/\/+$/, '')
  }

  // Path and query RFC 3986-encoded, as SigV4 signs them, so the URL sent is the one signed.
  private url(key?: string, query?: Record<string, string>): string {
    const path = key === undefined ? '' : '/' + key.split('/').map(rfc3986).join('/')
    const qs = query
      ? '?' +
        Object.entries(query)
          .map(([k, v]) => `${rfc3986(k)}=${rfc3986(v)}`)
          .join('&')
      : ''
    return `${this.base}/${rfc3986(this.bucket)}${path}${qs}`
  }

  private async send(url: string, init: { method: string; headers?: Record<string, string>; body?: Uint8Array | string }): Promise<S3Answer> {
    const retries = this.config.retries ?? 0
    for (let attempt = 0; ; attempt++) {
      let res: S3Answer
      const done = this.config.observe?.()
      try {
        res = await this.transport({ method: init.method, url, headers: init.headers ?? {}, body: init.body })
      } catch (err) {
        if (attempt >= retries || init.headers?.['if-none-match']) throw new S3Error(0, 'NetworkError', `S3 unreachable: ${(err as Error).message}`)
        await backoff(attempt)
        continue
      } finally {
        done?.()
      }
      if (attempt >= retries || (res.status < 500 && res.status !== 429)) return res
      await res.discard()
      await backoff(attempt)
    }
  }

  private async fail(res: S3Answer, what: string): Promise<never> {
    const text = await res.text().catch(() => '')
    const parsed = text.startsWith('<') ? xml.parse(text) : {}
    const code = parsed?.Error?.[0]?.Code ?? parsed?.Error?.Code ?? `Http${res.status}`
    const message = parsed?.Error?.[0]?.Message ?? parsed?.Error?.Message ?? ''
    throw new S3Error(res.status, String(code), `${what}: ${res.status} ${code} ${message}`.trim())
  }

  async put(key: string, body: Uint8Array | string, opts: PutOptions = {}): Promise<{ etag: string | null }> {
    const headers: Record<string, string> = {}
    if (opts.contentType) headers['content-type'] = opts.contentType
    for (const [k, v] of Object.entries(opts.metadata ?? {})) headers[`x-amz-meta-${k}`] = v
    if (opts.ifNoneMatch) headers['if-none-match'] = '*'
    const res = await this.send(this.url(key), { method: 'PUT', headers, body })
    if (!ok(res)) await this.fail(res, `PUT ${key}`)
    await res.discard()
    return { etag: res.header('etag') }
  }

  /** The object's bytes, or null when it does not exist. */
  async get(key: string): Promise<{ body: Uint8Array; head: S3Head } | null> {
    const res = await this.send(this.url(key), { method: 'GET' })
    if (res.status === 404) {
      await res.discard()
      return null
    }
    if (!ok(res)) await this.fail(res, `GET ${key}`)
    const body = await res.bytes()
    return { body, head: headOf(res) }
  }

  async head(key: string): Promise<S3Head | null> {
    const res = await this.send(this.url(key), { method: 'HEAD' })
    if (res.status === 404) return null
    if (!ok(res)) throw new S3Error(res.status, `Http${res.status}`, `HEAD ${key}: ${res.status}`)
    return headOf(res)
  }

  /** One page of ListObjectsV2. */
  async listPage(
    prefix: string,
    opts: { continuationToken?: string; maxKeys?: number; startAfter?: string } = {},
  ): Promise<{ objects: S3Object[]; nextToken: string | null }> {
    const query: Record<string, string> = { 'list-type': '2', prefix }
    if (opts.maxKeys !== undefined) query['max-keys'] = String(opts.maxKeys)
    if (opts.startAfter !== undefined) query['start-after'] = opts.startAfter
    if (opts.continuationToken) query['continuation-token'] = opts.continuationToken
    const res = await this.send(this.url(undefined, query), { method: 'GET' })
    if (!ok(res)) await this.fail(res, `LIST ${prefix}`)
    const parsed = xml.parse(await res.text()).ListBucketResult ?? {}
    const objects: S3Object[] = (parsed.Contents ?? []).map((c: { Key: string; Size: string; LastModified: string; ETag?: string }) => ({
      key: String(c.Key),
      size: Number(c.Size),
      lastModified: new Date(c.LastModified),
      etag: c.ETag === undefined ? null : String(c.ETag).replace(/^"|"$/g, ''),
    }))
    const truncated = String(parsed.IsTruncated) === 'true'
    return { objects, nextToken: truncated ? String(parsed.NextContinuationToken) : null }
  }

  /** Every object under the prefix, page by page; after `startAfter` (a key) when given. */
  async *list(prefix: string, pageSize = 1000, startAfter?: string): AsyncGenerator<S3Object> {
    let token: string | undefined
    do {
      const page = await this.listPage(prefix, { continuationToken: token, maxKeys: pageSize, startAfter: token ? undefined : startAfter })
      yield* page.objects
      token = page.nextToken ?? undefined
    } while (token)
  }

  /** DeleteObjects, 1,000 keys a request. Throws when any key was not deleted. */
  async deleteMany(keys: string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) {
      const chunk = keys.slice(i, i + 1000)
      const body =
        '<?xml version="1.0" encoding="UTF-8"?><Delete><Quiet>true</Quiet>' +
        chunk.map((k) => `<Object><Key>${escapeXml(k)}</Key></Object>`).join('') +
        '</Delete>'
      const headers = { 'content-type': 'application/xml', 'content-md5': md5Base64(body) }
      const res = await this.send(this.url(undefined, { delete: '' }), { method: 'POST', headers, body })
      if (!ok(res)) await this.fail(res, 'DELETE objects')
      const parsed = xml.parse(await res.text()).DeleteResult ?? {}
      const errors = parsed.Error ?? []
      if (errors.length > 0) {
        const first = errors[0]
        throw new S3Error(500, String(first.Code), `DELETE ${first.Key}: ${first.Code} ${first.Message ?? ''}`.trim())
      }
    }
  }

  async delete(key: string): Promise<void> {
    const res = await this.send(this.url(key), { method: 'DELETE' })
    if (!ok(res) && res.status !== 404) await this.fail(res, `DELETE ${key}`)
    await res.discard()
  }

  /** Checks that the bucket answers (healthz). */
  async headBucket(): Promise<void> {
    const res = await this.send(this.url(), { method: 'HEAD' })
    if (!ok(res)) throw new S3Error(res.status, `Http${res.status}`, `HEAD bucket ${this.bucket}: ${res.status}`)
  }

  async createBucket(): Promise<void> {
    const res = await this.send(this.url(), { method: 'PUT' })
    if (ok(res) || res.status === 409) {
      await res.discard()
      return
    }
    await this.fail(res, `CREATE bucket ${this.bucket}`)
  }
}

const ok = (res: S3Answer) => res.status >= 200 && res.status < 300

/** Waits before retry `attempt` + 1: up to 50 ms, doubling (jittered, so retries of many calls spread out). */
const backoff = (attempt: number) => new Promise((resolve) => setTimeout(resolve, Math.random() * 50 * 2 ** attempt))

/** RFC 3986 percent-encoding (encodeURIComponent leaves !'()* as they are; SigV4 encodes them). */
function rfc3986(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
}

function headOf(res: S3Answer): S3Head {
  const metadata: Record<string, string> = {}
  for (const [name, value] of res.headers()) {
    if (name.toLowerCase().startsWith('x-amz-meta-')) metadata[name.slice(11).toLowerCase()] = value
  }
  return {
    size: Number(res.header('content-length') ?? 0),
    lastModified: new Date(res.header('last-modified') ?? 0),
    contentType: res.header('content-type'),
    metadata,
  }
}

// DeleteObjects requires Content-MD5 on most stores, and WebCrypto has no MD5.
function md5Base64(text: string): string {
  return btoa(String.fromCharCode(...md5(new TextEncoder().encode(text))))
}
