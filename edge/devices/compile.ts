// A mapping checked against the sink's table when it is set (PATCH, create): every column exists,
// every value can fit its column's type, and a preset's columns are all there. What is stored is
// the compiled form — the preset expanded, each column's target kind noted — so the device route
// needs no catalog call to type a form's strings.
import { parse as losslessParse } from 'lossless-json'
import { INGEST_TS } from '../../contract/table.ts'
import { stringifyLossless } from '../../iceberg/spec/json.ts'
import { currentSchema, type TableMetadata } from '../../iceberg/spec/metadata.ts'
import { isPrimitive, parsePrimitive, type IcebergType } from '../../iceberg/spec/types.ts'
import { valueConverter } from '../../iceberg/spec/values.ts'
import { ApiError } from '../errors.ts'
import { pointerTokens } from './json-span.ts'
import { PRESETS } from './presets/index.ts'
import { CREATE_LINE, PRESET as OTLP_PRESET } from '../otlp/preset.ts'
import type { Mapping, Pointer, Preset, Require, Source } from './types.ts'

/** What a form or query string becomes in its column: a number, a boolean, or left a string. */
type Target = 'number' | 'boolean' | 'timestamptz' | 'timestamp' | 'string' | 'other'

export interface CompiledColumn {
  name: string
  source: Source
  target: Target
}

export interface Compiled {
  preset: string | null
  columns: CompiledColumn[]
  point: Mapping['point'] | null
  shape: Mapping['shape'] | null
  /** The preset's require under the sink's own (the sink's wins on a pointer). */
  require: Require
  strip: Pointer[]
  naturalId: Pointer[] | null
  answer: Preset['answer'] | null
}

/** As PATCH takes it: a preset by name, or a mapping of one's own. */
export type MappingInput = { preset: string } | Mapping

const invalid = (message: string, details: Record<string, unknown> = {}) => new ApiError(400, 'mapping_invalid', message, details)

const NUMERIC = new Set(['int', 'long', 'float', 'double', 'decimal'])
const TIMESTAMPS = new Set(['timestamp', 'timestamptz', 'timestamp_ns', 'timestamptz_ns'])

function kindOf(type: IcebergType): string {
  return isPrimitive(type) ? parsePrimitive(type).kind : type.type
}

function targetOf(type: IcebergType): Target {
  const kind = kindOf(type)
  if (NUMERIC.has(kind)) return 'number'
  if (kind === 'boolean') return 'boolean'
  if (kind === 'string') return 'string'
  if (kind === 'timestamptz' || kind === 'timestamptz_ns') return 'timestamptz'
  if (kind === 'timestamp' || kind === 'timestamp_ns') return 'timestamp'
  return 'other'
}

function checkPointer(p: unknown, where: string, column?: string): Pointer {
  if (typeof p !== 'string' || pointerTokens(p) === null)
    throw invalid(`${where}: ${JSON.stringify(p)} is not a JSON pointer (RFC 6901: "" or "/member/0")`, column ? { column } : {})
  return p
}

/** Whether a table column of type `have` holds what a preset writes as `need` (the same type, or a wider one). */
function holds(have: IcebergType, need: string): boolean {
  if (!isPrimitive(have)) return false
  const h = parsePrimitive(have)
  const n = parsePrimitive(need)
  if (h.kind === n.kind) return h.kind !== 'geometry' || !h.crs || h.crs === 'OGC:CRS84' || h.crs === 'EPSG:4326'
  return (n.kind === 'int' && h.kind === 'long') || (n.kind === 'float' && h.kind === 'double') || (n.kind === 'timestamptz' && h.kind === 'timestamptz_ns')
}

/** Checks one column's source against its type; throws mapping_invalid naming the column. */
function checkSource(column: string, source: Source, type: IcebergType, formatVersion: 2 | 3): void {
  const kind = kindOf(type)
  const need = (what: string, ok: boolean) => {
    if (!ok) throw invalid(`column ${column} is ${typeof type === 'string' ? type : type.type}; ${what}`, { column })
  }
  if (typeof source === 'string') return void checkPointer(source, `columns.${column}`, column)
  if (typeof source !== 'object' || source === null)
    throw invalid(`columns.${column}: give a JSON pointer or {pointer, as} | {const} | {device} | {received} | {raw}`, { column })
  const s = source as Record<string, unknown>
  const keys = Object.keys(s).sort().join(',')
  if (keys === 'as,pointer') {
    checkPointer(s.pointer, `columns.${column}.pointer`, column)
    if (s.as === 'json') return need('as: "json" writes JSON text, which needs a string column', kind === 'string')
    if (s.as === 'epoch_s' || s.as === 'epoch_ms')
      return need(`as: "${s.as}" writes a timestamp, which needs a timestamp or string column`, TIMESTAMPS.has(kind) || kind === 'string')
    throw invalid(`columns.${column}.as: one of "epoch_s", "epoch_ms", "json"`, { column })
  }
  if (keys === 'const') {
    // Checked as the roller will check it, on the line the route writes (rows.ts): lossless both ways,
    // so a long or decimal constant keeps its digits.
    const line = stringifyLossless(s.const)
    return need(`the constant ${line} does not fit it`, s.const === null || valueConverter(type, formatVersion)(losslessParse(line)) !== undefined)
  }
  if (keys === 'device' && s.device === true) return need('the device id is a string, which needs a string column', kind === 'string')
  if (keys === 'received' && s.received === true) return need('the received time needs a timestamp or string column', TIMESTAMPS.has(kind) || kind === 'string')
  if (keys === 'raw' && s.raw === true) return need('the raw payload is JSON text, which needs a string column', kind === 'string')
  throw invalid(`columns.${column}: give a JSON pointer or {pointer, as} | {const} | {device: true} | {received: true} | {raw: true}`, { column })
}

function checkRequire(require: unknown): Require {
  if (typeof require !== 'object' || require === null || Array.isArray(require)) throw invalid('device_require: give {"<JSON pointer>": value | [values]}')
  for (const [p, want] of Object.entries(require)) {
    checkPointer(p, 'device_require')
    for (const w of Array.isArray(want) ? want : [want]) {
      if (w !== null && typeof w === 'object') throw invalid(`device_require ${p}: compare with strings, numbers, booleans or null`)
    }
  }
  return require as Require
}

/**
 * The stored form of a sink's device settings, checked against its table. Throws 400 mapping_invalid.
 * Null when nothing is set (the route then stores each payload object as a row).
 */
export function compileDevice(input: { mapping: MappingInput | null; require: Require | null; strip: Pointer[] | null }, meta: TableMetadata): Compiled | null {
  if (!input.mapping && !input.require && !input.strip) return null
  const formatVersion = meta['format-version'] >= 3 ? 3 : 2
  const fields = new Map(currentSchema(meta).fields.map((f) => [f.name, f]))
  let preset: Preset | undefined
  let mapping: Mapping | undefined
  if (input.mapping && 'preset' in input.mapping) {
    preset = PRESETS[input.mapping.preset]
    // The OTLP route's preset names a table's columns, not a device mapping: say where it belongs.
    if (input.mapping.preset === OTLP_PRESET)
      throw invalid(
        `${OTLP_PRESET} is the OpenTelemetry logs route's table (POST /v1/sinks/{id}/otlp/v1/logs), not a device mapping: leave the mapping out and create the table with: ${CREATE_LINE}`,
        { command: CREATE_LINE },
      )
    if (!preset) throw invalid(`no preset ${input.mapping.preset}; the presets are ${Object.keys(PRESETS).join(', ')}`, { presets: Object.keys(PRESETS) })
    const wrong = Object.entries(preset.columns).filter(([name, type]) => !fields.has(name) || !holds(fields.get(name)!.type, type))
    if (wrong.length > 0) {
      const [name, type] = wrong[0]
      throw invalid(
        `preset ${preset.name} fills column ${name} (${type}); the table ${fields.has(name) ? `has it as ${JSON.stringify(fields.get(name)!.type)}` : 'has no such column'}`,
        {
          column: name,
          type,
          columns: wrong.map(([n, t]) => ({ name: n, type: t })),
          command: `lhbox table create <warehouse>.<ns>.<table> --format-version 3${Object.entries(preset.columns)
            .map(([n, t]) => ` --column ${n}:${t}`)
            .join('')}`,
        },
      )
    }
    mapping = preset.mapping
  } else if (input.mapping) mapping = input.mapping

  const columns: CompiledColumn[] = []
  const filled = new Set<string>()
  const fill = (name: string, where: string) => {
    const field = fields.get(name)
    if (name === INGEST_TS) throw invalid(`${where}: ${INGEST_TS} is the roller's to stamp`, { column: name })
    if (!field) throw invalid(`${where}: the table has no column ${name}`, { column: name })
    if (filled.has(name)) throw invalid(`${where}: column ${name} is mapped twice`, { column: name })
    filled.add(name)
    return field
  }
  if (mapping) {
    if (typeof mapping.columns !== 'object' || mapping.columns === null) throw invalid('mapping.columns: give {"<column>": source}')
    for (const [name, source] of Object.entries(mapping.columns)) {
      const field = fill(name, `columns.${name}`)
      checkSource(name, source, field.type, formatVersion)
      columns.push({ name, source, target: targetOf(field.type) })
    }
    for (const [what, geo] of [
      ['point', mapping.point],
      ['shape', mapping.shape],
    ] as const) {
      if (!geo) continue
      const field = fill(geo.column, what)
      if (kindOf(field.type) !== 'geometry' || !holds(field.type, 'geometry'))
        throw invalid(`${what}: column ${geo.column} is ${JSON.stringify(field.type)}; a ${what} needs a geometry column (format-version 3)`, {
          column: geo.column,
        })
      for (const p of what === 'point' ? [(geo as { lon: string }).lon, (geo as { lat: string }).lat] : [(geo as { geojson: string }).geojson])
        checkPointer(p, what, geo.column)
    }
    const unfilled = currentSchema(meta).fields.find((f) => f.required && !filled.has(f.name) && f['write-default'] === undefined)
    if (unfilled) throw invalid(`column ${unfilled.name} is required and the mapping does not fill it; every row would be rejected`, { column: unfilled.name })
  }
  const require = { ...(preset?.require ?? {}), ...(input.require ? checkRequire(input.require) : {}) }
  const strip = (input.strip ?? []).map((p) => checkPointer(p, 'device_strip'))
  return {
    preset: preset?.name ?? null,
    columns,
    point: mapping?.point ?? null,
    shape: mapping?.shape ?? null,
    require,
    strip,
    naturalId: preset?.naturalId ?? null,
    answer: preset?.answer ?? null,
  }
}
