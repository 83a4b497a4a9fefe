// A cursor over one stored line's bytes, reading JSON tokens the way the lossless parser does
// (lossless-json: whitespace is space, tab, CR and LF; strings refuse raw control characters;
// numbers are -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?). A method that cannot read a token says so
// (false or -1) and the caller hands the row to the reference path; it never guesses.

export class Cursor {
  buf: Uint8Array = new Uint8Array(0)
  pos = 0
  /** the end of the line (exclusive) */
  end = 0

  // the last number read
  tokenStart = 0
  negative = false
  digitsStart = 0
  digitsEnd = 0
  fraction = false
  fractionStart = 0
  fractionEnd = 0
  exponent = false

  peek(): number {
    return this.pos < this.end ? this.buf[this.pos] : -1
  }

  ws(): void {
    const buf = this.buf
    let p = this.pos
    while (p < this.end) {
      const b = buf[p]
      if (b !== 0x20 && b !== 0x09 && b !== 0x0d && b !== 0x0a) break
      p++
    }
    this.pos = p
  }

  isNull(): boolean {
    const p = this.pos
    const buf = this.buf
    return p + 4 <= this.end && buf[p] === 0x6e && buf[p + 1] === 0x75 && buf[p + 2] === 0x6c && buf[p + 3] === 0x6c
  }

  /** `true` → 1, `false` → 0 (cursor moved past it); -1 otherwise. */
  bool(): number {
    const p = this.pos
    const buf = this.buf
    if (p + 4 <= this.end && buf[p] === 0x74 && buf[p + 1] === 0x72 && buf[p + 2] === 0x75 && buf[p + 3] === 0x65) {
      this.pos += 4
      return 1
    }
    if (p + 5 <= this.end && buf[p] === 0x66 && buf[p + 1] === 0x61 && buf[p + 2] === 0x6c && buf[p + 3] === 0x73 && buf[p + 4] === 0x65) {
      this.pos += 5
      return 0
    }
    return -1
  }

  /** A JSON number at the cursor: its parts are recorded and the cursor moves past it. */
  number(): boolean {
    const buf = this.buf
    const end = this.end
    let p = this.pos
    this.tokenStart = p
    this.negative = buf[p] === 0x2d
    if (this.negative) p++
    this.digitsStart = p
    if (p < end && buf[p] === 0x30) p++
    else if (p < end && buf[p] >= 0x31 && buf[p] <= 0x39) {
      p++
      while (p < end && isDigit(buf[p])) p++
    } else return false
    this.digitsEnd = p
    this.fraction = p < end && buf[p] === 0x2e
    if (this.fraction) {
      p++
      this.fractionStart = p
      while (p < end && isDigit(buf[p])) p++
      if (p === this.fractionStart) return false
      this.fractionEnd = p
    } else {
      this.fractionStart = this.fractionEnd = p
    }
    this.exponent = p < end && (buf[p] === 0x65 || buf[p] === 0x45)
    if (this.exponent) {
      p++
      if (p < end && (buf[p] === 0x2b || buf[p] === 0x2d)) p++
      const e = p
      while (p < end && isDigit(buf[p])) p++
      if (p === e) return false
    }
    this.pos = p
    return true
  }

  /** The integer digits of the last number (at most 15 of them), signed. */
  smallInteger(): number {
    const buf = this.buf
    let n = 0
    for (let k = this.digitsStart; k < this.digitsEnd; k++) n = n * 10 + (buf[k] - 0x30)
    return this.negative ? -n : n
  }

  /** Where a string whose contents start at `start` closes, when it has no escape; -1 otherwise. */
  plainStringEnd(start: number): number {
    const buf = this.buf
    const end = this.end
    for (let p = start; p < end; p++) {
      const b = buf[p]
      if (b === 0x22) return p
      if (b === 0x5c || b < 0x20) return -1
    }
    return -1
  }

  /** Where a string whose contents start at `start` closes, escapes skipped (not checked); -1 if it does not. */
  stringEnd(start: number): number {
    const buf = this.buf
    const end = this.end
    for (let p = start; p < end; p++) {
      const b = buf[p]
      if (b === 0x22) return p
      if (b < 0x20) return -1
      if (b === 0x5c) p++
    }
    return -1
  }

  /**
   * A string of printable ASCII with no escape at the cursor: returns where its contents start and
   * moves past the closing quote; -1 for anything else.
   */
  asciiString(): number {
    if (this.peek() !== 0x22) return -1
    const buf = this.buf
    const start = this.pos + 1
    for (let p = start; p < this.end; p++) {
      const b = buf[p]
      if (b === 0x22) {
        this.pos = p + 1
        return start
      }
      if (b === 0x5c || b < 0x20 || b > 0x7e) return -1
    }
    return -1
  }

  /**
   * Moves past one JSON value of any kind (strings and nesting followed, nothing else checked: the
   * caller parses the span). False when the line ends first.
   */
  skipValue(): boolean {
    const buf = this.buf
    const end = this.end
    let p = this.pos
    let depth = 0
    while (p < end) {
      const b = buf[p]
      if (b === 0x22) {
        const close = this.stringEnd(p + 1)
        if (close < 0) return false
        p = close + 1
        if (depth === 0) break
        continue
      }
      if (b === 0x7b || b === 0x5b) depth++
      else if (b === 0x7d || b === 0x5d) {
        if (depth === 0) break // the enclosing object's end: the value was empty
        depth--
        p++
        if (depth === 0) break
        continue
      } else if (depth === 0 && (b === 0x2c || b === 0x20 || b === 0x09 || b === 0x0d)) break
      p++
    }
    if (depth !== 0 || p === this.pos) return false
    this.pos = p
    return true
  }

  /** Whether buf[start, end) holds exactly `name`'s bytes. */
  equals(start: number, end: number, name: Uint8Array): boolean {
    if (end - start !== name.length) return false
    const buf = this.buf
    for (let k = 0; k < name.length; k++) if (buf[start + k] !== name[k]) return false
    return true
  }
}

function isDigit(b: number): boolean {
  return b >= 0x30 && b <= 0x39
}

/** A line String.prototype.trim would leave empty, judged on its ASCII bytes (others: not blank here). */
export function isBlank(buf: Uint8Array, start: number, end: number): boolean {
  for (let p = start; p < end; p++) {
    const b = buf[p]
    if (b !== 0x20 && (b < 0x09 || b > 0x0d)) return false
  }
  return true
}

const INT64_LIMIT = new TextEncoder().encode('9223372036854775808') // 2^63

/** Whether 19 digits at `at` fit a long: below 2^63, or equal to it when negative. */
export function withinInt64(buf: Uint8Array, at: number, negative: boolean): boolean {
  for (let k = 0; k < 19; k++) {
    const d = buf[at + k]
    if (d !== INT64_LIMIT[k]) return d < INT64_LIMIT[k]
  }
  return negative
}
