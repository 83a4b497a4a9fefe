// Vended store credentials scoped to a table (edge/iceberg-rest/store-credentials.ts) and the SigV4
// check of the requests they sign (s3-sigv4.ts): what a token grants, and what is refused.
import { AwsV4Signer } from 'aws4fetch'
import { describe, expect, it } from 'vitest'
import { S3Refusal } from '../../../edge/iceberg-rest/s3-errors.ts'
import { parseAuthorization, verifySignature } from '../../../edge/iceberg-rest/s3-sigv4.ts'
import { issueStoreKeys, secretOf, verifyStoreToken } from '../../../edge/iceberg-rest/store-credentials.ts'
import { TOKEN_SECONDS } from '../../../edge/iceberg-rest/token.ts'

const SECRET = 'bootstrap-secret'
const NOW = Date.UTC(2026, 11, 3, 12)
const CLAIMS = { warehouseId: 'wh_1', keyId: '0123456789ab', access: 'read' as const, location: 's3://bkt/wh/wh_1/ns/t' }

/** base64url of text, as the token's claims are written. */
const b64 = (s: string) => Buffer.from(s).toString('base64url')

describe('store tokens', () => {
  it('carry their claims until they expire, and the secret derives from the token alone', async () => {
    const keys = await issueStoreKeys(SECRET, CLAIMS, NOW)
    const token = keys['s3.session-token']
    expect(keys['s3.access-key-id']).toBe('LHBOXV10123456789AB')
    expect(keys['s3.secret-access-key']).toBe(await secretOf(SECRET, token))
    expect(keys['s3.secret-access-key']).not.toBe(await secretOf('another-secret', token))
    const expires = Math.floor(NOW / 1000) + TOKEN_SECONDS
    expect(keys['s3.session-token-expires-at-ms']).toBe(String(expires * 1000))
    expect(await verifyStoreToken(SECRET, token, NOW)).toEqual({ ...CLAIMS, expires })
    expect(await verifyStoreToken(SECRET, token, (expires - 1) * 1000)).toMatchObject({ access: 'read' })
    expect(await verifyStoreToken(SECRET, token, expires * 1000)).toBe('ExpiredToken')
  })

  it('keep a location with any characters', async () => {
    const location = 's3://bkt/wh/ns/naïve table\nx'
    const keys = await issueStoreKeys(SECRET, { ...CLAIMS, location }, NOW)
    expect(await verifyStoreToken(SECRET, keys['s3.session-token'], NOW)).toMatchObject({ location })
  })

  it('are refused when altered, signed under another secret, or malformed', async () => {
    const token = (await issueStoreKeys(SECRET, CLAIMS, NOW))['s3.session-token']
    const [, claims, sig] = token.split('.')
    const text = Buffer.from(claims, 'base64url').toString()
    // Read made write, another table's location, a later expiry: each with the original signature.
    for (const altered of [text.replace('\nread\n', '\nwrite\n'), text.replace('/ns/t', '/ns/other'), text.replace(/\n(\d+)\n/, '\n9999999999\n')]) {
      expect(altered).not.toBe(text)
      expect(await verifyStoreToken(SECRET, `lhs1.${b64(altered)}.${sig}`, NOW)).toBe('InvalidToken')
    }
    expect(await verifyStoreToken('another-secret', token, NOW)).toBe('InvalidToken')
    for (const bad of ['', 'lhs1..', `${token}x`, token.replace('lhs1.', 'lhs2.'), `lhs1.${claims}`]) {
      expect(await verifyStoreToken(SECRET, bad, NOW)).toBe('InvalidToken')
    }
  })
})

/** A request an engine signs with vended keys (aws4fetch as the client's SDK). */
async function clientRequest(opts: { url?: string; method?: string; secret?: string; datetime?: string } = {}) {
  const keys = await issueStoreKeys(SECRET, CLAIMS, NOW)
  const signer = new AwsV4Signer({
    method: opts.method ?? 'GET',
    url: opts.url ?? 'http://edge.test/iceberg/s3/bkt/wh/wh_1/ns/t/metadata/v1.json',
    headers: { 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD', 'x-amz-meta-who': 'a' },
    accessKeyId: keys['s3.access-key-id'],
    secretAccessKey: opts.secret ?? keys['s3.secret-access-key'],
    sessionToken: keys['s3.session-token'],
    service: 's3',
    region: 'us-east-1',
    datetime: opts.datetime ?? '20261203T120000Z',
  })
  const signed = await signer.sign()
  return { method: signed.method, url: signed.url.href, headers: signed.headers, secret: keys['s3.secret-access-key'] }
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => 'accepted',
    (e: S3Refusal) => e.code,
  )

describe('SigV4 of vended keys', () => {
  it('accepts what the client signed with the token’s secret', async () => {
    const r = await clientRequest()
    const auth = parseAuthorization(r.headers.get('authorization') ?? undefined, new URLSearchParams())
    expect(auth).toMatchObject({ accessKeyId: 'LHBOXV10123456789AB', region: 'us-east-1', date: '20261203' })
    await verifySignature(r, auth, r.secret, NOW)
  })

  it('refuses another secret, another method or path, an altered header, and a time far from now', async () => {
    const r = await clientRequest()
    const auth = parseAuthorization(r.headers.get('authorization') ?? undefined, new URLSearchParams())
    expect(await refusal(verifySignature(r, auth, 'wrong-secret', NOW))).toBe('SignatureDoesNotMatch')
    expect(await refusal(verifySignature({ ...r, method: 'PUT' }, auth, r.secret, NOW))).toBe('SignatureDoesNotMatch')
    expect(await refusal(verifySignature({ ...r, url: r.url.replace('/ns/t/', '/ns/other/') }, auth, r.secret, NOW))).toBe('SignatureDoesNotMatch')
    const headers = new Headers(r.headers)
    headers.set('x-amz-meta-who', 'b')
    expect(await refusal(verifySignature({ ...r, headers }, auth, r.secret, NOW))).toBe('SignatureDoesNotMatch')
    expect(await refusal(verifySignature(r, auth, r.secret, NOW + 16 * 60_000))).toBe('RequestTimeTooSkewed')
  })

  it('refuses presigned URLs and signatures that leave out the token, the body hash or the date', async () => {
    const q = new URLSearchParams('X-Amz-Signature=00')
    expect(() => parseAuthorization(undefined, q)).toThrow(S3Refusal)
    expect(() => parseAuthorization(undefined, new URLSearchParams())).toThrow(/Authorization header/)
    const sig = 'a'.repeat(64)
    const header = (signed: string) => `AWS4-HMAC-SHA256 Credential=K/20261203/us-east-1/s3/aws4_request, SignedHeaders=${signed}, Signature=${sig}`
    expect(() => parseAuthorization(header('host;x-amz-content-sha256;x-amz-date'), new URLSearchParams())).toThrow(/x-amz-security-token/)
    expect(() => parseAuthorization(header('host;x-amz-date;x-amz-security-token'), new URLSearchParams())).toThrow(/x-amz-content-sha256/)
    expect(parseAuthorization(header('host;x-amz-content-sha256;x-amz-date;x-amz-security-token'), new URLSearchParams()).signature).toBe(sig)
  })
})
