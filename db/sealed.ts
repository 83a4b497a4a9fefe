// Secrets sealed at rest (a REST warehouse's catalog token or OAuth2 credential): AES-256-GCM with
// WebCrypto, so the same code runs in the Worker and in Node. The key ring comes from
// LHBOX_SECRETS_KEY, "<key id>:<32 bytes base64>[,<key id>:<base64>…]": the first key seals, every
// key opens, so a key is rotated by putting a new one first and running `npm run db:migrate`, which
// seals again under it. The sealed text names its key and is bound to its row (the AAD), so a value
// copied onto another warehouse does not open.

const VERSION = 'v1'

/** WebCrypto's key (named so, because Node's and the Worker's type libraries spell CryptoKey differently). */
type CryptoKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>

export interface KeyRing {
  /** The id of the key that seals. */
  current: string
  keys: Map<string, CryptoKey>
}

/** A secret that cannot be sealed or opened here: no key ring, an unknown key id, or a value altered or moved. */
export class SealError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'SealError'
  }
}

const rings = new Map<string, Promise<KeyRing>>()

/** The key ring of LHBOX_SECRETS_KEY (imported once per isolate or process); null when it is unset. */
export function keyRing(spec: string | undefined): Promise<KeyRing> | null {
  if (!spec?.trim()) return null
  let ring = rings.get(spec)
  if (!ring) {
    ring = importRing(spec)
    ring.catch(() => rings.delete(spec))
    rings.set(spec, ring)
  }
  return ring
}

async function importRing(spec: string): Promise<KeyRing> {
  const keys = new Map<string, CryptoKey>()
  let current = ''
  for (const entry of spec.split(',').map((s) => s.trim())) {
    const m = /^([A-Za-z0-9_-]{1,32}):([A-Za-z0-9+/_-]{43}=?)$/.exec(entry)
    if (!m) throw new SealError('LHBOX_SECRETS_KEY must be "<key id>:<32 bytes in base64>", comma-separated for rotation')
    const [, id, b64] = m as unknown as [string, string, string]
    if (keys.has(id)) throw new SealError(`LHBOX_SECRETS_KEY names key id ${id} twice`)
    const raw = fromBase64(b64)
    if (raw.length !== 32) throw new SealError(`LHBOX_SECRETS_KEY key ${id} is not 32 bytes`)
    keys.set(id, await crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt']))
    current ||= id
  }
  return { current, keys }
}

/** `v1.<key id>.<iv>.<ciphertext>` (base64url): `plain` under the current key, bound to `bound` (a row id). */
export async function seal(ring: KeyRing, plain: string, bound: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12))
  const key = ring.keys.get(ring.current) as CryptoKey
  const sealed = await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: aad(bound) }, key, new TextEncoder().encode(plain))
  return [VERSION, ring.current, toBase64Url(iv), toBase64Url(new Uint8Array(sealed))].join('.')
}

/** The plain text of a sealed value; SealError when its key is not in the ring or it was altered or moved to another row. */
export async function open(ring: KeyRing, sealed: string, bound: string): Promise<string> {
  const [version, id, iv, body] = sealed.split('.')
  if (version !== VERSION || !id || !iv || !body) throw new SealError('the sealed secret is not in the v1 format')
  const key = ring.keys.get(id)
  if (!key) throw new SealError(`the secret is sealed with key id ${id}, which LHBOX_SECRETS_KEY does not hold`)
  try {
    const plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: fromBase64(iv), additionalData: aad(bound) }, key, fromBase64(body))
    return new TextDecoder().decode(plain)
  } catch {
    throw new SealError(`the secret sealed with key id ${id} does not open: it was altered, or it belongs to another row`)
  }
}

/** The key id a sealed value names. */
export const sealedKeyId = (sealed: string): string | undefined => sealed.split('.')[1]

const aad = (bound: string) => new TextEncoder().encode(`lhbox:${bound}`)

function fromBase64(s: string): Uint8Array<ArrayBuffer> {
  const b = atob(s.replace(/-/g, '+').replace(/_/g, '/'))
  const out = new Uint8Array(b.length)
  for (let i = 0; i < b.length; i++) out[i] = b.charCodeAt(i)
  return out
}

function toBase64Url(bytes: Uint8Array): string {
  let s = ''
  for (const b of bytes) s += String.fromCharCode(b)
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}
