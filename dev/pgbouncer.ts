// pgbouncer in transaction mode in front of the private cluster, as Neon's pooler is in production.
import { chownSync, existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { execFileSync } from 'node:child_process'
import { createConnection } from 'node:net'
import { PG_DATABASE, PG_PASSWORD, PG_USER } from './postgres.ts'
import { serviceUser, startChild, waitFor, type Child } from './process.ts'

export function pgbouncerBinary(): string | null {
  for (const candidate of ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer']) if (existsSync(candidate)) return candidate
  try {
    return execFileSync('which', ['pgbouncer']).toString().trim() || null
  } catch {
    return null
  }
}

export async function startPgbouncer(stateDir: string, port: number, postgresPort: number): Promise<Child> {
  const bin = pgbouncerBinary()
  if (!bin) throw new Error('pgbouncer not found')
  const dir = join(stateDir, 'pgbouncer')
  mkdirSync(dir, { recursive: true })
  // Cleartext auth: the neon driver's SCRAM check burns a core per connection (DESIGN.md, measured).
  writeFileSync(join(dir, 'userlist.txt'), `"${PG_USER}" "${PG_PASSWORD}"\n`)
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `${PG_DATABASE} = host=127.0.0.1 port=${postgresPort} dbname=${PG_DATABASE} user=${PG_USER}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      "unix_socket_dir = ''",
      'auth_type = plain',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      'pool_mode = transaction',
      // SHOW STATS on the admin console (database pgbouncer): bench:intake counts the statements per send.
      `stats_users = ${PG_USER}`,
      'max_client_conn = 1000',
      'default_pool_size = 40',
      'ignore_startup_parameters = extra_float_digits,options',
      `pidfile = ${join(dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n'),
  )
  const user = serviceUser()
  if (user) chownSync(dir, user.uid, user.gid)
  const child = startChild('pgbouncer', bin, [join(dir, 'pgbouncer.ini')], join(stateDir, 'pgbouncer.log'), user ?? {})
  await waitFor('pgbouncer', () => canConnect(port), 15_000, child)
  return child
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = createConnection({ port, host: '127.0.0.1' })
    sock.once('connect', () => {
      sock.destroy()
      resolve(true)
    })
    sock.once('error', () => resolve(false))
  })
}
