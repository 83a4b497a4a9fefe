// The stack's S3 servers: s3rver (npm) for the dev stack and the fast loop, and versitygw
// (a real gateway built from Go modules, cached under ~/.cache/lhbox) that verifies signatures
// and honours conditional writes.
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { S3Client, type S3Config } from '../iceberg/io/s3.ts'
import { startChild, waitFor, type Child } from './process.ts'

const run = promisify(execFile)

const S3RVER_KEY = 'S3RVER' // s3rver's built-in account

export interface S3Server {
  config: S3Config
  child: Child
}

async function bucketAnswers(config: S3Config): Promise<boolean> {
  await new S3Client(config).headBucket()
  return true
}

export async function startS3rver(stateDir: string, port: number, bucket: string): Promise<S3Server> {
  const dir = join(stateDir, 's3')
  mkdirSync(dir, { recursive: true })
  const main = fileURLToPath(new URL('./s3rver-main.mjs', import.meta.url))
  const child = startChild('s3rver', process.execPath, ['--openssl-legacy-provider', main, String(port), dir, bucket], join(stateDir, 's3rver.log'))
  const config: S3Config = { endpoint: `http://127.0.0.1:${port}`, bucket, region: 'us-east-1', accessKeyId: S3RVER_KEY, secretAccessKey: S3RVER_KEY }
  await waitFor('s3rver', () => bucketAnswers(config), 20_000, child)
  return { config, child }
}

export const CACHE_DIR = process.env.LHBOX_CACHE ?? join(homedir(), '.cache', 'lhbox')
const VERSITYGW_VERSION = 'v1.8.0'

/** Builds versitygw with `go install` into the cache once; later runs reuse it. */
export async function ensureVersitygw(): Promise<string> {
  const bin = join(CACHE_DIR, 'bin', 'versitygw')
  if (existsSync(bin)) return bin
  const env = { ...process.env, GOBIN: join(CACHE_DIR, 'bin'), GOPATH: join(CACHE_DIR, 'go'), GOMODCACHE: join(CACHE_DIR, 'go', 'mod'), GOFLAGS: '-mod=mod' }
  await run('go', ['install', `github.com/versity/versitygw/cmd/versitygw@${VERSITYGW_VERSION}`], { env, maxBuffer: 1 << 24 })
  return bin
}

export async function startVersitygw(stateDir: string, port: number, bucket: string): Promise<S3Server> {
  const bin = await ensureVersitygw()
  const root = join(stateDir, 'versitygw')
  mkdirSync(join(root, bucket), { recursive: true }) // the posix backend's buckets are folders
  const access = 'lhbox-test'
  const secret = 'lhbox-test-secret-key'
  const child = startChild(
    'versitygw',
    bin,
    ['--access', access, '--secret', secret, '--port', `127.0.0.1:${port}`, 'posix', root],
    join(stateDir, 'versitygw.log'),
  )
  const config: S3Config = { endpoint: `http://127.0.0.1:${port}`, bucket, region: 'us-east-1', accessKeyId: access, secretAccessKey: secret }
  await waitFor('versitygw', () => bucketAnswers(config), 20_000, child)
  return { config, child }
}
