// POST /iceberg/v1/oauth/tokens: the OAuth2 exchange engines expect (the REST spec's getToken).
// client_credentials: client_id = the API key's id (optional), client_secret = the API key, in the
// form body or as HTTP Basic; token-exchange: subject_token = a catalog token or an API key (how Java
// refreshes). Answers a token of the key's level (token.ts). Errors are OAuth's own shape
// ({"error", "error_description"}, 400 or 401), as the spec says for this route; a send key is 403.
import type { Context } from 'hono'
import type { AppEnv } from '../env.ts'
import { API_KEY } from '../keys.ts'
import { principalOf } from './auth.ts'
import { issueToken, TOKEN_SECONDS } from './token.ts'

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange'
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token'

const oauthError = (c: Context<AppEnv>, status: 400 | 401, error: string, description: string) => c.json({ error, error_description: description }, status)

/** client_id and client_secret from HTTP Basic (client_secret_basic), when sent so. */
function basicCredentials(header: string | undefined): { id?: string; secret?: string } {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '')
  if (!m) return {}
  let text: string
  try {
    text = atob(m[1])
  } catch {
    return {}
  }
  const at = text.indexOf(':')
  if (at < 0) return {}
  // Keys and ids hold no character that form-encoding would change: taken as they are.
  return { id: text.slice(0, at), secret: text.slice(at + 1) }
}

export async function oauthToken(c: Context<AppEnv>) {
  const type = (c.req.header('content-type') ?? '').toLowerCase()
  if (!type.startsWith('application/x-www-form-urlencoded')) {
    return oauthError(c, 400, 'invalid_request', 'send the token request as application/x-www-form-urlencoded')
  }
  const form = new URLSearchParams(await c.req.text())
  const grant = form.get('grant_type')
  let credential: string | null
  if (grant === 'client_credentials') {
    const basic = basicCredentials(c.req.header('authorization'))
    credential = form.get('client_secret') ?? basic.secret ?? null
    const clientId = form.get('client_id') ?? basic.id
    if (!credential) return oauthError(c, 400, 'invalid_request', 'give client_secret: an lhbox API key')
    // The id, when given, must be the key's own: a mismatch is a wrong pair, not a second guess.
    const keyId = API_KEY.exec(credential)?.[1]
    if (clientId && keyId && clientId !== keyId) return oauthError(c, 401, 'invalid_client', 'client_id is not the id of the key in client_secret')
  } else if (grant === TOKEN_EXCHANGE) {
    credential = form.get('subject_token')
    if (!credential) return oauthError(c, 400, 'invalid_request', 'give subject_token: a catalog token or an API key')
  } else {
    return oauthError(c, 400, 'unsupported_grant_type', `grant_type must be client_credentials or ${TOKEN_EXCHANGE}`)
  }
  const principal = await principalOf(c, credential)
  if (!principal) return oauthError(c, 401, 'invalid_client', 'the key or token is unknown, revoked or expired')
  return c.json({
    access_token: await issueToken(c.env.LHBOX_BOOTSTRAP_SECRET, principal.keyId, principal.level),
    token_type: 'bearer',
    expires_in: TOKEN_SECONDS,
    issued_token_type: ACCESS_TOKEN,
  })
}
