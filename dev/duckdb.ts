// DuckDB's httpfs extension without a download: the PyPI wheel duckdb-extension-httpfs of the same
// DuckDB version, as the interop venv (~/.cache/lhbox/venv) installs it. The roller LOADs the file
// (LHBOX_DUCKDB_HTTPFS); @duckdb/node-api 1.5.5-r.5 is DuckDB 1.5.5, and an extension loads only into
// its own version.
import { existsSync, readdirSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

const DUCKDB_VERSION = '1.5.5'

/** The extension file inside a venv (it may not exist yet). */
export function httpfsInVenv(venv: string): string {
  const lib = join(venv, 'lib')
  const python = existsSync(lib) ? readdirSync(lib).find((d) => d.startsWith('python3')) : undefined
  return join(lib, python ?? 'python3', 'site-packages', 'duckdb_extension_httpfs', 'extensions', `v${DUCKDB_VERSION}`, 'httpfs.duckdb_extension')
}

/** For `npm run dev`: LHBOX_DUCKDB_HTTPFS, else the tests' venv's file when it is there, else none (DuckDB installs it). */
export function devHttpfs(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env.LHBOX_DUCKDB_HTTPFS) return env.LHBOX_DUCKDB_HTTPFS
  const file = httpfsInVenv(join(env.LHBOX_CACHE ?? join(homedir(), '.cache', 'lhbox'), 'venv'))
  return existsSync(file) ? file : undefined
}
