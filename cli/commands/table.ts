// lhbox table create|list|get|document
import { readFileSync } from 'node:fs'
import { api, CliError, type Connection } from '../http.ts'
import { json, table as grid } from '../output.ts'

export const TABLE_FLAGS = {
  column: { type: 'string', multiple: true },
  'format-version': { type: 'string' },
  partition: { type: 'string', multiple: true },
  doc: { type: 'string' },
  schema: { type: 'string' },
  namespace: { type: 'string' },
} as const

type Flags = Record<string, string | boolean | string[] | undefined>

interface TableView {
  table: string
  warehouse: string
  format_version: number
  location: string
  doc: string | null
  schema: { fields: Array<{ id: number; name: string; type: unknown; required: boolean; doc?: string }> }
  partition_spec: Array<{ name: string; transform: string; source: string }>
  snapshot_count: number
  current_snapshot_id: string | null
  undocumented_columns: string[]
}

/** `name:type[:required]`; the type may itself hold a colon (geometry(OGC:CRS84)). */
export function parseColumn(spec: string): { name: string; type: string; required: boolean } {
  const i = spec.indexOf(':')
  if (i <= 0 || i === spec.length - 1) throw new CliError('usage', `--column ${spec}: give name:type[:required]`)
  let type = spec.slice(i + 1)
  const required = type.endsWith(':required')
  if (required) type = type.slice(0, -':required'.length)
  return { name: spec.slice(0, i), type, required }
}

function splitTable(ref: string | undefined, usage: string): { warehouse: string; table: string } {
  const parts = (ref ?? '').split('.')
  if (parts.length < 3 || parts.some((p) => !p)) throw new CliError('usage', usage)
  return { warehouse: parts[0], table: parts.slice(1).join('.') }
}

function show(t: TableView): string {
  const typeText = (type: unknown) => (typeof type === 'string' ? type : JSON.stringify(type))
  const lines = [
    `${t.warehouse}.${t.table}  (format-version ${t.format_version}, ${t.snapshot_count} snapshot${t.snapshot_count === 1 ? '' : 's'})`,
    `location   ${t.location}`,
    `doc        ${t.doc ?? '(none)'}`,
    `partition  ${t.partition_spec.length ? t.partition_spec.map((p) => `${p.transform}(${p.source})`).join(', ') : '(unpartitioned)'}`,
    '',
    grid(
      t.schema.fields.map((f) => ({ id: f.id, name: f.name, type: typeText(f.type), required: f.required ? 'yes' : '', doc: f.doc ?? '' })),
      ['id', 'name', 'type', 'required', 'doc'],
    ),
  ]
  if (t.doc === null || t.undocumented_columns.length > 0) {
    lines.push('', `Describe it: lhbox table document ${t.warehouse}.${t.table} --doc '…' --column name='…'`)
  }
  return lines.join('\n')
}

export async function table(conn: Connection, args: string[], flags: Flags): Promise<string> {
  const [sub, ref] = args
  switch (sub) {
    case 'create': {
      const usage =
        'lhbox table create <warehouse>.<ns>.<table> --column name:type[:required] ... [--format-version 2|3] [--partition day(ts)] [--doc TEXT] [--schema FILE.json]'
      const { warehouse, table: name } = splitTable(ref, usage)
      const columns = ((flags.column as string[] | undefined) ?? []).map(parseColumn)
      const schema = flags.schema ? JSON.parse(readFileSync(String(flags.schema), 'utf8')) : undefined
      if (!schema && columns.length === 0) throw new CliError('usage', usage)
      const body = {
        warehouse,
        table: name,
        ...(schema ? { schema } : { columns }),
        format_version: flags['format-version'] ? Number(flags['format-version']) : undefined,
        partition: flags.partition,
        doc: flags.doc,
      }
      const created = await api<TableView>(conn, 'POST', '/v1/tables', body)
      return flags.json ? json(created) : `created ${created.warehouse}.${created.table}\n\n${show(created)}`
    }
    case 'list': {
      const warehouse = ref ?? process.env.LHBOX_WAREHOUSE
      if (!warehouse) throw new CliError('usage', 'lhbox table list <warehouse> [--namespace NS] (or set LHBOX_WAREHOUSE)')
      const qs = new URLSearchParams({ warehouse, ...(flags.namespace ? { namespace: String(flags.namespace) } : {}) })
      const res = await api<{ tables: Array<{ namespace: string; name: string }> }>(conn, 'GET', `/v1/tables?${qs}`)
      return flags.json ? json(res.tables) : grid(res.tables, ['namespace', 'name'])
    }
    case 'get': {
      splitTable(ref, 'lhbox table get <warehouse>.<ns>.<table>')
      const t = await api<TableView>(conn, 'GET', `/v1/tables/${encodeURIComponent(ref!)}`)
      return flags.json ? json(t) : show(t)
    }
    case 'document': {
      splitTable(ref, "lhbox table document <warehouse>.<ns>.<table> [--doc TEXT] [--column name='TEXT' ...]")
      const columns: Record<string, string> = {}
      for (const spec of (flags.column as string[] | undefined) ?? []) {
        const i = spec.indexOf('=')
        if (i <= 0) throw new CliError('usage', `--column ${spec}: give name=TEXT`)
        columns[spec.slice(0, i)] = spec.slice(i + 1)
      }
      const t = await api<TableView>(conn, 'PATCH', `/v1/tables/${encodeURIComponent(ref!)}/docs`, { doc: flags.doc, columns })
      return flags.json ? json(t) : `documented ${t.warehouse}.${t.table}\n\n${show(t)}`
    }
    default:
      throw new CliError('usage', 'lhbox table create | list | get | document')
  }
}
