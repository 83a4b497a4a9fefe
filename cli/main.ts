// lhbox: the operator's and producer's command line. Errors print "error: <code>: <message>" and exit 1.
import { parseArgs } from 'node:util'
import { CONNECT_FLAGS, connect } from './commands/connect.ts'
import { mcp } from './commands/mcp.ts'
import { sink, SINK_FLAGS } from './commands/sink.ts'
import { table, TABLE_FLAGS } from './commands/table.ts'
import { usage } from './commands/usage.ts'
import { warehouse, WAREHOUSE_FLAGS } from './commands/warehouse.ts'
import { api, CliError, connection } from './http.ts'

const USAGE = `lhbox <command> [options]

  warehouse list                 the project's warehouses
  warehouse create <name>        a warehouse (--bucket, --endpoint, --region, --catalog-uri
                                 [--catalog-token-file F | --catalog-credential-file F])
  warehouse get <name>           its catalog and its last storage figure
  warehouse update <name>        --catalog-token-file F | --catalog-credential-file F (sealed)
  warehouse measure <name>       a storage figure now [--wait]
  table create <wh>.<ns>.<t>     --column name:type[:required] ... [--format-version 2|3]
                                 [--partition 'day(ts)'] [--doc TEXT] [--schema FILE.json]
  table list [<warehouse>]       [--namespace NS]
  table get <wh>.<ns>.<t>        schema, partitioning, docs, snapshots
  table document <wh>.<ns>.<t>   [--doc TEXT] [--column name=TEXT ...]

  sink create <warehouse>        --table <ns>.<table> --name NAME (--save FILE | --show-key)
                                 [--roll-seconds N] [--roll-bytes N] [--inactivity-seconds N]
                                 [--key col[,col]] [--preset NAME | --mapping-file FILE]
                                 [--device-require POINTER=VALUE ...] [--device-strip POINTER ...]
                                 the send key is answered once: --save writes it to a new FILE
                                 (mode 0600; an existing file is never overwritten), --show-key
                                 prints it; without either nothing is created
  sink update <sink>             [--key col[,col] | --no-key] [--roll-seconds N] [--roll-bytes N]
                                 [--inactivity-seconds N | --no-inactivity]
                                 [--preset NAME | --mapping-file FILE | --no-mapping]
                                 [--device-require POINTER=VALUE ... | --no-device-require]
                                 [--device-strip POINTER ... | --no-device-strip]
                                 the device route's mapping: a preset (owntracks, ttn, osmand,
                                 particle, gpslogger) or a JSON file {"columns": {...}, "point"?,
                                 "shape"?}; --device-require /p=V takes V as JSON when it parses
                                 (else a string), a repeated /p allows any of its values;
                                 --device-strip /p drops a member of the payload before mapping
  sink dedupe <sink>             [--wait]  keep the latest row per key, once; --wait polls until
                                 done (LHBOX_DEDUPE_POLL_MS, default 2000; LHBOX_DEDUPE_TIMEOUT_MS,
                                 default 900000)
  sink list [<warehouse>]        [--all] [--limit N [--cursor C]]  by name; --all includes deleted
                                 sinks; every page is read unless --limit N asks for one (1-1000),
                                 with the command for the next
  sink get <sink>                state, policy, mapping, lag, received, last roll, rejects, dedupe,
                                 the last maintenance sweep and the next
  sink delete <sink>             [--discard-pending]  refused while batches wait unless given
  sink send [<sink>] <file|->    (--send-key-file FILE | --send-key KEY | LHBOX_SEND_KEY)
                                 [--batch-id ID]  posts the JSON array's bytes unchanged; a
                                 generated batch id is printed to stderr: retry with --batch-id.
                                 <sink> is an id (snk_…) or, with an API key, a name; with
                                 --send-key-file it may be left out
  sink device-url <sink>         --device ID [--basic] (--send-key-file FILE | --send-key KEY |
                                 LHBOX_SEND_KEY)  the URL for a device app: the key in ?key=, or
                                 with --basic the URL, and the user and password for HTTP Basic
  sink rotate-key <sink>         (--save FILE | --show-key) [--retire-previous-after SECONDS]
                                 a new send key, answered once as at create; the previous one
                                 works a day more (0 to 604800 s; 0: retired now)
  sink retire-previous-key <sink>  the previous send key stops working now
  connect [<warehouse>]          the catalog connection per warehouse (lhbox's Iceberg REST catalog
                                 and the DuckDB, PyIceberg and Spark lines for it), and where sinks
                                 take rows; --engine duckdb|pyiceberg|spark prints only that
                                 engine's lines for one warehouse
  usage                          this month's ingest_bytes, by sink
  health                         GET /healthz
  mcp                            serves the edge's MCP tools over stdio (list_sinks, describe_sink,
                                 send_rows, get_rejects, sample_rows) with LHBOX_API_KEY, else
                                 LHBOX_SEND_KEY; each call goes to <LHBOX_URL>/mcp

<sink> is a sink's name or id (snk_…).
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
        ...SINK_FLAGS,
        ...CONNECT_FLAGS,
      },
    })
    const [command, ...rest] = positionals
    if (!command || values.help) {
      out(USAGE)
      return command || values.help ? 0 : 2
    }
    // Resolved when a command needs it: `sink send --send-key-file` needs no LHBOX_URL.
    const conn = () => connection(values)
    switch (command) {
      case 'warehouse':
        out(await warehouse(conn(), rest, values, err))
        return 0
      case 'table':
        out(await table(conn(), rest, values))
        return 0
      case 'sink':
        out(await sink(conn, rest, values, err))
        return 0
      case 'connect':
        out(await connect(conn(), rest, values))
        return 0
      case 'usage':
        out(await usage(conn(), rest, values))
        return 0
      case 'mcp':
        // stdout is the protocol's: nothing else is printed on it.
        await mcp(conn())
        return 0
      case 'health':
        out(JSON.stringify(await api(conn(), 'GET', '/healthz')))
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
