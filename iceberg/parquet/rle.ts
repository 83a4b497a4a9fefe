// Definition levels of an optional top-level column (max level 1) in the RLE/bit-packed hybrid
// encoding (Parquet Encodings.md, RLE = 3), straight from the column's `present` bytes: runs of 8 or
// more equal levels become RLE runs (a column without nulls is one run), the rest bit-packed groups
// of 8, LSB first.

import type { Bytes } from './bytes.ts'

/** Appends the levels present[from, to) (each 0 or 1) with bit width 1. */
export function writeDefinitionLevels(out: Bytes, present: Uint8Array, from: number, to: number): void {
  let i = from
  while (i < to) {
    const v = present[i]
    let j = i + 1
    while (j < to && present[j] === v) j++
    if (j - i >= 8) {
      out.varint((j - i) * 2) // RLE run header: count << 1
      out.u8(v)
      i = j
      continue
    }
    // bit-packed groups of 8 until a run of 8 equal levels starts at a group boundary
    const start = i
    let groups = 0
    while (i < to && !runOf8(present, i, to)) {
      i += 8
      groups++
    }
    out.varint(groups * 2 + 1) // bit-packed header: groups << 1 | 1
    out.ensure(groups)
    const buf = out.buf
    let p = out.pos
    const end = start + groups * 8
    for (let k = start; k < end; k += 8) {
      if (k + 8 <= to) {
        buf[p++] =
          present[k] |
          (present[k + 1] << 1) |
          (present[k + 2] << 2) |
          (present[k + 3] << 3) |
          (present[k + 4] << 4) |
          (present[k + 5] << 5) |
          (present[k + 6] << 6) |
          (present[k + 7] << 7)
      } else {
        let b = 0 // the last group, padded with zeros
        for (let x = k; x < to; x++) b |= present[x] << (x - k)
        buf[p++] = b
      }
    }
    out.pos = p
    if (i > to) i = to
  }
}

function runOf8(present: Uint8Array, i: number, to: number): boolean {
  if (i + 8 > to) return false
  const v = present[i]
  for (let k = i + 1; k < i + 8; k++) if (present[k] !== v) return false
  return true
}
