// <LHBOX_URL>/iceberg/s3/{bucket}/{key}: the S3 endpoint that vended credentials (store-credentials.ts)
// point engines at, path-style. Each request is checked — its SigV4 signature against the secret its
// token derives, the token (this deployment's, unexpired), the API key it names (still there, not
// revoked; a lowered key reads only), then the same scope rule as the S3 signer (sign-scope.ts: only
// objects under the table's location, a listing only under it, a read only GET and HEAD, no copy, no
// ACL) — and then sent on to the warehouse's store signed with the edge's own keys, the bodies
// streamed both ways. The client's x-amz-content-sha256 goes on, so the store checks the body it
// signed. Refusals are S3's XML errors (s3-errors.ts).
import { AwsV4Signer } from 'aws4fetch'
import type { Context } from 'hono'
import { keyRow } from '../auth.ts'
import type { AppEnv } from '../env.ts'
import type { Level } from '../keys.ts'
import { S3Refusal, s3ErrorResponse } from './s3-errors.ts'
import { parseAuthorization, verifySignature } from './s3-sigv4.ts'
import { checkSignRequest, SignRefused } from './sign-scope.ts'
import { accessKeyIdOf, accessOf, secretOf, type StoreClaims, verifyStoreToken } from './store-credentials.ts'

/** Where the endpoint is mounted: what follows is /{bucket}/{key}. */
export const S3_PATH = '/iceberg/s3'

/** Request headers that go on to the store (besides x-amz-content-sha256), as S3 reads them. */
const FORWARDED =
  /^(content-type|content-length|content-md5|content-encoding|content-disposition|cache-control|expires|range|if-match|if-none-match|if-modified-since|if-unmodified-since|x-amz-(?!date$|security-token$|content-sha256$|user-agent$).+)$/i
/** Answer headers that are the connection's, not the object's. */
const HOP = /^(connection|keep-alive|transfer-encoding|proxy-.*|upgrade)$/i

/** The claims of a request's token, its signature checked; S3 errors otherwise. */
async function checkedClaims(c: Context<AppEnv>, url: URL): Promise<StoreClaims> {
  const auth = parseAuthorization(c.req.header('authorization'), url.searchParams)
  const token = c.req.header('x-amz-security-token') ?? ''
  const claims = await verifyStoreToken(c.env.LHBOX_BOOTSTRAP_SECRET, token)
  if (claims === 'ExpiredToken') throw new S3Refusal(400, 'ExpiredToken', 'the vended credentials have expired: load the table again')
  if (claims === 'InvalidToken') throw new S3Refusal(400, 'InvalidToken', 'the session token is not one this catalog vended')
  if (auth.accessKeyId !== accessKeyIdOf(claims.keyId)) throw new S3Refusal(403, 'InvalidAccessKeyId', 'the access key id is not its session token’s')
  // The URL as the client addressed it: the Host header it signed (a Worker's URL may name another host).
  const signedUrl = new URL(url.href)
  signedUrl.host = c.req.header('host') ?? url.host
  await verifySignature({ method: c.req.method, url: signedUrl.href, headers: c.req.raw.headers }, auth, await secretOf(c.env.LHBOX_BOOTSTRAP_SECRET, token))
  return claims
}

async function serve(c: Context<AppEnv>, url: URL): Promise<Response> {
  const claims = await checkedClaims(c, url)
  const sha = c.req.header('x-amz-content-sha256') ?? ''
  if (sha.startsWith('STREAMING-')) throw new S3Refusal(501, 'NotImplemented', 'aws-chunked uploads are not served here: send the body whole')
  // The key is looked up again on each request, with its warehouse (one statement): revoking it ends its credentials.
  const key = await keyRow(c, claims.keyId, { warehouseId: claims.warehouseId })
  const w = c.var.warehouseRead?.row
  if (!key || key.revokedAt || !w) throw new S3Refusal(403, 'AccessDenied', 'the API key behind these credentials is revoked, or its warehouse is gone')
  const access = claims.access === 'write' && accessOf(key.level as Level) === 'write' ? 'write' : 'read'
  const path = url.pathname.slice(S3_PATH.length)
  if (/^\/[^/]+\/_sink(\/|$)/.test(path)) throw new S3Refusal(403, 'AccessDenied', 'the intake (_sink/) is not a table’s')
  const target = `${w.endpoint.replace(/\/+$/, '')}${path}${url.search}`
  const headers = Object.fromEntries([...c.req.raw.headers].map(([k, v]) => [k, [v]]))
  try {
    checkSignRequest({ endpoint: w.endpoint, location: claims.location, access }, c.req.method, target, headers)
  } catch (err) {
    if (err instanceof SignRefused) throw new S3Refusal(403, 'AccessDenied', err.message)
    throw err
  }
  const sent: Array<[string, string]> = [...c.req.raw.headers].filter(([k]) => FORWARDED.test(k))
  const signed = await new AwsV4Signer({
    method: c.req.method,
    url: target,
    headers: [...sent, ['x-amz-content-sha256', sha || 'UNSIGNED-PAYLOAD']],
    accessKeyId: c.env.S3_ACCESS_KEY_ID,
    secretAccessKey: c.env.S3_SECRET_ACCESS_KEY,
    service: 's3',
    region: w.region,
  }).sign()
  // The object's bytes as stored, never re-encoded on the way (unsigned: Node's fetch adds its own beside a Range).
  signed.headers.set('accept-encoding', 'identity')
  const hasBody = c.req.method !== 'GET' && c.req.method !== 'HEAD'
  const init: RequestInit & { duplex?: 'half' } = { method: c.req.method, headers: signed.headers, redirect: 'manual' }
  if (hasBody && c.req.raw.body) {
    init.body = c.req.raw.body
    init.duplex = 'half'
  }
  const answer = await fetch(target, init)
  const out = new Headers([...answer.headers].filter(([k]) => !HOP.test(k)))
  return new Response(c.req.method === 'HEAD' ? null : answer.body, { status: answer.status, headers: out })
}

/** Any method on /iceberg/s3/*: S3's answers, S3's errors. */
export async function s3Proxy(c: Context<AppEnv>): Promise<Response> {
  const url = new URL(c.req.url)
  try {
    return await serve(c, url)
  } catch (err) {
    if (err instanceof S3Refusal) return s3ErrorResponse(err, c.req.method, url.pathname)
    console.error(JSON.stringify({ level: 'error', path: url.pathname, error: String((err as Error)?.stack ?? err) }))
    return s3ErrorResponse(new S3Refusal(503, 'ServiceUnavailable', 'the store or the database did not answer; retry shortly'), c.req.method, url.pathname)
  }
}
