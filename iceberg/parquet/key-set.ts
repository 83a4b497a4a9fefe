// A set of row keys (one or more primitive columns) probed straight from column buffers: which stored
// rows carry one of a roll's keys, without a JavaScript value or string per stored row. A key is
// compared as the bytes of its columns in their buffer layout (columns.ts) — the unscaled decimal, the
// 64-bit long, the UTF-8 string — which are equal exactly when the Values are, for every key type
// (never a float). Both sides must be in that layout: the roll's keys from ColumnBuilder.appendValue,
// the stored ones from readColumns. Open addressing over a 32-bit hash of those bytes.

import type { ColumnBatch, ColumnData } from './columns.ts'

/** One key column of a batch, as bytes per row. */
interface KeyColumn {
  present: Uint8Array | null
  /** fixed width in bytes; 0 for BYTE_ARRAY */
  width: number
  bytes: Uint8Array
  offsets: Int32Array | null
}

function keyColumn(col: ColumnData | undefined, id: number): KeyColumn {
  if (col?.kind !== 'flat') throw new Error(`key column ${id} is not a flat column`)
  const d = col.data
  if (d.physical === 'BYTE_ARRAY') return { present: col.present, width: 0, bytes: d.bytes, offsets: d.offsets }
  if (d.physical === 'FIXED_LEN_BYTE_ARRAY') return { present: col.present, width: d.width, bytes: d.bytes, offsets: null }
  const v = d.values
  return { present: col.present, width: v.BYTES_PER_ELEMENT, bytes: new Uint8Array(v.buffer, v.byteOffset, v.byteLength), offsets: null }
}

/** Per row: the value index in each key column (-1 where the row has a null there). */
function valueIndexes(cols: KeyColumn[], rows: number): Int32Array[] {
  return cols.map((c) => {
    const at = new Int32Array(rows)
    let k = 0
    for (let r = 0; r < rows; r++) at[r] = !c.present || c.present[r] ? k++ : -1
    return at
  })
}

function hashRow(cols: KeyColumn[], ks: Int32Array[], r: number): number {
  let h = 0x811c9dc5 | 0
  for (let c = 0; c < cols.length; c++) {
    const col = cols[c]
    const k = ks[c][r]
    const b = col.bytes
    let s: number
    let e: number
    if (col.offsets) {
      s = col.offsets[k]
      e = col.offsets[k + 1]
      h = Math.imul(h ^ (e - s), 16777619) // the length, so ("ab","c") and ("a","bc") differ
    } else {
      s = k * col.width
      e = s + col.width
    }
    for (let i = s; i < e; i++) h = Math.imul(h ^ b[i], 16777619)
  }
  // fmix32: the table uses the low bits
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  return h ^ (h >>> 16)
}

function sameKey(a: KeyColumn[], ak: Int32Array[], ar: number, b: KeyColumn[], bk: Int32Array[], br: number): boolean {
  for (let c = 0; c < a.length; c++) {
    const x = a[c]
    const y = b[c]
    const i = ak[c][ar]
    const j = bk[c][br]
    let xs: number
    let xe: number
    let ys: number
    if (x.offsets) {
      xs = x.offsets[i]
      xe = x.offsets[i + 1]
      ys = y.offsets![j]
      if (y.offsets![j + 1] - ys !== xe - xs) return false
    } else {
      xs = i * x.width
      xe = xs + x.width
      ys = j * y.width
    }
    const xb = x.bytes
    const yb = y.bytes
    for (let p = 0; p < xe - xs; p++) if (xb[xs + p] !== yb[ys + p]) return false
  }
  return true
}

export class KeySet {
  private readonly cols: KeyColumn[]
  private readonly at: Int32Array[]
  /** slot → key row + 1 (0: empty) */
  private readonly slots: Int32Array
  private readonly hashes: Int32Array
  private readonly mask: number

  /**
   * `ids`: the key's field ids, in order; `keys`: a batch of those columns, one row per key, no nulls
   * (duplicates are harmless).
   */
  constructor(
    private readonly ids: number[],
    keys: ColumnBatch,
  ) {
    this.cols = ids.map((id) => keyColumn(keys.columns.get(id), id))
    this.at = valueIndexes(this.cols, keys.rows)
    let size = 16
    while (size < keys.rows * 2) size *= 2
    this.slots = new Int32Array(size)
    this.hashes = new Int32Array(size)
    this.mask = size - 1
    for (let r = 0; r < keys.rows; r++) {
      if (this.at.some((a) => a[r] < 0)) throw new Error('a key with a null part')
      const h = hashRow(this.cols, this.at, r)
      let s = h & this.mask
      while (this.slots[s] !== 0) s = (s + 1) & this.mask
      this.slots[s] = r + 1
      this.hashes[s] = h
    }
  }

  /** Sets drop[from + r] to 1 for each row r of `batch` whose key is in the set; returns how many. A row with a null key part never is. */
  mark(batch: ColumnBatch, drop: Uint8Array, from = 0): number {
    const cols = this.ids.map((id) => keyColumn(batch.columns.get(id), id))
    const at = valueIndexes(cols, batch.rows)
    let marked = 0
    rows: for (let r = 0; r < batch.rows; r++) {
      for (let c = 0; c < at.length; c++) if (at[c][r] < 0) continue rows
      const h = hashRow(cols, at, r)
      for (let s = h & this.mask; this.slots[s] !== 0; s = (s + 1) & this.mask) {
        if (this.hashes[s] === h && sameKey(cols, at, r, this.cols, this.at, this.slots[s] - 1)) {
          drop[from + r] = 1
          marked++
          break
        }
      }
    }
    return marked
  }
}
