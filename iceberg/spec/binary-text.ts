// Bytes sent as text: base64 (binary, fixed) and hex (the spec's single-value form of write-defaults).

const BASE64_BODY = /^[A-Za-z0-9+/_-]*$/

/** Standard or URL-safe base64, padding optional but correct when present; undefined when not base64. */
export function base64Bytes(text: string): Uint8Array | undefined {
  const padAt = text.indexOf('=')
  const body = padAt < 0 ? text : text.slice(0, padAt)
  if (padAt >= 0) {
    const pad = text.slice(padAt)
    if ((pad !== '=' && pad !== '==') || (body.length + pad.length) % 4 !== 0) return undefined
  }
  if (body.length % 4 === 1 || !BASE64_BODY.test(body)) return undefined
  const standard = body.replace(/-/g, '+').replace(/_/g, '/')
  const binary = atob(standard + '='.repeat((4 - (standard.length % 4)) % 4))
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}

export function hexBytes(text: string): Uint8Array | undefined {
  if (text.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(text)) return undefined
  const bytes = new Uint8Array(text.length / 2)
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16)
  return bytes
}
