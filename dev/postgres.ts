// A private Postgres cluster in the state folder: initdb once, pg_ctl start on a loopback port.
import { execFile } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { serviceUser, waitFor } from './process.ts'

const run = promisify(execFile)

export const PG_USER = 'lhbox'
export const PG_PASSWORD = 'lhbox-dev'
export const PG_DATABASE = 'lhbox'

/** Debian's binaries (/usr/lib/postgresql/<v>/bin, newest first), or whatever `initdb` is on PATH. */
function postgresBinDir(): string | null {
  if (process.env.LHBOX_PG_BIN) return process.env.LHBOX_PG_BIN
  const root = '/usr/lib/postgresql'
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a))
    if (versions.length > 0) return join(root, versions[0], 'bin')
  }
  for (const dir of (process.env.PATH ?? '').split(':')) if (dir && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) return dir
  return null
}

export interface Postgres {
  url: string
  stop(): Promise<void>
}

export async function startPostgres(stateDir: string, port: number): Promise<Postgres> {
  const bin = postgresBinDir()
  if (!bin) throw new Error('no PostgreSQL binaries found: apt-get install postgresql (or set LHBOX_PG_BIN)')
  const data = join(stateDir, 'pg')
  const user = serviceUser()
  const opts = user ? { uid: user.uid, gid: user.gid } : {}
  mkdirSync(stateDir, { recursive: true })
  // The service user must reach its data folder inside ours (mkdtemp makes 0700 folders).
  if (user) chmodSync(stateDir, 0o755)
  if (!existsSync(join(data, 'PG_VERSION'))) {
    mkdirSync(data, { recursive: true, mode: 0o700 })
    if (user) chownSync(data, user.uid, user.gid)
    // Trust on loopback: a private cluster, reached only by this stack's own processes.
    await run(join(bin, 'initdb'), ['-D', data, '-U', PG_USER, '--auth=trust', '-E', 'UTF8', '--no-instructions'], opts)
  }
  const pgCtl = join(bin, 'pg_ctl')
  // A cluster left running by a killed stack: stop it first, then start on our port.
  await run(pgCtl, ['-D', data, 'stop', '-m', 'fast'], opts).catch(() => undefined)
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c max_connections=200 -c fsync=off -c synchronous_commit=off`
  await run(pgCtl, ['-D', data, '-l', join(data, 'server.log'), '-o', options, '-w', '-t', '60', 'start'], opts)

  const admin = `postgres://${PG_USER}@127.0.0.1:${port}/postgres`
  await waitFor('postgres', async () => {
    const c = new pg.Client(admin)
    await c.connect()
    await c.end()
    return true
  })
  const c = new pg.Client(admin)
  await c.connect()
  try {
    const exists = await c.query('select 1 from pg_database where datname = $1', [PG_DATABASE])
    if (exists.rowCount === 0) await c.query(`create database ${PG_DATABASE}`)
    await c.query(`alter user ${PG_USER} password '${PG_PASSWORD}'`)
  } finally {
    await c.end()
  }
  return {
    url: `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${port}/${PG_DATABASE}`,
    async stop() {
      await run(pgCtl, ['-D', data, 'stop', '-m', 'fast'], opts).catch(() => undefined)
    },
  }
}
