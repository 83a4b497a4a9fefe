// The roller's configuration, from the environment (README "Roller").
import { availableParallelism, hostname } from 'node:os'
import { sinksEnabled } from '../contract/switch.ts'
import { EgressPolicy, WAREHOUSES } from '../contract/egress-policy.ts'
import type { SqlLimits } from './feeds/sql.ts'

export interface RollerConfig {
  /** The edge's base URL (its /internal routes). */
  apiUrl: string
  bootstrapSecret: string
  /** Direct Postgres for SQL-catalog warehouses. */
  databaseUrl?: string
  /** The catalog's own S3 identity (intake, rejects, markers, table files unless vended). */
  s3AccessKeyId: string
  s3SecretAccessKey: string
  /** REST catalogs: a bearer token or OAuth2 client credentials "id:secret". */
  catalogToken?: string
  catalogCredential?: string
  rollerId: string
  tickSeconds: number
  leaseSeconds: number
  /** Rolls at once (LHBOX_ROLLER_CONCURRENCY): each tick leases only its free slots. */
  concurrency: number
  /**
   * A sink behind (more waiting than one roll takes) is rolled again at once under its lease: at most
   * `rolls` rolls (LHBOX_ROLLER_CATCH_UP_ROLLS, default 4; 1 turns it off), none started `ms` after
   * the first (LHBOX_ROLLER_CATCH_UP_SECONDS, default 30).
   */
  catchUp: { rolls: number; ms: number }
  /** A roll with more than this many bytes waiting is large: large rolls take turns (peak memory of one). */
  largeRollBytes: number
  /** LHBOX_ROLLER_WAREHOUSES: lease only sinks of these warehouse ids; all when empty. */
  warehouseIds: string[]
  /** Port of /healthz and /metrics; 0 for none. */
  metricsPort: number
  /**
   * The maintenance sweep: how often; the retained history (spec: 20 snapshots or 168 h, whichever
   * comes first); the compaction target; the orphan age guard.
   */
  maintenance: { everyHours: number; retainSnapshots: number; maxSnapshotAgeMs: number; targetFileSizeBytes: number; orphanOlderThanMs: number }
  /**
   * LHBOX_REJECTS_RETENTION_DAYS (default 7, the spec's "sweeps rejects older than 7 days"): the
   * maintenance sweep deletes rejects files older than this; 0 keeps them for ever.
   */
  rejectsRetentionDays: number
  /** A keyed roll's limit on rewritten data files (spec: 256 MiB); lowered in tests. */
  maxRewriteBytes: number
  /** Threads that scan batches beside the main thread; 0 scans on the main thread. */
  scanThreads: number
  /** LHBOX_ROLL_STAGE_CPU=1: each 'rolled' log line gives the roll's CPU per stage (roller/stage-cpu.ts). */
  stageCpu: boolean
  /** Scheduled SQL runs (roller/feeds/sql.ts): DuckDB's limits per run and where httpfs is loaded from. */
  sql: SqlLimits
  /** How often each warehouse's storage is measured (roller/measure.ts); 0: only figures asked for. */
  measureSeconds: number
  /** LHBOX_SINKS_ENABLED / AL_SINKS_ENABLED false: lease nothing, roll nothing (the edge's switch does the same). */
  sinksEnabled: boolean
  /**
   * Where the roller's own requests may connect (contract/egress-connect.ts): warehouses' store endpoints
   * and REST catalogs are tenant-chosen, so public addresses only, the edge (LHBOX_URL), the operator's
   * store (S3_ENDPOINT) and LHBOX_WAREHOUSE_ALLOW_HOSTS excepted.
   */
  egress: EgressPolicy
  /** Commit retries after a conflict (the spec: 5 attempts, 0.5–8 s backoff). */
  retry: { attempts: number; minBackoffMs: number; maxBackoffMs: number }
}

function need(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name]
  if (!value) throw new Error(`${name} is not set (see the README's roller section)`)
  return value
}

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const n = Number(raw)
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name}=${raw}: expected a positive integer`)
  return n
}

function nonNegative(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const n = Number(raw)
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name}=${raw}: expected a whole number of 0 or more`)
  return n
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): RollerConfig {
  return {
    apiUrl: need(env, 'LHBOX_URL').replace(/\/+$/, ''),
    bootstrapSecret: need(env, 'LHBOX_BOOTSTRAP_SECRET'),
    databaseUrl: env.DATABASE_URL,
    s3AccessKeyId: need(env, 'S3_ACCESS_KEY_ID'),
    s3SecretAccessKey: need(env, 'S3_SECRET_ACCESS_KEY'),
    catalogToken: env.LHBOX_CATALOG_TOKEN,
    catalogCredential: env.LHBOX_CATALOG_CREDENTIAL,
    rollerId: env.LHBOX_ROLLER_ID ?? `${hostname()}-${process.pid}`,
    tickSeconds: Number(env.LHBOX_ROLLER_TICK_SECONDS ?? 10),
    leaseSeconds: Number(env.LHBOX_ROLLER_LEASE_SECONDS ?? 300),
    concurrency: positive(env, 'LHBOX_ROLLER_CONCURRENCY', 8),
    largeRollBytes: positive(env, 'LHBOX_ROLLER_LARGE_ROLL_BYTES', 4 * 1024 * 1024),
    catchUp: { rolls: positive(env, 'LHBOX_ROLLER_CATCH_UP_ROLLS', 4), ms: nonNegative(env, 'LHBOX_ROLLER_CATCH_UP_SECONDS', 30) * 1000 },
    warehouseIds: (env.LHBOX_ROLLER_WAREHOUSES ?? '')
      .split(',')
      .map((w) => w.trim())
      .filter(Boolean),
    metricsPort: Number(env.LHBOX_ROLLER_PORT ?? 0),
    maxRewriteBytes: Number(env.LHBOX_UPSERT_MAX_REWRITE_BYTES ?? 256 * 1024 * 1024),
    scanThreads: Number(env.LHBOX_ROLLER_SCAN_THREADS ?? availableParallelism()),
    stageCpu: env.LHBOX_ROLL_STAGE_CPU === '1',
    maintenance: {
      everyHours: Number(env.LHBOX_MAINTENANCE_HOURS ?? 6),
      retainSnapshots: Number(env.LHBOX_MAINTENANCE_RETAIN_SNAPSHOTS ?? 20),
      maxSnapshotAgeMs: Number(env.LHBOX_MAINTENANCE_RETAIN_HOURS ?? 168) * 3600_000,
      targetFileSizeBytes: Number(env.LHBOX_MAINTENANCE_TARGET_FILE_BYTES ?? 128 * 1024 * 1024),
      orphanOlderThanMs: Number(env.LHBOX_MAINTENANCE_ORPHAN_HOURS ?? 24) * 3600_000,
    },
    rejectsRetentionDays: nonNegative(env, 'LHBOX_REJECTS_RETENTION_DAYS', 7),
    sql: {
      memoryLimit: env.LHBOX_SQL_MEMORY_LIMIT ?? '512MB',
      // Below the lease (300 s): a run never outlives the lease it holds.
      timeoutSeconds: Number(env.LHBOX_SQL_TIMEOUT_SECONDS ?? 120),
      threads: Number(env.LHBOX_SQL_THREADS ?? 2),
      httpfsPath: env.LHBOX_DUCKDB_HTTPFS || undefined,
      maxBatchBytes: Number(env.LHBOX_SQL_MAX_BATCH_BYTES ?? 256 * 1024 * 1024),
      // Public addresses only, and what the operator opens by name or CIDR (contract/egress-policy.ts).
      egress: EgressPolicy.fromEnv(env.LHBOX_SQL_ALLOW_HOSTS),
    },
    measureSeconds: Number(env.LHBOX_MEASURE_SECONDS ?? 300),
    sinksEnabled: sinksEnabled(env),
    egress: EgressPolicy.fromEnv(env.LHBOX_WAREHOUSE_ALLOW_HOSTS, WAREHOUSES, [env.LHBOX_URL, env.S3_ENDPOINT]),
    retry: {
      attempts: 5,
      minBackoffMs: Number(env.LHBOX_ROLLER_BACKOFF_MIN_MS ?? 500),
      maxBackoffMs: Number(env.LHBOX_ROLLER_BACKOFF_MAX_MS ?? 8000),
    },
  }
}
