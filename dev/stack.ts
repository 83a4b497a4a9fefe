// The local stack, shared by `npm run dev` and the integration tests' global setup:
// Postgres → pgbouncer → WebSocket bridge → wrangler dev (the Worker), and the S3 server.
import { randomBytes } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { resolve } from 'node:path'
import { migrateTo } from '../db/migrate.ts'
import { startBridge } from './wsbridge.ts'
import { pgbouncerBinary, startPgbouncer } from './pgbouncer.ts'
import { PG_DATABASE, PG_PASSWORD, PG_USER, startPostgres } from './postgres.ts'
import { stackPorts, type StackPorts } from './ports.ts'
import { startS3rver, startVersitygw } from './s3.ts'
import { devHttpfs } from './duckdb.ts'
import { startRoller } from './roller.ts'
import { startWrangler } from './wrangler.ts'
import type { S3Config } from '../iceberg/io/s3.ts'

export interface StackOptions {
  dir: string
  basePort?: number
  bootstrapSecret: string
  bucket?: string
  /** Start the roller service too (npm run dev); tests tick it themselves. */
  roller?: boolean
  /** The S3 server: s3rver (the default, quick to start) or versitygw (a real gateway: the benchmarks). */
  store?: 's3rver' | 'versitygw'
  log?: (line: string) => void
  /** LHBOX_SECRETS_KEY: seals REST catalogs' secrets ("<key id>:<32 bytes base64>"). */
  secretsKey: string
  /** Where the edge asks DuckDB's parser about a SQL sink's query; default the roller service's /sql/check when it runs. */
  sqlCheckUrl?: string
}

export interface Stack {
  dir: string
  ports: StackPorts
  apiUrl: string
  /** Direct Postgres (migrations, the SQL catalog from Node, PyIceberg). */
  databaseUrl: string
  s3: S3Config
  bootstrapSecret: string
  secretsKey: string
  /** The edge's bindings as this stack passes them (a test starts another edge with some changed). */
  edgeVars: Record<string, string>
  stop(): Promise<void>
}

/** A fresh LHBOX_SECRETS_KEY value: key id k1, 32 random bytes. */
export const newSecretsKey = (id = 'k1') => `${id}:${randomBytes(32).toString('base64')}`

export async function startStack(opts: StackOptions): Promise<Stack> {
  const dir = resolve(opts.dir)
  const log = opts.log ?? (() => undefined)
  const bucket = opts.bucket ?? 'lhbox-dev'
  mkdirSync(dir, { recursive: true })
  const ports = await stackPorts(opts.basePort)
  const stoppers: Array<() => Promise<void>> = []
  const stop = async () => {
    for (const s of stoppers.reverse()) await s().catch(() => undefined)
    stoppers.length = 0
  }
  try {
    const pg = await startPostgres(dir, ports.postgres)
    stoppers.push(pg.stop)
    log(`postgres    127.0.0.1:${ports.postgres}`)
    await migrateTo(pg.url, opts.secretsKey)

    // pgbouncer when installed; otherwise the bridge dials Postgres itself (slower, same behaviour).
    let poolPort = ports.postgres
    if (pgbouncerBinary()) {
      const bouncer = await startPgbouncer(dir, ports.pgbouncer, ports.postgres)
      stoppers.push(bouncer.stop)
      poolPort = ports.pgbouncer
      log(`pgbouncer   127.0.0.1:${ports.pgbouncer} (transaction pooling)`)
    } else {
      log('pgbouncer   not installed: the Worker connects to Postgres directly')
    }
    const bridge = await startBridge(ports.bridge, { host: '127.0.0.1', port: poolPort })
    stoppers.push(bridge.stop)

    const s3 = opts.store === 'versitygw' ? await startVersitygw(dir, ports.s3, bucket) : await startS3rver(dir, ports.s3, bucket)
    stoppers.push(s3.child.stop)
    log(`s3          ${s3.config.endpoint}/${bucket}`)

    const sqlCheckUrl = opts.sqlCheckUrl ?? (opts.roller ? `http://127.0.0.1:${ports.roller}/sql/check` : undefined)
    const edgeVars = {
      DATABASE_URL: `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${poolPort}/${PG_DATABASE}`,
      NEON_WS_PROXY: `127.0.0.1:${ports.bridge}`,
      // pgbouncer asks a cleartext password, as Neon's proxy does: the connect is pipelined as there.
      ...(poolPort === ports.postgres ? {} : { NEON_PIPELINE_CONNECT: 'password' }),
      LHBOX_BOOTSTRAP_SECRET: opts.bootstrapSecret,
      LHBOX_SECRETS_KEY: opts.secretsKey,
      S3_ENDPOINT: s3.config.endpoint,
      S3_BUCKET: bucket,
      S3_REGION: s3.config.region,
      S3_ACCESS_KEY_ID: s3.config.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.config.secretAccessKey,
      ...(sqlCheckUrl ? { LHBOX_SQL_CHECK_URL: sqlCheckUrl } : {}),
    }
    const worker = await startWrangler(dir, ports.api, ports.inspector, edgeVars)
    stoppers.push(worker.stop)
    const apiUrl = `http://127.0.0.1:${ports.api}`
    log(`api         ${apiUrl}`)
    if (opts.roller) {
      const httpfs = devHttpfs()
      const roller = startRoller(dir, {
        LHBOX_URL: apiUrl,
        LHBOX_BOOTSTRAP_SECRET: opts.bootstrapSecret,
        DATABASE_URL: pg.url,
        S3_ACCESS_KEY_ID: s3.config.accessKeyId,
        S3_SECRET_ACCESS_KEY: s3.config.secretAccessKey,
        LHBOX_ROLLER_PORT: String(ports.roller),
        // Scheduled SQL sinks offline: httpfs from a file (README "Scheduled SQL"), when there is one.
        ...(httpfs ? { LHBOX_DUCKDB_HTTPFS: httpfs } : {}),
      })
      stoppers.push(roller.stop)
      log(`roller      http://127.0.0.1:${ports.roller}/metrics (ticks every 10 s)`)
    }
    return { dir, ports, apiUrl, databaseUrl: pg.url, s3: s3.config, bootstrapSecret: opts.bootstrapSecret, secretsKey: opts.secretsKey, edgeVars, stop }
  } catch (err) {
    await stop()
    throw err
  }
}
