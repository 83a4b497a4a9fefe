// The Worker's bindings (wrangler.toml [vars] and secrets) and per-request variables.
import type { EdgeDb } from '../db/edge.ts'
import type { warehouses } from '../db/schema.ts'
import type { TableIdentifier } from '../iceberg/catalog/index.ts'
import type { Level } from './keys.ts'
import type { SendLimiter } from './limits/limiter.ts'
import type { LimitsEnv } from './limits/settings.ts'

/** The rate limits' bindings (LHBOX_SINK_*, LHBOX_PROJECT_*) are described in limits/settings.ts. */
export interface Env extends LimitsEnv {
  /** Postgres URL (Neon in production; pgbouncer locally). Secret. Unused when HYPERDRIVE is bound. */
  DATABASE_URL: string
  /** A Hyperdrive binding ([[hyperdrive]] in wrangler.toml): when bound, the edge reaches Postgres through it (edge/database.ts). */
  HYPERDRIVE?: Hyperdrive
  /** Local only: "host:port" of the WebSocket→TCP bridge. Unset on Workers. */
  NEON_WS_PROXY?: string
  /** Local only: "password" when the bridge reaches pgbouncer (cleartext auth): connect pipelined as on Neon (db/edge.ts). */
  NEON_PIPELINE_CONNECT?: string
  /** Secret shared with the roller and the operator's bootstrap; guards /internal/*. */
  LHBOX_BOOTSTRAP_SECRET: string
  /** The intake store: the catalog's own identity (secrets) and default endpoint/region. */
  S3_ENDPOINT: string
  S3_BUCKET: string
  S3_REGION: string
  S3_ACCESS_KEY_ID: string
  S3_SECRET_ACCESS_KEY: string
  /**
   * Seals REST catalogs' tokens and credentials at rest (db/sealed.ts): "<key id>:<32 bytes base64>",
   * comma-separated with the sealing key first while a key is rotated. Secret.
   */
  LHBOX_SECRETS_KEY?: string
  /** "false" turns sinks off (send and device routes 503 sinks_disabled, no leases); the earlier spec's name is AL_SINKS_ENABLED. */
  LHBOX_SINKS_ENABLED?: string
  AL_SINKS_ENABLED?: string
  /** Where DuckDB's parser checks a scheduled SQL sink's query: the roller's POST /sql/check. Unset: each run checks it. */
  LHBOX_SQL_CHECK_URL?: string
  /**
   * "true": the Iceberg REST catalog vends the edge's own store keys (S3_ACCESS_KEY_ID) to write keys that
   * ask (X-Iceberg-Access-Delegation: vended-credentials). Those keys reach the whole bucket, every
   * project's files in it: only for a deployment whose bucket holds one tenant. Unset: credentials
   * scoped to the table, served by the edge's S3 endpoint (/iceberg/s3: iceberg-rest/s3-proxy.ts).
   */
  LHBOX_VEND_STORE_KEYS?: string
  /**
   * Hosts, addresses or CIDRs (comma-separated) a warehouse's `endpoint` or REST catalog `uri` may name
   * though internal; the edge's own S3_ENDPOINT host is always allowed (edge/warehouse-egress.ts).
   */
  LHBOX_WAREHOUSE_ALLOW_HOSTS?: string
}

/** Who called a /v1 route: an API key of one project, at its level (auth.ts sets it). */
export interface Principal {
  keyId: string
  projectId: string
  level: Level
}

interface Vars {
  /** The request's database, connected on first use and closed after the response. */
  db: () => Promise<EdgeDb>
  principal: Principal
  /**
   * The warehouse a REST catalog path names, read with the caller's key (edge/auth.ts keyRow); null: none
   * of the key's project. For a table's GET also the table's metadata location then (null: no such table).
   */
  warehouseRead?: { id: string; row: typeof warehouses.$inferSelect | null; table?: { id: TableIdentifier; location: string | null } }
  /**
   * Work that may finish after the response (waitUntil); the connection closes after it. A function is
   * started only once the answer is ready: on a Worker's one connection, work already started queues
   * ahead of the route's own statements.
   */
  defer: (work: Promise<unknown> | (() => Promise<unknown>)) => void
  /** The rate limits' state in this isolate or process (edge/limits/limiter.ts). */
  limiter: SendLimiter
}

export type AppEnv = { Bindings: Env; Variables: Vars }
