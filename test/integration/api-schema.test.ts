// API schema tests (issue 15): schemathesis (PyPI) runs all its phases (examples, coverage, fuzzing,
// stateful) over /openapi.json against the integration stack, three times: with an admin key, with a
// read key (every write answers 403, documented), and with a sink's send key on the send and device routes. Its
// checks: no 5xx; every status documented and every error the envelope; every answer matches its
// schema; the document's constraints are the code's (valid data accepted, invalid data refused); an
// undocumented method answers 405 with Allow; a missing or wrong key is refused.
//
// Bounded: EXAMPLES cases per operation and phase, MAX_FAILURES at most, the three runs at once, so
// the file takes under 2 minutes on 2 cores. The seed is random on every run (a fixed one would test one sample forever)
// and printed on failure with the command that replays it.
//
// What the fuzzer creates stays in projects of its own, so no other test file sees it, and is deleted
// after (a sink left with batches waiting would be rolled by another file's roller service).
// schemathesis has its own pinned venv, $LHBOX_CACHE/venv-schemathesis (test/support/python.ts).
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureVenvNamed } from '../support/python.ts'
import { createTable, listSinks, newProject, newSink, type Sink, uid } from '../support/sinks.ts'
import { call, edgeHost, newApiKey, stack } from '../support/stack.ts'

/** schemathesis and everything `pip freeze` lists after installing it into a fresh venv (python 3.11, 2026-12). */
const SCHEMATHESIS_REQUIREMENTS = [
  'schemathesis==4.32.5',
  'anyio==4.16.0',
  'certifi==2026.10.19.post1',
  'charset-normalizer==3.5.3',
  'click==8.5.1',
  'graphql-core==3.3.2',
  'harfile==0.6.0',
  'hypothesis==6.170.17',
  'hypothesis-graphql==0.13.5',
  'idna==3.20',
  'iniconfig==2.3.1',
  'jsonschema_rs==0.60.3',
  'markdown-it-py==4.3.0',
  'MarkupSafe==3.0.4',
  'mdurl==0.1.2',
  'packaging==26.4',
  'pluggy==1.7.0',
  'Pygments==2.21.0',
  'pyrate-limiter==4.5.1',
  'pytest==9.2.0',
  'PyYAML==6.0.4',
  'requests==2.34.2',
  'rich==15.0.0',
  'sortedcontainers==2.4.0',
  'typing_extensions==4.16.0',
  'urllib3==2.8.0',
  'Werkzeug==3.1.9',
]

/**
 * Test cases per operation and phase (-n). The Node edge serves the same app as the Worker: its run
 * checks the host (adapters, pool, error paths) on a smaller sample, which keeps CI's time in bounds.
 */
const EXAMPLES = edgeHost() === 'node' ? 10 : 25
/** A failing run stops after this many failures (--max-failures): its report stays readable and its time bounded. */
const MAX_FAILURES = 10
/**
 * A run that takes longer is killed: a safety net against a hang, not a time limit (a run takes about
 * a minute on 2 cores, and past 150 s when the rest of the suite loads the machine 6-fold).
 */
const RUN_TIMEOUT_MS = 300_000

/** positive_data_acceptance's statuses, and 400. */
const ACCEPTED_OR_400 = ['2xx', '3xx', '400', '401', '403', '404', '409', '429', '5xx']

/**
 * What every run shares. Each exclusion is one check on the operations it names, for a behaviour the
 * spec or the project chose on purpose; everything else runs every check.
 */
const COMMON = `
[cache]
# No crash files kept between runs: each run is its own sample.
enabled = false

[generation]
database = "none"

# /internal/* answers 403 forbidden to any credential but the bootstrap secret, none included, alike
# (never served publicly; sinks-auth and edge-foundation pin it). The check wants 401 for a request
# without Authorization.
[[operations]]
include-path-regex = "^/internal/"
checks.missing_required_header.enabled = false

# Schema-valid requests these operations refuse with a documented 400 for what JSON Schema cannot say:
# POST /v1/tables checks the Iceberg schema (a known type, decimal scale <= precision, a name once per
# struct, v3-only types on format-version 3 only) and that partitions name its columns (invalid_schema,
# invalid_partition); a sink's key, and a column given docs, must be a column of the table
# (unknown_column). The send route takes NDJSON without an Idempotency-Key, a JSON array only with one:
# OpenAPI cannot make a header required for one media type, so an array without it is a documented
# 400 invalid_idempotency_key (sinks-ndjson pins both). Every other status still has to be one the
# check accepts.
[[operations]]
include-name = ["POST /v1/tables", "POST /v1/sinks", "PATCH /v1/sinks/{sink_id}", "PATCH /v1/tables/{warehouse}.{namespace}.{table}/docs", "POST /v1/sinks/{sink_id}"]
checks.positive_data_acceptance.expected-statuses = ${toml(ACCEPTED_OR_400)}

# The rejects page's and the sinks list's cursors are opaque: only a next_cursor a page gave is taken,
# anything else is a documented 400 invalid_request (sink-rejects and sinks-control pin it).
[[operations]]
include-name = ["GET /v1/sinks/{sink_id}/rejects", "GET /v1/sinks"]
checks.positive_data_acceptance.expected-statuses = ${toml(ACCEPTED_OR_400)}

# A deleted sink stays readable by its id, with state "deleted" and deleted_at, as include_deleted lists
# it (sinks-control pins it); by its name it is not found.
[[operations]]
include-name = ["GET /v1/sinks/{sink_id}"]
checks.use_after_free.enabled = false
`

function toml(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(toml).join(', ')}]`
  if (value !== null && typeof value === 'object') {
    return `{ ${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)} = ${toml(v)}`)
      .join(', ')} }`
  }
  return JSON.stringify(value)
}

interface Run {
  key: string
  /** Fixed values for parameters ("path.sink_id") and body members ("body.catalog"). */
  parameters?: Record<string, unknown>
  /** More [[operations]] tables. */
  operations?: string
  /** More arguments to `st run` (an operation filter). */
  args?: string[]
}

let st: string
let work: string
let admin: { project: string; key: string; warehouse: string }
let read: string
let sender: { key: string; sink: Sink }
/** Where a warehouse the fuzzer creates keeps its data: the stack's own store and catalog. */
let storage: Record<string, unknown>
/** The namespace of the admin project's tables (table locations are shared by every project on the bucket). */
const namespace = `schema_${uid()}`
/** A failed run's config and reports are kept for a look. */
let keep = Boolean(process.env.LHBOX_KEEP_TEST_DIR)

beforeAll(async () => {
  // A fresh machine builds the venv from PyPI (a minute or two); afterwards this is a stat.
  st = join(dirname(await ensureVenvNamed('venv-schemathesis', SCHEMATHESIS_REQUIREMENTS)), 'st')
  work = mkdtempSync(join(tmpdir(), 'lhbox-schemathesis-'))

  // The admin and read runs: a project with a table for the table routes (fixed path parameters), an
  // append sink and a keyed one (so dedupe can answer 202).
  admin = await newProject()
  read = await newApiKey('read', admin.project)
  const tableSpec = {
    warehouse: admin.warehouse,
    namespace,
    columns: [
      { name: 'x', type: 'long', required: true },
      { name: 'who', type: 'string' },
    ],
  }
  await createTable(admin.key, { ...tableSpec, name: 'events' })
  await newSink(admin.key, { tableSpec: { ...tableSpec, name: 'appended' }, name: 'appended', sink: { warehouse: admin.warehouse } })
  await newSink(admin.key, { tableSpec: { ...tableSpec, name: 'keyed' }, name: 'keyed', sink: { warehouse: admin.warehouse, key: ['x'] } })
  const main = (await call('/v1/warehouses', { key: admin.key })).body.warehouses.find((w: { name: string }) => w.name === admin.warehouse)
  storage = {
    'body.catalog': { type: 'sql' },
    'body.endpoint': main.endpoint,
    'body.bucket': main.bucket,
    'body.region': main.region,
    // Under a prefix of their own: nothing they hold can meet another test's table files.
    'body.prefix': `schemathesis-${uid()}`,
  }

  // The send run: a sink of another project, out of the admin run's reach (it deletes sinks).
  const other = await newProject()
  const sink = await newSink(other.key, { tableSpec: { warehouse: other.warehouse }, sink: { warehouse: other.warehouse } })
  sender = { key: other.key, sink }
}, 10 * 60_000)

afterAll(async () => {
  // Every live sink of both projects goes, and with it its batches (the table stays, as the spec says).
  for (const key of [admin?.key, sender?.key]) {
    if (!key) continue
    for (const s of await listSinks(key)) await call(`/v1/sinks/${s.id}`, { key, method: 'DELETE' })
  }
  if (work && !keep) rmSync(work, { recursive: true, force: true })
})

/** Runs `st run` with its own config and working folder; answers its exit code and report. */
async function schemathesis(name: string, run: Run): Promise<{ code: number | null; output: string; seed: string; dir: string; command: string }> {
  const dir = join(work, name)
  // LHBOX_SCHEMATHESIS_SEED replays a failed run's sample.
  const seed = process.env.LHBOX_SCHEMATHESIS_SEED ?? BigInt(`0x${randomBytes(8).toString('hex')}`).toString()
  const config = join(dir, 'schemathesis.toml')
  const parameters = run.parameters
    ? `\n[parameters]\n${Object.entries(run.parameters)
        .map(([k, v]) => `${JSON.stringify(k)} = ${toml(v)}`)
        .join('\n')}\n`
    : ''
  mkdirSync(dir, { recursive: true })
  writeFileSync(config, `[headers]\nAuthorization = ${JSON.stringify(`Bearer ${run.key}`)}\n${parameters}${COMMON}${run.operations ?? ''}`)
  const args = [
    '--config-file',
    config,
    'run',
    `${stack().apiUrl}/openapi.json`,
    '--url',
    stack().apiUrl,
    '--max-examples',
    String(EXAMPLES),
    '--seed',
    seed,
    '--max-failures',
    String(MAX_FAILURES),
    '--request-timeout',
    '30',
    // Hypothesis's own health checks judge the generator, not the server: a random seed can make it
    // filter too many candidates for a schema with many constraints (POST /v1/sinks/{sink_id} did), or
    // generate slowly on a loaded 2-core box. Either stopped a run with no server answer at fault.
    '--suppress-health-check',
    'filter_too_much,too_slow',
    '--no-color',
    '--report',
    'junit',
    '--report-junit-path',
    join(dir, 'junit.xml'),
    ...(run.args ?? []),
  ]
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn(st, args, {
      cwd: dir,
      env: { ...process.env, NO_COLOR: '1', COLUMNS: '160', PYTHONDONTWRITEBYTECODE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const chunks: Buffer[] = []
    const timer = setTimeout(() => {
      chunks.push(Buffer.from(`\n(killed after ${RUN_TIMEOUT_MS} ms)\n`))
      child.kill('SIGKILL')
    }, RUN_TIMEOUT_MS)
    child.stdout.on('data', (b: Buffer) => chunks.push(b))
    child.stderr.on('data', (b: Buffer) => chunks.push(b))
    child.on('error', (err) => {
      clearTimeout(timer)
      reject(err)
    })
    child.on('close', (c) => {
      clearTimeout(timer)
      resolve({ code: c, output: Buffer.concat(chunks).toString('utf8') })
    })
  })
  const command = [st, ...args.map((a) => (/^[\w./:=-]+$/.test(a) ? a : `'${a}'`))].join(' ')
  return { code, output, seed, dir, command }
}

/** The failed operations of the JUnit report and their failure codes ("GET /v1/tables (ST101)"); the pretty output is not parsed. */
function junitFailures(dir: string): string[] {
  const file = join(dir, 'junit.xml')
  if (!existsSync(file)) return []
  const xml = readFileSync(file, 'utf8')
  // One chunk per test case, up to the next one (a passing case is self-closing).
  return xml
    .split('<testcase')
    .slice(1)
    .flatMap((chunk) => {
      const codes = [...chunk.split('</testcase>')[0].matchAll(/<(?:failure|error)\b[^>]*\bmessage="([^"]*)"/g)].map((m) => m[1])
      return codes.length > 0 ? [`${/\bname="([^"]*)"/.exec(chunk)?.[1]} (${codes.join(', ')})`] : []
    })
}

async function expectClean(name: string, run: Run): Promise<void> {
  const result = await schemathesis(name, run)
  const failed = junitFailures(result.dir)
  if (result.code !== 0) keep = true
  expect(
    result.code,
    `schemathesis (${name} run) exited ${result.code}, seed ${result.seed}; failed: ${failed.join('; ') || 'see below'}\n` +
      `replay (on another stack, with its URL and keys in the config): ${result.command}\n(config and reports kept in ${result.dir})\n\n${result.output}`,
  ).toBe(0)
}

// The three runs at once: each is a ping-pong between one python and one Worker, so on 2 cores they
// overlap well (the read run only reads what the admin run changes; the send run has a project of its own).
describe.concurrent('schemathesis over /openapi.json', () => {
  it(
    'finds nothing with an admin key',
    async () => {
      await expectClean('admin', {
        key: admin.key,
        parameters: { 'path.warehouse': admin.warehouse, 'path.namespace': namespace, 'path.table': 'events' },
        operations: `
# Where a new warehouse keeps its data is the store's to serve or refuse: a catalog, endpoint, bucket,
# region or prefix the test store cannot serve answers 503 unavailable on every table route of that
# warehouse, by design. The fuzzer names its warehouses and picks their maintenance; they live here.
# Where it still makes up an endpoint (http://0), an internal address is a documented 400
# egress_refused (warehouse-egress pins it): JSON Schema cannot say "public addresses only".
[[operations]]
include-name = ["POST /v1/warehouses"]
parameters = ${toml(storage)}
checks.positive_data_acceptance.expected-statuses = ${toml(ACCEPTED_OR_400)}
`,
      })
    },
    RUN_TIMEOUT_MS + 10_000,
  )

  it(
    'finds nothing with a read key: every write answers 403 forbidden, as documented',
    async () => {
      await expectClean('read', { key: read, parameters: { 'path.warehouse': admin.warehouse, 'path.namespace': namespace, 'path.table': 'events' } })
    },
    RUN_TIMEOUT_MS + 10_000,
  )

  it(
    'finds nothing with a send key on the send route, the device route and the OTLP logs route',
    async () => {
      await expectClean('send', {
        key: sender.sink.sendKey,
        parameters: { 'path.sink_id': sender.sink.id },
        args: [
          '--include-name',
          'POST /v1/sinks/{sink_id}',
          '--include-name',
          'POST /v1/sinks/{sink_id}/devices/{device_id}',
          '--include-name',
          'GET /v1/sinks/{sink_id}/devices/{device_id}',
          '--include-name',
          'POST /v1/sinks/{sink_id}/otlp/v1/logs',
        ],
      })
    },
    RUN_TIMEOUT_MS + 10_000,
  )
})
