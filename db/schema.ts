// One schema, one migration history (drizzle-kit generates db/migrations from this file).
import { sql } from 'drizzle-orm'
import {
  bigint,
  bigserial,
  check,
  customType,
  date,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  varchar,
} from 'drizzle-orm/pg-core'
import { stringify } from 'lossless-json'

/**
 * jsonb written without JSON.stringify: a LosslessNumber keeps its digits (jsonb's numeric keeps them
 * too). Read it as text (`device::text`) and parse it exactly: pg and neon hand jsonb to JSON.parse.
 */
const exactJsonb = customType<{ data: unknown; driverData: string }>({
  dataType: () => 'jsonb',
  toDriver: (value) => stringify(value) ?? 'null',
})

const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow()

export const projects = pgTable('projects', {
  id: text('id').primaryKey(),
  name: text('name').notNull().unique(),
  createdAt: createdAt(),
})

export const apiKeys = pgTable(
  'api_keys',
  {
    // The key's public id: the <12 hex> part of al_key_<12 hex>_<secret>.
    id: text('id').primaryKey(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id),
    level: text('level').notNull(),
    // SHA-256 of the whole key, hex. The key itself is never stored.
    keySha256: text('key_sha256').notNull(),
    name: text('name'),
    createdAt: createdAt(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, mode: 'date' }),
    revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [check('api_keys_level', sql`${t.level} in ('read', 'write', 'admin')`)],
)

export const warehouses = pgTable(
  'warehouses',
  {
    id: text('id').primaryKey(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id),
    name: text('name').notNull(),
    // {type: "sql"} or {type: "rest", uri, warehouse?, scope?}: never a secret (see catalogSecret).
    catalog: jsonb('catalog').notNull(),
    // A REST catalog's {token?, credential?} as JSON, sealed (db/sealed.ts) under LHBOX_SECRETS_KEY.
    catalogSecret: text('catalog_secret'),
    // A read-only store key pair {access_key_id, secret_access_key} as JSON, sealed like catalogSecret:
    // what the Iceberg REST catalog vends to read keys (edge/iceberg-rest/storage-access.ts).
    storeReadKey: text('store_read_key'),
    bucket: text('bucket').notNull(),
    endpoint: text('endpoint').notNull(),
    region: text('region').notNull(),
    prefix: text('prefix').notNull().default(''),
    maintenance: text('maintenance').notNull().default('roller'),
    // The storage meter (roller/measure.ts): the last figure {bytes, intake_bytes, objects, tables, measured_at},
    // when the next is due, a figure asked for now (POST /v1/warehouses/{id}/measure), and the roller measuring it.
    storage: jsonb('storage'),
    measureNextAt: timestamp('measure_next_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    measureRequestedAt: timestamp('measure_requested_at', { withTimezone: true, mode: 'string', precision: 3 }),
    measureLeaseUntil: timestamp('measure_lease_until', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('warehouses_project_name').on(t.projectId, t.name), check('warehouses_maintenance', sql`${t.maintenance} in ('roller', 'off')`)],
)

export const sinks = pgTable(
  'sinks',
  {
    id: text('id').primaryKey(),
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id),
    warehouseId: text('warehouse_id')
      .notNull()
      .references(() => warehouses.id),
    name: text('name').notNull(),
    tableNamespace: text('table_namespace').notNull(),
    tableName: text('table_name').notNull(),
    sendKeySha256: text('send_key_sha256').notNull(),
    // After a rotation (POST /v1/sinks/{id}/send-keys): the key it replaced, accepted until
    // previous_send_key_retires_at. Two keys live at most; null when none is.
    previousSendKeySha256: text('previous_send_key_sha256'),
    previousSendKeyRetiresAt: timestamp('previous_send_key_retires_at', { withTimezone: true, mode: 'date' }),
    rollSeconds: integer('roll_seconds').notNull().default(300),
    rollBytes: bigint('roll_bytes', { mode: 'number' })
      .notNull()
      .default(64 * 1024 * 1024),
    inactivitySeconds: integer('inactivity_seconds'),
    keyColumns: jsonb('key_columns'),
    state: text('state').notNull().default('active'),
    disabledReason: text('disabled_reason'),
    leaseOwner: text('lease_owner'),
    leaseExpiresAt: timestamp('lease_expires_at', { withTimezone: true, mode: 'date' }),
    // When the lease was last taken (renewals leave it): a tick leases a sink once (edge/roller-ledger.ts).
    leasedAt: timestamp('leased_at', { withTimezone: true, mode: 'date' }),
    dedupeRequestedAt: timestamp('dedupe_requested_at', { withTimezone: true, mode: 'date' }),
    dedupeLast: jsonb('dedupe_last'),
    lastRoll: jsonb('last_roll'),
    // Why the last roll failed, {at, code, message} (catalog_unauthorized, quota_exceeded, roll_failed); cleared by a roll that succeeds.
    lastError: jsonb('last_error'),
    // {rows_total, batches_with_rejects, last_at}, from the roller's reports.
    rejects: jsonb('rejects'),
    // The device route's settings: {mapping, require, strip} as set and `compiled` (edge/devices/compile.ts);
    // a mapping's constants exact (edge/exact-json.ts).
    device: exactJsonb('device'),
    // A feed the roller runs itself instead of a producer (roller/feeds): {kind: 'sql', query, every_seconds}
    // or {kind: 'files', prefix, every_seconds, pattern}; null for a send sink.
    feed: jsonb('feed'),
    // When the next scheduled run is due; a run asked for now (POST /v1/sinks/{id}/run) until it is done.
    feedNextRunAt: timestamp('feed_next_run_at', { withTimezone: true, mode: 'date' }),
    feedRunRequestedAt: timestamp('feed_run_requested_at', { withTimezone: true, mode: 'string', precision: 3 }),
    // The last run as the roller reported it: {run_id, at, rows, seconds, error}.
    feedLastRun: jsonb('feed_last_run'),
    // The last maintenance sweep of the sink's table as the roller reported it (contract/internal.ts
    // MaintenanceSweep: {at, next_at, the counts, seconds, error?}); null before the first.
    maintenanceLast: jsonb('maintenance_last'),
    // Rate limits on the producer routes, {requests_per_second, bytes_per_second} (each a number or
    // null); null: the edge's configured defaults (edge/rate-limit.ts).
    limits: jsonb('limits'),
    createdAt: createdAt(),
    deletedAt: timestamp('deleted_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    check('sinks_state', sql`${t.state} in ('active', 'disabled', 'deleted')`),
    // A table has one sink at most, and a name one live sink per project.
    uniqueIndex('sinks_one_per_table').on(t.warehouseId, t.tableNamespace, t.tableName).where(sql`${t.state} <> 'deleted'`),
    uniqueIndex('sinks_project_name').on(t.projectId, t.name).where(sql`${t.state} <> 'deleted'`),
    // POST /mcp with a send key finds its sink by the key's hash (edge/mcp/caller.ts), current or previous.
    index('sinks_send_key').on(t.sendKeySha256).where(sql`${t.state} <> 'deleted'`),
    index('sinks_previous_send_key').on(t.previousSendKeySha256).where(sql`${t.previousSendKeySha256} is not null and ${t.state} <> 'deleted'`),
  ],
)

// The ledger: one row per accepted batch id, for idempotency, lag and usage.
export const batches = pgTable(
  'batches',
  {
    sinkId: text('sink_id')
      .notNull()
      .references(() => sinks.id),
    batchId: text('batch_id').notNull(),
    bodySha256: text('body_sha256').notNull(),
    bytes: bigint('bytes', { mode: 'number' }).notNull(),
    rows: integer('rows').notNull(),
    rejected: integer('rejected').notNull().default(0),
    // The answer's reasons, replayed on a duplicate.
    reasons: jsonb('reasons').notNull().default(sql`'[]'::jsonb`),
    receivedAt: timestamp('received_at', { withTimezone: true, mode: 'string', precision: 6 }).notNull(),
    state: text('state').notNull().default('receiving'),
    snapshotId: bigint('snapshot_id', { mode: 'bigint' }),
    committedAt: timestamp('committed_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    primaryKey({ columns: [t.sinkId, t.batchId] }),
    check('batches_state', sql`${t.state} in ('receiving', 'pending', 'committed', 'discarded')`),
    index('batches_pending').on(t.sinkId, t.receivedAt).where(sql`${t.state} in ('receiving', 'pending')`),
    index('batches_prune').on(t.committedAt).where(sql`${t.state} = 'committed'`),
  ],
)

export const rollReports = pgTable(
  'roll_reports',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    sinkId: text('sink_id')
      .notNull()
      .references(() => sinks.id),
    rollId: text('roll_id').notNull(),
    at: timestamp('at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    batches: integer('batches').notNull(),
    rows: bigint('rows', { mode: 'number' }).notNull(),
    rejectedRows: bigint('rejected_rows', { mode: 'number' }).notNull(),
    snapshotId: bigint('snapshot_id', { mode: 'bigint' }),
    seconds: integer('seconds').notNull(),
    details: jsonb('details'),
  },
  (t) => [index('roll_reports_sink').on(t.sinkId, t.at)],
)

export const usageCounters = pgTable(
  'usage_counters',
  {
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id),
    sinkId: text('sink_id').notNull(),
    month: date('month', { mode: 'string' }).notNull(),
    batches: bigint('batches', { mode: 'number' }).notNull().default(0),
    bytes: bigint('bytes', { mode: 'number' }).notNull().default(0),
    rowsAccepted: bigint('rows_accepted', { mode: 'number' }).notNull().default(0),
    rowsRejected: bigint('rows_rejected', { mode: 'number' }).notNull().default(0),
    // Requests refused 429 rate_limited (each isolate or process adds its count, flushed after the answers).
    rateLimited: bigint('rate_limited', { mode: 'number' }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.sinkId, t.month] })],
)

export const auditEvents = pgTable(
  'audit_events',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    projectId: text('project_id').notNull(),
    at: timestamp('at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    actor: text('actor').notNull(),
    action: text('action').notNull(),
    subject: text('subject').notNull(),
    details: jsonb('details'),
  },
  (t) => [index('audit_events_project').on(t.projectId, t.at)],
)

// The SQL catalog's tables, with exactly the names and types PyIceberg's SqlCatalog (and Java's
// JdbcCatalog) use, so both open our tables with no server. catalog_name = the warehouse id
// (edge/catalogs.ts says why not its name).
export const icebergTables = pgTable(
  'iceberg_tables',
  {
    catalogName: varchar('catalog_name', { length: 255 }).notNull(),
    tableNamespace: varchar('table_namespace', { length: 255 }).notNull(),
    tableName: varchar('table_name', { length: 255 }).notNull(),
    metadataLocation: varchar('metadata_location', { length: 1000 }),
    previousMetadataLocation: varchar('previous_metadata_location', { length: 1000 }),
    // The v1 schema of PyIceberg and Java's JdbcCatalog: 'TABLE' (null reads as a table too).
    icebergType: varchar('iceberg_type', { length: 5 }),
  },
  (t) => [primaryKey({ columns: [t.catalogName, t.tableNamespace, t.tableName] })],
)

export const icebergNamespaceProperties = pgTable(
  'iceberg_namespace_properties',
  {
    catalogName: varchar('catalog_name', { length: 255 }).notNull(),
    namespace: varchar('namespace', { length: 255 }).notNull(),
    propertyKey: varchar('property_key', { length: 255 }).notNull(),
    propertyValue: varchar('property_value', { length: 1000 }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.catalogName, t.namespace, t.propertyKey] })],
)

// The Iceberg REST catalog's Idempotency-Key (edge/iceberg-rest/idempotency.ts): a mutation's key per
// project, what the request was (method, path and body, hashed), and once final its answer, replayed
// to a retry with the same key. status is null while the first request runs. Pruned after a day.
export const icebergIdempotency = pgTable(
  'iceberg_idempotency',
  {
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id),
    key: text('key').notNull(),
    requestSha256: text('request_sha256').notNull(),
    status: integer('status'),
    response: text('response'),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.key] }), index('iceberg_idempotency_created').on(t.createdAt)],
)
