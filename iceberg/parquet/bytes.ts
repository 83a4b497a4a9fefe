// A growable byte buffer for assembling one page body before it is compressed. One is reused for
// every page of a file, so after the first pages it never allocates.

export class Bytes {
  buf: Uint8Array
  view: DataView
  pos = 0

  constructor(capacity = 1 << 16) {
    this.buf = new Uint8Array(capacity)
    this.view = new DataView(this.buf.buffer)
  }

  /** Makes room for `n` more bytes. */
  ensure(n: number): void {
    const need = this.pos + n
    if (need <= this.buf.length) return
    const next = new Uint8Array(Math.max(need, this.buf.length * 2))
    next.set(this.buf.subarray(0, this.pos))
    this.buf = next
    this.view = new DataView(next.buffer)
  }

  /** The bytes written so far (a view: valid until the next write). */
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.pos)
  }

  u8(v: number): void {
    this.ensure(1)
    this.buf[this.pos++] = v
  }

  /** ULEB128 of a non-negative integer below 2^53. */
  varint(v: number): void {
    this.ensure(8)
    while (v >= 0x80) {
      this.buf[this.pos++] = (v % 0x80) | 0x80
      v = Math.floor(v / 0x80)
    }
    this.buf[this.pos++] = v
  }

  /** Zigzag ULEB128 of any 64-bit integer. */
  zigzag64(v: bigint): void {
    let z = BigInt.asUintN(64, (v << 1n) ^ (v >> 63n))
    this.ensure(10)
    while (z >= 0x80n) {
      this.buf[this.pos++] = Number(z & 0x7fn) | 0x80
      z >>= 7n
    }
    this.buf[this.pos++] = Number(z)
  }

  /** Zigzag ULEB128 of an integer whose magnitude is below 2^52. */
  zigzag(v: number): void {
    this.varint(v >= 0 ? v * 2 : -v * 2 - 1)
  }

  append(src: Uint8Array): void {
    this.ensure(src.length)
    this.buf.set(src, this.pos)
    this.pos += src.length
  }
}
