// The device side of `lhbox sink`: the flags that set a sink's mapping, device_require and device_strip
// (for create and update), the lines `sink get` shows for them, and `lhbox sink device-url`.
//
// The flags are translated to request-body fields by deviceFields(), a pure function (the mapping
// file is read through a reader it is given): every usage error is raised there, before any API call.
// The mapping itself is checked by the server (400 mapping_invalid); the CLI checks only the flags'
// shapes: one of --preset / --mapping-file / --no-mapping, JSON pointers, POINTER=VALUE.
import { readFileSync } from 'node:fs'
import { api, CliError, type Connection } from '../http.ts'
import { json } from '../output.ts'
import { loadSendKey } from './send.ts'

type Flags = Record<string, string | boolean | string[] | undefined>

export const DEVICE_FLAGS = {
  preset: { type: 'string' },
  'mapping-file': { type: 'string' },
  'no-mapping': { type: 'boolean' },
  'device-require': { type: 'string', multiple: true },
  'no-device-require': { type: 'boolean' },
  'device-strip': { type: 'string', multiple: true },
  'no-device-strip': { type: 'boolean' },
  device: { type: 'string' },
  basic: { type: 'boolean' },
} as const

/** The presets the server knows today; for the usage text only (the server decides). */
const PRESETS = 'owntracks, ttn, osmand, particle, gpslogger'

export const DEVICE_USAGE = {
  create: '[--preset NAME | --mapping-file FILE] [--device-require POINTER=VALUE ...] [--device-strip POINTER ...]',
  update:
    '[--preset NAME | --mapping-file FILE | --no-mapping] [--device-require POINTER=VALUE ... | --no-device-require] [--device-strip POINTER ... | --no-device-strip]',
  deviceUrl: 'lhbox sink device-url <sink> --device ID [--basic] (--send-key-file FILE | --send-key KEY | LHBOX_SEND_KEY)',
  notes: `presets: ${PRESETS}; a repeated --device-require POINTER allows any of its values`,
}

/** The fields of POST/PATCH /v1/sinks the device flags set; absent: unchanged (update) or unset (create). */
export interface DeviceFields {
  mapping?: Record<string, unknown> | null
  device_require?: Record<string, unknown> | null
  device_strip?: string[] | null
}

const usage = (message: string) => new CliError('usage', message)

function many(value: Flags[string]): string[] {
  if (value === undefined || typeof value === 'boolean') return []
  return Array.isArray(value) ? value : [value]
}

/** A JSON pointer (RFC 6901) to a member: "/a", "/a/0/b"; "~" only as ~0 or ~1. */
const POINTER = /^(?:\/(?:[^~/]|~[01])*)+$/

function pointer(flag: string, p: string): string {
  if (!POINTER.test(p)) throw usage(`${flag} ${p || '""'}: give a JSON pointer into the payload, such as /_type or /uplink_message/f_port (~0 for ~, ~1 for /)`)
  return p
}

/** VALUE of --device-require: JSON when it parses as a JSON scalar, otherwise the text as a string. */
function requireValue(spec: string, raw: string): unknown {
  let value: unknown
  try {
    value = JSON.parse(raw)
  } catch {
    return raw
  }
  if (typeof value === 'object' && value !== null) {
    throw usage(`--device-require ${spec}: give one value (a string, a number, true, false or null); to allow several, repeat the flag with the same pointer`)
  }
  if (typeof value === 'number' && (!Number.isFinite(value) || (/^\s*-?\d+\s*$/.test(raw) && !Number.isSafeInteger(value)))) {
    throw usage(`--device-require ${spec}: ${raw.trim()} is not exact as a JSON number; quote it ('"${raw.trim()}"') to compare it as a string`)
  }
  return value
}

/** --device-require POINTER=VALUE ...: one value per pointer, or a list where a pointer is repeated. */
function deviceRequire(specs: string[]): Record<string, unknown> {
  const values = new Map<string, unknown[]>()
  for (const spec of specs) {
    const eq = spec.indexOf('=')
    if (eq < 0) throw usage(`--device-require ${spec}: give POINTER=VALUE, such as /_type=location`)
    const p = pointer('--device-require', spec.slice(0, eq))
    const v = requireValue(spec, spec.slice(eq + 1))
    const list = values.get(p) ?? []
    if (!list.some((w) => w === v)) list.push(v)
    values.set(p, list)
  }
  return Object.fromEntries([...values].map(([p, list]) => [p, list.length === 1 ? list[0] : list]))
}

const readText = (path: string) => readFileSync(path, 'utf8')

function mappingFile(path: string, read: (path: string) => string): Record<string, unknown> {
  if (path === '') throw usage('--mapping-file needs a file path')
  let text: string
  try {
    text = read(path)
  } catch (err) {
    throw usage(`cannot read --mapping-file ${path}: ${(err as Error).message}`)
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (err) {
    throw usage(`--mapping-file ${path} is not JSON: ${(err as Error).message}`)
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !('columns' in parsed || 'preset' in parsed)) {
    throw usage(`--mapping-file ${path} holds no mapping: give the mapping object, {"columns": {...}, "point"?: {...}, "shape"?: {...}}`)
  }
  return parsed as Record<string, unknown>
}

/**
 * The device flags as request-body fields. `create` refuses the --no-… flags (a new sink has nothing to
 * remove). Throws CliError('usage') on a conflict or a malformed flag; reads --mapping-file with `read`.
 */
export function deviceFields(flags: Flags, mode: 'create' | 'update', read: (path: string) => string = readText): DeviceFields {
  if (mode === 'create') {
    const removing = (['no-mapping', 'no-device-require', 'no-device-strip'] as const).filter((f) => flags[f])
    if (removing.length) throw usage(`--${removing[0]} is for sink update: a new sink has nothing to remove`)
  }
  const mappingFlags = (['preset', 'mapping-file', 'no-mapping'] as const).filter((f) => flags[f] !== undefined && flags[f] !== false)
  if (mappingFlags.length > 1) throw usage(`give one of --preset, --mapping-file and --no-mapping (not --${mappingFlags.join(' and --')})`)
  const requires = many(flags['device-require'])
  const strips = many(flags['device-strip'])
  if (requires.length && flags['no-device-require']) throw usage('give one of --device-require and --no-device-require')
  if (strips.length && flags['no-device-strip']) throw usage('give one of --device-strip and --no-device-strip')

  const body: DeviceFields = {}
  if (flags.preset !== undefined) {
    const name = String(flags.preset).trim()
    if (!name) throw usage(`--preset needs a name (${PRESETS})`)
    body.mapping = { preset: name }
  } else if (flags['mapping-file'] !== undefined) {
    body.mapping = mappingFile(String(flags['mapping-file']), read)
  } else if (flags['no-mapping']) {
    body.mapping = null
  }
  if (requires.length) body.device_require = deviceRequire(requires)
  else if (flags['no-device-require']) body.device_require = null
  if (strips.length) body.device_strip = [...new Set(strips.map((p) => pointer('--device-strip', p)))]
  else if (flags['no-device-strip']) body.device_strip = null
  return body
}

/** A 400 mapping_invalid names the file it came from, when it came from one. */
export function mappingHint(e: unknown, flags: Flags): unknown {
  if (e instanceof CliError && e.code === 'mapping_invalid' && flags['mapping-file'] !== undefined) {
    return new CliError(e.code, `${e.message} (in --mapping-file ${flags['mapping-file']})`, e.status)
  }
  return e
}

// --- sink get --------------------------------------------------------------------------------------

/** What GET /v1/sinks/{id} answers about devices (absent from a server without the device route). */
export interface DeviceView {
  id: string
  name: string
  state?: string
  mapping?: Record<string, any> | null
  device_require?: Record<string, unknown> | null
  device_strip?: string[] | null
  device_url?: string
}

function mappingSummary(m: Record<string, any>): string {
  if (typeof m.preset === 'string') return `preset ${m.preset}`
  const n = Object.keys(m.columns ?? {}).length
  const parts = [`custom, ${n} ${n === 1 ? 'column' : 'columns'}`]
  if (m.point?.column) parts.push(`point → ${m.point.column}`)
  if (m.shape?.column) parts.push(`shape → ${m.shape.column}`)
  return parts.join('; ')
}

/** The `sink get` lines for the mapping, device_require and device_strip, each only when set. */
export function deviceLines(s: DeviceView): string[] {
  const lines: string[] = []
  if (s.mapping) {
    lines.push(`mapping    ${mappingSummary(s.mapping)}`)
    if (s.device_url) lines.push(`devices    ${s.device_url}  (lhbox sink device-url ${s.name} --device ID)`)
  }
  if (s.device_require && Object.keys(s.device_require).length) {
    const req = Object.entries(s.device_require).map(([p, v]) => (Array.isArray(v) ? `${p} one of ${JSON.stringify(v)}` : `${p} = ${JSON.stringify(v)}`))
    lines.push(`require    ${req.join('; ')}`)
  }
  if (s.device_strip?.length) lines.push(`strip      ${s.device_strip.join(', ')}`)
  return lines
}

// --- device-url ------------------------------------------------------------------------------------

const DEVICE_ID = /^[A-Za-z0-9._-]{1,64}$/

export interface DeviceLink {
  url: string
  user?: string
  password?: string
}

/**
 * The URL for a device app, from the sink's device_url (…/devices/{device_id}): the key in ?key=, or,
 * with `basic`, the URL without it and the key as the HTTP Basic password (the device id as the user).
 */
export function deviceLink(template: string, device: string, key: string, basic: boolean): DeviceLink {
  if (!template.includes('{device_id}')) throw new CliError('bad_response', `the sink's device_url ${template} holds no {device_id}`)
  const url = template.replace('{device_id}', encodeURIComponent(device))
  if (basic) return { url, user: device, password: key }
  return { url: `${url}${url.includes('?') ? '&' : '?'}key=${encodeURIComponent(key)}` }
}

export function showDeviceLink(link: DeviceLink): string {
  return link.password === undefined ? link.url : [link.url, `user: ${link.user}`, `password: ${link.password}`].join('\n')
}

export const KEY_IN_URL_NOTE =
  'note: a key in a URL lands in access logs (the app, proxies, the server); where the app supports HTTP Basic auth, prefer --basic'

export async function deviceUrl(conn: () => Connection, args: string[], flags: Flags, err: (s: string) => void): Promise<string> {
  const [ref] = args
  if (!ref || args.length > 1) throw usage(DEVICE_USAGE.deviceUrl)
  const device = flags.device
  if (typeof device !== 'string') throw usage(`give the device's id: --device ID\n${DEVICE_USAGE.deviceUrl}`)
  if (!DEVICE_ID.test(device)) throw usage(`--device ${device}: 1–64 characters of A-Z a-z 0-9 . _ -`)
  const { key, keyFile } = loadSendKey(flags, DEVICE_USAGE.deviceUrl)
  const s = await api<DeviceView>(conn(), 'GET', `/v1/sinks/${encodeURIComponent(ref)}`)
  if (keyFile?.sink_id && keyFile.sink_id !== s.id) {
    throw usage(`the --send-key-file is for sink ${keyFile.name} (${keyFile.sink_id}), not ${s.name} (${s.id})`)
  }
  if (s.state === 'deleted') throw new CliError('sink_not_found', `sink ${s.name} (${s.id}) is deleted`)
  if (!s.device_url) throw new CliError('no_device_route', `GET /v1/sinks/${ref} answered no device_url: this server has no device route`)
  if (!s.mapping) err(`note: sink ${s.name} has no mapping yet (lhbox sink update ${s.name} --preset NAME | --mapping-file FILE)`)
  const link = deviceLink(s.device_url, device, key, Boolean(flags.basic))
  if (!flags.basic) err(KEY_IN_URL_NOTE)
  return flags.json ? json(link) : showDeviceLink(link)
}
