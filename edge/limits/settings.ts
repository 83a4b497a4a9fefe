// A sink's rate limits as PATCH /v1/sinks takes them and sinks.limits holds them, and the limits in
// effect: a sink's own, else the deployment's defaults (LHBOX_SINK_*), and every project's ceiling
// (LHBOX_PROJECT_*). None is configured by default (the dev stack sets none).
import * as v from 'valibot'
import { jsonObject } from '../validate.ts'

/** The bindings the limits read (edge/env.ts has them; named here so env.ts may name the limiter). */
export interface LimitsEnv {
  /** A sink's defaults where its own `limits` are null; unset, none. */
  LHBOX_SINK_REQUESTS_PER_SECOND?: string
  LHBOX_SINK_BYTES_PER_SECOND?: string
  /** The ceiling over all of a project's sinks, in each isolate or process; unset, none. */
  LHBOX_PROJECT_REQUESTS_PER_SECOND?: string
  LHBOX_PROJECT_BYTES_PER_SECOND?: string
  /** Workers: a [[ratelimits]] binding keyed by project, the project ceiling across isolates (period 10 s). */
  LHBOX_PROJECT_RATE_LIMIT?: RateLimit
}

/** What sinks.limits holds (null: the defaults for both). */
export interface SinkLimits {
  requests_per_second: number | null
  bytes_per_second: number | null
}

const LIMIT_RANGE = {
  requestsPerSecond: { min: 0.01, max: 100_000 },
  bytesPerSecond: { min: 1024, max: 1024 ** 4 },
} as const

const { requestsPerSecond: rps, bytesPerSecond: bps } = LIMIT_RANGE

/** PATCH /v1/sinks: `limits: null` drops both; a member left out keeps its value, null drops it. */
export const LimitsPatch = v.nullable(
  jsonObject(
    v.strictObject({
      requests_per_second: v.optional(
        v.nullable(v.pipe(v.number(), v.minValue(rps.min), v.maxValue(rps.max), v.description('requests a second (fractions allowed: 0.5 is one every 2 s)'))),
      ),
      bytes_per_second: v.optional(
        v.nullable(
          v.pipe(v.number(), v.integer(), v.minValue(bps.min), v.maxValue(bps.max), v.description('batch bytes a second, as metered (the answer’s bytes)')),
        ),
      ),
    }),
  ),
)

/** The sink's limits after a PATCH of them; null when none is left. */
export function patchedLimits(before: SinkLimits | null, patch: v.InferOutput<typeof LimitsPatch>): SinkLimits | null {
  if (patch === null) return null
  const after = {
    requests_per_second: patch.requests_per_second === undefined ? (before?.requests_per_second ?? null) : patch.requests_per_second,
    bytes_per_second: patch.bytes_per_second === undefined ? (before?.bytes_per_second ?? null) : patch.bytes_per_second,
  }
  return after.requests_per_second === null && after.bytes_per_second === null ? null : after
}

/** A configured rate: a positive number, else none. */
function rate(text: string | undefined): number | null {
  const n = Number(text)
  return text && Number.isFinite(n) && n > 0 ? n : null
}

/** The limits in effect for a sink: its own, each member falling back to the configured default. */
export function sinkRates(env: LimitsEnv, own: SinkLimits | null): { requests: number | null; bytes: number | null } {
  return {
    requests: own?.requests_per_second ?? rate(env.LHBOX_SINK_REQUESTS_PER_SECOND),
    bytes: own?.bytes_per_second ?? rate(env.LHBOX_SINK_BYTES_PER_SECOND),
  }
}

/** The ceiling over all of a project's sinks. */
export function projectRates(env: LimitsEnv): { requests: number | null; bytes: number | null } {
  return { requests: rate(env.LHBOX_PROJECT_REQUESTS_PER_SECOND), bytes: rate(env.LHBOX_PROJECT_BYTES_PER_SECOND) }
}
