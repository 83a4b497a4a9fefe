// A decimal's unscaled value from its digit bytes, as two's complement, without a BigInt or a string:
// the scanner's path for decimals of more than 15 digits (decimal(16..38, s)), which went through
// latin1 text, BigInt() and a byte-by-byte BigInt shift (twosComplement) before.

/** 128 bits as eight 16-bit limbs, least significant first: every decimal(38, s) unscaled value fits. */
const limbs = new Int32Array(8)
const POW10 = [1, 10, 100, 1000, 10000]

/** limbs × 10^k + add (k ≤ 4, add < 10^4): each product below 2^31, so int arithmetic is exact. */
function mulAdd(k: number, add: number): void {
  const m = POW10[k]
  let carry = add
  for (let j = 0; j < 8; j++) {
    const t = limbs[j] * m + carry
    limbs[j] = t & 0xffff
    carry = t >>> 16
  }
}

/**
 * Reads the digits buf[intStart, intEnd) then buf[fracStart, fracEnd), then `zeros` zeros (the
 * scale's padding), negated when `negative`, into the limbs as 128-bit two's complement. At most 38
 * significant digits (the caller checked the precision); leading zeros are free.
 */
function readDigits(buf: Uint8Array, intStart: number, intEnd: number, fracStart: number, fracEnd: number, zeros: number, negative: boolean): void {
  limbs.fill(0)
  let chunk = 0
  let n = 0
  for (let k = intStart; k < intEnd; k++) {
    chunk = chunk * 10 + (buf[k] - 0x30)
    if (++n === 4) {
      mulAdd(4, chunk)
      chunk = n = 0
    }
  }
  for (let k = fracStart; k < fracEnd; k++) {
    chunk = chunk * 10 + (buf[k] - 0x30)
    if (++n === 4) {
      mulAdd(4, chunk)
      chunk = n = 0
    }
  }
  if (n > 0) mulAdd(n, chunk)
  for (; zeros > 0; zeros -= 4) mulAdd(Math.min(zeros, 4), 0)
  if (negative) {
    // −x = ~x + 1 (−0 stays 0: the carry runs off the top)
    let carry = 1
    for (let j = 0; j < 8; j++) {
      const t = (~limbs[j] & 0xffff) + carry
      limbs[j] = t & 0xffff
      carry = t >>> 16
    }
  }
}

/** As readDigits; the low 64 bits into i32[at], i32[at + 1] (little-endian halves, as INT64 stores them). */
export function decimalDigitsToInt64(
  out: Int32Array,
  at: number,
  buf: Uint8Array,
  intStart: number,
  intEnd: number,
  fracStart: number,
  fracEnd: number,
  zeros: number,
  negative: boolean,
): void {
  readDigits(buf, intStart, intEnd, fracStart, fracEnd, zeros, negative)
  out[at] = limbs[0] | (limbs[1] << 16)
  out[at + 1] = limbs[2] | (limbs[3] << 16)
}

/** As readDigits; the low `width` bytes big-endian into out[at, at + width) (FIXED_LEN_BYTE_ARRAY, width ≤ 16). */
export function decimalDigitsToFixed(
  out: Uint8Array,
  at: number,
  width: number,
  buf: Uint8Array,
  intStart: number,
  intEnd: number,
  fracStart: number,
  fracEnd: number,
  zeros: number,
  negative: boolean,
): void {
  readDigits(buf, intStart, intEnd, fracStart, fracEnd, zeros, negative)
  for (let j = 0; j < width; j++) out[at + width - 1 - j] = (limbs[j >> 1] >>> ((j & 1) << 3)) & 0xff
}
