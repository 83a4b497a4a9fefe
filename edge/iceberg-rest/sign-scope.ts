// What the S3 signer (sign.ts) agrees to sign: one request of the REST spec's S3SignRequest, checked
// against a table's location before the store's identity signs it. Pure, so that every refusal is
// unit-tested: the object must lie under the table's location in the table's bucket, reached at the
// warehouse's own endpoint; a read key only reads. Anything else, or anything unclear (a dot segment,
// an encoded slash, a copy from elsewhere, an ACL, a bucket-wide request), is refused.

export type Access = 'read' | 'write'

/** A request the signer refuses, and why (a 403 ForbiddenException). */
export class SignRefused extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'SignRefused'
  }
}

const READS = new Set(['GET', 'HEAD'])
const WRITES = new Set(['PUT', 'POST', 'DELETE'])

/** Query parameters of an object request: multipart uploads, versions, response overrides, the SDKs' x-id. */
const OBJECT_QUERY = /^(uploads|uploadId|partNumber|versionId|x-id|response-[a-z-]+)$/
/** Query parameters of a listing (ListObjectsV2; its prefix is checked like a key). */
const LIST_QUERY = /^(list-type|prefix|delimiter|max-keys|continuation-token|start-after|encoding-type|fetch-owner|x-id)$/

/** The bucket and the key prefix (ending in /) of an s3:// location; null for another scheme. */
export function locationScope(location: string): { bucket: string; prefix: string } | null {
  const m = /^s3a?:\/\/([^/]+)\/(.+?)\/*$/.exec(location)
  return m ? { bucket: m[1], prefix: `${m[2]}/` } : null
}

/** Each path segment decoded; refused when one is a dot segment, holds an encoded or back slash, or does not decode. */
function segments(rawPath: string): string[] {
  if (/%2f|%5c|\\/i.test(rawPath)) throw new SignRefused('the path holds an encoded slash or a backslash')
  return rawPath.split('/').map((s) => {
    let decoded: string
    try {
      decoded = decodeURIComponent(s)
    } catch {
      throw new SignRefused('the path does not decode')
    }
    if (decoded === '.' || decoded === '..') throw new SignRefused('the path holds a dot segment')
    return decoded
  })
}

export interface SignScope {
  /** The warehouse's store endpoint (http(s)://host[:port]), path-style or virtual-hosted. */
  endpoint: string
  /** The table's location (s3://bucket/…). */
  location: string
  access: Access
}

/** Throws SignRefused unless `method uri` reads (or, with write access, writes) objects under the table's location. */
export function checkSignRequest(scope: SignScope, method: string, uri: string, headers: Record<string, string[]>): void {
  const m = method.toUpperCase()
  if (!READS.has(m) && !WRITES.has(m)) throw new SignRefused(`${method} is not an S3 request this signer signs`)
  if (!READS.has(m) && scope.access === 'read') throw new SignRefused(`a read key signs only GET and HEAD, not ${m}`)
  for (const name of Object.keys(headers).map((h) => h.toLowerCase())) {
    // A copy reads another object, possibly of another table: the source is not checked, so never signed.
    if (name.startsWith('x-amz-copy-source')) throw new SignRefused('copies are not signed')
    // An ACL could open an object to anyone: table files keep the bucket's own.
    if (name === 'x-amz-acl' || name.startsWith('x-amz-grant-')) throw new SignRefused('ACLs are not signed')
  }
  const table = locationScope(scope.location)
  if (!table) throw new SignRefused(`the table's location ${scope.location} is not in S3`)
  // The URL as sent, not as a URL parser would normalize it (which resolves dot segments away).
  const raw = /^(https?):\/\/([^/?#]+)([^?#]*)(\?[^#]*)?$/.exec(uri)
  if (!raw) throw new SignRefused('uri: an http(s) URL of the store')
  const store = new URL(scope.endpoint)
  const [, protocol, host, rawPath, rawQuery = ''] = raw
  if (`${protocol}:` !== store.protocol) throw new SignRefused('uri: not the warehouse’s store')
  const parts = segments(rawPath).slice(1)
  let bucket: string
  if (host.toLowerCase() === store.host.toLowerCase()) {
    bucket = parts.shift() ?? ''
  } else if (host.toLowerCase() === `${table.bucket}.${store.host}`.toLowerCase()) {
    bucket = table.bucket
  } else {
    throw new SignRefused('uri: not the warehouse’s store')
  }
  if (bucket !== table.bucket) throw new SignRefused('uri: another bucket than the table’s')
  const key = parts.join('/')
  const query = new URLSearchParams(rawQuery.slice(1))
  const names = [...query.keys()]
  const under = (k: string) => k.startsWith(table.prefix)
  if (key === '') {
    // Only a listing under the table (s3fs lists a key's prefix to tell a missing file from a folder).
    if (m !== 'GET' || !names.includes('list-type') || !names.every((n) => LIST_QUERY.test(n))) {
      throw new SignRefused('a request on the bucket itself is not signed, but a listing under the table')
    }
    if (!under(query.get('prefix') ?? '')) throw new SignRefused('the listing’s prefix is outside the table’s location')
    return
  }
  if (!names.every((n) => OBJECT_QUERY.test(n))) throw new SignRefused(`query parameters other than an object read or write: ${names.join(', ')}`)
  if (!under(key)) throw new SignRefused('the object is outside the table’s location')
}
