// Dremel repetition and definition levels for one leaf under a nested column (struct, list, map):
// the same walk as hyparquet-writer's encodeNestedValues, giving the same levels and values, with
// what it asked of the schema at every value (the node's repetition, list-, map- or struct-ness, the
// child's name: isListLike and isMapLike each value) worked out once per leaf, and a map of [key,
// value] pairs (the Value form of types.ts) read in place instead of copied to {key, value} objects
// for every leaf. Nested columns' encoding cost the roll more than their scan (nested: 8 MiB).
// Top-level primitive leaves (geometry) go to encodeNestedValues as before.

import type { SchemaTree } from 'hyparquet'
import { getMaxDefinitionLevel, isListLike, isMapLike } from 'hyparquet/src/schema.js'
import { encodeNestedValues } from 'hyparquet-writer/src/dremel.js'
import type { PageData } from 'hyparquet-writer/src/types.js'

const REQUIRED = 0
const OPTIONAL = 1
const REPEATED = 2

/** What the walk needs of each node on the path, root first. */
interface Path {
  last: number
  repetition: number[]
  /** repeated nodes above this one */
  repPrior: number[]
  list: boolean[]
  map: boolean[]
  /** a group that is neither a list nor a map (it adds a definition level even when its child is null) */
  struct: boolean[]
  /** the key_value node of a map: its entries are pairs */
  mapEntry: boolean[]
  /** the next node's name */
  child: (string | undefined)[]
}

export function shredValues(treePath: SchemaTree[], rows: unknown[]): PageData {
  if (treePath.length <= 2) return encodeNestedValues(treePath, rows as never)
  const elements = treePath.map((n) => n.element)
  const repetition = elements.map((e) => (e.repetition_type === 'REPEATED' ? REPEATED : e.repetition_type === 'OPTIONAL' ? OPTIONAL : REQUIRED))
  const repPrior: number[] = []
  let repeated = 0
  for (const r of repetition) {
    repPrior.push(repeated)
    if (r === REPEATED) repeated++
  }
  const list = treePath.map((n) => isListLike(n))
  const map = treePath.map((n) => isMapLike(n))
  const path: Path = {
    last: treePath.length - 1,
    repetition,
    repPrior,
    list,
    map,
    struct: elements.map((e, d) => Boolean(e.num_children && !e.type && !list[d] && !map[d])),
    mapEntry: treePath.map((_, d) => d > 0 && map[d - 1]),
    child: elements.map((_, d) => elements[d + 1]?.name),
  }
  const out: PageData = { values: [], definitionLevels: [], repetitionLevels: [], maxDefinitionLevel: getMaxDefinitionLevel(treePath) }
  for (const row of rows) visit(path, out, 1, row, 0, 0, false)
  return out
}

function visit(p: Path, out: PageData, depth: number, value: unknown, def: number, rep: number, allowNull: boolean): void {
  const repetition = p.repetition[depth]
  const missing = value === null || value === undefined
  if (depth === p.last) {
    if (missing) {
      if (repetition === REQUIRED && !allowNull) throw new Error('parquet required value is undefined')
      out.definitionLevels.push(def)
    } else {
      out.definitionLevels.push(repetition === REQUIRED ? def : def + 1)
    }
    out.repetitionLevels.push(rep)
    ;(out.values as unknown[]).push(value)
    return
  }
  if (repetition === REPEATED) {
    if (missing) {
      if (!allowNull) throw new Error('parquet required value is undefined')
      return visit(p, out, depth + 1, undefined, def, rep, true)
    }
    if (!Array.isArray(value)) throw new Error(`parquet repeated field ${p.child[depth - 1]} must be an array`)
    if (value.length === 0) return visit(p, out, depth + 1, undefined, def, rep, true)
    const entry = p.mapEntry[depth]
    const name = p.child[depth]
    const pairIndex = name === 'key' ? 0 : name === 'value' ? 1 : -1
    const again = p.repPrior[depth] + 1
    for (let i = 0; i < value.length; i++) {
      let v = value[i]
      // a map's entry ([key, value] or {key, value}; mapChild checked which): this leaf's side of it
      if (entry && v && typeof v === 'object' && name) v = Array.isArray(v) ? (pairIndex < 0 ? undefined : v[pairIndex]) : v[name]
      visit(p, out, depth + 1, v, def + 1, i === 0 ? rep : again, false)
    }
    return
  }
  if (missing) {
    if (repetition === REQUIRED && !allowNull) throw new Error('parquet required value is undefined')
    return visit(p, out, depth + 1, undefined, def, rep, true)
  }
  const child = childValue(p, depth, value)
  if (repetition === REQUIRED) return visit(p, out, depth + 1, child, def, rep, false)
  const childMissing = child === null || child === undefined
  visit(p, out, depth + 1, child, p.struct[depth] || !childMissing ? def + 1 : def, rep, childMissing)
}

/** encodeNestedValues's getChildValue: a list as it is, a map as entries, a struct's member. */
function childValue(p: Path, depth: number, value: unknown): unknown {
  if (p.list[depth]) return value
  if (p.map[depth]) return mapEntries(value, p.child[depth - 1])
  if (typeof value === 'object' && !Array.isArray(value)) return (value as Record<string, unknown>)[p.child[depth]!]
  throw new Error(`parquet expected struct, got ${value}`)
}

/**
 * A map's entries: an array of [key, value] pairs or {key, value} objects as it is (checked as
 * hyparquet-writer's normalizeMap checks it), a Map or a plain object as {key, value} objects.
 */
function mapEntries(value: unknown, name: string | undefined): unknown[] {
  if (value instanceof Map) return Array.from(value.entries(), ([key, v]) => ({ key, value: v }))
  if (Array.isArray(value)) {
    for (const e of value) {
      const pair = e && typeof e === 'object' && (('key' in e && 'value' in e) || (Array.isArray(e) && e.length === 2))
      if (!pair) throw new Error('parquet map entry must provide key and value')
    }
    return value
  }
  if (typeof value === 'object') return Object.entries(value as object).map(([key, v]) => ({ key, value: v }))
  throw new Error(`parquet map field ${name} must be Map, array, or object`)
}
