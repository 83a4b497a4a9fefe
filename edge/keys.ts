// Key formats and hashing. Only SHA-256 hashes are stored; comparisons are constant-time.
import { encodeBase64Url } from 'hono/utils/encode'
export type Level = 'read' | 'write' | 'admin'
export const LEVELS: readonly Level[] = ['read', 'write', 'admin']

export const API_KEY = /^al_key_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/
export const SEND_KEY = /^al_send_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/

function hex(bytes: Uint8Array): string {
  return [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('')
}

const base64url = (bytes: Uint8Array<ArrayBuffer>): string => encodeBase64Url(bytes.buffer).replace(/=+$/, '')

export function randomHex(bytes: number): string {
  return hex(crypto.getRandomValues(new Uint8Array(bytes)))
}

/** A new key `al_<kind>_<12 hex id>_<43 base64url secret>` and its public id. */
export function newKey(kind: 'key' | 'send'): { key: string; id: string } {
  const id = randomHex(6)
  return { key: `al_${kind}_${id}_${base64url(crypto.getRandomValues(new Uint8Array(32)))}`, id }
}

export async function sha256Hex(text: string): Promise<string> {
  return hex(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))))
}

/** Constant-time equality of two hex digests (or any equal-length strings). */
export function timingSafeEqual(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a)
  const y = new TextEncoder().encode(b)
  let diff = x.length ^ y.length
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0)
  return diff === 0
}

export function levelAtLeast(have: Level, need: Level): boolean {
  return LEVELS.indexOf(have) >= LEVELS.indexOf(need)
}
