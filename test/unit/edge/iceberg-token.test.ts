// The REST catalog's stateless tokens (edge/iceberg-rest/token.ts): what one grants, and what is no token.
import { describe, expect, it } from 'vitest'
import { issueToken, lowerLevel, TOKEN_SECONDS, verifyToken } from '../../../edge/iceberg-rest/token.ts'

const SECRET = 'bootstrap-secret'
const NOW = Date.UTC(2026, 11, 3, 12)

describe('catalog tokens', () => {
  it('grant their key and level until they expire', async () => {
    const token = await issueToken(SECRET, '0123456789ab', 'write', NOW)
    expect(token).toMatch(/^al_tok_0123456789ab_write_\d+_[A-Za-z0-9_-]{43}$/)
    expect(await verifyToken(SECRET, token, NOW)).toEqual({ keyId: '0123456789ab', level: 'write' })
    expect(await verifyToken(SECRET, token, NOW + (TOKEN_SECONDS - 1) * 1000)).not.toBeNull()
    expect(await verifyToken(SECRET, token, NOW + TOKEN_SECONDS * 1000)).toBeNull()
  })

  it('are refused when altered, signed under another secret, or malformed', async () => {
    const token = await issueToken(SECRET, '0123456789ab', 'read', NOW)
    expect(await verifyToken(SECRET, token.replace('_read_', '_admin_'), NOW)).toBeNull()
    expect(await verifyToken(SECRET, token.replace('0123456789ab', 'ba9876543210'), NOW)).toBeNull()
    const exp = /_read_(\d+)_/.exec(token)![1]
    expect(await verifyToken(SECRET, token.replace(`_${exp}_`, `_${Number(exp) + 3600}_`), NOW)).toBeNull()
    expect(await verifyToken('another-secret', token, NOW)).toBeNull()
    for (const bad of ['', 'al_tok_', `${token}x`, token.slice(0, -1), 'al_key_0123456789ab_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA']) {
      expect(await verifyToken(SECRET, bad, NOW)).toBeNull()
    }
  })

  it('act at most at their key’s level now', () => {
    expect(lowerLevel('admin', 'read')).toBe('read')
    expect(lowerLevel('write', 'admin')).toBe('write')
    expect(lowerLevel('write', 'write')).toBe('write')
  })
})
