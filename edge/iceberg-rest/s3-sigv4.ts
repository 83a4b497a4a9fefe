// Checks the SigV4 signature (Authorization header) of an S3 request an engine signed with vended
// credentials (store-credentials.ts): the signature is computed again with aws4fetch's signer over the
// headers the client signed, at the time it signed, and compared in constant time. Presigned URLs
// (the signature in the query) are not taken: no engine here sends them for table files.
import { AwsV4Signer } from 'aws4fetch'
import { timingSafeEqual } from '../keys.ts'
import { S3Refusal } from './s3-errors.ts'

export interface SigV4Authorization {
  accessKeyId: string
  date: string
  region: string
  /** Lower-case, as sent (sorted by the client). */
  signedHeaders: string[]
  signature: string
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256\s+Credential=([^/\s,]+)\/(\d{8})\/([^/\s,]+)\/s3\/aws4_request,\s*SignedHeaders=([a-z0-9;-]+),\s*Signature=([0-9a-f]{64})$/
/** What every signature must cover: where, when, which body, and whose token. */
const REQUIRED = ['host', 'x-amz-content-sha256', 'x-amz-date', 'x-amz-security-token']
/** How far a request's x-amz-date may be from now (S3's own window). */
const SKEW_MS = 15 * 60_000

/** The Authorization header's parts; S3's AccessDenied for none, or for a presigned URL. */
export function parseAuthorization(header: string | undefined, query: URLSearchParams): SigV4Authorization {
  if (query.has('X-Amz-Signature') || query.has('X-Amz-Credential')) {
    throw new S3Refusal(403, 'AccessDenied', 'presigned URLs are not served here: sign with the Authorization header')
  }
  const m = AUTHORIZATION.exec((header ?? '').trim())
  if (!m) throw new S3Refusal(403, 'AccessDenied', 'an AWS4-HMAC-SHA256 Authorization header for service s3 is required')
  const signedHeaders = m[4].split(';')
  for (const h of REQUIRED) {
    if (!signedHeaders.includes(h)) throw new S3Refusal(403, 'AccessDenied', `the signature must cover ${h}`)
  }
  return { accessKeyId: m[1], date: m[2], region: m[3], signedHeaders, signature: m[5] }
}

/** The x-amz-date of a request as aws4fetch takes it; RequestTimeTooSkewed when it is not near now. */
function requestTime(amzDate: string | undefined, credentialDate: string, now: number): string {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate ?? '')
  if (!m || amzDate?.slice(0, 8) !== credentialDate) throw new S3Refusal(403, 'AccessDenied', 'x-amz-date must be the credential’s day, as YYYYMMDDTHHMMSSZ')
  const at = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6])
  if (Math.abs(at - now) > SKEW_MS) throw new S3Refusal(403, 'RequestTimeTooSkewed', 'the request’s time is too far from the edge’s')
  return amzDate as string
}

/**
 * Throws SignatureDoesNotMatch unless `auth` signs this request (method, URL as the client addressed
 * it, the headers it signed) with `secretAccessKey`.
 */
export async function verifySignature(
  request: { method: string; url: string; headers: Headers },
  auth: SigV4Authorization,
  secretAccessKey: string,
  now = Date.now(),
): Promise<void> {
  const datetime = requestTime(request.headers.get('x-amz-date') ?? undefined, auth.date, now)
  const signed: Array<[string, string]> = []
  for (const name of auth.signedHeaders) {
    if (name === 'host') continue
    const value = request.headers.get(name)
    if (value === null) throw new S3Refusal(403, 'SignatureDoesNotMatch', `the signed header ${name} is missing`)
    signed.push([name, value])
  }
  const signer = new AwsV4Signer({
    method: request.method,
    url: request.url,
    headers: signed,
    accessKeyId: auth.accessKeyId,
    secretAccessKey,
    service: 's3',
    region: auth.region,
    datetime,
    allHeaders: true,
  })
  const ok = signer.signedHeaders === [...auth.signedHeaders].sort().join(';') && timingSafeEqual(await signer.signature(), auth.signature)
  if (!ok) throw new S3Refusal(403, 'SignatureDoesNotMatch', 'the request signature we calculated does not match the signature you provided')
}
