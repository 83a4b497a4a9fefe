// Short-lived catalog tokens for engines that speak OAuth2 client credentials (POST /iceberg/v1/oauth/tokens).
//
// Stateless: `al_tok_<key id>_<level>_<expiry, unix seconds>_<signature>`, the signature an
// HMAC-SHA256 (base64url) of everything before it, under a key derived with HKDF-SHA256 from the
// edge's LHBOX_BOOTSTRAP_SECRET (info "lhbox iceberg-rest token v1"): any edge of the deployment
// verifies any token, and nothing is stored. A token names its API key, and every use looks the key
// up again: revoking the key ends its tokens at once, and a token never acts above its key's level.
import { encodeBase64Url } from 'hono/utils/encode'
import { levelAtLeast, type Level, timingSafeEqual } from '../keys.ts'

/** How long a token lives: engines ask again (token exchange, or client credentials) before it ends. */
export const TOKEN_SECONDS = 3600

const CATALOG_TOKEN = /^al_tok_([0-9a-f]{12})_(read|write|admin)_(\d{1,12})_([A-Za-z0-9_-]{43})$/

const keys = new Map<string, Promise<CryptoKey>>()

/** The HMAC key for one purpose (`info`), derived once per secret, purpose and isolate. */
function signingKey(secret: string, info: string): Promise<CryptoKey> {
  let key = keys.get(`${info}\n${secret}`)
  if (!key) {
    key = (async () => {
      const ikm = await crypto.subtle.importKey('raw', new TextEncoder().encode(secret), 'HKDF', false, ['deriveKey'])
      return crypto.subtle.deriveKey(
        { name: 'HKDF', hash: 'SHA-256', salt: new TextEncoder().encode('lhbox'), info: new TextEncoder().encode(info) },
        ikm,
        { name: 'HMAC', hash: 'SHA-256', length: 256 },
        false,
        ['sign'],
      )
    })()
    keys.set(`${info}\n${secret}`, key)
  }
  return key
}

const base64url = (bytes: ArrayBuffer): string => encodeBase64Url(bytes).replace(/=+$/, '')

/** HMAC-SHA256 of `text` (base64url) under the key derived from `secret` for `info` (one key per purpose). */
export async function hmacText(secret: string, info: string, text: string): Promise<string> {
  return base64url(await crypto.subtle.sign('HMAC', await signingKey(secret, info), new TextEncoder().encode(text)))
}

const sign = (secret: string, text: string) => hmacText(secret, 'lhbox iceberg-rest token v1', text)

/** A token for an API key at a level, valid TOKEN_SECONDS from `now` (ms). */
export async function issueToken(secret: string, keyId: string, level: Level, now = Date.now()): Promise<string> {
  const body = `al_tok_${keyId}_${level}_${Math.floor(now / 1000) + TOKEN_SECONDS}`
  return `${body}_${await sign(secret, body)}`
}

/** The key id and level a token grants, or null for a forged, malformed or expired one. */
export async function verifyToken(secret: string, token: string, now = Date.now()): Promise<{ keyId: string; level: Level } | null> {
  const m = CATALOG_TOKEN.exec(token)
  if (!m) return null
  const body = token.slice(0, token.length - m[4].length - 1)
  if (!timingSafeEqual(await sign(secret, body), m[4])) return null
  if (Number(m[3]) * 1000 <= now) return null
  return { keyId: m[1], level: m[2] as Level }
}

/** The lower of two levels: a token acts at most at its key's level now. */
export const lowerLevel = (a: Level, b: Level): Level => (levelAtLeast(a, b) ? b : a)
