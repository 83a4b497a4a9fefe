// Vended store credentials scoped to one table: S3 keys only this edge can check (s3-proxy.ts serves
// the requests they sign). Neither R2 nor versitygw offers STS with session policies, so instead of
// the store's own keys (whole bucket) an engine receives:
//
// - s3.session-token: `lhs1.<claims, base64url>.<HMAC>`; the claims are the warehouse id, the API
//   key id, the access (read or write), the expiry (unix seconds) and the table's location, the HMAC a
//   key derived (HKDF) from LHBOX_BOOTSTRAP_SECRET for this purpose alone (token.ts);
// - s3.secret-access-key: an HMAC of that token under another derived key, so that any edge
//   recomputes it from the token the request carries (x-amz-security-token) and nothing is stored;
// - s3.access-key-id: LHBOXV1 and the API key's id (the SigV4 Credential names it).
import { decodeBase64Url, encodeBase64Url } from 'hono/utils/encode'
import { type Level, levelAtLeast, timingSafeEqual } from '../keys.ts'
import { hmacText, TOKEN_SECONDS } from './token.ts'

export type StoreAccess = 'read' | 'write'

export interface StoreClaims {
  warehouseId: string
  keyId: string
  access: StoreAccess
  /** Unix seconds. */
  expires: number
  /** The table's location (s3://bucket/…): every request must lie under it. */
  location: string
}

const TOKEN_INFO = 'lhbox iceberg-rest store token v1'
const SECRET_INFO = 'lhbox iceberg-rest store secret v1'
const TOKEN = /^lhs1\.([A-Za-z0-9_-]{1,4096})\.([A-Za-z0-9_-]{43})$/

/** The access a key of `level` receives: write keys write, everything else reads. */
export const accessOf = (level: Level): StoreAccess => (levelAtLeast(level, 'write') ? 'write' : 'read')

/** The access key id of a key's vended credentials. */
export const accessKeyIdOf = (keyId: string) => `LHBOXV1${keyId.toUpperCase()}`

const encode = (text: string): string => encodeBase64Url(new TextEncoder().encode(text).buffer).replace(/=+$/, '')

function decode(b64: string): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(decodeBase64Url(b64))
  } catch {
    return null
  }
}

/** The secret access key that belongs to a token: the same on every edge that holds the secret. */
export const secretOf = (secret: string, token: string) => hmacText(secret, SECRET_INFO, token)

export interface VendedKeys {
  's3.access-key-id': string
  's3.secret-access-key': string
  's3.session-token': string
  /** When they end, unix ms (Iceberg's S3 properties; engines ask again before). */
  's3.session-token-expires-at-ms': string
}

/** Credentials for `claims` without their expiry, valid TOKEN_SECONDS from `now` (ms). */
export async function issueStoreKeys(secret: string, claims: Omit<StoreClaims, 'expires'>, now = Date.now()): Promise<VendedKeys> {
  const expires = Math.floor(now / 1000) + TOKEN_SECONDS
  const body = `lhs1.${encode([claims.warehouseId, claims.keyId, claims.access, String(expires), claims.location].join('\n'))}`
  const token = `${body}.${await hmacText(secret, TOKEN_INFO, body)}`
  return {
    's3.access-key-id': accessKeyIdOf(claims.keyId),
    's3.secret-access-key': await secretOf(secret, token),
    's3.session-token': token,
    's3.session-token-expires-at-ms': String(expires * 1000),
  }
}

/** Why a token is refused: S3's own error codes. */
export type TokenRefusal = 'InvalidToken' | 'ExpiredToken'

/** The claims of a token this deployment issued, or why not (forged, altered, malformed, expired). */
export async function verifyStoreToken(secret: string, token: string, now = Date.now()): Promise<StoreClaims | TokenRefusal> {
  const m = TOKEN.exec(token)
  if (!m) return 'InvalidToken'
  const body = token.slice(0, token.length - m[2].length - 1)
  if (!timingSafeEqual(await hmacText(secret, TOKEN_INFO, body), m[2])) return 'InvalidToken'
  const fields = decode(m[1])?.split('\n')
  if (!fields || fields.length < 5) return 'InvalidToken'
  const [warehouseId, keyId, access, expires, ...location] = fields
  if ((access !== 'read' && access !== 'write') || !/^\d{1,12}$/.test(expires)) return 'InvalidToken'
  if (Number(expires) * 1000 <= now) return 'ExpiredToken'
  return { warehouseId, keyId, access, expires: Number(expires), location: location.join('\n') }
}
