// The roller's routes on the edge (bootstrap secret; never served publicly): GET /internal/sinks, the
// roller's view (with ?roller= a lease of the due sinks), and POST /internal/sinks/{id}/roll, the
// roller's report. The edge validates what the roller sends with these schemas; the roller parses what
// the edge answers with them.
import * as v from 'valibot'
import { BATCH_ID } from './bucket.ts'

/** Snapshot ids are int64: decimal strings on the wire, never JSON numbers (JSON.parse would round them). */
const SnapshotId = v.pipe(v.string(), v.regex(/^\d{1,19}$/, 'snapshot ids are sent as decimal strings'))
const BatchIds = v.array(v.pipe(v.string(), v.regex(BATCH_ID)))

/** What a lease is for: a roll (the default), or the maintenance sweep of the sink's table. */
export const LeasePurpose = v.picklist(['roll', 'maintenance'])
export type LeasePurpose = v.InferOutput<typeof LeasePurpose>

/**
 * GET /internal/sinks: the roller's view; with `roller`, a lease of the due sinks (or of `sink`; `force`
 * ignores the policy). With `purpose=maintenance` the lease is for the sweep of the sinks' tables:
 * any active or disabled sink (never a deleted one), due or not. A lease of either purpose leaves out
 * a sink another roller holds, so a roll and a sweep of one sink never overlap.
 */
export const SinksQuery = v.object({
  roller: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
  lease_seconds: v.optional(v.pipe(v.string(), v.transform(Number), v.integer(), v.minValue(10), v.maxValue(3600)), '300'),
  sink: v.optional(v.string()),
  force: v.optional(v.picklist(['true', 'false'])),
  purpose: v.optional(LeasePurpose, 'roll'),
  /** How many sinks to lease at most: the roller's free roll slots (most overdue first), so rollers share. */
  limit: v.optional(v.pipe(v.string(), v.transform(Number), v.integer(), v.minValue(1), v.maxValue(10000))),
  /**
   * Leave out sinks leased at or after this time (microseconds since 1970 on the ledger's clock: the
   * `now_us` of the tick's first lease), so a tick leases a sink once, a failing one included.
   */
  leased_before: v.optional(v.pipe(v.string(), v.regex(/^\d{1,16}$/, 'leased_before is microseconds since 1970'))),
  /** Only sinks of these warehouses (ids, comma-separated): a roller near a store serves that store's warehouses. */
  warehouses: v.optional(v.pipe(v.string(), v.maxLength(2000), v.regex(/^[\w-]+(?:,[\w-]+)*$/, 'warehouses are ids, comma-separated'))),
})

/**
 * POST /internal/sinks/{id}/batches: a feed's run stored its batch (one PUT, as the edge stores a
 * producer's): the ledger holds it pending, so lag and the lease see it until the roll commits it.
 * Only the roller holding the sink's lease may record one.
 */
export const FeedBatch = v.object({
  roller: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  batch_id: v.pipe(v.string(), v.regex(BATCH_ID)),
  body_sha256: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/)),
  bytes: v.pipe(v.number(), v.integer(), v.minValue(0)),
  rows: v.pipe(v.number(), v.integer(), v.minValue(0)),
  /** The batch's arrival time as stored with it (x-amz-meta-received, microseconds). */
  received_at: v.pipe(v.string(), v.isoTimestamp()),
})
export type FeedBatch = v.InferOutput<typeof FeedBatch>
export const FeedBatchRecorded = v.object({ recorded: v.boolean() })
export type FeedBatchRecorded = v.InferOutput<typeof FeedBatchRecorded>

/** POST /internal/leases: renew the leases a roller's rolls still need; `renewed` are those it still holds. */
export const LeaseRenewal = v.object({
  roller: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  lease_seconds: v.pipe(v.number(), v.integer(), v.minValue(10), v.maxValue(3600)),
  sink_ids: v.pipe(v.array(v.pipe(v.string(), v.maxLength(200))), v.maxLength(10000)),
})
export type LeaseRenewal = v.InferOutput<typeof LeaseRenewal>
export const LeaseRenewed = v.object({ renewed: v.array(v.string()) })
export type LeaseRenewed = v.InferOutput<typeof LeaseRenewed>

/**
 * A warehouse's catalog as the roller reaches it. A REST catalog's token or OAuth2 credential comes
 * only with a lease (of a sink, or of a warehouse to measure), opened by the edge from its sealed copy.
 */
const Catalog = v.variant('type', [
  v.object({ type: v.literal('sql'), catalog_name: v.string() }),
  v.object({
    type: v.literal('rest'),
    uri: v.string(),
    warehouse: v.optional(v.string()),
    scope: v.optional(v.string()),
    token: v.optional(v.string()),
    credential: v.optional(v.string()),
    /** The edge could not open the sealed secret (LHBOX_SECRETS_KEY lacks its key): the roll fails with this reason. */
    secret_error: v.optional(v.string()),
  }),
])

/** Where a warehouse's tables and intake live, as the roller reaches them. */
export const WarehouseView = v.object({
  id: v.string(),
  name: v.string(),
  catalog: Catalog,
  location: v.string(),
  bucket: v.string(),
  endpoint: v.string(),
  region: v.string(),
  maintenance: v.string(),
})
export type WarehouseView = v.InferOutput<typeof WarehouseView>

/** One sink as the roller sees it. Times are RFC 3339 strings (UTC, microseconds). */
export const SinkView = v.object({
  id: v.string(),
  name: v.string(),
  project_id: v.string(),
  state: v.string(),
  table: v.object({ namespace: v.string(), name: v.string() }),
  warehouse: WarehouseView,
  policy: v.object({ roll_seconds: v.number(), roll_bytes: v.number(), inactivity_seconds: v.nullable(v.number()), max_batches: v.number() }),
  key: v.nullable(v.array(v.string())),
  lag: v.object({ batches: v.number(), bytes: v.number(), oldest_at: v.nullable(v.string()), newest_at: v.nullable(v.string()) }),
  /** The oldest 1,000 batch ids the ledger still holds waiting: a repair is reported until they are committed. */
  ledger_pending: v.array(v.string()),
  due: v.boolean(),
  dedupe_requested_at: v.nullable(v.string()),
  /**
   * A feed the roller runs (contract/feeds.ts): its settings and `run`, the run due now (its id is its
   * slot, or the time a run was asked for), or null when none is due.
   */
  feed: v.nullable(
    v.object({
      kind: v.picklist(['sql', 'files']),
      query: v.optional(v.string()),
      prefix: v.optional(v.string()),
      pattern: v.optional(v.nullable(v.string())),
      every_seconds: v.number(),
      run: v.nullable(v.object({ run_id: v.string(), manual: v.boolean() })),
    }),
  ),
  lease: v.nullable(v.object({ owner: v.string(), expires_at: v.string() })),
})
export type SinkView = v.InferOutput<typeof SinkView>

/**
 * GET /internal/lag: every sink not deleted as the roller's gauges need it — its waiting batches and
 * the oldest's arrival, its roll_seconds, whether it is due and whether a roller holds it now.
 */
export const SinkLag = v.object({
  id: v.string(),
  state: v.string(),
  roll_seconds: v.number(),
  batches: v.number(),
  oldest_at: v.nullable(v.string()),
  due: v.boolean(),
  leased: v.boolean(),
})
export type SinkLag = v.InferOutput<typeof SinkLag>
export const LagList = v.object({ sinks: v.array(SinkLag) })
export type LagList = v.InferOutput<typeof LagList>

/** GET /internal/sinks answers. `enabled` false: sinks are switched off (LHBOX_SINKS_ENABLED), and nothing is leased. */
export const SinkList = v.object({
  sinks: v.array(SinkView),
  enabled: v.optional(v.boolean(), true),
  /** A lease's answer: the ledger's clock that stamped these leases, microseconds since 1970 (a tick's leased_before). */
  now_us: v.optional(v.pipe(v.string(), v.regex(/^\d{1,16}$/))),
})
export type SinkList = v.InferOutput<typeof SinkList>

/** A count a sweep reports. */
const Count = v.pipe(v.number(), v.integer(), v.minValue(0))
const Rfc3339 = v.pipe(v.string(), v.isoTimestamp('times are RFC 3339'))

/**
 * The end of one sink's maintenance sweep (roller/maintain.ts), sent with the report that releases its
 * lease: when it ended, when the next is due (the roller's LHBOX_MAINTENANCE_HOURS on), what it did,
 * and for a failed sweep why (the counts are then those of the steps that finished: their commits
 * stand). GET /v1/sinks shows it as maintenance.last.
 */
export const MaintenanceSweep = v.object({
  at: Rfc3339,
  next_at: Rfc3339,
  snapshots_expired: Count,
  files_compacted: Count,
  bytes_compacted: Count,
  /** Data manifests the rewrite replaced, and the manifests it wrote. */
  manifests_rewritten: Count,
  manifests_created: Count,
  /** Files no retained snapshot reaches any more, deleted. */
  files_deleted: Count,
  bytes_deleted: Count,
  /** The sink's rejects files past LHBOX_REJECTS_RETENTION_DAYS, deleted (absent from older rollers). */
  rejects_deleted: v.optional(Count),
  rejects_bytes_deleted: v.optional(Count),
  seconds: v.pipe(v.number(), v.minValue(0)),
  // No NUL: Postgres refuses it in jsonb, and bad input is a 400, never a 500.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is the character refused here
  error: v.optional(v.pipe(v.string(), v.maxLength(1000), v.regex(/^[^\u0000]*$/, 'error may not contain U+0000 (NUL)'))),
})
export type MaintenanceSweep = v.InferOutput<typeof MaintenanceSweep>

/** POST /internal/sinks/{id}/roll: what a roll did. */
export const RollReport = v.object({
  roller: v.string(),
  roll_id: v.string(),
  /** Batches now in the table (or rejected whole / all rows rejected): the ledger marks them committed. */
  consumed: v.optional(v.array(v.object({ batch_ids: BatchIds, snapshot_id: v.nullable(SnapshotId) })), []),
  /** Of those, the ones found already committed by an earlier roll (repairs). */
  repaired: v.optional(BatchIds, []),
  last_roll: v.optional(
    v.nullable(
      v.object({ at: v.string(), batches: v.number(), rows: v.number(), rejected_rows: v.number(), snapshot_id: v.nullable(SnapshotId), seconds: v.number() }),
    ),
  ),
  rejects: v.optional(v.object({ rows: v.number(), batches: v.number() })),
  /** Set: the sink is disabled with this reason (an upsert_* one when its key cannot be applied). */
  disabled_reason: v.optional(v.nullable(v.string())),
  dedupe: v.optional(v.nullable(v.record(v.string(), v.unknown()))),
  /**
   * Why the roll failed (the batches wait): catalog_unauthorized (the catalog refused the warehouse's
   * credentials), quota_exceeded (the store refused a write for quota), or roll_failed. GET /v1/sinks
   * shows it as last_error until a roll succeeds.
   */
  error: v.optional(v.nullable(v.object({ code: v.picklist(['catalog_unauthorized', 'quota_exceeded', 'roll_failed']), message: v.string() }))),
  /** A feed's run (contract/feeds.ts): done (rows committed), found done already, or failed with its error. */
  feed_run: v.optional(
    v.nullable(
      v.object({
        run_id: v.string(),
        manual: v.boolean(),
        outcome: v.picklist(['ok', 'done_before', 'failed']),
        at: v.string(),
        rows: v.number(),
        seconds: v.number(),
        error: v.nullable(v.string()),
      }),
    ),
  ),
  /** Release the lease (false: a dedupe runs next under the same lease and its report releases it). */
  release: v.optional(v.boolean(), true),
  /**
   * `maintenance`: the end of a sweep, which releases the lease and may say what the sweep did
   * (`maintenance`); nothing a roll reports may come with it, and it is never taken for a roll.
   */
  purpose: v.optional(LeasePurpose, 'roll'),
  /** The sweep's end (purpose `maintenance` only; a roll's report carrying it is refused). */
  maintenance: v.optional(MaintenanceSweep),
})
/** The report as the roller writes it. */
export type RollReport = v.InferInput<typeof RollReport>
/** The report as the edge reads it, defaults applied. */
export type RollReportBody = v.InferOutput<typeof RollReport>

/** POST /internal/sinks/{id}/roll answers. */
export const RollAnswer = v.object({ ok: v.literal(true), batches_committed: v.number() })
export type RollAnswer = v.InferOutput<typeof RollAnswer>

/** POST /sql/check on the roller's port: is this one DuckDB SELECT? (The edge asks at create and PATCH.) */
export const SqlCheck = v.object({ query: v.string() })
export const SqlCheckAnswer = v.object({ ok: v.boolean(), error: v.nullable(v.string()) })
export type SqlCheckAnswer = v.InferOutput<typeof SqlCheckAnswer>

/**
 * GET /internal/warehouses/measure?roller=: a lease of the warehouses whose storage figure is due
 * (every_seconds since the last; 0: only figures asked for) or asked for, or of `warehouse`, due or not.
 */
export const MeasureQuery = v.object({
  roller: v.pipe(v.string(), v.minLength(1), v.maxLength(200)),
  every_seconds: v.optional(v.pipe(v.string(), v.transform(Number), v.integer(), v.minValue(0), v.maxValue(86400)), '300'),
  lease_seconds: v.optional(v.pipe(v.string(), v.transform(Number), v.integer(), v.minValue(10), v.maxValue(3600)), '300'),
  warehouse: v.optional(v.string()),
})

/** The warehouses to measure, leased to the roller that asked. */
export const MeasureList = v.object({ warehouses: v.array(v.object({ warehouse: WarehouseView, requested_at: v.nullable(v.string()) })) })
export type MeasureList = v.InferOutput<typeof MeasureList>

/**
 * A warehouse's storage figure: every object in its bucket (bytes, objects; the spec's "every byte in
 * the file bucket"), of which intake_bytes are under _sink/; tables: each table's committed Parquet bytes
 * (total-files-size of its current snapshot's summary), keyed <namespace>.<table>.
 */
export const StorageFigure = v.object({
  bytes: v.number(),
  intake_bytes: v.number(),
  /** Of intake_bytes, the rejects files (_sink/<sink_id>/rejects/); absent from older rollers' figures. */
  rejects_bytes: v.optional(v.number()),
  objects: v.number(),
  tables: v.record(v.string(), v.number()),
  measured_at: v.string(),
})
export type StorageFigure = v.InferOutput<typeof StorageFigure>

/** POST /internal/warehouses/{id}/storage: the figure, and when its listing began (requests made before it are answered). */
export const StorageReport = v.object({
  roller: v.string(),
  started_at: v.string(),
  figure: v.nullable(StorageFigure),
  error: v.optional(v.nullable(v.string())),
})
export type StorageReport = v.InferInput<typeof StorageReport>
