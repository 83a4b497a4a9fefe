// lhbox warehouse create|list|get|update|measure
import { readFileSync } from 'node:fs'
import { api, CliError, type Connection } from '../http.ts'
import { json, table } from '../output.ts'
import { seconds, waitSettings } from '../wait.ts'
import { bytes } from './sink.ts'

type Flags = Record<string, string | boolean | string[] | undefined>

interface Storage {
  bytes: number | null
  intake_bytes: number | null
  objects: number | null
  tables: Record<string, number>
  measured_at: string | null
  requested_at: string | null
}

interface Warehouse {
  id: string
  name: string
  catalog: { type: string; uri?: string; auth?: string }
  bucket: string
  endpoint: string
  region: string
  prefix: string
  storage: Storage
}

export const WAREHOUSE_FLAGS = {
  bucket: { type: 'string' },
  endpoint: { type: 'string' },
  region: { type: 'string' },
  prefix: { type: 'string' },
  maintenance: { type: 'string' },
  'catalog-uri': { type: 'string' },
  'catalog-warehouse': { type: 'string' },
  'catalog-token': { type: 'string' },
  'catalog-token-file': { type: 'string' },
  'catalog-credential-file': { type: 'string' },
} as const

const USAGE = {
  create:
    'lhbox warehouse create <name> [--bucket B] [--endpoint URL] [--region R] [--prefix P (default wh/<id>)] [--maintenance roller|off] [--catalog-uri URL [--catalog-warehouse W] [--catalog-token-file F | --catalog-credential-file F]]',
  update: 'lhbox warehouse update <name> (--catalog-token-file F | --catalog-credential-file F)',
  measure: 'lhbox warehouse measure <name> [--wait]',
}

/** A REST catalog's secret from a file (never a flag's value where it can help: flags land in shell history). */
function secretFlags(flags: Flags): { token?: string; credential?: string } {
  const read = (flag: string) => (typeof flags[flag] === 'string' ? readFileSync(flags[flag] as string, 'utf8').trim() : undefined)
  const token = read('catalog-token-file') ?? (flags['catalog-token'] as string | undefined)
  const credential = read('catalog-credential-file')
  return { ...(token ? { token } : {}), ...(credential ? { credential } : {}) }
}

function showStorage(w: Warehouse): string {
  const s = w.storage
  if (s.measured_at === null) return `storage    not measured yet${s.requested_at ? ` (asked at ${s.requested_at})` : ''}`
  const lines = [`storage    ${s.bytes} bytes (${bytes(s.bytes ?? 0)}) in ${s.objects} objects; ${s.intake_bytes} under _sink/; measured ${s.measured_at}`]
  for (const [t, n] of Object.entries(s.tables)) lines.push(`  ${t}  ${n} bytes of Parquet`)
  return lines.join('\n')
}

async function measure(conn: Connection, name: string, flags: Flags, err: (s: string) => void): Promise<string> {
  const path = `/v1/warehouses/${encodeURIComponent(name)}`
  const asked = await api<Warehouse>(conn, 'POST', `${path}/measure`)
  const requestedAt = asked.storage.requested_at
  if (!flags.wait) {
    if (flags.json) return json(asked.storage)
    return `storage figure of ${name} asked at ${requestedAt}; the roller measures it at its next tick (lhbox warehouse get ${name}, or --wait)`
  }
  const { pollMs, timeoutMs } = waitSettings('MEASURE', 10 * 60_000)
  const started = Date.now()
  err(`storage figure of ${name} asked at ${requestedAt}; waiting for the roller…`)
  for (;;) {
    const w = await api<Warehouse>(conn, 'GET', path)
    // Answered: no request outstanding, and a figure made after the one asked for.
    if (!w.storage.requested_at && w.storage.measured_at && (!requestedAt || w.storage.measured_at >= requestedAt)) {
      return flags.json ? json(w.storage) : showStorage(w)
    }
    const elapsed = Date.now() - started
    if (elapsed >= timeoutMs) {
      throw new CliError('measure_timeout', `no storage figure after ${seconds(elapsed)} s; the request stays queued (is a roller running?)`)
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(pollMs, timeoutMs - elapsed)))
  }
}

export async function warehouse(conn: Connection, args: string[], flags: Flags, err: (s: string) => void = console.error): Promise<string> {
  const [sub, name] = args
  if (sub === 'list') {
    const { warehouses } = await api<{ warehouses: Warehouse[] }>(conn, 'GET', '/v1/warehouses')
    if (flags.json) return json(warehouses)
    return table(
      warehouses.map((w) => ({ name: w.name, catalog: w.catalog.type, bucket: w.bucket, endpoint: w.endpoint, bytes: w.storage.bytes, id: w.id })),
      ['name', 'catalog', 'bucket', 'endpoint', 'bytes', 'id'],
    )
  }
  if (sub === 'create') {
    if (!name) throw new CliError('usage', USAGE.create)
    const catalog = flags['catalog-uri']
      ? { type: 'rest', uri: flags['catalog-uri'], warehouse: flags['catalog-warehouse'], ...secretFlags(flags) }
      : { type: 'sql' }
    const created = await api<Warehouse>(conn, 'POST', '/v1/warehouses', {
      name,
      catalog,
      bucket: flags.bucket,
      endpoint: flags.endpoint,
      region: flags.region,
      prefix: flags.prefix,
      maintenance: flags.maintenance,
    })
    return flags.json ? json(created) : `created warehouse ${created.name} (${created.id})`
  }
  if (sub === 'get') {
    if (!name) throw new CliError('usage', 'lhbox warehouse get <name>')
    const w = await api<Warehouse>(conn, 'GET', `/v1/warehouses/${encodeURIComponent(name)}`)
    if (flags.json) return json(w)
    const catalog = w.catalog.type === 'rest' ? `rest ${w.catalog.uri} (auth: ${w.catalog.auth})` : 'sql'
    return [
      `warehouse  ${w.name} (${w.id})`,
      `catalog    ${catalog}`,
      `bucket     ${w.bucket} at ${w.endpoint}`,
      `root       s3://${w.bucket}${w.prefix ? `/${w.prefix}` : ''}/`,
      showStorage(w),
    ].join('\n')
  }
  if (sub === 'update') {
    const secret = secretFlags(flags)
    if (!name || Object.keys(secret).length === 0) throw new CliError('usage', USAGE.update)
    const w = await api<Warehouse>(conn, 'PATCH', `/v1/warehouses/${encodeURIComponent(name)}`, { catalog: secret })
    return flags.json ? json(w) : `updated warehouse ${w.name}: the catalog signs in with ${w.catalog.auth}`
  }
  if (sub === 'measure') {
    if (!name) throw new CliError('usage', USAGE.measure)
    return measure(conn, name, flags, err)
  }
  throw new CliError('usage', 'lhbox warehouse list | get <name> | create <name> | update <name> | measure <name> [--wait]')
}
