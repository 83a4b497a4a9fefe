// Connection recipes (issue 28, part 5): what `lhbox connect` prints for a SQL-catalog warehouse —
// DuckDB's CREATE SECRET + ATTACH on <LHBOX_URL>/iceberg, PyIceberg's load_catalog, Spark's
// spark.sql.catalog.* — run as printed (the placeholder replaced by a read key; no store keys) in
// DuckDB 1.5.5 and PyIceberg against the table a sink just filled, as README's quickstart ends; the
// console's table page shows DuckDB lines that query that table. An external REST catalog's warehouse
// is named by its own URI, with no recipes (not proxied). A project of the file's own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { lhbox } from '../support/cli.ts'
import { ctx, deleteCatalogSinks, setupCatalogProjects } from '../support/iceberg-rest.ts'
import { pythonInTempDir, runPython, toExact } from '../support/python.ts'
import { tickInProcess } from '../support/roller.ts'
import { newSink, send, type Sink, uid } from '../support/sinks.ts'
import { call, stack } from '../support/stack.ts'

let sink: Sink
beforeAll(async () => {
  await setupCatalogProjects()
  sink = await newSink(ctx.project.key, { tableSpec: { warehouse: ctx.project.warehouse }, sink: { warehouse: ctx.project.warehouse } })
  const sent = await send(sink, '[{"x": 1, "who": "north"}, {"x": 9223372036854775807}]')
  expect(sent.status, sent.text).toBe(202)
  const t = await tickInProcess({ sink: sink.id })
  expect(t.code, t.stdout + t.stderr).toBe(0)
}, 15 * 60_000)
afterAll(deleteCatalogSinks)

/** The placeholder filled as a person would: a read key (no store keys: the catalog vends scoped ones). */
const fill = (text: string) => text.replaceAll('<API key>', ctx.readKey)

const connect = (args: string[]) => lhbox(['connect', ...args], { env: { LHBOX_API_KEY: ctx.readKey } })

describe('lhbox connect: recipes for lhbox’s Iceberg REST catalog', () => {
  it('prints DuckDB lines that attach the warehouse and list the table, run as printed', async () => {
    const printed = await connect([ctx.project.warehouse, '--engine', 'duckdb'])
    expect(printed.code, printed.stderr).toBe(0)
    const lines = printed.stdout.trim().split('\n')
    const alias = `lhbox_${ctx.project.warehouse}`
    // No store keys: DuckDB takes the catalog's table-scoped vended credentials.
    expect(lines).toEqual([
      `CREATE SECRET ${alias} (TYPE ICEBERG, TOKEN '<API key>');`,
      `ATTACH '${ctx.project.warehouse}' AS ${alias} (TYPE ICEBERG, ENDPOINT '${stack().apiUrl}/iceberg', SECRET ${alias}, ACCESS_DELEGATION_MODE 'vended_credentials');`,
      'SHOW ALL TABLES;',
    ])
    expect(printed.stdout).not.toContain(ctx.readKey)
    const [space, name] = sink.table.split('.')
    const listed = toExact(await runPython('duckdb_lines.py', [], undefined, { input: fill(printed.stdout) }))
    expect(listed.rows.map((r: any) => [r.database, r.schema, r.name])).toContainEqual([alias, space, name])
  })

  it('the console’s table page shows DuckDB lines that read the table the sink filled', async () => {
    const page = await call(`/console/f/tables/${ctx.project.warehouse}.${sink.table}`, { key: ctx.readKey })
    expect(page.status).toBe(200)
    const block = /<pre class="code" id="duckdb">([\s\S]*?)<\/pre>/.exec(page.text)?.[1] ?? ''
    const sql = block.replaceAll('&#39;', "'").replaceAll('&quot;', '"').replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&')
    expect(sql.trim().split('\n').at(-1)).toBe(`SELECT * FROM lhbox_${ctx.project.warehouse}.${sink.table} LIMIT 10;`)
    const read = toExact(await runPython('duckdb_lines.py', [], undefined, { input: fill(sql) }))
    expect(read.rows.map((r: any) => [r.x, r.who]).sort()).toEqual([
      [1n, 'north'],
      [9223372036854775807n, null],
    ])
  })

  it('prints PyIceberg’s load_catalog, which reads the table exactly, and Spark’s catalog configuration', async () => {
    const py = await connect([ctx.project.warehouse, '--engine', 'pyiceberg'])
    expect(py.code, py.stderr).toBe(0)
    expect(py.stdout).toContain(`"type": "rest", "uri": "${stack().apiUrl}/iceberg", "warehouse": "${ctx.project.warehouse}"`)
    const script = `${fill(py.stdout)}\nimport json\nt = catalog.load_table(${JSON.stringify(sink.table)}).scan(selected_fields=("x", "who")).to_arrow().sort_by("x")\nprint(json.dumps([[str(x), w] for x, w in zip(t["x"].to_pylist(), t["who"].to_pylist())]))\n`
    const { out } = await pythonInTempDir<string[][]>(script, 'recipe-')
    expect(out).toEqual([
      ['1', 'north'],
      ['9223372036854775807', null],
    ])

    const spark = await connect([ctx.project.warehouse, '--engine', 'spark'])
    const conf = Object.fromEntries(
      spark.stdout
        .trim()
        .split('\n')
        .map((l) => l.split(/=(.*)/s).slice(0, 2)),
    )
    const c = `spark.sql.catalog.lhbox_${ctx.project.warehouse}`
    expect(conf).toMatchObject({
      [c]: 'org.apache.iceberg.spark.SparkCatalog',
      [`${c}.type`]: 'rest',
      [`${c}.uri`]: `${stack().apiUrl}/iceberg`,
      [`${c}.warehouse`]: ctx.project.warehouse,
      [`${c}.token`]: '<API key>',
    })
    expect(spark.stdout).not.toContain('s3.access-key-id')
  })

  it('names an external REST catalog by its own URI, with no recipes (not proxied)', async () => {
    const name = `ext_${uid()}`
    const uri = 'https://catalog.example.com/api/catalog'
    const made = await call('/v1/warehouses', { key: ctx.project.key, json: { name, catalog: { type: 'rest', uri, warehouse: 'theirs' } } })
    expect(made.status, made.text).toBe(201)
    const conn = await call('/v1/connection', { key: ctx.readKey })
    const ext = conn.body.warehouses.find((w: { name: string }) => w.name === name)
    expect(ext).toMatchObject({ catalog: { type: 'rest', uri, warehouse: 'theirs', note: expect.stringMatching(/not proxy/) }, engines: null })
    const sql = conn.body.warehouses.find((w: { name: string }) => w.name === ctx.project.warehouse)
    expect(sql.catalog).toMatchObject({ type: 'sql', rest_uri: `${stack().apiUrl}/iceberg` })
    expect(sql.engines).toMatchObject({ catalog_uri: `${stack().apiUrl}/iceberg`, alias: `lhbox_${ctx.project.warehouse}` })

    const printed = await connect([name])
    expect(printed.stdout).toContain(`  catalog  rest, ${uri} (warehouse theirs)\n`)
    expect(printed.stdout).not.toContain('  DuckDB\n')
    const refused = await connect([name, '--engine', 'duckdb'])
    expect({ code: refused.code, stderr: refused.stderr }).toEqual({ code: 1, stderr: expect.stringMatching(/^error: external_catalog: /) })
    const unknown = await connect([ctx.project.warehouse, '--engine', 'trino'])
    expect({ code: unknown.code, stderr: unknown.stderr }).toEqual({
      code: 1,
      stderr: expect.stringMatching(/^error: usage: --engine takes duckdb, pyiceberg, spark/),
    })
  })
})
