import { describe, expect, it } from 'vitest'
// An independent WKB reader (hyparquet's, used for GeoParquet) to check what we write.
import { wkbToGeojson } from 'hyparquet/src/wkb.js'
import { toWkb } from '../../../iceberg/spec/geometry.ts'
import { parseLossless } from '../../../iceberg/spec/json.ts'

function wkb(input: unknown): Uint8Array {
  const r = toWkb(input)
  if (!r.ok) throw new Error(`expected WKB, got: ${r.why}`)
  return r.value
}

function read(bytes: Uint8Array): unknown {
  const reader = { view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: 0 }
  const g = wkbToGeojson(reader)
  expect(reader.offset).toBe(bytes.length) // no trailing bytes
  return g
}

function why(input: unknown): string {
  const r = toWkb(input)
  if (r.ok) throw new Error('expected a refusal')
  return r.why
}

/** Little-endian bytes built by hand: u8 / u32 / f64 parts. */
function bytes(...parts: Array<['u8' | 'u32' | 'f64', number]>): Uint8Array {
  const size = parts.reduce((n, [t]) => n + (t === 'u8' ? 1 : t === 'u32' ? 4 : 8), 0)
  const out = new Uint8Array(size)
  const v = new DataView(out.buffer)
  let o = 0
  for (const [t, x] of parts) {
    if (t === 'u8') v.setUint8(o++, x)
    else if (t === 'u32') {
      v.setUint32(o, x, true)
      o += 4
    } else {
      v.setFloat64(o, x, true)
      o += 8
    }
  }
  return out
}

describe('toWkb: exact bytes', () => {
  it('POINT (1 2): byte order 1, type 1, x then y', () => {
    const expected = bytes(['u8', 1], ['u32', 1], ['f64', 1], ['f64', 2])
    expect(wkb('POINT (1 2)')).toEqual(expected)
    expect(wkb({ type: 'Point', coordinates: [1, 2] })).toEqual(expected)
    expect(wkb(parseLossless('{"type": "Point", "coordinates": [1.0, 2e0]}'))).toEqual(expected)
  })

  it('POINT Z is ISO type 1001', () => {
    const expected = bytes(['u8', 1], ['u32', 1001], ['f64', -73.9857], ['f64', 40.7484], ['f64', 443.2])
    expect(wkb('POINT Z (-73.9857 40.7484 443.2)')).toEqual(expected)
    expect(wkb('POINT (-73.9857 40.7484 443.2)')).toEqual(expected) // a third number is Z without the tag
    expect(wkb({ type: 'Point', coordinates: [-73.9857, 40.7484, 443.2] })).toEqual(expected)
  })

  it('POINT EMPTY is NaN coordinates, as ISO WKB writes it', () => {
    expect(wkb('POINT EMPTY')).toEqual(bytes(['u8', 1], ['u32', 1], ['f64', NaN], ['f64', NaN]))
    expect(wkb({ type: 'Point', coordinates: [] })).toEqual(wkb('POINT EMPTY'))
  })

  it('LINESTRING: count then points', () => {
    expect(wkb('LINESTRING (0 0, 1 1)')).toEqual(bytes(['u8', 1], ['u32', 2], ['u32', 2], ['f64', 0], ['f64', 0], ['f64', 1], ['f64', 1]))
    expect(wkb('LINESTRING EMPTY')).toEqual(bytes(['u8', 1], ['u32', 2], ['u32', 0]))
  })

  it('MULTIPOINT: each point a full WKB geometry', () => {
    const expected = bytes(['u8', 1], ['u32', 4], ['u32', 2], ['u8', 1], ['u32', 1], ['f64', 1], ['f64', 2], ['u8', 1], ['u32', 1], ['f64', 3], ['f64', 4])
    expect(wkb('MULTIPOINT ((1 2), (3 4))')).toEqual(expected)
    expect(wkb('MULTIPOINT (1 2, 3 4)')).toEqual(expected)
    expect(
      wkb({
        type: 'MultiPoint',
        coordinates: [
          [1, 2],
          [3, 4],
        ],
      }),
    ).toEqual(expected)
  })
})

describe('toWkb: every geometry type, read back by an independent reader', () => {
  const square = [
    [0, 0],
    [10, 0],
    [10, 10],
    [0, 10],
    [0, 0],
  ]
  const hole = [
    [2, 2],
    [3, 2],
    [3, 3],
    [2, 2],
  ]
  const cases: Array<[string, unknown, unknown]> = [
    [
      'LineString',
      'LINESTRING (30 10, 10 30, 40 40)',
      {
        type: 'LineString',
        coordinates: [
          [30, 10],
          [10, 30],
          [40, 40],
        ],
      },
    ],
    ['Polygon with a hole', 'POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0), (2 2, 3 2, 3 3, 2 2))', { type: 'Polygon', coordinates: [square, hole] }],
    [
      'MultiLineString',
      'MULTILINESTRING ((10 10, 20 20), (40 40, 30 30, 40 20))',
      {
        type: 'MultiLineString',
        coordinates: [
          [
            [10, 10],
            [20, 20],
          ],
          [
            [40, 40],
            [30, 30],
            [40, 20],
          ],
        ],
      },
    ],
    [
      'MultiPolygon',
      'MULTIPOLYGON (((0 0, 10 0, 10 10, 0 10, 0 0)), ((0 0, 10 0, 10 10, 0 10, 0 0), (2 2, 3 2, 3 3, 2 2)))',
      { type: 'MultiPolygon', coordinates: [[square], [square, hole]] },
    ],
    [
      'GeometryCollection, nested',
      'GEOMETRYCOLLECTION (POINT (4 6), LINESTRING (4 6, 7 10), GEOMETRYCOLLECTION (POINT (1 1)))',
      {
        type: 'GeometryCollection',
        geometries: [
          { type: 'Point', coordinates: [4, 6] },
          {
            type: 'LineString',
            coordinates: [
              [4, 6],
              [7, 10],
            ],
          },
          { type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [1, 1] }] },
        ],
      },
    ],
  ]
  for (const [name, text, geojson] of cases) {
    it(`${name}: WKT and GeoJSON give the same bytes, which read back as the GeoJSON`, () => {
      const fromText = wkb(text)
      expect(wkb(geojson)).toEqual(fromText)
      expect(read(fromText)).toEqual(geojson)
    })
  }

  it('3D polygon', () => {
    const g = wkb('POLYGON Z ((0 0 1, 1 0 1, 1 1 1, 0 0 1))')
    expect(new DataView(g.buffer).getUint32(1, true)).toBe(1003)
    expect(read(g)).toEqual({
      type: 'Polygon',
      coordinates: [
        [
          [0, 0, 1],
          [1, 0, 1],
          [1, 1, 1],
          [0, 0, 1],
        ],
      ],
    })
  })

  it('WKT keywords are case-insensitive and whitespace is free', () => {
    expect(wkb('point(1 2)')).toEqual(wkb('POINT (1 2)'))
    expect(wkb('  MultiPoint( ( 1  2 ) ,(3 4) ) \n')).toEqual(wkb('MULTIPOINT ((1 2), (3 4))'))
    expect(wkb('POINT (1e1 -2.5E-1)')).toEqual(wkb({ type: 'Point', coordinates: [10, -0.25] }))
  })

  it('empty collections', () => {
    expect(read(wkb('GEOMETRYCOLLECTION EMPTY'))).toEqual({ type: 'GeometryCollection', geometries: [] })
    expect(read(wkb('MULTIPOLYGON EMPTY'))).toEqual({ type: 'MultiPolygon', coordinates: [] })
  })

  it('GeoJSON bbox is ignored and a CRS84 crs member is accepted', () => {
    const crs = { type: 'name', properties: { name: 'urn:ogc:def:crs:OGC:1.3:CRS84' } }
    expect(wkb({ type: 'Point', coordinates: [1, 2], bbox: [1, 2, 1, 2], crs })).toEqual(wkb('POINT (1 2)'))
  })
})

describe('toWkb: refusals', () => {
  it('shapes that break their own rules', () => {
    expect(why('LINESTRING (1 2)')).toBe('a LineString has 1 point; 2 at least')
    expect(why('POLYGON ((0 0, 1 0, 0 0))')).toBe('a Polygon ring has 3 points; 4 at least')
    expect(why('POLYGON ((0 0, 1 0, 1 1, 0 1))')).toBe('a Polygon ring is not closed: its first and last points differ')
    expect(
      why({
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [1, 1],
            [0, 1],
          ],
        ],
      }),
    ).toBe('a Polygon ring is not closed: its first and last points differ')
    expect(why({ type: 'LineString', coordinates: [[0, 0]] })).toBe('a LineString has 1 point; 2 at least')
  })

  it('mixed dimensions, M and too many numbers', () => {
    expect(why('LINESTRING (0 0, 1 1 1)')).toBe('mixes 2D and 3D coordinates')
    expect(why('POINT Z (1 2)')).toBe('mixes 2D and 3D coordinates')
    expect(why('POINT M (1 2 3)')).toBe('M coordinates are not supported')
    expect(why('POINT ZM (1 2 3 4)')).toBe('ZM coordinates are not supported')
    expect(why({ type: 'Point', coordinates: [1, 2, 3, 4] })).toBe('a position has more than 3 numbers; M is not supported')
    expect(why('POINT (1 2 3 4)')).toBe('not WKT: a point needs 2 or 3 numbers')
  })

  it('a CRS of its own', () => {
    expect(why('SRID=4326;POINT (1 2)')).toBe('EWKT with an SRID; send longitude/latitude in OGC:CRS84 without SRID')
    expect(why({ type: 'Point', coordinates: [1, 2], crs: { type: 'name', properties: { name: 'EPSG:3857' } } })).toBe(
      'has its own crs; send longitude/latitude in OGC:CRS84 without crs',
    )
  })

  it('malformed WKT', () => {
    expect(why('POINT (1)')).toBe('not WKT: a point needs 2 or 3 numbers')
    expect(why('POINT (1 2) extra')).toBe('not WKT: text after the geometry')
    expect(why('POINT (1 2')).toBe("not WKT: expected ')'")
    expect(why('CIRCLE (1 2)')).toBe('not WKT: unknown geometry "CIRCLE"')
    expect(why('POINT (1 2) ;')).toBe('not WKT: unexpected ";"')
    expect(why('')).toBe('not WKT: unknown geometry ""')
  })

  it('malformed GeoJSON', () => {
    expect(why({ type: 'Feature', geometry: { type: 'Point', coordinates: [1, 2] } })).toBe('a GeoJSON Feature, not a geometry; send its geometry')
    expect(why({ type: 'Circle', coordinates: [1, 2] })).toBe('unknown GeoJSON geometry type "Circle"')
    expect(why({ type: 'Point', coordinates: ['1', 2] })).toBe('a coordinate is not a finite number')
    expect(why(parseLossless('{"type": "Point", "coordinates": [1e400, 2]}'))).toBe('a coordinate is not a finite number')
    expect(why({ type: 'MultiPoint', coordinates: 5 })).toBe('MultiPoint coordinates are not an array')
    expect(why([1, 2])).toBe('not a GeoJSON geometry object or a WKT string')
    expect(why(7)).toBe('not a GeoJSON geometry object or a WKT string')
  })

  it('deep nesting is bounded', () => {
    let g: unknown = { type: 'Point', coordinates: [0, 0] }
    for (let i = 0; i < 40; i++) g = { type: 'GeometryCollection', geometries: [g] }
    expect(why(g)).toBe('GeometryCollection nested too deeply')
    expect(why('GEOMETRYCOLLECTION ('.repeat(40) + 'POINT (0 0)' + ')'.repeat(40))).toBe('GeometryCollection nested too deeply')
  })
})
