// The Iceberg REST catalog's tests (test/integration/iceberg-rest*.test.ts): a project of the file's
// own with read and write keys and another project, the catalog through PyIceberg's RestCatalog and
// DuckDB (never our own client; PyIceberg with s3fs for remote signing), and the REST spec's ErrorModel.
import { expect } from 'vitest'
import { stringifyLossless } from '../../iceberg/spec/json.ts'
import { runPyicebergS3fs, runPython, s3Args, toExact } from './python.ts'
import { listSinks, newProject, uid } from './sinks.ts'
import { type Answer, call, newApiKey, stack } from './stack.ts'

export const SCHEMA = JSON.stringify({
  fields: [
    { id: 1, name: 'x', type: 'long', required: true },
    { id: 2, name: 'who', type: 'string', required: false },
  ],
})

interface Project {
  project: string
  key: string
  warehouse: string
}

/** The file's projects and keys, and its warehouse's prefix (setupCatalogProjects fills it in beforeAll). */
export const ctx = {
  project: undefined as unknown as Project,
  other: undefined as unknown as Project,
  readKey: '',
  writeKey: '',
  prefix: '',
  /** A namespace prefix of this file's own. */
  ns: `rest_${uid()}`,
}

export async function setupCatalogProjects(): Promise<void> {
  ctx.project = await newProject()
  ctx.other = await newProject()
  ctx.readKey = await newApiKey('read', ctx.project.project)
  ctx.writeKey = await newApiKey('write', ctx.project.project)
  const config = await rest(`/config?warehouse=${ctx.project.warehouse}`, { key: ctx.project.key })
  if (config.status !== 200) throw new Error(`GET /iceberg/v1/config: ${config.status} ${config.text}`)
  ctx.prefix = config.body.overrides.prefix
}

/** Every sink the file made goes (a sink left with batches would be rolled by another file's roller service). */
export async function deleteCatalogSinks(): Promise<void> {
  for (const s of ctx.project ? await listSinks(ctx.project.key) : []) await call(`/v1/sinks/${s.id}`, { key: ctx.project.key, method: 'DELETE' })
}

const catalogUri = () => `${stack().apiUrl}/iceberg`

/** PyIceberg's RestCatalog with a bearer key (or `credential` for the OAuth2 exchange); a last argument starting with [ is stdin. */
export async function py(auth: { token: string } | { credential: string }, ...args: string[]): Promise<any> {
  const how = 'token' in auth ? ['--rest-token', auth.token] : ['--rest-credential', auth.credential]
  const input = args.at(-1)?.startsWith('[') ? (args.pop() as string) : ''
  const connection = ['--rest-uri', catalogUri(), ...how, '--warehouse', ctx.project.warehouse, ...s3Args(stack().s3)]
  return toExact(await runPython('pyiceberg_rest.py', [...connection, ...args], undefined, { input }))
}

/** The table as PyIceberg's RestCatalog reads it, rows by x. */
export async function scan(key: string, table: string): Promise<any> {
  const connection = ['--rest-uri', catalogUri(), '--rest-token', key, '--warehouse', ctx.project.warehouse, ...s3Args(stack().s3)]
  return toExact(await runPython('pyiceberg_scan.py', [...connection, table, '--order-by', 'x', '--no-files']))
}

/** PyIceberg appends rows through the catalog. */
export async function append(key: string, table: string, rows: unknown[]): Promise<any> {
  const args = ['--rest-uri', catalogUri(), '--rest-token', key, '--warehouse', ctx.project.warehouse, ...s3Args(stack().s3), table]
  return toExact(await runPython('pyiceberg_append.py', args, undefined, { input: stringifyLossless(rows) }))
}

/** DuckDB with the catalog attached as `cat` (ATTACH '<warehouse>' … TYPE ICEBERG): a bearer key, or OAuth2 client credentials. */
export async function duck(auth: { token: string } | { key: string }, opts: { exec?: string[]; query?: string; vended?: boolean }): Promise<any> {
  const how = 'token' in auth ? ['--rest-token', auth.token] : ['--rest-client-id', auth.key.slice(7, 19), '--rest-client-secret', auth.key]
  const args = ['--rest-uri', catalogUri(), '--warehouse', ctx.project.warehouse, ...how, ...s3Args(stack().s3)]
  // The catalog's vended keys, not the stack's S3 secret.
  if (opts.vended) args.push('--vended')
  for (const e of opts.exec ?? []) args.push('--exec', e)
  if (opts.query) args.push('--query', opts.query)
  return toExact(await runPython('duckdb_iceberg_sql.py', args))
}

/** One step of PyIceberg with no S3 keys of its own, through the catalog's S3 signer: a scan, or an append of rows. */
interface SignedStep {
  token: string
  op: 'scan' | 'append'
  rows?: unknown[]
}

/** PyIceberg (FsspecFileIO) with no S3 keys of its own, through the catalog's S3 signer: the steps in order, in one process. */
export async function signed(table: string, steps: SignedStep[]): Promise<any[]> {
  const args = ['--rest-uri', catalogUri(), '--warehouse', ctx.project.warehouse, '--s3-endpoint', stack().s3.endpoint, table]
  return toExact(await runPyicebergS3fs('pyiceberg_signing.py', args, stringifyLossless(steps)))
}

/** The REST ErrorModel with this status and type; never a stack. */
export function expectModel(a: Answer, status: number, type: string): void {
  expect({ status: a.status, body: a.body }, a.text).toEqual({ status, body: { error: { message: expect.any(String), type, code: status } } })
  expect(a.text).not.toMatch(/\n\s+at\s|\.ts:\d+/)
}

/** A call to /iceberg/v1<path>. */
export const rest = (path: string, init: Parameters<typeof call>[1] = {}) => call(`/iceberg/v1${path}`, init)
