// lhbox warehouse create|list
import { api, CliError, type Connection } from '../http.ts'
import { json, table } from '../output.ts'

interface Warehouse {
  id: string
  name: string
  catalog: { type: string; uri?: string }
  bucket: string
  endpoint: string
  region: string
  prefix: string
}

export const WAREHOUSE_FLAGS = {
  bucket: { type: 'string' },
  endpoint: { type: 'string' },
  region: { type: 'string' },
  prefix: { type: 'string' },
  'catalog-uri': { type: 'string' },
  'catalog-warehouse': { type: 'string' },
  'catalog-token': { type: 'string' },
} as const

export async function warehouse(conn: Connection, args: string[], flags: Record<string, string | boolean | string[] | undefined>): Promise<string> {
  const [sub, name] = args
  if (sub === 'list') {
    const { warehouses } = await api<{ warehouses: Warehouse[] }>(conn, 'GET', '/v1/warehouses')
    if (flags.json) return json(warehouses)
    return table(
      warehouses.map((w) => ({ name: w.name, catalog: w.catalog.type, bucket: w.bucket, endpoint: w.endpoint, id: w.id })),
      ['name', 'catalog', 'bucket', 'endpoint', 'id'],
    )
  }
  if (sub === 'create') {
    if (!name) throw new CliError('usage', 'lhbox warehouse create <name> [--bucket B] [--endpoint URL] [--region R] [--catalog-uri URL]')
    const catalog = flags['catalog-uri']
      ? { type: 'rest', uri: flags['catalog-uri'], warehouse: flags['catalog-warehouse'], token: flags['catalog-token'] }
      : { type: 'sql' }
    const created = await api<Warehouse>(conn, 'POST', '/v1/warehouses', {
      name,
      catalog,
      bucket: flags.bucket,
      endpoint: flags.endpoint,
      region: flags.region,
      prefix: flags.prefix,
    })
    return flags.json ? json(created) : `created warehouse ${created.name} (${created.id})`
  }
  throw new CliError('usage', 'lhbox warehouse list | create <name>')
}
