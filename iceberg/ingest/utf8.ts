// UTF-8 well-formedness of a byte range (RFC 3629: no overlongs, no surrogates, nothing past
// U+10FFFF), as TextDecoder's fatal mode judges it, for the string bytes the scanner copies.

export function isUtf8(buf: Uint8Array, start: number, end: number): boolean {
  let i = start
  while (i < end) {
    const b = buf[i]
    if (b < 0x80) {
      i++
      continue
    }
    let need: number
    let min: number
    let max = 0xbf
    if (b >= 0xc2 && b <= 0xdf) {
      need = 1
      min = 0x80
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2
      min = b === 0xe0 ? 0xa0 : 0x80
      if (b === 0xed) max = 0x9f // no surrogates
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3
      min = b === 0xf0 ? 0x90 : 0x80
      if (b === 0xf4) max = 0x8f // nothing past U+10FFFF
    } else return false
    if (i + need >= end) return false
    const second = buf[i + 1]
    if (second < min || second > max) return false
    for (let k = 2; k <= need; k++) {
      const c = buf[i + k]
      if (c < 0x80 || c > 0xbf) return false
    }
    i += need + 1
  }
  return true
}
