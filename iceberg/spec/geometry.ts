// Geometry values: a GeoJSON geometry object or a WKT string → ISO WKB, little-endian, the form
// Iceberg v3 stores a geometry in (spec: "Geometry ... stored as WKB"; coordinates x/y = longitude/latitude
// for the default CRS OGC:CRS84). 2D and Z are written; M and ZM are refused (no producer of ours sends
// them, and GeoJSON cannot carry M). Nothing is reprojected or validated beyond the shapes' own rules
// (a line has ≥ 2 points, a polygon ring ≥ 4 and closed), since engines reject or misdraw anything less.

import { isLosslessNumber } from './json.ts'

export type Parsed<T> = { ok: true; value: T } | { ok: false; why: string }

type Coord = number[] // [x, y] or [x, y, z]

type Geometry =
  | { type: 'Point'; coord: Coord | null } // null: POINT EMPTY
  | { type: 'LineString'; coords: Coord[] }
  | { type: 'Polygon'; rings: Coord[][] }
  | { type: 'MultiPoint' | 'MultiLineString' | 'MultiPolygon' | 'GeometryCollection'; parts: Geometry[] }

// ISO WKB geometry type codes; + 1000 for Z.
const WKB_CODE: Record<Geometry['type'], number> = {
  Point: 1,
  LineString: 2,
  Polygon: 3,
  MultiPoint: 4,
  MultiLineString: 5,
  MultiPolygon: 6,
  GeometryCollection: 7,
}

const MAX_DEPTH = 32 // GeometryCollections nest; bound the recursion on hostile input

class GeometryError extends Error {}

/** Collects the coordinate dimensions seen, so one geometry is all 2D or all 3D (ISO WKB has one code per geometry). */
interface Dims {
  seen: Set<number>
}

/**
 * A GeoJSON geometry (numbers may be LosslessNumber) or a WKT string → WKB bytes, or why not.
 */
export function toWkb(input: unknown): Parsed<Uint8Array> {
  const dims: Dims = { seen: new Set() }
  let geometry: Geometry
  try {
    geometry = typeof input === 'string' ? parseWkt(input, dims) : fromGeoJson(input, dims, 0)
  } catch (err) {
    if (err instanceof GeometryError) return { ok: false, why: err.message }
    throw err
  }
  if (dims.seen.size > 1) return { ok: false, why: 'mixes 2D and 3D coordinates' }
  const dim = dims.seen.has(3) ? 3 : 2
  const bytes = new Uint8Array(wkbSize(geometry, dim))
  writeWkb(new DataView(bytes.buffer), 0, geometry, dim)
  return { ok: true, value: bytes }
}

// ---- GeoJSON (RFC 7946) ----

const CRS84_NAMES = new Set(['urn:ogc:def:crs:OGC:1.3:CRS84', 'urn:ogc:def:crs:OGC::CRS84', 'OGC:CRS84', 'CRS84'])

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !isLosslessNumber(v)
}

function fromGeoJson(value: unknown, dims: Dims, depth: number): Geometry {
  if (!isObject(value)) throw new GeometryError('not a GeoJSON geometry object or a WKT string')
  if (depth > MAX_DEPTH) throw new GeometryError('GeometryCollection nested too deeply')
  checkGeoJsonCrs(value.crs)
  const c = value.coordinates
  switch (value.type) {
    case 'Point':
      // RFC 7946 has no empty point, but an empty coordinates array is the common spelling of one.
      if (Array.isArray(c) && c.length === 0) return { type: 'Point', coord: null }
      return { type: 'Point', coord: position(c, dims) }
    case 'LineString':
      return { type: 'LineString', coords: lineCoords(c, dims) }
    case 'Polygon':
      return { type: 'Polygon', rings: polygonRings(c, dims) }
    case 'MultiPoint':
      return { type: 'MultiPoint', parts: array(c, 'MultiPoint').map((p) => ({ type: 'Point', coord: position(p, dims) })) }
    case 'MultiLineString':
      return {
        type: 'MultiLineString',
        parts: array(c, 'MultiLineString').map((l) => ({ type: 'LineString', coords: lineCoords(l, dims) })),
      }
    case 'MultiPolygon':
      return {
        type: 'MultiPolygon',
        parts: array(c, 'MultiPolygon').map((p) => ({ type: 'Polygon', rings: polygonRings(p, dims) })),
      }
    case 'GeometryCollection':
      return {
        type: 'GeometryCollection',
        parts: array(value.geometries, 'GeometryCollection geometries').map((g) => fromGeoJson(g, dims, depth + 1)),
      }
    case 'Feature':
    case 'FeatureCollection':
      throw new GeometryError(`a GeoJSON ${value.type}, not a geometry; send its geometry`)
    default:
      throw new GeometryError(`unknown GeoJSON geometry type ${JSON.stringify(String(value.type))}`)
  }
}

/** The 2008 GeoJSON `crs` member: accepted only when it names CRS84 (longitude/latitude), the column's CRS. */
function checkGeoJsonCrs(crs: unknown): void {
  if (crs === undefined || crs === null) return
  const name = isObject(crs) && isObject(crs.properties) ? crs.properties.name : undefined
  if (typeof name === 'string' && CRS84_NAMES.has(name)) return
  throw new GeometryError('has its own crs; send longitude/latitude in OGC:CRS84 without crs')
}

function array(v: unknown, what: string): unknown[] {
  if (!Array.isArray(v)) throw new GeometryError(`${what} coordinates are not an array`)
  return v
}

function coordinate(v: unknown): number {
  const n = typeof v === 'number' ? v : isLosslessNumber(v) ? Number(v.value) : NaN
  if (!Number.isFinite(n)) throw new GeometryError('a coordinate is not a finite number')
  return n
}

function position(v: unknown, dims: Dims): Coord {
  if (!Array.isArray(v) || v.length < 2) throw new GeometryError('a position is not an array of 2 or 3 numbers')
  if (v.length > 3) throw new GeometryError('a position has more than 3 numbers; M is not supported')
  dims.seen.add(v.length)
  return v.map(coordinate)
}

function lineCoords(v: unknown, dims: Dims): Coord[] {
  const coords = array(v, 'LineString').map((p) => position(p, dims))
  checkLine(coords)
  return coords
}

function polygonRings(v: unknown, dims: Dims): Coord[][] {
  return array(v, 'Polygon').map((ring) => {
    const coords = array(ring, 'Polygon ring').map((p) => position(p, dims))
    checkRing(coords)
    return coords
  })
}

function checkLine(coords: Coord[]): void {
  if (coords.length === 1) throw new GeometryError('a LineString has 1 point; 2 at least')
}

function checkRing(coords: Coord[]): void {
  if (coords.length < 4) throw new GeometryError(`a Polygon ring has ${coords.length} points; 4 at least`)
  const first = coords[0]
  const last = coords[coords.length - 1]
  if (first.length !== last.length || first.some((x, i) => x !== last[i])) {
    throw new GeometryError('a Polygon ring is not closed: its first and last points differ')
  }
}

// ---- WKT (OGC Simple Features / ISO 13249) ----

const TOKEN = /\s*(?:([A-Za-z]+)|([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)|([(),]))/y

type Token = { word: string } | { num: number } | { punct: '(' | ')' | ',' }

function tokenize(text: string): Token[] {
  const tokens: Token[] = []
  let pos = 0
  for (;;) {
    TOKEN.lastIndex = pos
    const m = TOKEN.exec(text)
    if (!m) break
    pos = TOKEN.lastIndex
    if (m[1] !== undefined) tokens.push({ word: m[1].toUpperCase() })
    else if (m[2] !== undefined) tokens.push({ num: Number(m[2]) })
    else tokens.push({ punct: m[3] as '(' | ')' | ',' })
  }
  const rest = text.slice(pos).trim()
  if (rest !== '') throw new GeometryError(`not WKT: unexpected ${JSON.stringify(rest.slice(0, 10))}`)
  return tokens
}

const WKT_TYPES: Record<string, Geometry['type']> = {
  POINT: 'Point',
  LINESTRING: 'LineString',
  POLYGON: 'Polygon',
  MULTIPOINT: 'MultiPoint',
  MULTILINESTRING: 'MultiLineString',
  MULTIPOLYGON: 'MultiPolygon',
  GEOMETRYCOLLECTION: 'GeometryCollection',
}

function parseWkt(text: string, dims: Dims): Geometry {
  if (/^\s*SRID\s*=/i.test(text)) {
    throw new GeometryError('EWKT with an SRID; send longitude/latitude in OGC:CRS84 without SRID')
  }
  const tokens = tokenize(text)
  let i = 0

  const peekWord = (): string | undefined => {
    const t = tokens[i]
    return t && 'word' in t ? t.word : undefined
  }
  const isPunct = (p: string): boolean => {
    const t = tokens[i]
    return t !== undefined && 'punct' in t && t.punct === p
  }
  const expect = (p: '(' | ')' | ','): void => {
    if (!isPunct(p)) throw new GeometryError(`not WKT: expected '${p}'`)
    i++
  }
  /** `( item, item, … )` */
  const list = <T>(item: () => T): T[] => {
    expect('(')
    const items = [item()]
    while (isPunct(',')) {
      i++
      items.push(item())
    }
    expect(')')
    return items
  }
  const emptyNext = (): boolean => {
    if (peekWord() !== 'EMPTY') return false
    i++
    return true
  }
  const coord = (): Coord => {
    const c: number[] = []
    while (tokens[i] !== undefined && 'num' in tokens[i]) c.push((tokens[i++] as { num: number }).num)
    if (c.length < 2 || c.length > 3) throw new GeometryError('not WKT: a point needs 2 or 3 numbers')
    if (!c.every(Number.isFinite)) throw new GeometryError('a coordinate is not a finite number')
    dims.seen.add(c.length)
    return c
  }
  const line = (): Coord[] => (emptyNext() ? [] : list(coord))
  const ring = (): Coord[] => {
    const coords = list(coord)
    checkRing(coords)
    return coords
  }
  const polygon = (): Coord[][] => (emptyNext() ? [] : list(ring))
  // MULTIPOINT ((1 2), (3 4)) and the older MULTIPOINT (1 2, 3 4) are both in use.
  const multiPointPart = (): Geometry => {
    if (emptyNext()) return { type: 'Point', coord: null }
    if (isPunct('(')) return { type: 'Point', coord: list(coord)[0] }
    return { type: 'Point', coord: coord() }
  }
  const tagged = (depth: number): Geometry => {
    if (depth > MAX_DEPTH) throw new GeometryError('GeometryCollection nested too deeply')
    const word = peekWord()
    const type = word === undefined ? undefined : WKT_TYPES[word]
    if (type === undefined) throw new GeometryError(`not WKT: unknown geometry ${JSON.stringify(word ?? '')}`)
    i++
    const tag = peekWord()
    if (tag === 'Z') {
      i++
      dims.seen.add(3)
    } else if (tag === 'M' || tag === 'ZM') {
      throw new GeometryError(`${tag} coordinates are not supported`)
    }
    switch (type) {
      case 'Point':
        return { type, coord: emptyNext() ? null : list(coord)[0] }
      case 'LineString': {
        const coords = line()
        checkLine(coords)
        return { type, coords }
      }
      case 'Polygon':
        return { type, rings: polygon() }
      case 'MultiPoint':
        return { type, parts: emptyNext() ? [] : list(multiPointPart) }
      case 'MultiLineString':
        return {
          type,
          parts: emptyNext()
            ? []
            : list(() => {
                const coords = line()
                checkLine(coords)
                return { type: 'LineString' as const, coords }
              }),
        }
      case 'MultiPolygon':
        return { type, parts: emptyNext() ? [] : list(() => ({ type: 'Polygon' as const, rings: polygon() })) }
      case 'GeometryCollection':
        return { type, parts: emptyNext() ? [] : list(() => tagged(depth + 1)) }
    }
  }

  const geometry = tagged(0)
  if (i !== tokens.length) throw new GeometryError('not WKT: text after the geometry')
  return geometry
}

// ---- ISO WKB, little-endian ----

function wkbSize(g: Geometry, dim: number): number {
  const point = 8 * dim
  switch (g.type) {
    case 'Point':
      return 5 + point
    case 'LineString':
      return 9 + g.coords.length * point
    case 'Polygon':
      return 9 + g.rings.reduce((n, r) => n + 4 + r.length * point, 0)
    default:
      return 9 + g.parts.reduce((n, p) => n + wkbSize(p, dim), 0)
  }
}

function writeWkb(view: DataView, offset: number, g: Geometry, dim: number): number {
  view.setUint8(offset, 1) // 1 = little-endian (NDR)
  view.setUint32(offset + 1, WKB_CODE[g.type] + (dim === 3 ? 1000 : 0), true)
  let o = offset + 5
  const writeCoord = (c: Coord | null): void => {
    // ISO WKB writes an empty point as NaN coordinates.
    for (let k = 0; k < dim; k++, o += 8) view.setFloat64(o, c === null ? NaN : c[k], true)
  }
  const writeCoords = (cs: Coord[]): void => {
    view.setUint32(o, cs.length, true)
    o += 4
    for (const c of cs) writeCoord(c)
  }
  switch (g.type) {
    case 'Point':
      writeCoord(g.coord)
      break
    case 'LineString':
      writeCoords(g.coords)
      break
    case 'Polygon':
      view.setUint32(o, g.rings.length, true)
      o += 4
      for (const r of g.rings) writeCoords(r)
      break
    default:
      view.setUint32(o, g.parts.length, true)
      o += 4
      for (const p of g.parts) o = writeWkb(view, o, p, dim)
  }
  return o
}
