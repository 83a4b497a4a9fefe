// lhbox: the operator's and producer's command line. Errors print "error: <code>: <message>" and exit 1.
import { parseArgs } from 'node:util'
import { warehouse, WAREHOUSE_FLAGS } from './commands/warehouse.ts'
import { api, CliError, connection } from './http.ts'

const USAGE = `lhbox <command> [options]

  warehouse list                 the project's warehouses
  warehouse create <name>        a warehouse (--bucket, --endpoint, --region, --catalog-uri)
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
