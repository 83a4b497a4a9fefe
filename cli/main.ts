// lhbox: the operator's and producer's command line. Errors print "error: <code>: <message>" and exit 1.
import { parseArgs } from 'node:util'
import { table, TABLE_FLAGS } from './commands/table.ts'
import { warehouse, WAREHOUSE_FLAGS } from './commands/warehouse.ts'
import { api, CliError, connection } from './http.ts'

const USAGE = `lhbox <command> [options]

  warehouse list                 the project's warehouses
  warehouse create <name>        a warehouse (--bucket, --endpoint, --region, --catalog-uri)
  table create <wh>.<ns>.<t>     --column name:type[:required] ... [--format-version 2|3]
                                 [--partition 'day(ts)'] [--doc TEXT] [--schema FILE.json]
  table list [<warehouse>]       [--namespace NS]
  table get <wh>.<ns>.<t>        schema, partitioning, docs, snapshots
  table document <wh>.<ns>.<t>   [--doc TEXT] [--column name=TEXT ...]
  health                         GET /healthz

Options: --url URL (LHBOX_URL), --api-key KEY (LHBOX_API_KEY), --json`

export async function main(argv: string[], out = (s: string) => console.log(s), err = (s: string) => console.error(s)): Promise<number> {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        url: { type: 'string' },
        'api-key': { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        ...WAREHOUSE_FLAGS,
        ...TABLE_FLAGS,
      },
    })
    const [command, ...rest] = positionals
    if (!command || values.help) {
      out(USAGE)
      return command || values.help ? 0 : 2
    }
    const conn = connection(values)
    switch (command) {
      case 'warehouse':
        out(await warehouse(conn, rest, values))
        return 0
      case 'table':
        out(await table(conn, rest, values))
        return 0
      case 'health':
        out(JSON.stringify(await api(conn, 'GET', '/healthz')))
        return 0
      default:
        throw new CliError('usage', `unknown command ${command}\n\n${USAGE}`)
    }
  } catch (e) {
    if (e instanceof CliError) err(`error: ${e.code}: ${e.message}`)
    else err(`error: ${(e as Error).message}`)
    return 1
  }
}
