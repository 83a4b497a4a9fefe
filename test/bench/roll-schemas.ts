// The shapes of rows bench:roll measures (`--schema NAME`): each a table's columns, a producer row
// for every id, and the columns whose exact sums the read-back checks. Rows are deterministic (the
// same id gives the same text every run), and each row's sums are known from the values written, so
// nothing is parsed back to know what was sent.
import { COLUMNS, rowJson } from './common.ts'
import { envInt, rowFigures } from './harness.ts'
import { changedIds, changedRow } from './keyed-input.ts'

/** A column as POST /v1/tables takes it, or a nested field of a whole schema (`schema.fields`). */
type Column = { name: string; type: string | Record<string, unknown>; required?: boolean; doc?: string }

export interface RollSchema {
  name: string
  about: string
  columns: Column[]
  /** Nested types: the table is created from a whole schema (field ids are placeholders). */
  nested?: boolean
  formatVersion: 2 | 3
  /** Rows a batch by default: about 120 KiB of NDJSON, so 400 batches stay under a roll's 64 MiB. */
  rowsPerBatch: number
  /**
   * The row's JSON text, and its value in each summed column (integers; decimals in units of their
   * scale; timestamps in µs; a point's x or y, "pos.x", in units of its scale). A keyed schema's row
   * may replace a row the table holds: `replaces` is that row's values.
   */
  row(id: number): { json: string; sums: Record<string, bigint>; replaces?: Record<string, bigint> }
  /** The summed columns and their scale (0 for integers and timestamps). */
  summed: Record<string, number>
  /**
   * A keyed sink's: its key, and the table's rows before the roll (`baseRows` of common.ts rowJson,
   * ids 0..baseRows-1, seeded untimed by keyed-input.ts).
   */
  keyed?: { key: string[]; baseRows: number }
}

const pad2 = (n: number) => String(n).padStart(2, '0')

/** A timestamp with microseconds for an id: text (UTC "Z" or none) and its epoch µs. */
function stamp(id: number, zone: 'Z' | ''): { text: string; us: bigint } {
  const ms = Date.UTC(2026, 4, 1) + id * 1000
  const micros = id % 1_000_000
  const text = `${new Date(ms).toISOString().slice(0, 19)}.${String(micros).padStart(6, '0')}${zone}`
  return { text, us: BigInt(ms) * 1000n + BigInt(micros) }
}

/** A decimal of `scale` digits for an id, as text, and its value in units of the scale. */
function decimal(id: number, scale: number, intDigits: number): { text: string; units: bigint } {
  const int = BigInt(Math.imul(id, 2654435761) >>> 0) % 10n ** BigInt(Math.min(intDigits, 9))
  const frac = scale === 0 ? 0n : BigInt((id * 7919) % 10 ** Math.min(scale, 9)) * 10n ** BigInt(Math.max(0, scale - 9))
  const neg = id % 7 === 0
  const units = (int * 10n ** BigInt(scale) + frac) * (neg ? -1n : 1n)
  const text = `${neg ? '-' : ''}${int}${scale === 0 ? '' : `.${String(frac).padStart(scale, '0')}`}`
  return { text, units }
}

const narrow: RollSchema = {
  name: 'narrow',
  about: '{id long, name string, ts timestamptz, amount decimal(18,2) as a number}',
  columns: [
    { name: 'id', type: 'long', required: true, doc: 'row id' },
    { name: 'name', type: 'string', doc: 'a name' },
    { name: 'ts', type: 'timestamptz', doc: 'event time' },
    { name: 'amount', type: 'decimal(18, 2)', doc: 'an amount' },
  ],
  formatVersion: 2,
  rowsPerBatch: 1500,
  row(id) {
    const json = rowJson(id)
    const m = /"amount":(-?)(\d+)\.(\d{2})\}$/.exec(json)!
    const cents = BigInt(m[2]) * 100n + BigInt(m[3])
    return { json, sums: { id: BigInt(id), amount: m[1] ? -cents : cents } }
  },
  summed: { id: 0, amount: 2 },
}

const mixed: RollSchema = {
  name: 'mixed',
  about: '{id long required, name string 12–36 chars, ts timestamptz µs, amount decimal(18,2) as a string, ok boolean}',
  columns: [
    { name: 'id', type: 'long', required: true, doc: 'row id' },
    { name: 'name', type: 'string', doc: 'a name' },
    { name: 'ts', type: 'timestamptz', doc: 'event time' },
    { name: 'amount', type: 'decimal(18, 2)', doc: 'an amount' },
    { name: 'ok', type: 'boolean', doc: 'a flag' },
  ],
  formatVersion: 2,
  rowsPerBatch: 1200,
  row(id) {
    const ts = stamp(id, 'Z')
    const amount = decimal(id, 2, 9)
    const name = `device-${id.toString(36)}-${'abcdefghijklmnopqrstuvwx'.slice(0, id % 25)}`
    return {
      json: `{"id":${id},"name":"${name}","ts":"${ts.text}","amount":"${amount.text}","ok":${id % 3 === 0}}`,
      sums: { id: BigInt(id), ts: ts.us, amount: amount.units },
    }
  },
  summed: { id: 0, ts: 0, amount: 2 },
}

// Thirteen primitive types three times (39 columns) and the id: every third value null, in turn.
const WIDE_TYPES = [
  'int',
  'long',
  'float',
  'double',
  'decimal(9, 2)',
  'decimal(38, 10)',
  'boolean',
  'string',
  'date',
  'time',
  'timestamp',
  'timestamptz',
  'uuid',
]
const wideName = (t: string, k: number) => `${t.replace(/\W+/g, '_').replace(/_$/, '')}_${k}`

function wideValue(t: string, id: number, k: number): { text: string; sum?: bigint } {
  const x = id * 31 + k
  switch (t) {
    case 'int':
      return { text: String((x % 2_000_001) - 1_000_000), sum: BigInt((x % 2_000_001) - 1_000_000) }
    case 'long': {
      const v = BigInt(x) * 1_000_003n - 4_000_000_000n
      return { text: String(v), sum: v }
    }
    case 'float':
      return { text: String((x % 1000) / 8) }
    case 'double':
      return { text: String(x / 64) }
    case 'decimal(9, 2)': {
      const d = decimal(x, 2, 7)
      return { text: d.text, sum: d.units }
    }
    case 'decimal(38, 10)': {
      const d = decimal(x, 10, 9)
      return { text: `"${d.text}"`, sum: d.units }
    }
    case 'boolean':
      return { text: String(x % 2 === 0) }
    case 'string':
      return { text: `"value ${x.toString(36)} of ${k}"` }
    case 'date':
      return { text: `"2026-${pad2((x % 12) + 1)}-${pad2((x % 28) + 1)}"` }
    case 'time':
      return { text: `"${pad2(x % 24)}:${pad2(x % 60)}:${pad2((x * 7) % 60)}.${String(x % 1_000_000).padStart(6, '0')}"` }
    case 'timestamp': {
      const s = stamp(x, '')
      return { text: `"${s.text}"`, sum: s.us }
    }
    case 'timestamptz': {
      const s = stamp(x, 'Z')
      return { text: `"${s.text}"`, sum: s.us }
    }
    case 'uuid': {
      const h = (x >>> 0).toString(16).padStart(8, '0')
      return { text: `"${h}-0000-4000-8000-${h}${h.slice(0, 4)}"` }
    }
  }
  throw new Error(`no value for ${t}`)
}

const SUMMED_WIDE = new Set(['int', 'long', 'decimal(9, 2)', 'decimal(38, 10)', 'timestamp', 'timestamptz'])

const wide: RollSchema = {
  name: 'wide',
  about: `40 columns: id and ${WIDE_TYPES.join(', ')}, three of each, a third null`,
  columns: [
    { name: 'id', type: 'long', required: true, doc: 'row id' },
    ...[0, 1, 2].flatMap((k) => WIDE_TYPES.map((t) => ({ name: wideName(t, k), type: t, doc: `a ${t}` }))),
  ],
  formatVersion: 2,
  rowsPerBatch: 160,
  row(id) {
    const parts = [`"id":${id}`]
    const sums: Record<string, bigint> = { id: BigInt(id) }
    WIDE_TYPES.forEach((t, ti) => {
      for (const k of [0, 1, 2]) {
        const name = wideName(t, k)
        if ((id + ti + k) % 3 === 0) {
          parts.push(`"${name}":null`)
          continue
        }
        const v = wideValue(t, id, k)
        parts.push(`"${name}":${v.text}`)
        if (v.sum !== undefined) sums[name] = v.sum
      }
    })
    return { json: `{${parts.join(',')}}`, sums }
  },
  summed: Object.fromEntries([
    ['id', 0],
    ...[0, 1, 2].flatMap((k) =>
      WIDE_TYPES.filter((t) => SUMMED_WIDE.has(t)).map((t) => [wideName(t, k), /\(\d+, (\d+)\)/.exec(t)?.[1] ? Number(/\(\d+, (\d+)\)/.exec(t)![1]) : 0]),
    ),
  ]),
}

// Eight decimals of every width the Parquet writer stores differently (int32, int64, fixed bytes), half as strings.
const DECIMALS: Array<[number, number]> = [
  [9, 2],
  [12, 3],
  [18, 2],
  [18, 6],
  [24, 4],
  [30, 8],
  [38, 10],
  [38, 0],
]

const decimalHeavy: RollSchema = {
  name: 'decimal',
  about: `id and ${DECIMALS.length} decimals: ${DECIMALS.map(([p, s]) => `(${p},${s})`).join(' ')}, half sent as strings`,
  columns: [
    { name: 'id', type: 'long', required: true, doc: 'row id' },
    ...DECIMALS.map(([p, s]) => ({ name: `d${p}_${s}`, type: `decimal(${p}, ${s})`, doc: `decimal(${p}, ${s})` })),
  ],
  formatVersion: 2,
  rowsPerBatch: 700,
  row(id) {
    const sums: Record<string, bigint> = { id: BigInt(id) }
    const parts = [`"id":${id}`]
    DECIMALS.forEach(([p, s], i) => {
      const d = decimal(id + i, s, Math.min(p - s, 18))
      sums[`d${p}_${s}`] = d.units
      parts.push(`"d${p}_${s}":${i % 2 ? `"${d.text}"` : d.text}`)
    })
    return { json: `{${parts.join(',')}}`, sums }
  },
  summed: Object.fromEntries([['id', 0], ...DECIMALS.map(([p, s]) => [`d${p}_${s}`, s])]),
}

const nested: RollSchema = {
  name: 'nested',
  about: '{id long, device struct<name string, fw int, loc struct<lat double, lon double>>, tags list<string>, readings list<long>, attrs map<string, long>}',
  nested: true,
  columns: [
    { name: 'id', type: 'long', required: true, doc: 'row id' },
    {
      name: 'device',
      type: {
        type: 'struct',
        fields: [
          { id: 0, name: 'name', type: 'string', required: false },
          { id: 0, name: 'fw', type: 'int', required: false },
          {
            id: 0,
            name: 'loc',
            type: {
              type: 'struct',
              fields: [
                { id: 0, name: 'lat', type: 'double', required: false },
                { id: 0, name: 'lon', type: 'double', required: false },
              ],
            },
            required: false,
          },
        ],
      },
      doc: 'the device',
    },
    { name: 'tags', type: { type: 'list', 'element-id': 0, element: 'string', 'element-required': false }, doc: 'tags' },
    { name: 'readings', type: { type: 'list', 'element-id': 0, element: 'long', 'element-required': false }, doc: 'readings' },
    { name: 'attrs', type: { type: 'map', 'key-id': 0, key: 'string', 'value-id': 0, value: 'long', 'value-required': false }, doc: 'attributes' },
  ],
  formatVersion: 2,
  rowsPerBatch: 600,
  row(id) {
    const tags = Array.from({ length: id % 4 }, (_, i) => `"t${(id + i) % 50}"`).join(',')
    const readings = Array.from({ length: (id % 6) + 1 }, (_, i) => String(id * 10 + i)).join(',')
    const attrs = Array.from({ length: id % 3 }, (_, i) => `"k${(id + i) % 20}":${id + i}`).join(',')
    const device = `{"name":"dev-${id % 500}","fw":${id % 90},"loc":{"lat":${((id % 18000) / 100 - 90).toFixed(2)},"lon":${((id % 36000) / 100 - 180).toFixed(2)}}}`
    return { json: `{"id":${id},"device":${device},"tags":[${tags}],"readings":[${readings}],"attrs":{${attrs}}}`, sums: { id: BigInt(id) } }
  },
  summed: { id: 0 },
}

const longStrings: RollSchema = {
  name: 'long-strings',
  about: '{id long, ts timestamptz, message string of 1–4 KiB}',
  columns: [
    { name: 'id', type: 'long', required: true, doc: 'row id' },
    { name: 'ts', type: 'timestamptz', doc: 'event time' },
    { name: 'message', type: 'string', doc: 'a log message' },
  ],
  formatVersion: 2,
  rowsPerBatch: 48,
  row(id) {
    const ts = stamp(id, 'Z')
    const words = 'the quick brown fox jumps over the lazy dog while sensors report status codes and timings '
    const length = 1024 + ((id * 797) % 3072)
    const message = `#${id} ${words.repeat(Math.ceil(length / words.length))}`.slice(0, length)
    return { json: `{"id":${id},"ts":"${ts.text}","message":"${message}"}`, sums: { id: BigInt(id), ts: ts.us } }
  },
  summed: { id: 0, ts: 0 },
}

// Points on a grid of 1/1024 degree: each coordinate a double with at most 10 decimals, written
// exactly in JSON, so the sums of x and y are exact at 10 decimal places on every side.
const GRID = 1024
const COORD_UNITS = 10n ** 10n / BigInt(GRID) // 1/1024 in units of 1e-10 (9765625)

const geometry: RollSchema = {
  name: 'geometry',
  about: '{id long, ts timestamptz, device string, pos geometry (a GeoJSON Point), speed double} on a format-version 3 table',
  columns: [
    { name: 'id', type: 'long', required: true, doc: 'row id' },
    { name: 'ts', type: 'timestamptz', doc: 'event time' },
    { name: 'device', type: 'string', doc: 'a device' },
    { name: 'pos', type: 'geometry', doc: 'where it was (OGC:CRS84)' },
    { name: 'speed', type: 'double', doc: 'km/h' },
  ],
  formatVersion: 3,
  rowsPerBatch: 900,
  row(id) {
    const ts = stamp(id, 'Z')
    const kx = Math.imul(id, 7919) >>> 0
    const ky = Math.imul(id, 104729) >>> 0
    const x = BigInt((kx % (360 * GRID)) - 180 * GRID)
    const y = BigInt((ky % (180 * GRID)) - 90 * GRID)
    const coord = (k: bigint) => String(Number(k) / GRID)
    const pos = `{"type":"Point","coordinates":[${coord(x)},${coord(y)}]}`
    return {
      json: `{"id":${id},"ts":"${ts.text}","device":"truck-${id % 2000}","pos":${pos},"speed":${(id % 1300) / 10}}`,
      sums: { id: BigInt(id), ts: ts.us, 'pos.x': x * COORD_UNITS, 'pos.y': y * COORD_UNITS },
    }
  },
  summed: { id: 0, ts: 0, 'pos.x': 10, 'pos.y': 10 },
}

/** The keyed table's rows before the roll (BENCH_KEYED_BASE_ROWS, default 1,000,000: the issue's "upsert into 1M rows"). */
const KEYED_BASE_ROWS = envInt('BENCH_KEYED_BASE_ROWS', 1_000_000)
let keyedIds: Int32Array | null = null

// Rows 1, 3, 5, … change rows the table holds (distinct ids drawn uniformly at random from all of
// them, as bench:upsert draws its changes); rows 2, 4, 6, … are new keys past them.
const keyed: RollSchema = {
  name: 'keyed',
  about: `{id long, name string, ts timestamptz, amount decimal(18,2) as a number}, key ["id"], into a table of ${KEYED_BASE_ROWS.toLocaleString('en-US')} rows: half the rows change a row it holds, half are new keys`,
  columns: COLUMNS,
  formatVersion: 2,
  rowsPerBatch: 250,
  row(n) {
    if (n % 2 === 0) {
      const json = rowJson(KEYED_BASE_ROWS + n / 2 - 1)
      const f = rowFigures(json)
      return { json, sums: { id: f.id, amount: f.cents } }
    }
    const k = (n - 1) / 2
    if (k >= KEYED_BASE_ROWS) throw new Error(`keyed: row ${n} would change row ${k} of ${KEYED_BASE_ROWS}; raise BENCH_KEYED_BASE_ROWS or send fewer rows`)
    keyedIds ??= changedIds(KEYED_BASE_ROWS, KEYED_BASE_ROWS)
    const id = keyedIds[k]
    const json = changedRow(id)
    const now = rowFigures(json)
    const was = rowFigures(rowJson(id))
    return { json, sums: { id: now.id, amount: now.cents }, replaces: { id: was.id, amount: was.cents } }
  },
  summed: { id: 0, amount: 2 },
  keyed: { key: ['id'], baseRows: KEYED_BASE_ROWS },
}

export const ROLL_SCHEMAS: Record<string, RollSchema> = Object.fromEntries(
  [narrow, mixed, wide, decimalHeavy, nested, longStrings, geometry, keyed].map((s) => [s.name, s]),
)

/** Units of `scale` as decimal text ("-12.05"); scale 0: the integer's digits. */
export function unitsText(units: bigint, scale: number): string {
  if (scale === 0) return units.toString()
  const neg = units < 0n
  const a = neg ? -units : units
  const p = 10n ** BigInt(scale)
  return `${neg ? '-' : ''}${a / p}.${String(a % p).padStart(scale, '0')}`
}
