import { describe, expect, it } from 'vitest'
import { API_KEY, SEND_KEY, levelAtLeast, newKey, sha256Hex, timingSafeEqual } from '../../../edge/keys.ts'

describe('key formats', () => {
  it('makes API keys al_key_<12 hex>_<43 base64url> and send keys al_send_…', () => {
    for (let i = 0; i < 50; i++) {
      const api = newKey('key')
      expect(api.key).toMatch(API_KEY)
      expect(API_KEY.exec(api.key)![1]).toBe(api.id)
      expect(newKey('send').key).toMatch(SEND_KEY)
    }
    expect(newKey('key').key).not.toBe(newKey('key').key)
    expect('al_key_0123456789ab_short').not.toMatch(API_KEY)
    expect('al_key_0123456789AB_' + 'a'.repeat(43)).not.toMatch(API_KEY)
  })

  it('hashes with SHA-256', async () => {
    expect(await sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  })

  it('compares in constant time, and correctly', () => {
    expect(timingSafeEqual('abcd', 'abcd')).toBe(true)
    expect(timingSafeEqual('abcd', 'abce')).toBe(false)
    expect(timingSafeEqual('abcd', 'abc')).toBe(false)
    expect(timingSafeEqual('', '')).toBe(true)
  })

  it('orders levels read < write < admin', () => {
    expect(levelAtLeast('admin', 'write')).toBe(true)
    expect(levelAtLeast('write', 'write')).toBe(true)
    expect(levelAtLeast('read', 'write')).toBe(false)
    expect(levelAtLeast('write', 'admin')).toBe(false)
  })
})
