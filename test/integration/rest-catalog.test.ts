// The REST catalog client against a real Iceberg REST catalog (Apache Iceberg's REST fixture,
// dev/rest-catalog.ts) with its data in versitygw. A loopback proxy in front of the fixture records
// Authorization headers and can answer 401 or 503 to prove the token refresh and the commit's
// unknown-outcome path. PyIceberg's RestCatalog reads back what our fastAppend committed.
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startRestCatalog, type RestCatalogServer } from '../../dev/rest-catalog.ts'
import { startVersitygw, type S3Server } from '../../dev/s3.ts'
import {
  CatalogError,
  CommitConflict,
  CommitStateUnknown,
  NoSuchNamespace,
  NoSuchTable,
  TableAlreadyExists,
  type LoadedTable,
} from '../../iceberg/catalog/index.ts'
import { RestCatalog } from '../../iceberg/catalog/rest.ts'
import { fastAppend } from '../../iceberg/transaction/append.ts'
import { parseLossless } from '../../iceberg/spec/json.ts'
import { writeManifestList } from '../../iceberg/manifest/manifest.ts'
import { branchSnapshotId, currentSchema, defaultSpec } from '../../iceberg/spec/metadata.ts'
import { bindSpec, partitionRecord } from '../../iceberg/spec/partition.ts'
import { writeDataFile } from '../../iceberg/parquet/data-file.ts'
import { appendSnapshot, appendSummary, commitChanges, manifestListLocation, planSnapshot } from '../../iceberg/transaction/snapshot.ts'
import type { NestedField } from '../../iceberg/spec/types.ts'
import { toRow } from '../../iceberg/spec/values.ts'
import { DEAD_HOST_PORT, freePorts } from '../support/ports.ts'
import { ensureVenv } from '../support/python.ts'

const run = promisify(execFile)

const BUCKET = 'rest-warehouse'
const NS = ['rest_test', 'nested']
const COLUMNS: NestedField[] = [
  { id: 1, name: 'id', required: true, type: 'long' },
  { id: 2, name: 'name', required: false, type: 'string', doc: 'who' },
  { id: 3, name: 'ts', required: true, type: 'timestamptz' },
  { id: 4, name: 'tags', required: false, type: { type: 'list', 'element-id': 5, element: 'string', 'element-required': false } },
]
/** Near the top of the 63-bit range: any float64 on the way would change it. */
const BIG_ID = 9223372036854775001n

/** A loopback proxy in front of the fixture: records Authorization headers, and can refuse on demand. */
interface Proxy {
  uri: string
  server: Server
  seen: Array<{ method: string; path: string; authorization?: string }>
  tokenRequests: string[]
  /** Answer the next N non-token requests 401. */
  unauthorized: number
  /** Answer commits (POST .../tables/<t>) 503: 'before' without forwarding, 'after' once the fixture committed. */
  failCommits: 'before' | 'after' | 'reset' | 'hang' | null
  /** Announce this prefix in /v1/config and require it on every other path (stripped before forwarding). */
  prefix: string | null
}

async function startProxy(upstream: string): Promise<Proxy> {
  const proxy: Proxy = {
    uri: '',
    server: undefined as unknown as Server,
    seen: [],
    tokenRequests: [],
    unauthorized: 0,
    failCommits: null,
    prefix: null,
  }
  proxy.server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const body = Buffer.concat(chunks)
    let path = req.url ?? '/'
    const isConfig = path.startsWith('/v1/config')
    const isToken = path.startsWith('/v1/oauth/tokens')
    const isCommit = req.method === 'POST' && /\/namespaces\/[^/]+\/tables\/[^/?]+$/.test(path)
    proxy.seen.push({ method: req.method ?? '', path, authorization: req.headers.authorization })
    if (isToken) proxy.tokenRequests.push(body.toString())
    if (!isToken && proxy.unauthorized > 0) {
      proxy.unauthorized--
      res.writeHead(401, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { message: 'token expired', type: 'NotAuthorizedException', code: 401 } }))
      return
    }
    if (isCommit && proxy.failCommits === 'reset') {
      req.socket.destroy()
      return
    }
    if (isCommit && proxy.failCommits === 'hang') return // never answers; closed in afterAll
    if (isCommit && proxy.failCommits === 'before') {
      res.writeHead(503, { 'content-type': 'text/plain' })
      res.end('upstream unavailable')
      return
    }
    if (proxy.prefix && !isToken && !isConfig) {
      if (!path.startsWith(`/v1/${proxy.prefix}/`)) {
        res.writeHead(404, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { message: `no route ${path}`, type: 'NotFoundException', code: 404 } }))
        return
      }
      path = `/v1/${path.slice(`/v1/${proxy.prefix}/`.length)}`
    }
    const headers: Record<string, string> = {}
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'content-length' && k !== 'connection') headers[k] = v
    const up = await fetch(upstream + path, { method: req.method, headers, body: body.length ? body : undefined })
    const text = await up.text()
    if (isCommit && proxy.failCommits === 'after') {
      res.writeHead(503, { 'content-type': 'application/json' })
      res.end(
        JSON.stringify({
          error: { message: 'gateway lost the answer', type: 'ServiceUnavailableException', code: 503, stack: ['java.lang.Thread.run(Thread.java:1)'] },
        }),
      )
      return
    }
    res.writeHead(up.status, { 'content-type': up.headers.get('content-type') ?? 'application/json' })
    if (isConfig && proxy.prefix && up.ok) {
      const config = JSON.parse(text) as { overrides?: Record<string, string> }
      res.end(JSON.stringify({ ...config, overrides: { ...config.overrides, prefix: proxy.prefix } }))
      return
    }
    res.end(text)
  })
  await new Promise<void>((r) => proxy.server.listen(0, '127.0.0.1', r))
  proxy.uri = `http://127.0.0.1:${(proxy.server.address() as AddressInfo).port}`
  return proxy
}

let dir: string
let s3: S3Server
let fixture: RestCatalogServer
let proxy: Proxy
let catalog: RestCatalog
let python: string

const newCatalog = (uri: string, extra: Partial<ConstructorParameters<typeof RestCatalog>[0]> = {}) =>
  new RestCatalog({ name: 'rest', uri, warehouse: `s3://${BUCKET}/rest`, s3: { endpoint: s3.config.endpoint, region: s3.config.region }, ...extra })

beforeAll(async () => {
  python = await ensureVenv()
  dir = mkdtempSync(join(tmpdir(), 'lhbox-rest-'))
  const [s3Port, fixturePort] = await freePorts(2)
  s3 = await startVersitygw(dir, s3Port, BUCKET)
  fixture = await startRestCatalog(join(dir, 'rest'), fixturePort, s3.config)
  proxy = await startProxy(fixture.uri)
  catalog = newCatalog(fixture.uri)
}, 15 * 60_000)

afterAll(async () => {
  proxy?.server.closeAllConnections()
  await new Promise<void>((r) => (proxy?.server ? proxy.server.close(() => r()) : r()))
  await fixture?.child.stop()
  await s3?.child.stop()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

/** Commits an empty append with snapshot id `id` (a manifest list with no manifests). */
async function emptyAppend(table: LoadedTable, id: bigint): Promise<LoadedTable> {
  const plan = planSnapshot(table.metadata, { snapshotId: id })
  const list = await writeManifestList({
    formatVersion: plan.formatVersion,
    snapshotId: id,
    parentSnapshotId: plan.parentSnapshotId,
    sequenceNumber: plan.sequenceNumber,
    firstRowId: plan.firstRowId,
    manifests: [],
  })
  const location = manifestListLocation(table.metadata, id, crypto.randomUUID())
  await table.io.write(location, list.bytes)
  const snapshot = appendSnapshot(plan, { manifestList: location, summary: appendSummary(undefined, []), addedRows: list.addedRows })
  const { requirements, updates } = commitChanges(table.metadata, snapshot)
  return catalog.commitTable(table, requirements, updates)
}

describe('REST catalog client (Apache Iceberg REST fixture)', () => {
  it('creates a nested namespace and v2 and v3 tables partitioned by day(ts), and lists them', async () => {
    await catalog.ensureNamespace(NS)
    await catalog.ensureNamespace(NS) // idempotent
    const namespaces = await catalog.listNamespaces()
    expect(namespaces).toContainEqual(['rest_test'])
    expect(namespaces).toContainEqual(NS)

    // placeholder ids, deliberately not 1..n: the server assigns its own
    const fields = COLUMNS.map((f) => ({ ...f, id: f.id + 100 }))
    for (const v of [2, 3] as const) {
      const t = await catalog.createTable(NS, {
        name: `events_v${v}`,
        schema: { fields },
        partition: [{ source: 'ts', transform: 'day' }],
        formatVersion: v,
        doc: `v${v} events`,
        properties: { owner: 'lhbox' },
      })
      expect(t.metadata['format-version']).toBe(v)
      expect(t.metadataLocation).toMatch(/^s3:\/\/rest-warehouse\/.*\.metadata\.json$/)
      expect(t.metadata.properties).toMatchObject({ owner: 'lhbox', comment: `v${v} events` })
    }
    await expect(catalog.createTable(NS, { name: 'events_v2', schema: { fields } })).rejects.toBeInstanceOf(TableAlreadyExists)
    const tables = await catalog.listTables(NS)
    expect(tables.map((t) => t.name).sort()).toEqual(['events_v2', 'events_v3'])
    expect(tables[0].namespace).toEqual(NS)
    await expect(catalog.listTables(['no_such_ns'])).rejects.toBeInstanceOf(NoSuchNamespace)
  })

  it('loads a table: schema ids assigned, partition spec, format version, vended credentials', async () => {
    const t = await catalog.loadTable({ namespace: NS, name: 'events_v3' })
    expect(t.metadata['format-version']).toBe(3)
    const schema = currentSchema(t.metadata)
    expect(schema.fields.map((f) => [f.id, f.name, f.required])).toEqual([
      [1, 'id', true],
      [2, 'name', false],
      [3, 'ts', true],
      [4, 'tags', false],
    ])
    expect(schema.fields[1].doc).toBe('who')
    expect(schema.fields[3].type).toMatchObject({ type: 'list', 'element-id': 5 })
    expect(t.metadata['last-column-id']).toBe(5)
    expect(defaultSpec(t.metadata).fields).toEqual([{ 'source-id': 3, 'field-id': 1000, name: 'ts_day', transform: 'day' }])
    // the FileIO works with the fixture's vended keys (the client was given none of its own)
    await t.io.write(`${t.metadata.location}/probe.txt`, 'hello')
    expect(new TextDecoder().decode(await t.io.read(`${t.metadata.location}/probe.txt`))).toBe('hello')
  })

  it('keeps 63-bit snapshot ids exact through commit and load', async () => {
    for (const name of ['events_v2', 'events_v3']) {
      const t = await catalog.loadTable({ namespace: NS, name })
      const committed = await emptyAppend(t, BIG_ID)
      expect(branchSnapshotId(committed.metadata)).toBe(BIG_ID)
      const again = await catalog.loadTable({ namespace: NS, name })
      expect(again.metadata['current-snapshot-id']).toBe(BIG_ID)
      expect(again.metadata.refs.main['snapshot-id']).toBe(BIG_ID)
      expect(again.metadata.snapshots[0]['snapshot-id']).toBe(BIG_ID)
      expect(again.metadata['snapshot-log'][0]['snapshot-id']).toBe(BIG_ID)
      expect(again.metadataLocation).not.toBe(t.metadataLocation)
    }
  })

  it('commits set-properties and returns the new table', async () => {
    const t = await catalog.loadTable({ namespace: NS, name: 'events_v2' })
    const next = await catalog.commitTable(
      t,
      [{ type: 'assert-table-uuid', uuid: t.metadata['table-uuid'] }],
      [{ action: 'set-properties', updates: { 'lhbox.test': 'yes', comment: 'changed' } }],
    )
    expect(next.metadata.properties).toMatchObject({ 'lhbox.test': 'yes', comment: 'changed', owner: 'lhbox' })
    expect(next.metadataLocation).not.toBe(t.metadataLocation)
    expect(next.io).toBe(t.io)
    expect((await catalog.loadTable(t.identifier)).metadata.properties['lhbox.test']).toBe('yes')
  })

  it('a stale requirement is a CommitConflict, without the server stack', async () => {
    const t = await catalog.loadTable({ namespace: NS, name: 'events_v3' })
    const staleRef = catalog.commitTable(
      t,
      [{ type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': BIG_ID - 1n }],
      [{ action: 'set-properties', updates: { x: '1' } }],
    )
    await expect(staleRef).rejects.toBeInstanceOf(CommitConflict)
    const err = await staleRef.catch((e: Error) => e)
    expect((err as CommitConflict).retryable).toBe(true)
    expect((err as Error).message).toMatch(/409 CommitFailedException/)
    expect((err as Error).message).not.toMatch(/\tat |java\.|\.java:/)
    const staleUuid = catalog.commitTable(t, [{ type: 'assert-table-uuid', uuid: crypto.randomUUID() }], [{ action: 'set-properties', updates: { x: '1' } }])
    await expect(staleUuid).rejects.toBeInstanceOf(CommitConflict)
    expect((await catalog.loadTable(t.identifier)).metadata.properties.x).toBeUndefined()
  })

  it('a missing table is NoSuchTable', async () => {
    await expect(catalog.loadTable({ namespace: NS, name: 'nope' })).rejects.toBeInstanceOf(NoSuchTable)
    await expect(catalog.loadTable({ namespace: ['nope'], name: 'nope' })).rejects.toBeInstanceOf(CatalogError)
    // (createTable in a missing namespace is not checked: the fixture's JdbcCatalog creates the table anyway)
  })

  it('OAuth2 client credentials: fetches a token, sends it as Bearer, and refreshes it once on 401', async () => {
    proxy.seen.length = 0
    proxy.tokenRequests.length = 0
    const oauth = newCatalog(proxy.uri, { credential: 'lhbox-client:s3cret', scope: 'PRINCIPAL_ROLE:ALL' })
    const t = await oauth.loadTable({ namespace: NS, name: 'events_v2' })
    expect(t.metadata['format-version']).toBe(2)
    expect(proxy.tokenRequests).toHaveLength(1)
    const form = new URLSearchParams(proxy.tokenRequests[0])
    expect(Object.fromEntries(form)).toEqual({
      grant_type: 'client_credentials',
      client_id: 'lhbox-client',
      client_secret: 's3cret',
      scope: 'PRINCIPAL_ROLE:ALL',
    })
    const calls = proxy.seen.filter((s) => !s.path.startsWith('/v1/oauth/tokens'))
    expect(calls.map((c) => `${c.method} ${c.path.replace(/\?.*/, '')}`)).toEqual(['GET /v1/config', `GET /v1/namespaces/rest_test%1Fnested/tables/events_v2`])
    for (const c of calls) expect(c.authorization).toMatch(/^Bearer \S+/)

    proxy.unauthorized = 1
    await oauth.listTables(NS)
    expect(proxy.tokenRequests).toHaveLength(2)
    expect(proxy.seen.at(-1)!.authorization).toMatch(/^Bearer \S+/)

    // a static bearer token is sent as is, and a 401 is not retried
    proxy.seen.length = 0
    const bearer = newCatalog(proxy.uri, { token: 'static-token' })
    await bearer.listTables(NS)
    expect(proxy.seen.map((s) => s.authorization)).toEqual(['Bearer static-token', 'Bearer static-token'])
    proxy.unauthorized = 1
    await expect(bearer.listTables(NS)).rejects.toThrow(/401 NotAuthorizedException: token expired/)
  })

  it('honours the prefix /v1/config announces', async () => {
    proxy.seen.length = 0
    proxy.prefix = 'cat%2Fone'
    try {
      const prefixed = newCatalog(proxy.uri)
      expect((await prefixed.listTables(NS)).length).toBe(2)
      const t = await prefixed.loadTable({ namespace: NS, name: 'events_v3' })
      const next = await prefixed.commitTable(t, [], [{ action: 'set-properties', updates: { prefixed: 'yes' } }])
      expect(next.metadata.properties.prefixed).toBe('yes')
      expect(proxy.seen.map((s) => `${s.method} ${s.path}`)).toEqual([
        `GET /v1/config?warehouse=${encodeURIComponent(`s3://${BUCKET}/rest`)}`,
        'GET /v1/cat%2Fone/namespaces/rest_test%1Fnested/tables',
        'GET /v1/cat%2Fone/namespaces/rest_test%1Fnested/tables/events_v3',
        'POST /v1/cat%2Fone/namespaces/rest_test%1Fnested/tables/events_v3',
      ])
    } finally {
      proxy.prefix = null
    }
  })

  it('a 503 to a commit is CommitStateUnknown, whether or not the catalog committed', async () => {
    const viaProxy = newCatalog(proxy.uri)
    try {
      const t = await viaProxy.loadTable({ namespace: NS, name: 'events_v2' })
      const change = (v: string) =>
        viaProxy.commitTable(t, [{ type: 'assert-table-uuid', uuid: t.metadata['table-uuid'] }], [{ action: 'set-properties', updates: { probe: v } }])
      proxy.failCommits = 'before'
      const before = await change('before').catch((e: Error) => e)
      expect(before).toBeInstanceOf(CommitStateUnknown)
      expect((before as Error).message).toMatch(/503 upstream unavailable/)
      expect((await viaProxy.loadTable(t.identifier)).metadata.properties.probe).toBeUndefined()
      proxy.failCommits = 'after'
      const after = await change('after').catch((e: Error) => e)
      expect(after).toBeInstanceOf(CommitStateUnknown)
      expect((after as Error).message).toMatch(/ServiceUnavailableException: gateway lost the answer/)
      expect((after as Error).message).not.toMatch(/Thread/)
      // reloading shows what happened
      expect((await viaProxy.loadTable(t.identifier)).metadata.properties.probe).toBe('after')
      // a lost connection and a timeout are unknown too
      proxy.failCommits = 'reset'
      await expect(change('reset')).rejects.toBeInstanceOf(CommitStateUnknown)
      proxy.failCommits = 'hang'
      // The proxy never answers the commit. Only the commit runs under the short timeout: the config
      // and load requests before it are not what is tested, and must not race a busy JVM.
      const isCommit = (url: string, init?: RequestInit) => init?.method === 'POST' && /\/namespaces\/[^/]+\/tables\/[^/?]+$/.test(url)
      const impatient = newCatalog(proxy.uri, {
        timeoutMs: 1000,
        fetch: (url, init) => fetch(url, isCommit(url, init) ? init : { ...init, signal: undefined }),
      })
      const loaded = await impatient.loadTable(t.identifier)
      const hung = await impatient.commitTable(loaded, [], [{ action: 'set-properties', updates: { probe: 'hang' } }]).catch((e: Error) => e)
      expect(hung).toBeInstanceOf(CommitStateUnknown)
      expect((hung as Error).message).toMatch(/no answer within 1000 ms/)
    } finally {
      proxy.failCommits = null
    }
    // no server at all (and none can be: a privileged port): a load is a plain CatalogError (not retryable as a commit outcome)
    const dead = newCatalog(`http://${DEAD_HOST_PORT}`, { timeoutMs: 2000 })
    const err = await dead.loadTable({ namespace: NS, name: 'events_v2' }).catch((e: Error) => e)
    expect(err).toBeInstanceOf(CatalogError)
    expect(err).not.toBeInstanceOf(CommitStateUnknown)
  })

  it('appends through fastAppend and PyIceberg RestCatalog reads the rows back', async () => {
    const rows = [
      { id: 9223372036854775807n, name: 'max', ts: '2026-03-01T10:00:00.123456Z', tags: ['a', 'b'] },
      { id: -9223372036854775808n, name: null, ts: '2026-03-01T23:59:59.999999Z', tags: [] },
      { id: 7n, name: 'seven', ts: '2026-03-01T00:00:00Z', tags: null },
    ]
    const text = '[' + rows.map((r) => `{"id":${r.id},"name":${JSON.stringify(r.name)},"ts":"${r.ts}","tags":${JSON.stringify(r.tags)}}`).join(',') + ']'
    const inputs = parseLossless(text) as unknown[]
    const appended: Record<string, bigint> = {}
    for (const name of ['events_v2', 'events_v3']) {
      const t = await catalog.loadTable({ namespace: NS, name })
      const schema = currentSchema(t.metadata)
      const v = t.metadata['format-version'] as 2 | 3
      const parsed = inputs.map((i) => {
        const r = toRow(schema, i, { formatVersion: v })
        if (!r.ok) throw new Error(JSON.stringify(r.rejects))
        return r.row
      })
      const partition = partitionRecord(bindSpec(defaultSpec(t.metadata), schema), parsed[0])
      const file = writeDataFile(schema, parsed)
      const path = `${t.metadata.location}/data/ts_day=2026-03-01/${crypto.randomUUID()}.parquet`
      await t.io.write(path, file.bytes)
      const m = file.metrics
      const { table, snapshotId } = await fastAppend(
        catalog,
        t,
        [
          {
            filePath: path,
            fileFormat: 'PARQUET',
            partition,
            recordCount: m.recordCount,
            fileSizeInBytes: m.fileSizeInBytes,
            columnSizes: m.columnSizes,
            valueCounts: m.valueCounts,
            nullValueCounts: m.nullValueCounts,
            nanValueCounts: m.nanValueCounts,
            lowerBounds: m.lowerBounds,
            upperBounds: m.upperBounds,
            splitOffsets: m.splitOffsets,
          },
        ],
        { properties: { 'lhbox.batch': 'b1' } },
      )
      expect(branchSnapshotId(table.metadata)).toBe(snapshotId)
      expect(table.metadata.snapshots.find((s) => s['snapshot-id'] === snapshotId)!['parent-snapshot-id']).toBe(BIG_ID)
      appended[name] = snapshotId
    }

    const script = `
import json, sys
from pyiceberg.catalog.rest import RestCatalog
cat = RestCatalog('rest', uri=sys.argv[1], **{'s3.endpoint': sys.argv[2], 's3.region': 'us-east-1', 's3.path-style-access': 'true'})
out = {}
for name in ['events_v2', 'events_v3']:
    t = cat.load_table(('rest_test', 'nested', name))
    rows = sorted(t.scan().to_arrow().to_pylist(), key=lambda r: r['id'])
    out[name] = {
        'snapshot': str(t.current_snapshot().snapshot_id),
        'batch': t.current_snapshot().summary.additional_properties.get('lhbox.batch'),
        'format': t.format_version,
        'rows': [{'id': str(r['id']), 'name': r['name'], 'ts': r['ts'].isoformat(), 'tags': r['tags']} for r in rows],
    }
print(json.dumps(out))
`
    const { stdout } = await run(python, ['-c', script, fixture.uri, s3.config.endpoint], {
      env: { ...process.env, AWS_ACCESS_KEY_ID: s3.config.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.config.secretAccessKey, AWS_REGION: 'us-east-1' },
      maxBuffer: 1 << 24,
    })
    const got = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, { snapshot: string; batch: string; format: number; rows: unknown[] }>
    for (const name of ['events_v2', 'events_v3']) {
      expect(got[name].snapshot).toBe(String(appended[name]))
      expect(got[name].batch).toBe('b1')
      expect(got[name].format).toBe(name === 'events_v2' ? 2 : 3)
      expect(got[name].rows).toEqual([
        { id: '-9223372036854775808', name: null, ts: '2026-03-01T23:59:59.999999+00:00', tags: [] },
        { id: '7', name: 'seven', ts: '2026-03-01T00:00:00+00:00', tags: null },
        { id: '9223372036854775807', name: 'max', ts: '2026-03-01T10:00:00.123456+00:00', tags: ['a', 'b'] },
      ])
    }
  }, 120_000)
})
