// The Python side of the interop tests: a pinned virtualenv (PyIceberg, DuckDB and the DuckDB
// extensions it needs, all from PyPI) and a runner for the reader/writer scripts in test/interop.
//
// The venv lives in $LHBOX_CACHE/venv (default ~/.cache/lhbox/venv). A stamp file holds the sha256
// of the requirement list; while it matches, ensureVenv() is a stat and a read. When it is missing
// or differs (a fresh machine, a venv made by hand, a changed pin), the pinned list is pip-installed
// into the venv (created first if absent). Every package is pinned, transitive ones included, so a
// fresh machine gets exactly the versions these tests were written against.
//
// Script output is one JSON document, parsed losslessly (iceberg/spec/json.ts): every number comes back
// as a LosslessNumber with its exact digits, so int64 extremes and decimal(38,10) survive.
// The value encoding is described in test/interop/interop_common.py.
import { execFile, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { basename, dirname, isAbsolute, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { isLosslessNumber, parseLossless } from '../../iceberg/spec/json.ts'
import type { S3Config } from '../../iceberg/io/s3.ts'
import { httpfsInVenv } from '../../dev/duckdb.ts'
import { FORK_SOCKET_ENV, runForked, startForkServer, type ScriptRun } from './python-fork.ts'

const run = promisify(execFile)

/** Top-level pins (the ones the tests are about). */
const PYTHON_REQUIREMENTS_TOP = [
  'pyiceberg[pyarrow,sql-postgres,pyiceberg-core]==0.12.0',
  'duckdb==1.5.5',
  // DuckDB extensions as PyPI wheels, loaded from their files (no download from extensions.duckdb.org).
  // Each must equal DuckDB's version exactly.
  'duckdb-extension-iceberg==1.5.5',
  'duckdb-extension-avro==1.5.5',
  // s3:// for iceberg_scan and read_json; and the file the roller's scheduled SQL runs LOAD (dev/duckdb.ts,
  // whose DUCKDB_VERSION is the Node package's)
  'duckdb-extension-httpfs==1.5.5',
  'pytz==2026.6', // DuckDB's Python client needs it for TIMESTAMPTZ values
]

/** Everything pip resolves the top-level pins to (python 3.11, checked 2026-11), pinned too. */
const PYTHON_REQUIREMENTS_LOCKED = [
  'annotated-types==0.8.0',
  'cachetools==8.0.2',
  'certifi==2026.10.19.post1',
  'charset-normalizer==3.5.3',
  'click==8.5.1',
  'fsspec==2026.9.0',
  'idna==3.20',
  'markdown-it-py==4.3.0',
  'mdurl==0.1.2',
  'mmh3==5.3.1',
  'psycopg2-binary==2.9.13', // the Postgres driver of pyiceberg[sql-postgres]: URIs postgresql+psycopg2://
  'pyarrow==26.0.1',
  'pydantic==2.14.4',
  'pydantic_core==2.50.5',
  'Pygments==2.21.0',
  'pyiceberg-core==0.10.1',
  'pyparsing==3.3.3',
  'pyroaring==1.2.0',
  'python-dateutil==4.0.0',
  'requests==2.34.2',
  'rich==15.0.0',
  'SQLAlchemy==2.1.9',
  'strictyaml==1.7.3',
  'tenacity==9.2.1',
  'typing-inspection==0.4.5',
  'typing_extensions==4.16.0',
  'tzdata==2026.6',
  'urllib3==2.8.0',
  'zstandard==0.25.0',
]

const PYTHON_REQUIREMENTS = [...PYTHON_REQUIREMENTS_TOP, ...PYTHON_REQUIREMENTS_LOCKED]

/**
 * boto3, the listing a user's script would count a bucket with (the storage meter's test), in a venv of
 * its own: botocore wants python-dateutil < 3, the main venv pins 4.0.0.
 */
const BOTO3_REQUIREMENTS = [
  'boto3==1.44.5',
  'botocore==1.44.8',
  'jmespath==1.1.0',
  's3transfer==0.19.3',
  'python-dateutil==2.9.0.post0',
  'six==1.17.0',
  'urllib3==2.8.0',
]

/**
 * PyIceberg with s3fs, the only FileIO of PyIceberg that signs through a REST catalog's S3 signer
 * (FsspecFileIO's S3V4RestSigner; PyArrowFileIO cannot), in a venv of its own: botocore wants
 * python-dateutil < 3, the main venv pins 4.0.0. Resolved by pip for python 3.11, 2026-12.
 */
const PYICEBERG_S3FS_REQUIREMENTS = [
  'pyiceberg[s3fs]==0.12.0',
  'pyarrow==26.0.1',
  'Pygments==2.21.0',
  'aiobotocore==3.10.0',
  'aiohappyeyeballs==2.7.1',
  'aiohttp==3.14.5',
  'aioitertools==0.13.0',
  'aiosignal==1.4.0',
  'annotated-types==0.8.0',
  'attrs==26.1.0',
  'botocore==1.43.117',
  'cachetools==8.0.2',
  'certifi==2026.10.19.post1',
  'charset-normalizer==3.5.3',
  'click==8.5.1',
  'frozenlist==1.8.0',
  'fsspec==2026.9.0',
  'idna==3.20',
  'jmespath==1.1.0',
  'markdown-it-py==4.3.0',
  'mdurl==0.1.2',
  'mmh3==5.3.1',
  'multidict==7.2.1',
  'propcache==0.5.4',
  'pydantic==2.14.4',
  'pydantic_core==2.50.5',
  'pyparsing==3.3.3',
  'pyroaring==1.2.0',
  'python-dateutil==2.9.0.post0',
  'requests==2.34.2',
  'rich==15.0.0',
  's3fs==2026.9.0',
  'six==1.17.0',
  'strictyaml==1.7.3',
  'tenacity==9.2.1',
  'typing-inspection==0.4.5',
  'typing_extensions==4.16.0',
  'urllib3==2.8.0',
  'wrapt==2.5.2',
  'yarl==1.25.1',
  'zstandard==0.25.0',
]

/** The PyIceberg + s3fs venv's python, built first on a new machine (a test file's beforeAll waits for it). */
export const ensurePyicebergS3fs = (): Promise<string> => ensureVenvNamed('venv-pyiceberg-s3fs', PYICEBERG_S3FS_REQUIREMENTS)

/** Runs a test/interop script with the PyIceberg + s3fs venv's python; its stdout parsed losslessly. */
export async function runPyicebergS3fs(script: string, args: string[], input = ''): Promise<unknown> {
  const python = await ensurePyicebergS3fs()
  // No instance metadata lookups (botocore's credential chain): the scripts sign through the catalog.
  const env = { PYTHONDONTWRITEBYTECODE: '1', AWS_EC2_METADATA_DISABLED: 'true' }
  const { code, stdout, stderr } = await runSpawned(python, join(INTEROP_DIR, script), args, env, input, 120_000)
  if (code !== 0) throw new PythonError(script, code, stderr, stdout)
  return parseLossless(stdout)
}

/** Runs a test/interop script with the boto3 venv's python; its stdout parsed as JSON. */
export async function runBoto3(script: string, args: string[]): Promise<unknown> {
  const python = await ensureVenvNamed('venv-boto3', BOTO3_REQUIREMENTS)
  const { stdout } = await run(python, [join(INTEROP_DIR, script), ...args], { timeout: 120_000, maxBuffer: 1 << 26 })
  return JSON.parse(stdout)
}

export const INTEROP_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'interop')

const cacheDir = () => process.env.LHBOX_CACHE ?? join(homedir(), '.cache', 'lhbox')
export const venvDir = () => join(cacheDir(), 'venv')

/** The httpfs extension the roller's scheduled SQL runs LOAD (LHBOX_DUCKDB_HTTPFS): the venv's, nothing downloaded. */
export const duckdbHttpfsPath = (): string => httpfsInVenv(venvDir())
const STAMP = '.lhbox-requirements.sha256'

function requirementsText(requirements: readonly string[]): string {
  return requirements.join('\n') + '\n'
}

function requirementsHash(requirements: readonly string[]): string {
  return createHash('sha256').update(requirementsText(requirements)).digest('hex')
}

const pending = new Map<string, Promise<string>>()

/** The venv's python, after making sure the venv holds exactly the pinned list. */
export function ensureVenv(): Promise<string> {
  return ensureVenvNamed('venv', PYTHON_REQUIREMENTS)
}

/**
 * The python of the venv $LHBOX_CACHE/<name>, after making sure it holds exactly `requirements` (the
 * same stamp and lock as ensureVenv's): a tool with its own pins (schemathesis) gets its own venv, so
 * the two lists never have to agree. Pin every package, transitive ones included.
 */
export function ensureVenvNamed(name: string, requirements: readonly string[]): Promise<string> {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) throw new Error(`not a venv name: ${name}`)
  let built = pending.get(name)
  if (!built) {
    built = buildVenv(join(cacheDir(), name), requirements).catch((err) => {
      pending.delete(name)
      throw err
    })
    pending.set(name, built)
  }
  return built
}

async function buildVenv(dir: string, requirements: readonly string[]): Promise<string> {
  const python = join(dir, 'bin', 'python')
  const stamp = join(dir, STAMP)
  const hash = requirementsHash(requirements)
  const ready = () => existsSync(python) && existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === hash
  if (ready()) return python

  mkdirSync(cacheDir(), { recursive: true })
  const release = await lock(join(cacheDir(), `${basename(dir)}.lock`))
  try {
    if (ready()) return python // another process finished it while we waited
    const env = { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1', PYTHONDONTWRITEBYTECODE: '1' }
    const opts = { env, maxBuffer: 1 << 26, timeout: 15 * 60_000 }
    if (!existsSync(python)) {
      rmSync(dir, { recursive: true, force: true })
      await run(process.env.LHBOX_PYTHON ?? 'python3', ['-m', 'venv', dir], opts)
    }
    const reqFile = join(dir, 'lhbox-requirements.txt')
    writeFileSync(reqFile, requirementsText(requirements))
    try {
      await run(python, ['-m', 'pip', 'install', '--quiet', '--no-input', '-r', reqFile], opts)
    } catch (err: any) {
      throw new Error(`pip install into ${dir} failed:\n${err.stderr ?? err.message}`)
    }
    writeFileSync(stamp, hash + '\n')
    return python
  } finally {
    release()
  }
}

/** A cross-process lock: a directory made atomically; one older than 20 minutes is stale. */
async function lock(path: string): Promise<() => void> {
  const deadline = Date.now() + 20 * 60_000
  for (;;) {
    try {
      mkdirSync(path)
      return () => rmSync(path, { recursive: true, force: true })
    } catch (err: any) {
      if (err.code !== 'EEXIST') throw err
      try {
        if (Date.now() - statSync(path).mtimeMs > 20 * 60_000) rmSync(path, { recursive: true, force: true })
      } catch {
        /* gone meanwhile */
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${path}`)
      await new Promise((r) => setTimeout(r, 250))
    }
  }
}

export class PythonError extends Error {
  constructor(
    readonly script: string,
    readonly code: number | null,
    readonly stderr: string,
    readonly stdout: string,
  ) {
    super(`${script} exited with ${code}:\n${stderr.trim() || stdout.trim()}`)
    this.name = 'PythonError'
  }
}

export interface RunPythonOptions {
  /** Written to the script's stdin (pyiceberg_append.py reads its rows from it). */
  input?: string
  timeoutMs?: number
}

/**
 * Starts test/interop/fork_server.py on `socketPath` and names it in this process's environment, so
 * that runPython here and in the processes started after (vitest's workers) runs scripts in its forks.
 */
export async function startPythonForkServer(socketPath: string): Promise<{ stop: () => Promise<void> }> {
  const server = await startForkServer(await ensureVenv(), join(INTEROP_DIR, 'fork_server.py'), socketPath)
  process.env[FORK_SOCKET_ENV] = socketPath
  return server
}

/**
 * Runs a script of test/interop with the venv's python and parses its stdout losslessly.
 * Throws PythonError (with stderr) on a non-zero exit, and when stdout is not one JSON document.
 */
export async function runPython(script: string, args: string[], env?: Record<string, string>, options: RunPythonOptions = {}): Promise<unknown> {
  const path = isAbsolute(script) ? script : join(INTEROP_DIR, script)
  const pyEnv = { PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1', ...env }
  const input = options.input ?? ''
  const timeoutMs = options.timeoutMs ?? 120_000
  const { code, stdout, stderr } = await runScript(path, args, pyEnv, input, timeoutMs)
  if (code !== 0) throw new PythonError(script, code, stderr, stdout)
  try {
    return parseLossless(stdout)
  } catch (e) {
    throw new PythonError(script, code, `stdout is not one JSON document (${(e as Error).message}):\n${stdout.slice(0, 2000)}\n${stderr}`, stdout)
  }
}

/** A script in a fork of the fork server when this process's environment names one, else in a new interpreter. */
async function runScript(path: string, args: string[], env: Record<string, string>, input: string, timeoutMs: number): Promise<ScriptRun> {
  const socket = process.env[FORK_SOCKET_ENV]
  if (socket) return runForked(socket, { script: path, args, env, input }, timeoutMs)
  return runSpawned(await ensureVenv(), path, args, env, input, timeoutMs)
}

function runSpawned(python: string, path: string, args: string[], env: Record<string, string>, input: string, timeoutMs: number): Promise<ScriptRun> {
  return new Promise((res, rej) => {
    const child = spawn(python, [path, ...args], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] })
    const out: Buffer[] = []
    const err: Buffer[] = []
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.stdout.on('data', (b: Buffer) => out.push(b))
    child.stderr.on('data', (b: Buffer) => err.push(b))
    child.on('error', (e) => {
      clearTimeout(timer)
      rej(e)
    })
    child.on('close', (c) => {
      clearTimeout(timer)
      res({ code: c, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') })
    })
    child.stdin.on('error', () => {}) // the script may exit before reading
    child.stdin.end(input)
  })
}

// ---- argument helpers -------------------------------------------------------------------------

/** S3 options every script takes (the stack's s3rver or versitygw). */
export function s3Args(s3: S3Config): string[] {
  const args = ['--s3-endpoint', s3.endpoint, '--s3-access-key-id', s3.accessKeyId, '--s3-secret-access-key', s3.secretAccessKey, '--s3-region', s3.region]
  if (s3.sessionToken) args.push('--s3-session-token', s3.sessionToken)
  return args
}

/**
 * PyIceberg SqlCatalog on our Postgres: the catalog name is the warehouse name (the rows'
 * catalog_name). `databaseUrl` may be postgres://, postgresql:// or postgresql+psycopg2://.
 * `warehouse` is the location prefix for tables PyIceberg creates (s3://bucket/prefix).
 */
export function sqlCatalogArgs(opts: { databaseUrl: string; catalogName: string; s3: S3Config; warehouse?: string }): string[] {
  const args = ['--sql-uri', opts.databaseUrl, '--catalog-name', opts.catalogName, ...s3Args(opts.s3)]
  if (opts.warehouse) args.push('--warehouse', opts.warehouse)
  return args
}

/**
 * A script's output with numbers made comparable: an integer LosslessNumber becomes a bigint (exact
 * at any size), any other number a JS number (doubles print as their shortest round-trip form).
 * Strings (decimals, timestamps, "NaN"...) stay strings.
 */
export function toExact(value: unknown): any {
  if (isLosslessNumber(value)) return /^-?\d+$/.test(value.value) ? BigInt(value.value) : Number(value.value)
  if (Array.isArray(value)) return value.map(toExact)
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toExact(v)]))
  return value
}

/**
 * Runs a Python script (its text) with the venv in a fresh temp folder, given as its one argument:
 * for tests that have Python write files and print one JSON line about them (paths and schemas).
 */
export async function pythonInTempDir<T>(script: string, prefix: string): Promise<{ dir: string; out: T }> {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  const path = join(dir, 'write.py')
  writeFileSync(path, script)
  const { code, stdout, stderr } = await runScript(path, [dir], { PYTHONDONTWRITEBYTECODE: '1' }, '', 300_000)
  if (code !== 0) throw new PythonError(path, code, stderr, stdout)
  return { dir, out: JSON.parse(stdout.trim().split('\n').at(-1)!) as T }
}
