// Authentication for the Iceberg REST catalog client: a static bearer token, or OAuth2 client
// credentials (`client_id:client_secret`) exchanged at the catalog's token endpoint
// (`<uri>/v1/oauth/tokens`, or an `oauth2-server-uri`) as Java's and PyIceberg's clients do.
// Runtime-neutral: fetch only.
import { CatalogError, CatalogUnauthorized } from './index.ts'

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>

export interface RestAuthOptions {
  /** A bearer token to send as is. */
  token?: string
  /** `client_id:client_secret` (or just a secret) for the OAuth2 client-credentials grant. */
  credential?: string
  /** OAuth2 scope; `catalog` (Java's and PyIceberg's default) when not given. */
  scope?: string
  /** Token endpoint; `<uri>/v1/oauth/tokens` when not given (and no `oauth2-server-uri` in /v1/config). */
  oauth2ServerUri?: string
}

/** Refresh a token this long before the expiry the server gave. */
const EXPIRY_MARGIN_MS = 60_000

export class RestAuth {
  private token: string | undefined
  private expiresAt = Infinity
  private pending: Promise<string> | undefined
  private tokenUri: string

  constructor(
    private readonly options: RestAuthOptions,
    defaultTokenUri: string,
    private readonly fetch: FetchLike,
    private readonly timeoutMs: number,
  ) {
    this.token = options.token
    this.tokenUri = options.oauth2ServerUri ?? defaultTokenUri
  }

  /** Whether a 401 is worth a fresh token (only client credentials can get one). */
  get canRefresh(): boolean {
    return this.options.credential !== undefined
  }

  /** The token endpoint announced by /v1/config, unless the caller chose one. */
  useServerTokenUri(uri: string | undefined): void {
    if (uri && !this.options.oauth2ServerUri) this.tokenUri = uri
  }

  /** The Authorization header value, fetching (or renewing) a token first when needed. */
  async header(): Promise<string | undefined> {
    if (this.options.credential !== undefined && (this.token === undefined || Date.now() >= this.expiresAt)) {
      await this.refresh()
    }
    return this.token === undefined ? undefined : `Bearer ${this.token}`
  }

  /** Exchanges the client credentials for a new token; concurrent callers share one exchange. */
  async refresh(): Promise<void> {
    if (this.options.credential === undefined) return
    this.pending ??= this.exchange().finally(() => {
      this.pending = undefined
    })
    this.token = await this.pending
  }

  private async exchange(): Promise<string> {
    const credential = this.options.credential ?? ''
    const colon = credential.indexOf(':')
    const form = new URLSearchParams({ grant_type: 'client_credentials' })
    if (colon >= 0) form.set('client_id', credential.slice(0, colon))
    form.set('client_secret', colon >= 0 ? credential.slice(colon + 1) : credential)
    form.set('scope', this.options.scope ?? 'catalog')
    let res: Response
    let text: string
    try {
      res = await this.fetch(this.tokenUri, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form.toString(),
        signal: AbortSignal.timeout(this.timeoutMs),
      })
      text = await res.text()
    } catch (err) {
      throw new CatalogError(`OAuth2 token request to ${this.tokenUri} failed: ${(err as Error).message}`)
    }
    let body: Record<string, unknown> = {}
    try {
      body = JSON.parse(text) as Record<string, unknown>
    } catch {
      // reported below
    }
    if (!res.ok || typeof body.access_token !== 'string') {
      const reason =
        typeof body.error === 'string'
          ? `${body.error}${typeof body.error_description === 'string' ? `: ${body.error_description}` : ''}`
          : typeof body.error === 'object' && body.error && typeof (body.error as { message?: unknown }).message === 'string'
            ? (body.error as { message: string }).message
            : text.slice(0, 200)
      const failure = `OAuth2 token request to ${this.tokenUri} failed: ${res.status} ${reason}`
      // RFC 6749 §5.2: 400 invalid_client / unauthorized_client, or 401: these credentials will not do.
      if (res.status === 401 || res.status === 403 || /^(invalid_client|unauthorized_client|invalid_grant)\b/.test(reason))
        throw new CatalogUnauthorized(failure)
      throw new CatalogError(failure)
    }
    const expiresIn = Number(body.expires_in)
    this.expiresAt = Number.isFinite(expiresIn) && expiresIn > 0 ? Date.now() + Math.max(expiresIn * 1000 - EXPIRY_MARGIN_MS, expiresIn * 500) : Infinity
    return body.access_token
  }
}
